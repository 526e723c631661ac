"""``wiki find``: every page holding all keywords, in a deterministic order.

A keyword matches a page when its fold is a substring of the folded title, the folded
vault-relative path (``analyses/mastra-framework-decision-trail.md``) or the folded whole
file text (frontmatter included). ``judge`` is the one function that decides whether a page
matches and where it sorts (docs/spec.md, rule 8): the scan here and any other caller hand it
a page's inputs and never decide themselves. No scoring.
"""

from __future__ import annotations

import os

from mnemosyne_core.config import UNLISTED_PAGES, stem_of
from mnemosyne_core.diagnostics import Diagnostic
from mnemosyne_core.fold import as_utf8, fold, folded_text, is_text, position
from mnemosyne_core.frontmatter import string_field
from mnemosyne_core.page import open_page, read_to_end, unreadable_warning
from mnemosyne_core.pagefields import aliases_of, page_fields, page_title
from mnemosyne_core.results import (  # FindResult, Match and TITLE are find's API too
    DEFAULT_LIMIT,
    PATH,
    TEXT,
    TITLE,
    FindResult,
    Match,
    keyword_counts,
    prepare_query,
    shown_match,
)
from mnemosyne_core.vault import left_out_files, listed_vault, preferred_dirs  # preferred_dirs: the index's too

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Any

    from mnemosyne_core.vault import Scan

    #: Where a matching page sorts: (group: -1 the page a keyword is the path of, 0 a
    #: named page, 1 one that only mentions the keywords; a keyword starts no word, no name
    #: alone holds every keyword, name length (first group) or mention depth's line
    #: (second group), which name: 0 title, 1 stem, 2 alias (first group) or mention depth's column
    #: (second group), the place of its preferred dir in ``[order] prefer``, path);
    #: compared as a tuple, smallest first. See ``judge``.
    SortKey = tuple[int, int, int, int, int, int, str]


def starts_word(folded_keyword: str, folded_text: str) -> bool:
    """Whether ``folded_keyword`` occurs in ``folded_text`` at its very beginning or right
    after a character that is not a letter or digit (``str.isalnum`` false)."""
    position = folded_text.find(folded_keyword)
    while position >= 0:
        if position == 0 or not folded_text[position - 1].isalnum():
            return True
        position = folded_text.find(folded_keyword, position + 1)
    return False


def judge(
    keywords: tuple[str, ...],
    rel_path: str,
    folded_path: str,
    folded_title: str,
    text_contains: Callable[[str], bool],
    text_position: Callable[[str], tuple[int, int] | None],
    folded_aliases: Sequence[str] = (),
    prefer: Sequence[str] = (),
) -> tuple[list[bool], SortKey | None]:
    """Decide one page: whether each folded keyword is in it, and its sort key (None unless
    it holds every keyword). The only place find decides a match or an order.

    ``text_contains(keyword)`` answers for the page's whole folded text; it is asked only
    about the keywords that title, aliases and path lack. ``text_position(keyword)`` is
    where the keyword first occurs in that text, (line, column) with the column in
    characters (None: nowhere); it is asked only about a page that matches in its text
    alone.
    ``folded_aliases`` are the page's other names (frontmatter ``aliases``); ``prefer``
    the vault's preferred dirs (``[order] prefer``, each ending in '/').

    The order is docs/spec.md rule 8 (its reasons are there): the sort key (``SortKey``)
    holds its keys in turn, smallest first; ``named_key`` makes a named page's,
    ``mention_depth`` places the rest (first key 1).
    """
    holds = [keyword in folded_title or keyword in folded_path for keyword in keywords]
    if folded_aliases:
        holds = [
            present or any(keyword in alias for alias in folded_aliases)
            for keyword, present in zip(keywords, holds, strict=True)
        ]
    key = named_key(keywords, rel_path, folded_path, folded_title, folded_aliases, prefer) if all(holds) else None
    if key is None:
        holds = [present or text_contains(keyword) for keyword, present in zip(keywords, holds, strict=True)]
        if not all(holds):
            return holds, None
    if folded_path in keywords:
        return holds, (-1, 0, 0, 0, 0, preferred_rank(rel_path, prefer), rel_path)
    if key is not None:
        return holds, key
    line, column = mention_depth(keywords, text_position)
    return holds, (1, 0, 0, line, column, preferred_rank(rel_path, prefer), rel_path)


def preferred_rank(rel_path: str, prefer: Sequence[str]) -> int:
    """Where the page at ``rel_path`` sorts among pages tied on every other key: the index
    in ``prefer`` of the first entry ``rel_path`` starts with; a page that starts with
    none sorts at the index of ``UNLISTED_PAGES`` (``"./"``, which no path starts with)
    when ``prefer`` holds it, else at ``len(prefer)``, after all. So ``["./", "ja/"]``
    puts every page outside ``ja/`` (0) before the pages in it (1), and without a
    preference every page ranks 0 and the path alone orders them."""
    for index, prefix in enumerate(prefer):
        if rel_path.startswith(prefix):
            return index
    return prefer.index(UNLISTED_PAGES) if UNLISTED_PAGES in prefer else len(prefer)


