"""The known-item benchmark's model, free of I/O: which queries an agent types for a page,
which pages answer a query, where the first of them ranks, and the metrics over ranks.
Needs packages/mnemosyne-core/tests on the import path (the order's plain reference).

bench/run_retrieval.py runs find with these queries and writes docs/retrieval.md;
bench/tests/test_known_item.py holds these functions to hand-made rankings.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, TypeVar

from reference_order import mention_depth, plain_fold, reference_sort_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

T = TypeVar("T")

#: What an agent leaves off a word it copies from a title: "(draft)" -> "draft",
#: "ADR-0004:" -> "adr-0004". A leading "-" or "." stays ("-v" is a command's name), and so
#: does punctuation inside a word ("strings.Contains").
LEADING_PUNCTUATION = "([{<\"'“‘«"
TRAILING_PUNCTUATION = ")]}>\"'”’»:;,.!?…"


class Page:
    """A page as find shows it: its path relative to the vault and its title; for the
    topic queries and the order of the mentions, also its decoded text and aliases."""

    __slots__ = ("_folded_text", "aliases", "path", "text", "title")

    def __init__(self, path: str, title: str, text: str = "", aliases: Sequence[str] = ()):
        self.path = path
        self.title = title
        self.text = text
        self.aliases = tuple(aliases)
        self._folded_text: str | None = None

    @property
    def folded_text(self) -> str:
        if self._folded_text is None:
            self._folded_text = plain_fold(self.text)
        return self._folded_text

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


#: The seed of the topic words drawn from each page (with its path, so that a page's query
#: does not depend on the other pages).
TOPIC_SEED = 11
#: How many words a topic query draws, and the shortest word it takes: shorter words are
#: mostly the glue of sentences ("the", "and"), not what anyone searches for.
TOPIC_WORDS = 2
TOPIC_MIN_LENGTH = 4


def opening_paragraph(text: str) -> str:
    """The first line of a page's body text: after the frontmatter, not blank, not a
    heading; a quote's ``>`` dropped (a command page opens with its description quoted)."""
    lines = text.split("\n")
    if lines and lines[0].rstrip("\r") == "---":
        closing = next((index for index in range(1, len(lines)) if lines[index].rstrip("\r") == "---"), None)
        if closing is not None:
            lines = lines[closing + 1 :]
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped.lstrip("> ")
    return ""


def topic_words(page: Page) -> list[str]:
    """What an agent types who remembers what a page says but not what it is called: words
    of its opening paragraph that its title and path do not hold, drawn by a seed. Such a
    query never names the page (it matches in its text alone), so the order of the
    mentions (docs/spec.md rule 8, group 2) decides where it lands."""
    folded_title, folded_path = plain_fold(page.title), plain_fold(page.path)
    candidates = []
    for word in plain_fold(opening_paragraph(page.text)).split():
        word = word.strip(LEADING_PUNCTUATION + TRAILING_PUNCTUATION + "`*_")
        if (
            len(word) >= TOPIC_MIN_LENGTH
            and word.isalpha()
            and word not in folded_title
            and word not in folded_path
            and word not in candidates
        ):
            candidates.append(word)
    if not candidates:
        return []
    rng = random.Random(f"{TOPIC_SEED}:{page.path}")  # noqa: S311 - not secrets
    return rng.sample(candidates, min(TOPIC_WORDS, len(candidates)))


#: Query kind -> how an agent turns a page into keywords.
QUERY_KINDS: dict[str, Callable[[Page], list[str]]] = {
    "title words": title_words,
    "file name": file_name_words,
    "topic words": topic_words,
}


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
    """``sample_items`` of queries."""
    return sample_items(items, size, seed)


def sample_items(items: Sequence[T], size: int, seed: int) -> list[T]:
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


# --- the known-item order (docs/spec.md rule 8), to explain a miss (never to rank) -------


def order_key(page: Page, keywords: Sequence[str]) -> tuple[object, ...]:
    """The spec's sort key of a page that holds every keyword: the core tests' plain
    reference (packages/mnemosyne-core/tests/reference_order.py), not find's code."""
    folded = list(dict.fromkeys(plain_fold(keyword) for keyword in keywords))
    return reference_sort_key(folded, page.title, page.path, page.text, page.aliases)


