"""The known-item benchmark's model, free of I/O: which queries an agent types for a page,
which pages answer a query, where the first of them ranks, and the metrics over ranks.

bench/run_retrieval.py runs find with these queries and writes docs/retrieval.md;
bench/tests/test_known_item.py holds these functions to hand-made rankings.
"""

from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING

from mnemosyne_core.fold import fold

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

#: What an agent leaves off a word it copies from a title: "(draft)" -> "draft",
#: "ADR-0004:" -> "adr-0004". Punctuation inside a word ("strings.Contains") stays.
EDGE_PUNCTUATION = string.punctuation + "—–…“”‘’«»"


class Page:
    """A page as find shows it: its path relative to the vault and its title."""

    __slots__ = ("path", "title")

    def __init__(self, path: str, title: str):
        self.path = path
        self.title = title

    @property
    def file_name(self) -> str:
        return self.path.rpartition("/")[2]

    def __repr__(self) -> str:
        return f"Page({self.path!r}, {self.title!r})"


def title_words(page: Page) -> list[str]:
    """The title typed as keywords: its lower-cased words, edge punctuation dropped."""
    words = (word.strip(EDGE_PUNCTUATION) for word in page.title.lower().split())
    return [word for word in words if word]


def file_name_words(page: Page) -> list[str]:
    """The file name pasted as one keyword, ``.md`` included (as find prints it)."""
    return [page.file_name]


#: Query kind -> how an agent turns a page into keywords.
QUERY_KINDS: dict[str, Callable[[Page], list[str]]] = {"title words": title_words, "file name": file_name_words}


def query_key(keywords: Iterable[str]) -> tuple[str, ...]:
    """What find can tell queries apart by: the set of folded keywords. find ANDs literal
    substrings, so neither the order of the keywords nor a repeated one changes its answer."""
    return tuple(sorted({fold(keyword) for keyword in keywords}))


class Query:
    """Keywords as typed for one page, and every page the same keywords stand for."""

    __slots__ = ("intended", "keywords", "relevant")

    def __init__(self, keywords: list[str], intended: Page, relevant: frozenset[str]):
        self.keywords = keywords
        self.intended = intended
        #: Paths of the pages whose query of the same kind has the same key: the query cannot
        #: tell them apart, so any of them is a hit (docs/retrieval.md, "Ambiguous queries").
        self.relevant = relevant

    @property
    def ambiguous(self) -> bool:
        return len(self.relevant) > 1


def queries(pages: Sequence[Page], kind: str) -> list[Query]:
    """One query per distinct key, made from the first page (in path order) that yields it;
    sorted by key so that sampling is deterministic."""
    make = QUERY_KINDS[kind]
    by_key: dict[tuple[str, ...], list[tuple[list[str], Page]]] = {}
    for page in sorted(pages, key=lambda page: page.path):
        keywords = make(page)
        if keywords:
            by_key.setdefault(query_key(keywords), []).append((keywords, page))
    return [
        Query(found[0][0], found[0][1], frozenset(page.path for _, page in found))
        for _, found in sorted(by_key.items())
    ]


def sample(items: Sequence[Query], size: int, seed: int) -> list[Query]:
    """``size`` of ``items`` chosen by ``seed`` in their order (all when size is 0 or more
    than there are)."""
    if size <= 0 or size >= len(items):
        return list(items)
    chosen = sorted(random.Random(seed).sample(range(len(items)), size))  # noqa: S311 - not secrets
    return [items[index] for index in chosen]


def rank_of(ranking: Sequence[str], relevant: frozenset[str] | set[str]) -> int | None:
    """The 1-based position of the first relevant path in ``ranking``; None when absent."""
    for position, path in enumerate(ranking, start=1):
        if path in relevant:
            return position
    return None


def hit_at(ranks: Sequence[int | None], k: int) -> float:
    """The share of queries whose first relevant page is within the first ``k``."""
    if not ranks:
        raise ValueError("no ranks: hit@k of no queries is undefined")
    return sum(1 for rank in ranks if rank is not None and rank <= k) / len(ranks)


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """The mean of 1/rank, counting a query whose page is missing as 0."""
    if not ranks:
        raise ValueError("no ranks: the MRR of no queries is undefined")
    return sum(1 / rank for rank in ranks if rank is not None) / len(ranks)


# --- the order of issue 11, as a plain reference (to explain a miss, never to rank) -------


def starts_word(text: str, keyword: str) -> bool:
    """Whether ``keyword`` occurs in ``text`` at the start or right after a character that
    is not a letter or digit (both folded)."""
    start = text.find(keyword)
    while start >= 0:
        if start == 0 or not text[start - 1].isalnum():
            return True
        start = text.find(keyword, start + 1)
    return False


def order_key(page: Page, keywords: Sequence[str]) -> tuple[bool, bool, bool, int, str]:
    """The sort key of issue 11 section 2 for a page that holds every keyword: group 2 (not
    every keyword in title or path) after group 1; in group 1, title alone holding them all,
    then every keyword starting a word, then the shorter folded title, then the path.
    Group 2 sorts by path alone."""
    folded = [fold(keyword) for keyword in keywords]
    title, path = fold(page.title), fold(page.path)
    if not all(keyword in title or keyword in path for keyword in folded):
        return (True, True, True, 0, page.path)
    in_title = all(keyword in title for keyword in folded)
    at_word_start = all(starts_word(title if keyword in title else path, keyword) for keyword in folded)
    return (False, not in_title, not at_word_start, len(title), page.path)


KEY_NAMES = (
    "the intended page matches only in its text (group 2)",
    "a keyword is in the intended page's path, not its title (key 1)",
    "a keyword does not start a word in the intended page (key 2)",
    "a shorter title holds every keyword (key 3)",
    "an equal-length title holds every keyword; the path decides (key 4)",
)


def why_behind(intended: Page, first: Page, keywords: Sequence[str]) -> str:
    """Which key of the order puts ``first`` before ``intended``: the first one where they
    differ, named as in KEY_NAMES."""
    mine, theirs = order_key(intended, keywords), order_key(first, keywords)
    for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        if a != b:
            return KEY_NAMES[index]
    return KEY_NAMES[-1]


def spec_order(paths: Iterable[str], pages: Mapping[str, Page], keywords: Sequence[str]) -> list[str]:
    """``paths`` sorted by ``order_key``."""
    return sorted(paths, key=lambda path: order_key(pages[path], keywords))
