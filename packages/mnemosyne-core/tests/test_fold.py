"""fold and TextMatcher: the Unicode rule, and the bytes fast paths against the plain path."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from mnemosyne_core.fold import ASCII_FOLDING_CHARS, TextMatcher, decode, fold


def plain_fold(text: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def test_ascii_folding_table_matches_this_interpreters_unicode() -> None:
    computed = "".join(
        chr(code)
        for code in range(0x80, sys.maxunicode + 1)
        if not 0xD800 <= code <= 0xDFFF and any(ord(char) < 0x80 for char in plain_fold(chr(code)))
    )
    assert computed == ASCII_FOLDING_CHARS, f"regenerate ASCII_FOLDING_CHARS for Unicode {unicodedata.unidata_version}"


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("MASTRA", "mastra"),
        ("Straße", "strasse"),
        ("\u212aelvin", "kelvin"),
        ("cafe\u0301", "caf\u00e9"),
        ("\ufb01le", "file"),
        ("İstanbul", "i\u0307stanbul"),
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded == plain_fold(text)


def test_decode_drops_bom_and_replaces_invalid_bytes() -> None:
    assert decode(b"\xef\xbb\xbfok\xff") == "ok\ufffd"


@pytest.mark.parametrize(
    ("data", "keyword"),
    [
        (b"plain ascii MASTRA text", "mastra"),
        (b"plain ascii text", "absent"),
        ("Stra\u00dfe".encode(), "strasse"),
        ("\u212aelvin".encode(), "kelvin"),
        ("cafe\u0301 menu".encode(), "cafe"),  # NFC composes e + U+0301: no "cafe" left
        ("cafe\u0301 menu".encode(), "caf\u00e9"),
        ("na\u00efve cafe au lait".encode(), "cafe"),
        ("\ufb03ce".encode(), "ffi"),
        (b"caf\xe9 latin-1", "caf"),
        (b"\xef\xbb\xbfbom first", "bom"),
        ("end with e\u0301".encode(), "e"),
        (b"ascii only", "\u00e9"),
        ("\u00e9t\u00e9".encode(), "\u00c9T\u00c9"),
    ],
)
def test_text_matcher_agrees_with_the_plain_path(data: bytes, keyword: str) -> None:
    folded_keyword = fold(keyword)
    expected = folded_keyword in plain_fold(decode(data))
    assert TextMatcher(data).contains(folded_keyword) is expected
