"""Case-insensitive matching in full Unicode, exact, with bytes-level ASCII fast paths.

The rule: a keyword matches a text when ``fold(keyword) in fold(text)``, where ``fold`` is
NFC, then ``str.casefold``, then NFC again. So "STRASSE" finds "Straße", the Kelvin sign
finds "k", and an NFD "café" is found by an NFC "café".

Decoding and folding every page is the slow part of a search, so ``TextMatcher`` answers
from the raw bytes whenever the bytes alone decide, and folds the decoded text otherwise.
"""

from __future__ import annotations

import unicodedata

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

#: The UTF-8 byte order mark, ignored at the start of a page.
BOM = b"\xef\xbb\xbf"
#: The byte order marks of the wide encodings a page is read in, as rg reads them, by the
#: codec that decodes it (BOM included). UTF-32LE's mark starts with UTF-16LE's: longest first.
WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
#: The first bytes of WIDE_BOMS: a page starting with none of them is UTF-8 as it is.
WIDE_BOM_LEADS = b"\xff\xfe\x00"
#: How much of a page's text (as UTF-8) is looked at for a NUL byte, which no text holds: a
#: binary file, or UTF-16 or UTF-32 without a byte order mark. find's first read of a page.
TEXT_PROBE_BYTES = 1 << 14

#: The non-ASCII characters whose fold contains an ASCII character (ß -> "ss", the Kelvin
#: sign -> "k", the long s -> "s", ligatures -> "ff", ...). Only these can make an ASCII
#: keyword match text whose lowered bytes do not contain it. Generated from this
#: interpreter's Unicode tables; tests/test_fold.py recomputes it over every code point.
ASCII_FOLDING_CHARS = "\u00df\u0130\u0149\u017f\u037e\u1e9a\u1e9e\u1fef\u212a\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06"
#: Per folded keyword: a search of page bytes for any of its folding needles (None: none).
_folding_searches: dict[str, Callable[[bytes], object] | None] = {}
#: Marks a page that may hold a folding character: the first byte of each one's UTF-8.
FOLDING_MARK = 0xFF
#: ``bytes.lower`` that also turns the first byte of every folding character's UTF-8 into
#: FOLDING_MARK. Outside ASCII a byte only stands for "not ASCII" in the lowered bytes, so
#: any byte of 0x80 and above may stand in for another; the mark is then found by memchr, and
#: a page without it (most pages) is spared the search for the folding characters.
_FOLDING_LEADS = bytes({char.encode("utf-8")[0] for char in ASCII_FOLDING_CHARS})
_LOWER_MARKING = (
    bytes(range(256)).lower().translate(bytes.maketrans(_FOLDING_LEADS, bytes([FOLDING_MARK]) * len(_FOLDING_LEADS)))
)
#: Per folded keyword outside ASCII: ``text_needles``' answer.
_text_needles: dict[str, tuple[tuple[bytes, ...], ...]] = {}


def folding_needles(folded_keyword: str) -> tuple[bytes, ...]:
    """The UTF-8 of each non-ASCII character whose fold can make part of ``folded_keyword``
    (``fold_overlaps``): an ASCII keyword missing from a page's lowered bytes can still be
    in its folded text only if one of these is in the page. Asked once per keyword: its
    answer lives on in the cache of ``folding_search``."""
    return tuple(char.encode("utf-8") for char in ASCII_FOLDING_CHARS if fold_overlaps(fold(char), folded_keyword))


def fold_overlaps(piece: str, folded_keyword: str) -> bool:
    """Whether ``piece`` (a character's fold) can lie across part of an occurrence of
    ``folded_keyword``: placed at some offset where the two overlap, they agree on every
    character they share.

    An ASCII keyword in a folded text that its lowered bytes lack is a run of ASCII made of
    the folds of consecutive characters, one at least a folding character's (NFC composes
    nothing into ASCII, and a mark left between two letters breaks the run); each of these
    folds lies across the run where it agrees with it. So ß (``ss``) can make part of
    ``mass`` or ``st`` but never of ``kestrel``, whose ``s`` stands between ``e`` and ``t``:
    a German page, whose ß leaves no mark in its lowered bytes of ``s`` keywords, is then
    not folded whole for such a keyword. tests/test_fast_paths.py holds TextMatcher equal to
    the plain fold."""
    for start in range(1 - len(piece), len(folded_keyword)):
        if all(
            folded_keyword[start + index] == char
            for index, char in enumerate(piece)
            if 0 <= start + index < len(folded_keyword)
        ):
            return True
    return False


def folding_search(folded_keyword: str) -> Callable[[bytes], object] | None:
    """One search of a page's marked bytes (lowered with ``_LOWER_MARKING``) for any of
    ``folding_needles(folded_keyword)`` with its first byte marked (truthy when one may
    occur), or None when the keyword has none. Every needle then starts with the mark, rare
    in a page: a page holding only other characters that share a first byte with a needle
    (é and ß are both C3 ..) is passed over quickly, and a page holding a needle always
    matches."""
    if folded_keyword not in _folding_searches:
        mark = bytes([FOLDING_MARK])
        marked = tuple(mark + needle[1:] for needle in folding_needles(folded_keyword))
        _folding_searches[folded_keyword] = _FoldingSearch(marked) if marked else None
    return _folding_searches[folded_keyword]