def named_key(
    keywords: tuple[str, ...],
    rel_path: str,
    folded_path: str,
    folded_title: str,
    folded_aliases: Sequence[str],
    prefer: Sequence[str] = (),
) -> SortKey | None:
    """The first-group key of a page (``judge``), or None when neither one of its names
    alone nor its title and path together hold every keyword."""
    best: SortKey | None = None
    rank = preferred_rank(rel_path, prefer) if prefer else 0
    stem = stem_of(folded_path.rpartition("/")[2])
    for which, name in ((0, folded_title), (1, stem), *((2, alias) for alias in folded_aliases)):
        if all(keyword in name for keyword in keywords):
            words_start = all(starts_word(keyword, name) for keyword in keywords)
            key = (0, not words_start, 0, len(name), which, rank, rel_path)
            if best is None or key < best:
                best = key
    if best is not None:
        return best
    if not all(keyword in folded_title or keyword in folded_path for keyword in keywords):
        return None
    words_start = all(
        starts_word(keyword, folded_title if keyword in folded_title else folded_path) for keyword in keywords
    )
    return (0, not words_start, 1, len(folded_path), 0, rank, rel_path)


def mention_depth(keywords: tuple[str, ...], text_position: Callable[[str], tuple[int, int] | None]) -> tuple[int, int]:
    """How far into its folded text a page holds every keyword: the (line, column) where
    the shortest start of the text that contains each keyword the text holds ends (a
    keyword only a name or the path holds adds nothing). The page that names the keywords
    on an earlier line, in its frontmatter or opening lines, is the one about them."""
    depth = (0, 0)
    for keyword in keywords:
        position = text_position(keyword)
        if position is not None:
            depth = max(depth, (position[0], position[1] + len(keyword)))
    return depth


def matched_by(key: SortKey) -> str:
    """Where a page with this sort key (``judge``) matched: "path" when a keyword is its
    path, or its title and path together hold every keyword, "title" when its title, stem
    or an alias alone does, "text" when only its text completes them."""
    if key[0] > 0:
        return TEXT
    return PATH if key[0] < 0 or key[2] else TITLE


def search(
    vault: str | os.PathLike[str] | None,
    keywords: Sequence[str],
    *,
    limit: int = DEFAULT_LIMIT,
    dirs: Sequence[str] | None = None,
    keep_content: bool = False,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
    listing: Scan | None = None,
) -> FindResult:
    """The pages holding every keyword, for the arguments of ``backend.FindRequest``
    (``total`` counts the matches past ``limit`` too); ``listing`` is the vault's listing
    when the caller made it already (``vault.scan``, same dirs). Raises VaultError or
    InvalidQueryError; a page that cannot be read is a warning.
    """
    folded = prepare_query(keywords, limit)
    pages = listing if listing is not None else listed_vault(vault, dirs, environ, cwd, home)
    result = Tally(pages, folded, limit, keep_content, preferred_dirs(pages)).run().result(keywords)
    if result.total == 0 and not result.incomplete:
        # The scan listed every searched dir, in this process: the files the miss note
        # counts are among what it passed over, so none is listed again.
        result.left_out = left_out_files(pages)
        result.suggestions = _scan_suggestions(pages, result)
    return result


def _scan_suggestions(pages: Scan, result: FindResult) -> dict[str, list[tuple[str, int]]]:
    """A miss's suggestions (``suggest``) for the keywords in no page, from the searched
    pages read again: only a miss with such a keyword pays for it."""
    missed = [fold(keyword) for keyword, count in result.keyword_counts.items() if count == 0]
    if not missed:
        return {}
    from mnemosyne_core.suggest import scan_suggestions

    def read_pages() -> Iterator[tuple[str, str]]:
        for _, name, rel_path, read_path in pages.page_paths():
            try:
                fd = open_page(read_path)
                try:
                    data = as_utf8(read_to_end(fd))
                finally:
                    os.close(fd)
            except OSError:
                continue  # the search said so already, or the page went since
            fields = page_fields(data)
            title = page_title(data, fields, stem_of(name), pages.heading_titles)
            # The names as the index keeps them: title, path, aliases, a newline between.
            names_of = "\n".join((fold(title), fold(rel_path), *map(fold, aliases_of(fields))))
            yield names_of, folded_text(data)

    found = scan_suggestions(missed, read_pages)
    return {keyword: found[fold(keyword)] for keyword in result.keyword_counts if found.get(fold(keyword))}


