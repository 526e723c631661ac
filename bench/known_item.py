"""The known-item benchmark's model, free of I/O: which queries an agent types for a page,
which pages answer a query, where the first of them ranks, and the metrics over ranks.
Needs packages/mnemosyne-core/tests on the import path (the order's plain reference).

bench/run_retrieval.py runs find with these queries and writes docs/retrieval.md;
bench/tests/test_known_item.py holds these functions to hand-made rankings.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from reference_order import plain_fold, reference_sort_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

#: What an agent leaves off a word it copies from a title: "(draft)" -> "draft",
#: "ADR-0004:" -> "adr-0004". A leading "-" or "." stays ("-v" is a command's name), and so
#: does punctuation inside a word ("strings.Contains").
LEADING_PUNCTUATION = "([{<\"'“‘«"
TRAILING_PUNCTUATION = ")]}>\"'”’»:;,.!?…"


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
    """The title typed as keywords: its lower-cased words, punctuation around them dropped."""
    words = (word.lstrip(LEADING_PUNCTUATION).rstrip(TRAILING_PUNCTUATION) for word in page.title.lower().split())
    # A word without a letter or digit ("—", "&") is not typed.
    return [word for word in words if any(character.isalnum() for character in word)]


def file_name_words(page: Page) -> list[str]:
    """The file name pasted as one keyword, ``.md`` included (as find prints it)."""
    return [page.file_name]


#: Query kind -> how an agent turns a page into keywords.
QUERY_KINDS: dict[str, Callable[[Page], list[str]]] = {"title words": title_words, "file name": file_name_words}


def query_key(keywords: Iterable[str]) -> tuple[str, ...]:
    """What find can tell queries apart by: the set of folded keywords. find ANDs literal
    substrings, so neither the order of the keywords nor a repeated one changes its answer."""
    return tuple(sorted({plain_fold(keyword) for keyword in keywords}))


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


def most_rivalled_file_names(items: Sequence[Query], size: int) -> list[Query]:
    """The ``size`` file-name queries with the most rivals, most first (ties by key): pages
    whose file name ends with the query's at a word start (``images.md`` in
    ``caching__images.md``), which the order can put before the intended page. A sample
    rarely holds these; the bar says the page is *always* in the default 20."""
    ends_with: dict[str, int] = {}
    for query in items:
        for path in query.relevant:
            name = plain_fold(path.rpartition("/")[2])
            for start in range(len(name)):
                if start == 0 or not name[start - 1].isalnum():
                    ends_with[name[start:]] = ends_with.get(name[start:], 0) + 1

    def rivals(query: Query) -> int:
        return ends_with.get(plain_fold(query.keywords[0]), 0) - len(query.relevant)

    ranked = sorted(items, key=lambda query: (-rivals(query), query_key(query.keywords)))
    return [query for query in ranked[:size] if rivals(query) > 0]


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


# --- the order of issue 11, to explain a miss (never to rank) ----------------------------


def order_key(page: Page, keywords: Sequence[str]) -> tuple[object, ...]:
    """The spec's sort key of a page that holds every keyword: the core tests' plain
    reference (packages/mnemosyne-core/tests/reference_order.py), not find's code."""
    folded = list(dict.fromkeys(plain_fold(keyword) for keyword in keywords))
    return reference_sort_key(folded, page.title, page.path)


#: Why a page sorts before another, by the index of the first key where they differ.
KEY_NAMES = (
    "the intended page matches only in its text (group 2)",
    "a keyword is in the intended page's path, not its title (key 1)",
    "a keyword does not start a word in the intended page (key 2)",
    "a shorter title holds every keyword (key 3)",
    "an equal-length title holds every keyword; the path decides (key 4)",
)
BOTH_IN_TEXT = "both match only in their text; the path decides (group 2)"


def why_behind(intended: Page, first: Page, keywords: Sequence[str]) -> str:
    """Which key of the order puts ``first`` before ``intended``: the first one where they
    differ, named as in KEY_NAMES."""
    mine, theirs = order_key(intended, keywords), order_key(first, keywords)
    if mine[0] == theirs[0] == 1:
        return BOTH_IN_TEXT
    for index, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            return KEY_NAMES[index]
    return KEY_NAMES[-1]


def spec_order(paths: Iterable[str], pages: Mapping[str, Page], keywords: Sequence[str]) -> list[str]:
    """``paths`` sorted by ``order_key``."""
    return sorted(paths, key=lambda path: order_key(pages[path], keywords))