class RegexOnceItPays:
    """Whether a fast path should take its regex yet. Over many pages one compiled regex is
    the fastest check, but importing re and compiling it costs milliseconds of a call's
    start-up, more than a few dozen checks without it: the first ``USES_WITHOUT`` checks
    are made without. Both ways give the same answers (tests/test_fast_paths.py)."""

    __slots__ = ("left",)

    USES_WITHOUT = 128

    def __init__(self) -> None:
        #: Checks still to make without the regex.
        self.left = self.USES_WITHOUT

    def pays(self) -> bool:
        """Whether this check takes the regex (counts the check)."""
        if self.left:
            self.left -= 1
            return False
        return True


class _FoldingSearch:
    """``folding_search``'s answer: whether any of ``needles`` occurs in a page's marked
    bytes, by one pass of a regex over the page, or by one pass per needle while the regex
    does not pay yet."""

    __slots__ = ("_regex_search", "needles")

    #: When the searches take the regex.
    regex_once_it_pays = RegexOnceItPays()

    def __init__(self, needles: tuple[bytes, ...]):
        self.needles = needles
        self._regex_search: Callable[[bytes], object] | None = None

    def __call__(self, marked: bytes) -> bool:
        if self._regex_search is None:
            if not self.regex_once_it_pays.pays():
                return self.by_needles(marked)
            self._regex_search = self.regex().search
        return self._regex_search(marked) is not None

    def by_needles(self, marked: bytes) -> bool:
        return any(needle in marked for needle in self.needles)

    def regex(self) -> re.Pattern[bytes]:
        import re  # off the start-up path: only many pages that may hold a folding character need it

        # The engine finds the shared first byte (the mark) by a byte loop before it tries the rest.
        return re.compile(b"|".join(map(re.escape, self.needles)))


def text_needles(folded_keyword: str) -> tuple[tuple[bytes, ...], ...]:
    """For a folded keyword outside ASCII, groups of UTF-8 byte strings: a text whose fold
    holds the keyword holds at least one string of each group. Empty when no character of the
    keyword allows the proof (the plain path then decides every page).

    Why it holds, for a character ``c`` of the keyword that is outside ASCII, not a mark and
    without a decomposition: ``c`` in NFC(s) means ``c`` in NFD(s), as composing only makes
    characters that decompose; the NFD of the casefolded text is the NFD of each character's
    casefold, and casefolding a character gives nothing its decomposed pieces' casefolds do
    not (tests/test_fold.py checks both over every code point); so some character ``x`` of the
    text has ``c`` in NFD(casefold(NFD(x))). Those ``x`` are ``c`` itself (when it folds to
    itself) and its sources in ``fold_sources`` (generated, and checked by the tests over
    every code point). Decoding with replacement makes no character from other bytes, so
    ``x`` stands in the page as its own UTF-8.
    """
    groups = _text_needles.get(folded_keyword)
    if groups is None:
        from mnemosyne_core.fold_sources import CROWDED, SOURCES  # only keywords outside ASCII need them

        if not _source_lists:
            for position in range(0, len(SOURCES), 2):
                _source_lists.setdefault(SOURCES[position + 1], []).append(SOURCES[position])
        found = []
        for char in dict.fromkeys(folded_keyword):
            if char.isascii() or char == "\ufffd" or char in CROWDED or unicodedata.category(char)[0] == "M":
                continue
            if unicodedata.normalize("NFD", char) != char:
                continue
            sources = list(_source_lists.get(char, ()))
            if char in unicodedata.normalize("NFD", unicodedata.normalize("NFD", char).casefold()):
                # First: text holds a keyword's letter mostly as it is (lower case), and a
                # group's search ends at its first needle found.
                sources.insert(0, char)
            found.append(tuple(source.encode("utf-8") for source in sources))
        groups = _text_needles[folded_keyword] = tuple(found)
    return groups


#: fold_sources.SOURCES as lists: per target character, its sources (filled on first use).
_source_lists: dict[str, list[str]] = {}


def fold(text: str) -> str:
    """NFC, casefold, NFC: the one comparison form of keywords, titles, paths and text."""
    if text.isascii():
        # ASCII is NFC already and its casefold is its lower case.
        return text.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def decode(data: bytes) -> str:
    """Page bytes as text: UTF-8 with invalid bytes replaced by U+FFFD, a leading BOM
    dropped; a page in UTF-16 or UTF-32 with its BOM decoded as such (``as_utf8``)."""
    data = as_utf8(data)
    if data.startswith(BOM):
        data = data[3:]
    return data.decode("utf-8", "replace")


def wide_codec(data: bytes) -> str | None:
    """The codec of a page that starts with a UTF-16 or UTF-32 byte order mark, else None."""
    if data[:1] and data[0] in WIDE_BOM_LEADS:
        for mark, codec in WIDE_BOMS:
            if data.startswith(mark):
                return codec
    return None


