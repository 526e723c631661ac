"""Case-insensitive matching in full Unicode, exact, with bytes-level ASCII fast paths.

The rule: a keyword matches a text when ``fold(keyword) in fold(text)``, where ``fold`` is
NFC, then ``str.casefold``, then NFC again. So "STRASSE" finds "Straße", the Kelvin sign
finds "k", and an NFD "café" is found by an NFC "café".

Decoding and folding every page is the slow part of a search, so ``TextMatcher`` answers
from the raw bytes whenever the bytes alone decide, and folds the decoded text otherwise.
"""

from __future__ import annotations

import unicodedata

#: The UTF-8 byte order mark, ignored at the start of a page.
BOM = b"\xef\xbb\xbf"

#: The non-ASCII characters whose fold contains an ASCII character (ß -> "ss", the Kelvin
#: sign -> "k", the long s -> "s", ligatures -> "ff", ...). Only these can make an ASCII
#: keyword match text whose lowered bytes do not contain it. Generated from this
#: interpreter's Unicode tables; tests/test_fold.py recomputes it over every code point.
ASCII_FOLDING_CHARS = "\u00df\u0130\u0149\u017f\u037e\u1e9a\u1e9e\u1fef\u212a\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06"
#: Per folded keyword: the UTF-8 of the ASCII_FOLDING_CHARS whose fold shares a character
#: with it. Only these can make it match text whose lowered bytes do not hold it.
_folding_needles: dict[str, tuple[bytes, ...]] = {}
_ASCII = bytes(range(0x80))


def folding_needles(folded_keyword: str) -> tuple[bytes, ...]:
    """The UTF-8 of each non-ASCII character whose fold shares a character with
    ``folded_keyword``: an ASCII keyword missing from a page's lowered bytes can still be in
    its folded text only if one of these is in the page."""
    needles = _folding_needles.get(folded_keyword)
    if needles is None:
        characters = set(folded_keyword)
        needles = tuple(char.encode("utf-8") for char in ASCII_FOLDING_CHARS if characters & set(fold(char)))
        _folding_needles[folded_keyword] = needles
    return needles


def fold(text: str) -> str:
    """NFC, casefold, NFC: the one comparison form of keywords, titles, stems and text."""
    if text.isascii():
        # ASCII is NFC already and its casefold is its lower case.
        return text.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def decode(data: bytes) -> str:
    """Page bytes as text: UTF-8 with invalid bytes replaced by U+FFFD, a leading BOM
    dropped."""
    if data.startswith(BOM):
        data = data[3:]
    return data.decode("utf-8", "replace")


class TextMatcher:
    """Which of a fixed set of folded keywords occur in a page's text.

    One instance per page text; it lowers the bytes and folds the decoded text at most
    once each, and only when a keyword needs it.
    """

    __slots__ = ("_data", "_folded", "_is_ascii", "_lowered", "_non_ascii")

    def __init__(self, data: bytes):
        self._data = data
        self._is_ascii = data.isascii()
        self._lowered: bytes | None = None
        self._folded: str | None = None
        self._non_ascii: bytes | None = None

    def folded_text(self) -> str:
        """The plain path: the decoded text, folded."""
        if self._folded is None:
            self._folded = fold(decode(self._data))
        return self._folded

    def contains(self, folded_keyword: str) -> bool:
        """Whether ``folded_keyword`` (already folded) occurs in the folded text."""
        if not folded_keyword.isascii():
            # Folded ASCII text is ASCII, so it cannot hold a non-ASCII keyword.
            return not self._is_ascii and folded_keyword in self.folded_text()
        if self._lowered is None:
            self._lowered = self._data.lower()
        needle = folded_keyword.encode("ascii")
        if self._is_ascii:
            return needle in self._lowered
        position = self._lowered.find(needle)
        if position >= 0:
            # ASCII stays ASCII under NFC and casefold, unless a combining mark right after
            # the match composes with its last character (e + U+0301 -> é).
            after = position + len(needle)
            if after == len(self._lowered) or self._lowered[after] < 0x80:
                return True
            return folded_keyword in self.folded_text()
        # Matched in the folded text but not in the lowered bytes, the keyword would owe one
        # of its characters to a character outside ASCII that folds to it (ſ -> s). They
        # are looked for among the bytes outside ASCII only: dropping the ASCII bytes keeps
        # every UTF-8 sequence whole (no ASCII byte is part of one) and makes the search ten
        # times faster; joined fragments of invalid sequences can only raise a false alarm,
        # which the plain path settles.
        if self._non_ascii is None:
            self._non_ascii = self._data.translate(None, _ASCII)
        non_ascii = self._non_ascii
        return (
            any(needle in non_ascii for needle in folding_needles(folded_keyword))
            and folded_keyword in self.folded_text()
        )