#: Why a page sorts before another, by the index of the first key where they differ.
KEY_NAMES = (
    "the first page is named by its whole path, or the intended page matches only in its text (group)",
    "a keyword does not start a word in the intended page (key 1)",
    "no one name (title, file name, alias) of the intended page holds every keyword (key 2)",
    "a shorter name (or path, where title and path hold them together) holds every keyword (key 3)",
    "the first page's title or file name holds every keyword where the intended page's file name or alias does (key 4)",
    "the first page lies under a dir [order] prefer puts first (key 5)",
    "an equal-length name holds every keyword; the path decides (key 6)",
)
BOTH_IN_TEXT = "both match only in their text; the one holding every keyword sooner comes first (group 2)"


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


# --- other orders, measured against find's own -------------------------------------------


def heading_holds_all(page: Page, folded_keywords: Sequence[str]) -> bool:
    """Whether one heading line (``#`` first) of the page holds every keyword."""
    return any(
        line.lstrip().startswith("#") and all(keyword in line for keyword in folded_keywords)
        for line in page.folded_text.split("\n")
    )


def occurrences(page: Page, folded_keywords: Sequence[str]) -> int:
    """How many times the keywords occur in the page's text, all together."""
    return sum(page.folded_text.count(keyword) for keyword in folded_keywords)


#: Candidate orders of the pages that only mention the keywords (group 2), each a sort key
#: over (page, folded keywords); the first is what find did before, the second what it
#: does now (docs/spec.md rule 8).
MENTION_ORDERS: dict[str, Callable[[Page, Sequence[str]], tuple[object, ...]]] = {
    "by path (the old order)": lambda page, keywords: (page.path,),
    "mention depth, then path (find's order)": lambda page, keywords: (
        *mention_depth(list(keywords), page.folded_text),
        page.path,
    ),
    "a heading holds every keyword, then path": lambda page, keywords: (
        not heading_holds_all(page, keywords),
        page.path,
    ),
    "most occurrences, then path": lambda page, keywords: (-occurrences(page, keywords), page.path),
    "a heading holds every keyword, then mention depth, then path": lambda page, keywords: (
        not heading_holds_all(page, keywords),
        *mention_depth(list(keywords), page.folded_text),
        page.path,
    ),
}


def reorder_mentions(
    ranking: Sequence[str], named: int, pages: Mapping[str, Page], keywords: Sequence[str], order: str
) -> list[str]:
    """find's ``ranking`` with its pages after the first ``named`` (group 2) sorted by one
    of MENTION_ORDERS instead."""
    folded = list(dict.fromkeys(plain_fold(keyword) for keyword in keywords))
    key = MENTION_ORDERS[order]
    return [*ranking[:named], *sorted(ranking[named:], key=lambda path: key(pages[path], folded))]


def title_alone_first_key(page: Page, keywords: Sequence[str]) -> tuple[object, ...]:
    """The first-group key with keys 1 and 2 swapped: a name alone holding every keyword
    before every keyword starting a word, the order find had before word starts came first
    (the alternative measured in docs/retrieval.md)."""
    key = order_key(page, keywords)
    return (key[0], key[2], key[1], *key[3:])


def title_alone_first(
    ranking: Sequence[str], named: int, pages: Mapping[str, Page], keywords: Sequence[str]
) -> list[str]:
    """find's ``ranking`` with its first ``named`` pages (group 1) in the swapped order."""
    group_1 = sorted(ranking[:named], key=lambda path: title_alone_first_key(pages[path], keywords))
    return [*group_1, *ranking[named:]]


def alias_ties_by_path_key(page: Page, keywords: Sequence[str]) -> tuple[object, ...]:
    """The first-group key without key 4: an alias that ties with a title of equal weight
    is not put after it, so the path decides (the alternative measured in docs/retrieval.md,
    "A title before an alias")."""
    key = order_key(page, keywords)
    return (*key[:4], *key[5:]) if key[0] == 0 else key


def alias_ties_by_path(
    ranking: Sequence[str], named: int, pages: Mapping[str, Page], keywords: Sequence[str]
) -> list[str]:
    """find's ``ranking`` with its first ``named`` pages (group 1) sorted without key 4."""
    group_1 = sorted(ranking[:named], key=lambda path: alias_ties_by_path_key(pages[path], keywords))
    return [*group_1, *ranking[named:]]


def plain_ranking(pages: Mapping[str, Page], keywords: Sequence[str]) -> list[str]:
    """Every page holding every keyword in a name, its path or its text, in the spec's
    order, computed plainly (no find): how find would answer over ``pages`` as given, e.g.
    pages read without a convention, to measure what the convention changes."""
    folded = list(dict.fromkeys(plain_fold(keyword) for keyword in keywords))
    matching = [
        page.path
        for page in pages.values()
        if all(
            any(keyword in plain_fold(name) for name in (page.title, *page.aliases))
            or keyword in plain_fold(page.path)
            or keyword in page.folded_text
            for keyword in folded
        )
    ]
    return spec_order(matching, pages, keywords)