def as_utf8(data: bytes) -> bytes:
    """A page's bytes as every reader takes them: a page in UTF-16 or UTF-32 with a byte
    order mark transcoded to UTF-8 (its mark dropped, invalid units replaced by U+FFFD), as
    rg reads it; any other page as it is. Every reader of a page's text and frontmatter
    (find's scan, the index, recall, lint) starts from these bytes, so all of them read a
    wide page alike."""
    codec = wide_codec(data)
    return data if codec is None else data.decode(codec, "replace").encode("utf-8")


def is_text(data: bytes) -> bool:
    """Whether a page (its ``as_utf8`` bytes, or their first ``TEXT_PROBE_BYTES``) reads as
    text: no NUL byte in its first ``TEXT_PROBE_BYTES``, as git and grep tell binary files."""
    return b"\0" not in data[:TEXT_PROBE_BYTES]


class TextMatcher:
    """Which of a fixed set of folded keywords occur in a page's text.

    One instance per page text; it lowers the bytes and folds the decoded text at most
    once each, and only when a keyword needs it.
    """

    __slots__ = ("_data", "_folded", "_is_ascii", "_lowered")

    def __init__(self, data: bytes):
        self._data = data
        self._is_ascii = data.isascii()
        self._lowered: bytes | None = None
        self._folded: str | None = None

    def folded_text(self) -> str:
        """The plain path: the decoded text, folded."""
        if self._folded is None:
            self._folded = fold(decode(self._data))
        return self._folded

    def contains(self, folded_keyword: str) -> bool:
        """Whether ``folded_keyword`` (already folded) occurs in the folded text."""
        if not folded_keyword.isascii():
            # Folded ASCII text is ASCII, so it cannot hold a non-ASCII keyword.
            if self._is_ascii:
                return False
            data = self._data
            for group in text_needles(folded_keyword):
                for needle in group:  # a loop, not any(): no generator per page and group
                    if needle in data:
                        break
                else:
                    return False
            return folded_keyword in self.folded_text()
        if self._lowered is None:
            self._lowered = self._data.lower() if self._is_ascii else self._data.translate(_LOWER_MARKING)
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
        # of its characters to a character outside ASCII that folds to it (ſ -> s). Such a
        # character stands in the page as its UTF-8 bytes (decoding with replacement makes
        # no character from other bytes), so a page without any of them cannot match; a
        # page with one is settled by the plain path.
        if FOLDING_MARK not in self._lowered:
            return False
        search = folding_search(folded_keyword)
        return search is not None and bool(search(self._lowered)) and folded_keyword in self.folded_text()

    def position(self, folded_keyword: str) -> tuple[int, int] | None:
        """Where ``folded_keyword`` first occurs in the folded text: (line, column), both
        counted from 0, the column in characters of the folded line (None: nowhere). Asked
        only of pages that match in their text alone, to order them; only the line holding
        the match is folded, unless the bytes cannot tell where it is."""
        if folded_keyword.isascii():
            if self._lowered is None:
                self._lowered = self._data.lower() if self._is_ascii else self._data.translate(_LOWER_MARKING)
            if self._is_ascii:
                found = self._lowered.find(folded_keyword.encode("ascii"))
                if found < 0:
                    return None
                line_start = self._lowered.rfind(b"\n", 0, found) + 1
                return self._lowered.count(b"\n", 0, found), found - line_start
            if self._folded is None:
                head = self._head_before(folded_keyword)
                if head is not None:
                    line_start = head.rfind(b"\n") + 1
                    line = head[line_start:]
                    # The head's fold is the folded text before the keyword, so its last line's
                    # fold is the folded line before it. decode drops a BOM only at the start.
                    if line.isascii():
                        column = len(line)
                    else:
                        column = len(fold(decode(line) if line_start == 0 else line.decode("utf-8", "replace")))
                    return head.count(b"\n"), column
        elif self._is_ascii:
            return None
        text = self.folded_text()
        found = text.find(folded_keyword)
        if found < 0:
            return None
        return text.count("\n", 0, found), found - (text.rfind("\n", 0, found) + 1)

    def _head_before(self, folded_keyword: str) -> bytes | None:
        """The bytes before the first occurrence of an ASCII keyword in the folded text of a
        page that is not ASCII, when the bytes alone prove where it is; None otherwise.

        The first occurrence in the lowered bytes stands in the folded text, unless a mark
        right after it composes with its last character. No occurrence comes before it when
        the bytes before it hold no character folding into one of the keyword's: one made of
        ASCII alone would be in the lowered bytes. The folded text then splits at the
        keyword's ASCII first byte, so the fold of the head is the folded text before it.
        """
        if self._lowered is None:
            self._lowered = self._data.translate(_LOWER_MARKING)
        needle = folded_keyword.encode("ascii")
        position = self._lowered.find(needle)
        if position < 0:
            return None
        after = position + len(needle)
        if after < len(self._lowered) and self._lowered[after] >= 0x80:
            return None
        search = folding_search(folded_keyword)
        if search is not None and FOLDING_MARK in self._lowered[:position] and search(self._lowered[:position]):
            return None
        return self._data[:position]
