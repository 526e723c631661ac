"""fold: the Unicode rule, and a page's text as every reader folds it."""

from __future__ import annotations

import pytest
from reference_order import plain_fold

from mnemosyne_core.fold import decode, fold, folded_text, position


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("MASTRA", "mastra"),
        ("Straße", "strasse"),
        ("\u212aelvin", "kelvin"),
        ("cafe\u0301", "caf\u00e9"),
        ("\ufb01le", "file"),
        ("İstanbul", "istanbul"),  # no combining dot left after the i
        ("I\u0307stanbul", "istanbul"),  # the same İ, decomposed
        ("ılık", "ilik"),
        ("DEĞİŞTİRİLEMEZ ALTYAPI", "değiştirilemez altyapi"),
        ("ı\u0307", "i\u0307"),  # a dot written after a dotless i stays a mark
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded == plain_fold(text)


def test_the_four_turkish_is_fold_to_one_letter() -> None:
    assert {fold(letter) for letter in "İIıi"} == {"i"}


@pytest.mark.slow
def test_only_the_turkish_is_fold_otherwise_than_nfc_casefold_nfc() -> None:
    """ONE_I changes the fold of U+0130 and U+0131 and of no other character, and the fold
    stays a fixed point (folding a folded text changes nothing)."""
    import sys
    import unicodedata

    changed = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        folded = fold(char)
        assert fold(folded) == folded, hex(code)
        if folded != unicodedata.normalize("NFC", unicodedata.normalize("NFC", char).casefold()):
            changed.append(code)
    assert changed == [0x0130, 0x0131]


def test_decode_drops_bom_and_replaces_invalid_bytes() -> None:
    assert decode(b"\xef\xbb\xbfok\xff") == "ok\ufffd"


@pytest.mark.parametrize(
    ("data", "keyword", "expected"),
    [
        (b"plain ascii MASTRA text", "mastra", True),
        (b"plain ascii text", "absent", False),
        ("Stra\u00dfe".encode(), "strasse", True),
        ("\u212aelvin".encode(), "kelvin", True),
        ("cafe\u0301 menu".encode(), "cafe", False),  # NFC composes e + U+0301: no "cafe" left
        ("cafe\u0301 menu".encode(), "caf\u00e9", True),
        ("na\u00efve cafe au lait".encode(), "cafe", True),
        ("\ufb03ce".encode(), "ffi", True),
        (b"caf\xe9 latin-1", "caf", True),
        (b"\xef\xbb\xbfbom first", "bom", True),
        ("end with e\u0301".encode(), "e", True),
        (b"ascii only", "\u00e9", False),
        ("\u00e9t\u00e9".encode(), "\u00c9T\u00c9", True),
        ("\ufeffutf-16 page".encode("utf-16"), "UTF-16 PAGE", True),  # decoded by its mark
    ],
)
def test_a_keyword_is_looked_for_in_the_folded_whole_text(data: bytes, keyword: str, expected: bool) -> None:
    from mnemosyne_core.fold import as_utf8

    assert (fold(keyword) in folded_text(as_utf8(data))) is expected


@pytest.mark.parametrize(
    ("text", "keyword", "expected"),
    [
        ("ab\ncd x", "x", (1, 3)),
        ("\u00df\u00df x", "x", (0, 5)),  # folding lengthens the text before the keyword
        ("\ufeffab", "b", (0, 1)),  # a BOM is not text
        ("x\n\u00e9\u00e9 y", "y", (1, 3)),
        ("cafe\u0301 cafe", "cafe", (0, 5)),  # the first "cafe" composed into "café"
        ("nothing", "x", None),
    ],
)
def test_position_counts_lines_and_characters_of_the_folded_text(
    text: str, keyword: str, expected: tuple[int, int] | None
) -> None:
    assert position(folded_text(text.encode()), fold(keyword)) == expected