# --- locate-a-page tasks as an agent phrases them ----------------------------------------


class AgentTask:
    """One locate-a-page task: the vault (a fixture's label), what the agent was asked for,
    in words that describe the page rather than give its title, the keywords an agent
    types from that description, and the page that answers it."""

    __slots__ = ("answer", "description", "keywords", "vault")

    def __init__(self, vault: str, description: str, keywords: str, answer: str):
        self.vault = vault
        self.description = description
        self.keywords = keywords.split()
        self.answer = answer

    def __repr__(self) -> str:
        return f"AgentTask({self.vault!r}, {self.description!r})"


#: The tasks, on the vaults the repository ships (fixtures/vaults). The keywords are taken
#: from the description as an agent takes them: its content words, not the page's title
#: or file name (which the agent does not know), with stop words left out as the guide says.
AGENT_TASKS = (
    AgentTask(
        "mentions",
        "the RFC that added the question mark operator for early returns of errors",
        "question mark operator",
        "rfcs/0243-trait-based-exception-handling.md",
    ),
    AgentTask(
        "mentions",
        "the RFC for const generics: types generic over constant values",
        "const generics",
        "rfcs/2000-const-generics.md",
    ),
    AgentTask(
        "mentions",
        "the RFC that teaches the borrow checker that a borrow ends at its last use",
        "borrow checker last use",
        "rfcs/2094-nll.md",
    ),
    AgentTask(
        "mentions",
        "the RFC that introduced a mid-level intermediate representation of the compiler",
        "intermediate representation",
        "rfcs/1211-mir.md",
    ),
    AgentTask(
        "mentions",
        "the RFC that puts a keyword in front of trait objects",
        "trait objects keyword",
        "rfcs/2113-dyn-trait.md",
    ),
    AgentTask("mentions", "the proposal that added where clauses", "where clauses", "rfcs/0135-where.md"),
    AgentTask(
        "mentions",
        "the RFC about two-phase borrows, for calls nested in method calls",
        "two-phase borrows",
        "rfcs/2025-nested-method-calls.md",
    ),
    AgentTask(
        "mentions",
        "the RFC that allows types with destructors in constants and statics",
        "destructors constants",
        "rfcs/1440-drop-types-in-const.md",
    ),
    AgentTask("mentions", "the roadmap that set the goals for 2017", "roadmap 2017", "rfcs/1774-roadmap-2017.md"),
    AgentTask(
        "mentions",
        "the RFC that split raw pointers into const and mut",
        "raw pointers const mut",
        "rfcs/0068-const-unsafe-pointers.md",
    ),
    AgentTask(
        "mentions",
        "the RFC that made the built-in marker traits opt-in",
        "marker traits opt-in",
        "rfcs/0019-opt-in-builtin-traits.md",
    ),
    AgentTask("mentions", "the English guide to deploying the built site", "deploy", "docs/en__guides__deploy.md"),
    AgentTask(
        "mentions",
        "the English guide on how to optimise and store pictures",
        "optimise pictures",
        "docs/en__guides__images.md",
    ),
    AgentTask(
        "mentions",
        "the reference of every subcommand and flag of the build tool",
        "subcommand flag",
        "docs/en__reference__command-line.md",
    ),
    AgentTask("mentions", "the docs page on loading custom typefaces", "custom typefaces", "docs/en__guides__fonts.md"),
    AgentTask(
        "mentions",
        "the French page on importing an image chosen at render time",
        "import image",
        "docs/fr__guides__chargement-dynamique.md",
    ),
    AgentTask(
        "aion",
        "the decision to stay on Hetzner rather than move to Fly.io",
        "hetzner fly.io",
        "atlas/adr-hetzner-over-fly.md",
    ),
    AgentTask(
        "aion",
        "the postmortem of the API key that leaked in a public gist",
        "leaked key gist",
        "athena/postmortem-leaked-api-key.md",
    ),
    AgentTask("aion", "how to rotate the Slack bot's token", "slack token rotate", "athena/slack-token-rotation.md"),
    AgentTask("aion", "the remote build cache code-named Kestrel", "kestrel", "hephaistos/kestrel-build-cache.md"),
    AgentTask(
        "aion",
        "the record of how the Mastra framework decision was reached, step by step",
        "mastra decision",
        "analyses/mastra-framework-decision-trail.md",
    ),
    AgentTask(
        "aion",
        "the quarterly restore drill for restic backups",
        "restic restore drill",
        "hades/restic-restore-drill.md",
    ),
    AgentTask(
        "aion", "why the Python projects moved from Poetry to uv", "poetry uv", "hephaistos/uv-migration-decision.md"
    ),
    AgentTask(
        "aion",
        "the incident when the CI runners ran out of disk space",
        "runners disk space",
        "hephaistos/postmortem-ci-disk-full.md",
    ),
    AgentTask(
        "aion",
        "how long agent conversation logs are kept",
        "conversation logs kept",
        "hades/retention-decision-conversation-logs.md",
    ),
    AgentTask(
        "aion",
        "the nine days when no backup reached the offsite copy",
        "offsite backup nine days",
        "hades/postmortem-2025-09-backup-gap.md",
    ),
    AgentTask(
        "aion",
        "the pipeline that sends info-level events as an email digest",
        "email digest",
        "hermes/email-digest-pipeline.md",
    ),
    AgentTask(
        "aion",
        "the incident where prompts were cut off silently on Gemma",
        "gemma prompts cut silently",
        "proteus/postmortem-gemma-context-truncation.md",
    ),
    AgentTask(
        "aion", "the registry of which service binds which port", "port registry", "atlas/port-allocation-registry.md"
    ),
    AgentTask(
        "aion", "the STRIDE threat model of the fleet", "stride threat model", "analyses/threat-model-agent-fleet.md"
    ),
    AgentTask(
        "aion",
        "the runbook for the Tailscale subnet router in the home rack",
        "tailscale subnet router",
        "atlas/tailscale-subnet-router-runbook.md",
    ),
    AgentTask("known-item", "the command reference page of tar itself", "tar", "commands/tar.md"),
    AgentTask(
        "known-item",
        "the doc of Go's strings.Contains, not its ContainsAny",
        "strings.contains",
        "go/strings.contains.md",
    ),
)


