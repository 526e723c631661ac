"""fold and TextMatcher: the Unicode rule, and the bytes fast paths against the plain path."""

from __future__ import annotations

import os
import sys
import unicodedata

import pytest

from mnemosyne_core.fold import ASCII_FOLDING_CHARS, TextMatcher, decode, fold
from mnemosyne_core.fold_sources import CROWDED, SOURCES


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


# --- the bytes prefilter of keywords outside ASCII (fold.text_needles) ---------------------

#: A character with more sources than this is left out of the prefilter (CROWDED): checking
#: hundreds of byte strings per page would cost more than the plain path it spares.
MOST_SOURCES = 16


def pieces_fold(char: str) -> set[str]:
    """The characters of NFD(casefold(NFD(char))): what ``char`` can contribute to a fold."""
    return set(unicodedata.normalize("NFD", unicodedata.normalize("NFD", char).casefold()))


def provable(char: str) -> bool:
    """Whether ``char`` may stand for a keyword in the prefilter: outside ASCII, not the
    replacement character, not a mark, without a decomposition."""
    return (
        not char.isascii()
        and char != "\ufffd"
        and not unicodedata.category(char).startswith("M")
        and unicodedata.normalize("NFD", char) == char
    )


def computed_sources() -> tuple[str, str]:
    """fold_sources.SOURCES and CROWDED as this interpreter's Unicode tables give them."""
    sources: dict[str, list[str]] = {}
    for code in range(0x80, sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        for target in sorted(pieces_fold(char)):
            if target != char and provable(target):
                sources.setdefault(target, []).append(char)
    ordered = sorted(sources.items())
    pairs = "".join(source + target for target, listed in ordered if len(listed) <= MOST_SOURCES for source in listed)
    crowded = "".join(target for target, listed in ordered if len(listed) > MOST_SOURCES)
    return pairs, crowded


def test_fold_sources_match_this_interpreters_unicode() -> None:
    pairs, crowded = computed_sources()
    message = f"regenerate fold_sources.py for Unicode {unicodedata.unidata_version}: python {__file__}"
    assert (pairs, crowded) == (SOURCES, CROWDED), message


def test_a_characters_fold_holds_nothing_its_decomposed_pieces_folds_lack() -> None:
    # The step of text_needles' proof from a composed character to the text's characters.
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        whole = set(unicodedata.normalize("NFD", char.casefold()))
        pieces = set().union(*(pieces_fold(piece) for piece in unicodedata.normalize("NFD", char)))
        assert whole <= pieces, f"U+{code:04X}"


def write_fold_sources() -> None:
    """Write fold_sources.py from this interpreter's Unicode tables."""
    pairs, crowded = computed_sources()

    def lines_of(text: str, step: int) -> list[str]:
        """``text`` as double-quoted literals of escapes, ``step`` characters at a time,
        each line at most about 100 columns."""
        lines, line = [], ""
        for start in range(0, len(text), step):
            escaped = ascii(text[start : start + step])[1:-1]
            if line and len(line) + len(escaped) > 96:
                lines.append(f'    "{line}"')
                line = ""
            line += escaped
        return [*lines, f'    "{line}"'] if line else lines

    lines = [
        '"""Generated by packages/mnemosyne-core/tests/test_fold.py (run it as a script); do not edit.',
        "",
        "For fold.text_needles: the characters whose fold can hold a given character outside ASCII.",
        '"""',
        "",
        "#: Pairs (source, target) from the Unicode tables (the same from Unicode 14 to 15.1): each character whose",
        "#: NFD(casefold(NFD(source))) holds target, a character outside ASCII, not a mark, without a",
        "#: decomposition and other than source. Targets with more sources than "
        f"{MOST_SOURCES} are in CROWDED instead.",
        "SOURCES = (",
        *lines_of(pairs, 2),
        ")",
        "#: The targets left out of SOURCES for having too many sources.",
        "CROWDED = (",
        *lines_of(crowded, 1),
        ")",
        "",
    ]
    path = os.path.join(os.path.dirname(__file__), "..", "src", "mnemosyne_core", "fold_sources.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))


if __name__ == "__main__":
    write_fold_sources()
