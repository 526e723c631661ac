"""``wiki find``: every page holding all keywords, in a deterministic order.

A keyword matches a page when its fold is a substring of the folded title, the folded
vault-relative path (``analyses/mastra-framework-decision-trail.md``) or the folded whole
file text (frontmatter included). ``judge`` is the one function that decides whether a page
matches and where it sorts (docs/spec.md, rule 8): the scan here and any other caller hand it
a page's inputs and never decide themselves. No scoring.
"""

from __future__ import annotations

import marshal
import os

from mnemosyne_core.config import CONSTELLATIONS, stem_of
from mnemosyne_core.diagnostics import Diagnostic
from mnemosyne_core.fold import WIDE_BOM_LEADS, TextMatcher, as_utf8, fold, is_text, wide_codec
from mnemosyne_core.frontmatter import (
    collapse_whitespace,
    fast_mapping,
    fast_string_fields,
    locate,
    logseq_page_name,
    logseq_properties,
    opens_frontmatter,
    parse_block,
    string_field,
    title_of,
    unescaped,
)
from mnemosyne_core.results import (  # FindResult, Match and TITLE are find's API too
    DEFAULT_LIMIT,
    PATH,
    TEXT,
    TITLE,
    FindResult,
    Match,
    check_query,
)
from mnemosyne_core.split import can_fork, in_two
from mnemosyne_core.vault import (  # preferred_dirs is find's API too (the page cache's)
    left_out_files,
    listed_vault,
    open_page,
    preferred_dirs,
    read_to_end,
    unreadable_warning,
)

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from mnemosyne_core.vault import Scan

    #: Where a matching page sorts: (group, a keyword starts no word, no name alone holds
    #: every keyword, name length (first group) or mention depth's line (second group),
    #: the name is an alias, not the title (first group) or mention depth's column (second
    #: group), the place of its preferred dir in ``[order] prefer``, path); compared as a
    #: tuple, smallest first. See ``judge``.
    SortKey = tuple[int, int, int, int, int, int, str]