# --- which line of a page shows why it matched (find --matched's context) ----------------


def _frontmatter_lines(lines: Sequence[str]) -> int:
    """How many of ``lines`` (a page's) its frontmatter takes, both ``---`` lines included."""
    if not lines or lines[0].rstrip("\r") != "---":
        return 0
    closing = next((index for index in range(1, len(lines)) if lines[index].rstrip("\r") == "---"), None)
    return 0 if closing is None else closing + 1


def _line_counts(page: Page, folded_keywords: Sequence[str]) -> list[int]:
    return [sum(keyword in line for keyword in folded_keywords) for line in page.folded_text.split("\n")]


def most_keywords_earliest(page: Page, folded_keywords: Sequence[str]) -> int | None:
    """find's rule, plainly: the line holding the most distinct keywords, the earliest."""
    counts = _line_counts(page, folded_keywords)
    best = max(counts, default=0)
    return counts.index(best) + 1 if best else None


def first_line_with_a_keyword(page: Page, folded_keywords: Sequence[str]) -> int | None:
    """The first line holding any keyword, as grep -m1 would show."""
    counts = _line_counts(page, folded_keywords)
    return next((index + 1 for index, count in enumerate(counts) if count), None)


def most_keywords_body_first(page: Page, folded_keywords: Sequence[str]) -> int | None:
    """find's rule over the body, the frontmatter only when the body holds no keyword."""
    counts = _line_counts(page, folded_keywords)
    skip = _frontmatter_lines(page.text.split("\n"))
    body = counts[skip:]
    best = max(body, default=0)
    if best:
        return skip + body.index(best) + 1
    return most_keywords_earliest(page, folded_keywords)


#: Candidate context lines, each a line number (1-based) of a page for the folded keywords
#: (None: no line holds one). The first is what find --matched shows.
CONTEXT_CHOICES: dict[str, Callable[[Page, Sequence[str]], int | None]] = {
    "most keywords, earliest (find's)": most_keywords_earliest,
    "first line holding a keyword": first_line_with_a_keyword,
    "most keywords, body before frontmatter": most_keywords_body_first,
}


def line_holds_all(page: Page, line: int | None, folded_keywords: Sequence[str]) -> bool:
    """Whether line ``line`` of the page holds every keyword its text holds."""
    if line is None:
        return False
    in_text = [keyword for keyword in folded_keywords if keyword in page.folded_text]
    text = page.folded_text.split("\n")[line - 1]
    return all(keyword in text for keyword in in_text)
