"""Words a missed keyword may have meant: ``find dataframs`` names ``dataframes``.

A miss whose keyword is in no page tells an agent which keyword emptied the search, not
what to type instead; it guessed again. The words suggested are words the searched pages
hold (``fold.words_of`` of their folded names and text) one or two edits from the folded
keyword, with the pages a find for each would list. They never change the match, stdout
or the exit code: they are said on stderr after the miss.

The index and the scan give the same words for every vault and keyword (a property test
holds them equal): both take the same ``near`` words through ``choose``. The index finds
them in its vocabulary (``NoteIndex.words_near``), which may still hold words no page
holds any more, or none of the searched ones; ``choose`` asks it, of each word it would
name, whether a searched page holds that word whole, as the scan's words are held.

Imported only on a miss: a find that matches never pays for it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from mnemosyne_core.index import NoteIndex

#: How many words a miss names per keyword.
MAX_SUGGESTIONS = 3
#: Keywords shorter than this get no suggestion: within two edits of "ab" lies every word
#: of four letters or less that shares a letter, a guess, not a hint.
MIN_KEYWORD = 4
#: Keywords shorter than this are allowed one edit, not two: two edits from "here" lie
#: "hermes" and "hero", words of another meaning.
TWO_EDITS_FROM = 6
#: Pages are counted up to this many (said "100+ pages"): a word in most pages is named as
#: surely, and counting all of them is most of what a suggestion would cost.
COUNT_CAP = 100

#: A word near a keyword: (edits, word).
Near = tuple[int, str]


def allowed_edits(folded_keyword: str) -> int:
    """How many edits a word named for ``folded_keyword`` may lie from it: none below
    ``MIN_KEYWORD`` characters, one below ``TWO_EDITS_FROM``, else two."""
    if len(folded_keyword) < MIN_KEYWORD:
        return 0
    return 2 if len(folded_keyword) >= TWO_EDITS_FROM else 1


def edits(first: str, second: str, most: int) -> int:
    """The Levenshtein distance between two words (insertions, deletions, substitutions),
    or ``most + 1`` when it is above ``most``: a far word stops the table early."""
    if abs(len(first) - len(second)) > most:
        return most + 1
    previous = list(range(len(second) + 1))
    for row, char in enumerate(first, 1):
        current = [row] + [0] * len(second)
        for column, other in enumerate(second, 1):
            current[column] = min(previous[column] + 1, current[column - 1] + 1, previous[column - 1] + (char != other))
        if min(current) > most:
            return most + 1
        previous = current
    return min(previous[-1], most + 1)


def near_words(folded_keyword: str, words: Iterable[str]) -> list[Near]:
    """The words of ``words`` within ``allowed_edits`` of the keyword (never itself), as
    (edits, word)."""
    most = allowed_edits(folded_keyword)
    near = []
    for word in words:
        if word != folded_keyword:
            distance = edits(folded_keyword, word, most)
            if distance <= most:
                near.append((distance, word))
    return near


def pieces(folded_keyword: str) -> tuple[str, str, str]:
    """(prefix, middle, suffix): disjoint pieces of the keyword such that a word within
    ``allowed_edits`` of it starts with the prefix, ends with the suffix, or holds the
    middle (empty under two edits). Align the word with the keyword: each edit falls in
    one piece's part, so with d edits and d + 1 pieces one part has none, and that part of
    the word is the piece itself: at its start for the first, at its end for the last.
    The middle has three characters, one trigram, so the index finds it by its trigram
    table; the prefix and suffix are ranges of its B-trees."""
    length = len(folded_keyword)
    if allowed_edits(folded_keyword) < 2:
        half = length // 2
        return folded_keyword[:half], "", folded_keyword[half:]
    start = (length - 3) // 2
    return folded_keyword[:start], folded_keyword[start : start + 3], folded_keyword[start + 3 :]


def choose(
    near: Iterable[Near], pages_holding: Callable[[str], int], held_whole: Callable[[str], bool]
) -> list[tuple[str, int]]:
    """The words named, with their page counts: of ``near``, those some searched page holds
    whole (``held_whole``), fewest edits first, then the most pages (``pages_holding``,
    counted up to ``COUNT_CAP``), then code-point order; at most ``MAX_SUGGESTIONS``. A
    word with no page is never named. ``held_whole`` is asked of the words in that order
    until enough are named: the index asks its pages, the scan knows it already."""
    ranked = sorted((distance, -pages, word) for distance, word in near for pages in [pages_holding(word)] if pages > 0)
    chosen: list[tuple[str, int]] = []
    for _distance, pages, word in ranked:
        if len(chosen) == MAX_SUGGESTIONS:
            break
        if held_whole(word):
            chosen.append((word, -pages))
    return chosen


def index_suggestions(index: NoteIndex, folded_keyword: str) -> list[tuple[str, int]]:
    """The words named for ``folded_keyword`` (in no page) from the index, over the pages
    its last ``top`` searched."""
    if not allowed_edits(folded_keyword):
        return []
    candidates = index.words_near(*pieces(folded_keyword), len(folded_keyword), allowed_edits(folded_keyword))
    near = near_words(folded_keyword, candidates)
    if not near:
        return []
    return choose(near, lambda word: index.word_pages(word, COUNT_CAP), index.held_whole)


def scan_suggestions(
    folded_keywords: Iterable[str], read_pages: Callable[[], Iterable[tuple[str, str]]]
) -> dict[str, list[tuple[str, int]]]:
    """For the scan: the words named for each of ``folded_keywords`` (keywords in no
    page), from the searched pages ``read_pages()`` gives, each as (its folded names, a
    newline between them, its folded text). It reads them at most twice: once for their
    words, once to count the pages holding the words near a keyword, as find counts a
    keyword (up to ``COUNT_CAP``). Only a miss pays for it."""
    wanted = [keyword for keyword in dict.fromkeys(folded_keywords) if allowed_edits(keyword)]
    if not wanted:
        return {}
    from mnemosyne_core.fold import words_of

    vocabulary: set[str] = set()
    for names, text in read_pages():
        vocabulary |= words_of(names)
        vocabulary |= words_of(text)
    near = {keyword: near_words(keyword, vocabulary) for keyword in wanted}
    counts = dict.fromkeys((word for found in near.values() for _, word in found), 0)
    if counts:
        for names, text in read_pages():
            for word in counts:
                counts[word] += word in names or word in text
    return {
        keyword: choose(found, lambda word: min(counts[word], COUNT_CAP), lambda _word: True)
        for keyword, found in near.items()
    }
