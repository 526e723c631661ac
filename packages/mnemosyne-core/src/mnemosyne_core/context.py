"""Why a page that only mentions the keywords matched: the one line of its text that shows
it best, trimmed to about ``WIDTH`` characters around the keywords (docs/spec.md, rule 11).

Pure: it is handed a page's bytes and the folded keywords, whoever read the page (the scan,
a server, or the caller after the search), and matches as find does (``fold.fold`` per
line: a page's folded text is its lines' folds joined by newlines, since NFC composes
nothing across a line break). No I/O but ``context_of``'s one read.
"""

from __future__ import annotations

import unicodedata

from mnemosyne_core.fold import as_utf8, decode, fold, folded_text
from mnemosyne_core.record import HashableRecord

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence

#: About how many characters of the line a context shows (the ellipses not counted): one
#: terminal line with the indent, enough for a sentence around the keywords.
WIDTH = 100
#: Where the line is cut: one character, as find's other shortened lists end in it.
ELLIPSIS = "…"
#: How many characters of the line a cut leaves before the first keyword when the
#: keywords alone are wider than the context: a few words to read them by.
LEAD = 20


class Context(HashableRecord):
    """One line of a page's text: its number (1-based), the text shown (the line stripped
    of surrounding whitespace, tabs as spaces, cut to about ``WIDTH`` characters with
    ``ELLIPSIS`` where it was cut) and where each keyword occurs in that text, as
    (start, end) character spans in order (for colour; never overlapping)."""

    __slots__ = ("line", "marks", "text")

    def __init__(self, line: int, text: str, marks: tuple[tuple[int, int], ...] = ()):
        self.line = line
        self.text = text
        self.marks = marks

    def to_dict(self) -> dict[str, int | str]:
        """The context as find --json --matched reports it."""
        return {"line": self.line, "text": self.text}


def best_line(data: bytes, folded_keywords: Sequence[str]) -> Context | None:
    """The line of the page ``data`` that holds the most of ``folded_keywords`` (each
    counted once, folded as ``fold.fold`` folds), the earliest of those; None when no line
    holds any (a keyword only the title or path holds, or one spanning lines, counts for
    no line). A line holding every keyword the page's text holds ends the search early."""
    keywords = tuple(dict.fromkeys(folded_keywords))
    data = as_utf8(data)  # a wide page's lines are its text's, as find reads it
    whole = folded_text(data)
    # The most a line can hold: the keywords the text holds at all (a page matched by its
    # path holds some only there).
    in_text = sum(keyword in whole for keyword in keywords)
    if not in_text:
        return None
    best_number, best_count, best_text = 0, 0, ""
    for number, line in enumerate(data.split(b"\n"), start=1):
        # decode drops a byte order mark only at the very start of the page.
        text = decode(line) if number == 1 else line.decode("utf-8", "replace")
        folded = fold(text)
        count = sum(keyword in folded for keyword in keywords)
        if count > best_count:
            best_number, best_count, best_text = number, count, text
            if count == in_text:
                break
    if not best_count:
        return None
    return trimmed(best_number, best_text, keywords)


def trimmed(number: int, line: str, folded_keywords: Sequence[str]) -> Context:
    """Line ``number``, whose text is ``line``, as a Context: stripped, tabs as spaces, and
    when longer than ``WIDTH`` cut to a window around the first occurrence of each keyword
    (centred on them, or from ``LEAD`` characters before the first when they are wider)."""
    line = line.rstrip("\r").replace("\t", " ").strip()
    spans = keyword_spans(line, folded_keywords)
    if len(line) <= WIDTH:
        return Context(number, line, spans)
    firsts = [next((span for span in spans if _holds(line, span, keyword)), None) for keyword in folded_keywords]
    found = [span for span in firsts if span is not None]
    if found:
        left, right = min(start for start, _ in found), max(end for _, end in found)
    else:
        left = right = 0
    # Centred on the keywords when they fit; else from a few words before the first.
    start = left - (WIDTH - (right - left)) // 2 if right - left <= WIDTH else left - LEAD
    start = max(0, min(start, len(line) - WIDTH))
    end = start + WIDTH
    prefix = ELLIPSIS if start else ""
    suffix = ELLIPSIS if end < len(line) else ""
    shift = len(prefix) - start
    marks = tuple(
        (max(mark_start, start) + shift, min(mark_end, end) + shift)
        for mark_start, mark_end in spans
        if mark_end > start and mark_start < end
    )
    return Context(number, prefix + line[start:end] + suffix, marks)


def keyword_spans(line: str, folded_keywords: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Where the keywords occur in ``line``, as (start, end) spans of its characters,
    sorted, overlapping ones merged. A fold can change a text's length (ß folds to ss), so
    the line is folded piece by piece: a character with the combining marks after it,
    which NFC may compose. A span is kept only when the fold of the characters it covers
    holds its keyword; one that cannot be placed so (a composition across such pieces,
    as Hangul jamo make) is not marked."""
    owner: Sequence[int]
    starts: Sequence[int]
    ends: Sequence[int]
    if line.isascii():
        folded, owner, starts, ends = line.lower(), range(len(line)), range(len(line)), range(1, len(line) + 1)
    else:
        pieces: list[str] = []
        starts_list: list[int] = []
        ends_list: list[int] = []
        owner_list: list[int] = []
        index = 0
        while index < len(line):
            after = index + 1
            while after < len(line) and unicodedata.combining(line[after]):
                after += 1
            piece = fold(line[index:after])
            pieces.append(piece)
            owner_list += [len(starts_list)] * len(piece)
            starts_list.append(index)
            ends_list.append(after)
            index = after
        folded, owner, starts, ends = "".join(pieces), owner_list, starts_list, ends_list
    spans = []
    for keyword in dict.fromkeys(folded_keywords):
        if not keyword:
            continue
        position = folded.find(keyword)
        while position >= 0:
            span = (starts[owner[position]], ends[owner[position + len(keyword) - 1]])
            if _holds(line, span, keyword):
                spans.append(span)
            position = folded.find(keyword, position + 1)
    return _merged(sorted(spans))


def _holds(line: str, span: tuple[int, int], keyword: str) -> bool:
    return keyword in fold(line[span[0] : span[1]])


def _merged(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)


def context_of(vault: str, rel_path: str, folded_keywords: Sequence[str]) -> Context | None:
    """The best line (``best_line``) of the page at ``rel_path`` of the vault at ``vault``
    (a real path), read now with the caller's own rights by the scan's rules
    (``page.read_listed_page``), whoever answered the search. OSError when the page can
    no longer be read."""
    from mnemosyne_core.page import read_listed_page

    data, _ = read_listed_page(vault, rel_path)
    return best_line(data, folded_keywords)
