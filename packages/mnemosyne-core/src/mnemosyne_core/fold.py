"""Case-insensitive matching in full Unicode, exact, and how a page's bytes are read as text.

The rule: a keyword matches a text when ``fold(keyword) in fold(text)``, where ``fold`` is
NFC, then ``İ`` and ``ı`` read as ``i``, then ``str.casefold``, then NFC again. So
"STRASSE" finds "Straße", the Kelvin sign finds "k", an NFD "café" is found by an NFC
"café", and "ALTYAPI" finds "Altyapı". Every reader folds a page's whole
decoded text (``folded_text``) and looks for the keyword in it: no reader decides from
the bytes alone, so there is one matcher to trust.
"""

from __future__ import annotations

import unicodedata

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
#: binary file, or UTF-16 or UTF-32 without a byte order mark.
TEXT_PROBE_BYTES = 1 << 14


#: Turkish and Azeri write one letter i in four forms: dotted and dotless, each in two
#: cases (``İ i`` and ``I ı``). ``str.casefold`` keeps the dotless ``ı`` apart and folds
#: ``İ`` to ``i`` and a combining dot (U+0307), so "DEĞİŞTİRİLEMEZ" did not find
#: "Değiştirilemez" and "ALTYAPI" did not find "Altyapı". Both are read as ``i`` first.
ONE_I = {0x0130: "i", 0x0131: "i"}


def fold(text: str) -> str:
    """NFC, ``İ`` and ``ı`` as ``i`` (``ONE_I``), casefold, NFC: the one comparison form of
    keywords, titles, paths and text."""
    if text.isascii():
        # ASCII is NFC already and its casefold is its lower case.
        return text.lower()
    text = unicodedata.normalize("NFC", text)
    if "\u0130" in text or "\u0131" in text:
        # After the first NFC, so that an I with a combining dot above (NFD) is İ already.
        text = text.translate(ONE_I)
    return unicodedata.normalize("NFC", text.casefold())


def decode(data: bytes) -> str:
    """Page bytes as text: UTF-8 with invalid bytes replaced by U+FFFD, a leading BOM
    dropped; a page in UTF-16 or UTF-32 with its BOM decoded as such (``as_utf8``)."""
    data = as_utf8(data)
    if data.startswith(BOM):
        data = data[3:]
    return data.decode("utf-8", "replace")


def as_utf8(data: bytes) -> bytes:
    """A page's bytes as every reader takes them: a page in UTF-16 or UTF-32 with a byte
    order mark transcoded to UTF-8 (its mark dropped, invalid units replaced by U+FFFD), as
    rg reads it; any other page as it is. Every reader of a page's text and frontmatter
    (find's scan, the index, recall, lint) starts from these bytes, so all of them read a
    wide page alike."""
    if data[:1] and data[0] in WIDE_BOM_LEADS:
        for mark, codec in WIDE_BOMS:
            if data.startswith(mark):
                return data.decode(codec, "replace").encode("utf-8")
    return data


def is_text(data: bytes) -> bool:
    """Whether a page (its ``as_utf8`` bytes, or their first ``TEXT_PROBE_BYTES``) reads as
    text: no NUL byte in its first ``TEXT_PROBE_BYTES``, as git and grep tell binary files."""
    return b"\0" not in data[:TEXT_PROBE_BYTES]


def folded_text(data: bytes) -> str:
    """A page's whole text (its ``as_utf8`` bytes), decoded and folded: what a keyword is
    looked for in."""
    return fold(decode(data))


def position(folded: str, folded_keyword: str) -> tuple[int, int] | None:
    """Where ``folded_keyword`` first occurs in the folded text ``folded``: (line, column),
    both counted from 0, the column in characters of the folded line (None: nowhere)."""
    found = folded.find(folded_keyword)
    if found < 0:
        return None
    return folded.count("\n", 0, found), found - (folded.rfind("\n", 0, found) + 1)


#: Every ASCII byte that is not a letter or digit, as a space: most text splits into words
#: by ``bytes.translate`` and ``str.split``, in C (``str.translate`` takes a dict lookup a
#: character once a text holds one non-ASCII character; ``re`` stays unimported: start-up time).
_ASCII_SPACES = bytes(code if code >= 128 or chr(code).isalnum() else 32 for code in range(256))


def words_of(folded: str) -> set[str]:
    """The distinct words of a folded text: its runs of letters and digits (``str.isalnum``),
    split at everything else (``_`` too, so ``coming_from_bash`` holds ``bash``). What a
    miss's "did you mean" takes words from, the index's vocabulary and the scan's alike."""
    spaced = folded.encode("utf-8", "surrogatepass").translate(_ASCII_SPACES).decode("utf-8", "surrogatepass")
    words = set(spaced.split())
    if spaced.isascii():
        return words  # every ASCII byte left between spaces is a letter or digit
    odd = [token for token in words if not token.isalnum()]
    for token in odd:
        # A token with a character beyond ASCII that is no letter or digit: split by hand.
        words.discard(token)
        start = None
        for at, char in enumerate(token):
            if char.isalnum():
                if start is None:
                    start = at
            elif start is not None:
                words.add(token[start:at])
                start = None
        if start is not None:
            words.add(token[start:])
    return words


def holds_whole(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` as a whole word: not inside a longer run of letters
    and digits (``words_of``)."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(word, at + 1)
    return False