class Tally:
    """One search over the listed ``pages``, and what it found so far: the pages ``judge``
    matched (the best ``limit`` of them), the keyword counts, the unreadable pages."""

    __slots__ = (
        "counts",
        "exact",
        "keep_content",
        "kept",
        "keywords",
        "limit",
        "named",
        "not_text",
        "pages",
        "prefer",
        "searched",
        "total",
        "unreadable",
        "warnings",
    )

    def __init__(self, pages: Scan, keywords: tuple[str, ...], limit: int, keep_content: bool, prefer: tuple[str, ...]):
        self.pages = pages
        self.keywords = keywords
        self.limit = limit
        self.keep_content = keep_content
        #: The vault's ``[order] prefer`` (``judge``).
        self.prefer = prefer
        #: Each match with its sort key (``judge``); only the best ``limit`` are kept once
        #: there are many (0: all).
        self.kept: list[tuple[SortKey, Match]] = []
        self.total = 0
        self.named = 0
        self.exact = 0
        self.searched = 0
        self.unreadable = 0
        #: Pages that do not read as text (``fold.is_text``), counted until the first match.
        self.not_text = 0
        self.counts = [0] * len(keywords)
        self.warnings: list[Diagnostic] = []

    def run(self) -> Tally:
        """Examine every listed page, in scan order."""
        for _, name, rel_path, read_path in self.pages.page_paths():
            try:
                found = self.examine(read_path, rel_path, stem_of(name))
            except OSError as error:
                self.unreadable += 1
                self.warnings.append(unreadable_warning(rel_path, error))
                continue
            self.searched += 1
            if found is not None:
                self.add_match(rel_path, *found)
        return self

    def examine(
        self, read_path: str, rel_path: str, stem: str
    ) -> tuple[str, dict[Any, Any] | None, SortKey, bytes | None] | None:
        """Decide one page with ``judge``: (title, frontmatter fields, sort key, content) if
        it holds every keyword, else None; counts the keywords it holds."""
        fd = open_page(read_path)
        try:
            raw = read_to_end(fd)
        finally:
            os.close(fd)
        data = as_utf8(raw)  # a wide page's bytes as UTF-8; --cat prints ``raw``, as on disk
        if not self.total and not is_text(data):
            # Counted only while nothing matched: only a miss says how many there are.
            self.not_text += 1
        fields = page_fields(data)
        title = page_title(data, fields, stem, self.pages.heading_titles)
        aliases = aliases_of(fields)
        text = folded_text(data)
        holds, key = judge(
            self.keywords,
            rel_path,
            fold(rel_path),
            fold(title),
            text.__contains__,
            lambda keyword: position(text, keyword),
            tuple(map(fold, aliases)),
            self.prefer,
        )
        for index, present in enumerate(holds):
            self.counts[index] += present
        if key is None:
            return None
        keep = self.keep_content and (not self.total or key[0] < 0)
        return title, fields, key, raw if keep else None

    def add_match(
        self,
        rel_path: str,
        title: str,
        fields: Mapping[Any, Any] | None,
        key: SortKey,
        content: bytes | None,
    ) -> None:
        """Keep a page that ``judge`` matched, with its frontmatter ``fields``; ``content``
        only for --cat, which prints the one match, or the one page a keyword is the path
        of: from a second match on, only such a page's bytes are kept."""
        self.total += 1
        self.named += key[0] <= 0
        self.exact += key[0] < 0
        if self.total > 1 and key[0] >= 0:
            content = None
        if self.total == 2:
            for kept_key, match in self.kept:
                if kept_key[0] >= 0:
                    match.content = None
        constellation, kind = string_field(fields, "constellation"), string_field(fields, "type")
        self.kept.append((key, shown_match(rel_path, title, constellation, kind, matched_by(key), content)))
        if self.limit and len(self.kept) >= 2 * self.limit + 256:
            self.kept = self.best()

    def result(self, keywords: Sequence[str]) -> FindResult:
        """The FindResult of this search, for ``keywords`` as the caller gave them."""
        result = FindResult()
        result.vault = self.pages.vault
        result.warnings = self.pages.warnings + self.warnings
        # The scan meets files in directory order, which differs between file systems.
        result.warnings.sort(key=Diagnostic.sort_key)
        result.unreadable = self.pages.incomplete + self.unreadable
        result.not_text = self.not_text if self.total == 0 else 0
        result.pages_searched = self.searched
        result.total = self.total
        result.named = self.named
        result.exact = self.exact
        result.matches = [match for _key, match in self.best()]
        if not self.total:
            result.keyword_counts = keyword_counts(keywords, self.counts)
        return result

    def best(self) -> list[tuple[SortKey, Match]]:
        """The kept matches in find's order (their sort keys), capped at the limit."""
        ordered = sorted(self.kept, key=lambda kept: kept[0])
        return ordered[: self.limit] if self.limit else ordered


def find_pages(
    keywords: Sequence[str], limit: int = DEFAULT_LIMIT, *, vault: str | None = None
) -> list[dict[str, Any]]:
    """find for Python callers: the matching pages as find --json reports them, in ``vault`` if given,
    else in the vault ``location.locate_vault`` finds."""
    return [match.to_dict() for match in search(vault, keywords, limit=limit).matches]