#: The first read of a page. Most pages fit whole; past it, a page is read on only when
#: its frontmatter closes later, its title and path do not decide, or --cat needs it.
HEAD_BYTES = 1 << 14


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
    about the keywords that title, aliases and path lack, so a page named by every keyword
    is never read on. ``text_position(keyword)`` is where the keyword first occurs in that
    text, (line, column) with the column in characters (None: nowhere); it is asked only
    about a page that matches in its text alone.
    ``folded_aliases`` are the page's other names (frontmatter ``aliases``); ``prefer``
    the vault's preferred dirs (``[order] prefer``, each ending in '/').

    The order (docs/spec.md rule 8), smallest key first:
    0. group: title, an alias or the path holds every keyword (the page the caller named)
       before the rest;
    1. every keyword starts a word (in a name that holds them all; else in the title when
       the title holds it, else in the path): "tar" names "tar" and "tar-split", not
       "setarch", and "en" the English page, not "dynamiquement";
    2. a name (the title or an alias) alone holds every keyword: a name is what people
       call a page;
    3. length of that folded name: the name closest to the keywords wins
       ("strings.contains" before "strings.containsany");
    4. the title before an alias: a page's own title names it more surely than another
       page's alias of equal weight (a translation carrying the English name as an alias);
    5. a page under a preferred dir, in the order of ``prefer`` (``preferred_rank``),
       before the rest: of the versions or translations of a page, which tie on every
       key above, the one the vault prefers;
    6. the path, in code-point order: a stable tie-break.
    The rest (first key 1) go by ``mention_depth``, then the preferred dir, then by path.
    """
    holds = [keyword in folded_title or keyword in folded_path for keyword in keywords]
    if folded_aliases:
        holds = [
            present or any(keyword in alias for alias in folded_aliases)
            for keyword, present in zip(keywords, holds, strict=True)
        ]
    if all(holds):
        key = named_key(keywords, rel_path, folded_path, folded_title, folded_aliases, prefer)
        if key is not None:
            return holds, key
    holds = [present or text_contains(keyword) for keyword, present in zip(keywords, holds, strict=True)]
    if not all(holds):
        return holds, None
    line, column = mention_depth(keywords, text_position)
    return holds, (1, 0, 0, line, column, preferred_rank(rel_path, prefer), rel_path)


def preferred_rank(rel_path: str, prefer: Sequence[str]) -> int:
    """Where the page at ``rel_path`` sorts among pages tied on every other key: the place
    in ``prefer`` of the first preferred dir it lies under, ``len(prefer)`` under none (0
    for every page when the vault prefers no dir, so its order is the path's alone)."""
    for index, prefix in enumerate(prefer):
        if rel_path.startswith(prefix):
            return index
    return len(prefer)


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
    for is_alias, name in enumerate((folded_title, *folded_aliases)):
        if all(keyword in name for keyword in keywords):
            words_start = all(starts_word(keyword, name) for keyword in keywords)
            key = (0, not words_start, 0, len(name), min(is_alias, 1), rank, rel_path)
            if best is None or key < best:
                best = key
    if best is not None:
        return best
    if not all(keyword in folded_title or keyword in folded_path for keyword in keywords):
        return None
    words_start = all(
        starts_word(keyword, folded_title if keyword in folded_title else folded_path) for keyword in keywords
    )
    return (0, not words_start, 1, len(folded_title), 0, rank, rel_path)


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
    """Where a page with this sort key (``judge``) matched: "title" when its title or an
    alias alone holds every keyword, "path" when the title and path together do, "text"
    when only its text completes them."""
    if key[0]:
        return TEXT
    return PATH if key[2] else TITLE


def aliases_of(fields: Mapping[Any, Any] | None) -> tuple[str, ...]:
    """A page's other names: the frontmatter ``aliases`` (a list, or one string as Obsidian
    also takes it), each with its whitespace collapsed as a title's is; items that are not
    non-empty strings are left out."""
    value = fields.get("aliases") if fields else None
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names = (collapse_whitespace(item) for item in items if isinstance(item, str))
    return tuple(name for name in names if name)


def prepare_query(keywords: Sequence[str], limit: int) -> tuple[str, ...]:
    """The folded keywords, each once, after checking them and the limit (InvalidQueryError)."""
    check_query(keywords, limit)
    return tuple(dict.fromkeys(fold(keyword) for keyword in keywords))


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
    """Find the pages of ``vault`` (None: found as ``vault.locate_vault`` says) that hold every keyword.

    ``limit`` caps ``matches`` (0: no cap; ``total`` always counts them all); ``dirs``
    overrides the scanned dirs; ``keep_content`` keeps each match's bytes (for --cat);
    ``environ``, ``cwd`` and ``home`` are where the vault is looked for when ``vault`` is
    None (their defaults: this process's, for a Python caller); ``listing`` is
    the vault's listing when the caller made it already (``vault.scan``, same dirs).
    Raises VaultError or InvalidQueryError; a page that cannot be read is a warning.
    """
    folded = prepare_query(keywords, limit)
    # ``listing``: resolved and listed by the caller already.
    pages = listing if listing is not None else listed_vault(vault, dirs, environ, cwd, home)
    task = _Task(pages, folded, limit, keep_content, preferred_dirs(pages))
    count = len(pages)
    tally = _run_split(task, count) if count >= PARALLEL_MIN_PAGES and _can_fork() else task.run(0, count)
    result = tally.result(pages, keywords)
    if result.total == 0 and not result.incomplete:
        # The scan listed every searched dir before any split, in this process: the files
        # the miss note counts are among what it passed over, so none is listed again.
        result.left_out = left_out_files(pages)
    return result


#: Vaults this large are searched by two processes when the machine has two cores. The
#: fork, the pipe and the wait cost about a millisecond (measured on the fixture's process,
#: with no page to search) and each page 10-20 microseconds, so the split pays from about
#: 150 pages; the vaults people keep (1,000 to 10,000 pages) are all above this threshold.
PARALLEL_MIN_PAGES = 500


#: Whether a second process may search half (``split.can_fork``).
_can_fork = can_fork


class Tally:
    """What a search found so far: the pages ``judge`` matched (the best ``limit`` of them),
    the keyword counts, the unreadable pages. One per process; tallies merge."""

    __slots__ = ("counts", "kept", "limit", "named", "not_text", "searched", "total", "unreadable", "warnings")

    def __init__(self, keywords: int, limit: int):
        self.limit = limit
        #: Match fields (path, title, constellation, type, matched, content) and the sort key
        #: last; only the best ``limit`` are kept once there are many (0: all).
        self.kept: list[tuple[Any, ...]] = []
        self.total = 0
        self.named = 0
        self.searched = 0
        self.unreadable = 0
        #: Pages that do not read as text (``fold.is_text``), counted until the first match.
        self.not_text = 0
        self.counts = [0] * keywords
        self.warnings: list[Diagnostic] = []

    def count(self, holds: list[bool]) -> None:
        """Count a judged page's keywords (``judge``'s first answer)."""
        for index, present in enumerate(holds):
            self.counts[index] += present

    def add_match(
        self,
        rel_path: str,
        dir_name: str,
        title: str | None,
        fields: dict[Any, Any] | bytes | None,
        key: SortKey,
        content: bytes | None = None,
    ) -> None:
        """Keep a page that ``judge`` matched, with its frontmatter ``fields``; ``content``
        only for --cat, which prints a page only when it is the one match: from a second
        match on, no page's bytes are kept.

        With ``title`` None, ``fields`` is the page's raw frontmatter block (None: it has
        none): its place did not need the title, so the block is parsed only if the page is
        shown (``result``)."""
        self.total += 1
        self.named += key[0] == 0
        if self.total > 1:
            content = None
            if self.total == 2:
                self.kept = [(*kept[:5], None, kept[6]) for kept in self.kept]
        if title is None or isinstance(fields, bytes):
            self.kept.append((rel_path, None, dir_name, fields, TEXT, None, key))
        else:
            self.kept.append(_shown(rel_path, dir_name, title, fields, key, content))
        if self.limit and len(self.kept) >= 2 * self.limit + 256:
            self.kept = self.best()

    def unreadable_page(self, rel_path: str, error: OSError) -> None:
        self.unreadable += 1
        self.warnings.append(unreadable_warning(rel_path, error))

    def result(self, pages: Scan, keywords: Sequence[str]) -> FindResult:
        """The FindResult of this tally over ``pages`` (the scan it searched), for
        ``keywords`` as the caller gave them."""
        result = FindResult()
        result.vault = pages.vault
        result.warnings = pages.warnings + self.warnings
        # The scan meets files in directory order, which differs between file systems.
        result.warnings.sort(key=Diagnostic.sort_key)
        result.unreadable = pages.incomplete + self.unreadable
        result.not_text = self.not_text if self.total == 0 else 0
        result.pages_searched = self.searched
        result.total = self.total
        result.named = self.named
        result.matches = [Match(*_parsed(fields)[:-1]) for fields in self.best()]
        folded = dict.fromkeys(fold(keyword) for keyword in keywords)
        pages_with = dict(zip(folded, self.counts, strict=True))
        result.keyword_counts = {keyword: pages_with[fold(keyword)] for keyword in keywords}
        return result

    def best(self) -> list[tuple[Any, ...]]:
        """The kept matches in find's order (their sort key, the last field), capped at
        the limit."""
        ordered = sorted(self.kept, key=lambda fields: fields[-1])
        return ordered[: self.limit] if self.limit else ordered

    def merge(self, other: Tally) -> None:
        self.kept += other.kept
        self.kept = self.best()
        self.total += other.total
        self.named += other.named
        self.searched += other.searched
        self.unreadable += other.unreadable
        self.not_text += other.not_text
        self.counts = [mine + theirs for mine, theirs in zip(self.counts, other.counts, strict=True)]
        self.warnings += other.warnings

    def dump(self) -> bytes:
        warnings = [warning.as_fields() for warning in self.warnings]
        counts = (self.total, self.named, self.searched, self.unreadable, self.not_text)
        return marshal.dumps((self.kept, *counts, self.counts, warnings))

    @classmethod
    def load(cls, data: bytes, keywords: int, limit: int) -> Tally:
        part = cls(keywords, limit)
        # From our own child, through a pipe only it and we hold.
        fields = marshal.loads(data)  # noqa: S302
        part.kept, part.total, part.named, part.searched, part.unreadable, part.not_text, part.counts, warnings = fields
        part.warnings = [Diagnostic.from_fields(warning) for warning in warnings]
        return part


def _shown(
    rel_path: str, dir_name: str, title: str, fields: dict[Any, Any] | None, key: SortKey, content: bytes | None
) -> tuple[Any, ...]:
    """A kept match as Match takes it (path, title, constellation, type, matched,
    content), its sort key last."""
    constellation = string_field(fields, "constellation")
    if constellation is None:
        # The page's top-level dir, when that is a constellation's (a nested page's too).
        top = dir_name.partition("/")[0]
        if top in CONSTELLATIONS:
            constellation = top
    return (rel_path, title, constellation, string_field(fields, "type"), matched_by(key), content, key)


def _parsed(kept: tuple[Any, ...]) -> tuple[Any, ...]:
    """A kept match with its title and fields, its frontmatter block parsed now if it was
    kept unparsed (``Tally.add_match`` with no title)."""
    if kept[1] is not None:
        return kept
    rel_path, _, dir_name, block, _, _, key = kept
    fields = None if block is None else _block_fields(block)
    stem = stem_of(rel_path.rpartition("/")[2])
    return _shown(rel_path, dir_name, title_of(fields, fallback_title(stem)), fields, key, None)


class _Task:
    """One search over the listed pages, runnable over any range of them."""

    def __init__(
        self, pages: Scan, keywords: tuple[str, ...], limit: int, keep_content: bool, prefer: tuple[str, ...] = ()
    ):
        self.pages = pages
        #: The vault's ``[order] prefer`` (``judge``).
        self.prefer = prefer
        self.keywords = keywords
        self.limit = limit
        self.keep_content = keep_content
        #: The keywords whose absence from a page's text proves their absence from its title
        #: when its frontmatter has no backslash (see ``_title_cannot_hold``).
        self.title_safe = tuple(keyword.split() == [keyword] and "'" not in keyword for keyword in keywords)
        self.all_title_safe = all(self.title_safe)

    def run(self, start: int, stop: int) -> Tally:
        """Examine pages ``start`` to ``stop`` (in scan order)."""
        part = Tally(len(self.keywords), self.limit)
        links = self.pages.links
        offset = 0
        for dir_name, dir_path, names in self.pages.listing:
            first, last = max(start - offset, 0), min(stop - offset, len(names))
            offset += len(names)
            if first >= last:
                continue
            prefix = f"{dir_name}/" if dir_name else ""
            for name in names[first:last]:
                rel_path = prefix + name
                read_path = (links.get(rel_path) if links else None) or f"{dir_path}/{name}"
                try:
                    found = self.examine(read_path, rel_path, name[: name.rindex(".")], part)
                except OSError as error:
                    part.unreadable_page(rel_path, error)
                    continue
                part.searched += 1
                if found is not None:
                    part.add_match(rel_path, dir_name, *found)
                    # From a second match on, --cat needs no page's bytes: read no more.
                    self.keep_content = self.keep_content and part.total < 2
        return part

    def examine(
        self, read_path: str, rel_path: str, stem: str, tally: Tally
    ) -> tuple[str | None, dict[Any, Any] | bytes | None, SortKey, bytes | None] | None:
        """Decide one page with ``judge``: (title, frontmatter fields, sort key, content) if
        it holds every keyword, else None; counts the keywords it holds in ``tally``. Reads
        the head once, and past it only when title and path do not decide. The title is None
        when the page's place did not need it; the fields are then the raw frontmatter block
        (see ``Tally.add_match``)."""
        keywords = self.keywords
        folded_path = fold(rel_path)
        fd = open_page(read_path)
        try:
            data = os.read(fd, HEAD_BYTES)
            raw = None  # a wide page's bytes as on disk (--cat prints them); data is their UTF-8
            if data and data[0] in WIDE_BOM_LEADS and wide_codec(data) is not None:
                raw = data + read_to_end(fd)
                data = as_utf8(raw)
            if not tally.total and not is_text(data):
                # Counted only while nothing matched: only a miss says how many there are.
                tally.not_text += 1
            long_page = None
            if raw is not None or len(data) < HEAD_BYTES:
                # The whole page is read: its text decides most pages without the title.
                matcher = TextMatcher(data)
                in_text = [keyword in folded_path or matcher.contains(keyword) for keyword in keywords]
                # The shortcuts below take a page without frontmatter to be titled by its stem,
                # part of its path: not one whose file name or properties name it otherwise.
                first_line_end = data.find(b"\n")
                first_line = data if first_line_end < 0 else data[:first_line_end]
                named_as_stem = fallback_title(stem) is stem and b"::" not in first_line
                if False in in_text and named_as_stem and self._title_cannot_hold(data, in_text):
                    # judge would say the same: the title cannot add a keyword the text lacks.
                    tally.count(in_text)
                    return None
                # judge asks only about keywords the path lacks: for those, in_text is the text's.
                text_contains = dict(zip(keywords, in_text, strict=True)).__getitem__
                if False not in in_text and not self.keep_content and named_as_stem:
                    lacking, block = self._title_lacks_a_keyword(data, folded_path)
                    if lacking:
                        # The page matches, and title, aliases and path lack a keyword: judge
                        # puts it in the second group, by its text and path, whatever the title
                        # is. Judged without it; its frontmatter is parsed only if it is shown.
                        holds, key = judge(
                            keywords, rel_path, folded_path, "", text_contains, matcher.position, (), self.prefer
                        )
                        tally.count(holds)
                        return None if key is None else (None, block, key, None)
                fields = page_fields(data)
                text_position = matcher.position
            else:
                data, fields = _fields_of_long_page(fd, data)
                long_page = _LongPage(fd, data)
                text_contains, text_position = long_page.contains, long_page.position
            title = title_of(fields, fallback_title(stem))
            aliases = aliases_of(fields)
            folded_aliases = tuple(map(fold, aliases)) if aliases else ()
            holds, key = judge(
                keywords, rel_path, folded_path, fold(title), text_contains, text_position, folded_aliases, self.prefer
            )
            if key is not None and self.keep_content and long_page is not None:
                data = long_page.whole()
        finally:
            os.close(fd)
        tally.count(holds)
        if key is None:
            return None
        if not self.keep_content:
            return title, fields, key, None
        return title, fields, key, data if raw is None else raw

    def _title_lacks_a_keyword(self, data: bytes, folded_path: str) -> tuple[bool, bytes | None]:
        """(True, the raw frontmatter block or None) when the page's title and every alias
        surely lack a keyword that ``folded_path`` lacks; (False, None) when they may not.

        Without frontmatter the title is the file name stem, which is part of the path.
        With it, as in ``_title_cannot_hold``: a keyword without whitespace or ``'`` that
        the block lacks, as written and with its escapes decoded, is in no string it holds.
        tests/test_fast_paths.py checks it against the plain reference.
        """
        missing = [index for index, keyword in enumerate(self.keywords) if keyword not in folded_path]
        if not missing:
            return False, None
        span = locate(data)
        if span is None:
            return True, None
        block = data[span[0] : span[1]]
        matcher = TextMatcher(block)
        # With a backslash, a double-quoted string's escapes may spell the keyword: it must
        # be missing from the block with its escapes decoded as well.
        decoded = _unescaped_fold(block) if b"\\" in block else ""
        lacking = any(
            self.title_safe[index]
            and not matcher.contains(self.keywords[index])
            and self.keywords[index] not in decoded
            for index in missing
        )
        return lacking, block if lacking else None

    def _title_cannot_hold(self, data: bytes, in_text: list[bool]) -> bool:
        """Whether the page's title surely lacks every keyword missing from its text.

        Without a backslash (escape) in the frontmatter, every character of a YAML string
        stands in the page as it is, except line breaks and whitespace (folded, collapsed)
        and a quote doubled in single quotes. So a keyword without whitespace or ``'`` that
        the text lacks is in no title. With one, the escapes of double-quoted strings may
        spell it, so the block is also read with them decoded (``unescaped``): a YAML parse
        would cost a hundred times more. tests/test_fast_paths.py checks it against titles.
        """
        if not self.all_title_safe and not all(
            safe for safe, present in zip(self.title_safe, in_text, strict=True) if not present
        ):
            return False
        backslash = data.find(b"\\")
        if backslash < 0:
            return True
        span = locate(data)
        if span is None or backslash >= span[1]:
            return True
        # A backslash in the frontmatter may start an escape of a double-quoted string: the
        # keywords the text lacks must be missing from the block with its escapes decoded too.
        decoded = _unescaped_fold(data[span[0] : span[1]])
        return not any(
            keyword in decoded for keyword, present in zip(self.keywords, in_text, strict=True) if not present
        )


def _unescaped_fold(block: bytes) -> str:
    """The fold of a raw frontmatter block with its escapes decoded (``unescaped``): with
    the block as written, it holds every string the block holds that a keyword without
    whitespace or ``'`` can be found in."""
    return fold(unescaped(block.decode("utf-8", "replace")))


class _LongPage:
    """A page longer than the head: the rest is read only when a keyword or --cat needs it."""

    __slots__ = ("_fd", "_matcher", "data")

    def __init__(self, fd: int, head: bytes):
        self._fd = fd
        self.data = head
        self._matcher: TextMatcher | None = None

    def whole(self) -> bytes:
        if self._matcher is None:
            self.data += read_to_end(self._fd)
            self._matcher = TextMatcher(self.data)
        return self.data

    def contains(self, folded_keyword: str) -> bool:
        return self._whole_text().contains(folded_keyword)

    def position(self, folded_keyword: str) -> tuple[int, int] | None:
        return self._whole_text().position(folded_keyword)

    def _whole_text(self) -> TextMatcher:
        self.whole()
        assert self._matcher is not None
        return self._matcher


def page_fields(data: bytes) -> dict[Any, Any] | None:
    """The frontmatter mapping of a page read whole, for the scan and the page cache alike (None
    when it has none or it is unusable); only its string fields when the fast path reads it.
    A page without frontmatter gives the title and aliases of its Logseq properties, if it
    opens with them (``frontmatter.logseq_properties``)."""
    span = locate(data)
    return logseq_properties(data) if span is None else _block_fields(data[span[0] : span[1]])


def fallback_title(stem: str) -> str:
    """The title of a page whose fields name none: the page name its file name stands for
    (``frontmatter.logseq_page_name``: Logseq's ``A___B`` is ``A/B``), for the scan and the
    page cache alike."""
    return logseq_page_name(stem)


def _block_fields(block: bytes) -> dict[Any, Any] | None:
    """The mapping a raw frontmatter block holds (None when unusable); when the fast path
    reads it, only its string fields, or the entries of ``FIELD_KEYS``."""
    # Only a page with aliases needs a list read; the rest keep the string-only fast path.
    # The keys: the block's dates are never built (a date would import datetime, milliseconds
    # of each process that meets one).
    fast = fast_mapping(block, FIELD_KEYS) if b"aliases:" in block else fast_string_fields(block)
    return fast if fast is not None else parse_block(block.decode("utf-8", "replace"))[0]


#: The frontmatter keys find and the page cache read (``title_of``, ``aliases_of``, ``_shown``).
FIELD_KEYS = frozenset(("title", "aliases", "constellation", "type"))


def _fields_of_long_page(fd: int, head: bytes) -> tuple[bytes, dict[Any, Any] | None]:
    """The frontmatter of a page longer than the head, reading on only when the block may
    close past the head; returns the bytes read so far and the fields."""
    span = locate(head)
    # A closing `---` at the very end of a full head may be the start of a longer line
    # ("----", "--- x"): only the rest of the file can tell.
    if (span is None or span[2] == len(head)) and opens_frontmatter(head):
        head += read_to_end(fd)
    return head, page_fields(head)


def _run_split(task: _Task, count: int) -> Tally:
    """Search the first half here and the second half in a forked child (``split.in_two``)."""
    first, second = in_two(
        count, task.run, Tally.dump, lambda payload: Tally.load(payload, len(task.keywords), task.limit)
    )
    first.merge(second)
    return first


def find_pages(
    keywords: Sequence[str], limit: int = DEFAULT_LIMIT, *, vault: str | None = None
) -> list[dict[str, Any]]:
    """find for Python callers: the matching pages as find --json reports them, in ``vault`` if given,
    else in the vault ``vault.locate_vault`` finds."""
    return [match.to_dict() for match in search(vault, keywords, limit=limit).matches]
