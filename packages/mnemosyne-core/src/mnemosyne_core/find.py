"""``wiki find``: every page holding all keywords, in a deterministic order.

A keyword matches a page when its fold is a substring of the folded title, file name stem
or whole file text (frontmatter included). Pages whose title and stem hold every keyword
come first, then the rest, each group by relative path in code-point order. No scoring.
"""

from __future__ import annotations

import marshal
import os
import sys

from mnemosyne_core.config import CONSTELLATIONS
from mnemosyne_core.errors import InvalidQueryError
from mnemosyne_core.fold import TextMatcher, fold
from mnemosyne_core.frontmatter import (
    fast_string_fields,
    locate,
    opens_frontmatter,
    parse_block,
    string_field,
    title_of,
)
from mnemosyne_core.vault import PAGE_SUFFIX, open_page, read_to_end, resolve_vault, scan, unreadable_warning

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time (issue 6)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from mnemosyne_core.vault import Scan

DEFAULT_LIMIT = 20
#: The first read of a page. Most pages fit whole; past it, a page is read on only when
#: its frontmatter closes later, its title and stem do not decide, or --cat needs it.
HEAD_BYTES = 1 << 14


class Match:
    """A page that holds every keyword."""

    __slots__ = ("constellation", "content", "in_title", "path", "title", "type")

    def __init__(
        self,
        path: str,
        title: str,
        constellation: str | None,
        type: str | None,  # noqa: A002 - the frontmatter key's name
        in_title: bool,
        content: bytes | None = None,
    ):
        self.path = path
        self.title = title
        self.constellation = constellation
        self.type = type
        #: Whether title and stem alone hold every keyword (the first group of the order).
        self.in_title = in_title
        #: The page's bytes, kept only when the search was asked to (--cat).
        self.content = content

    def to_dict(self) -> dict[str, str | None]:
        """The page as find --json reports it."""
        return {"path": self.path, "title": self.title, "constellation": self.constellation, "type": self.type}

    def __repr__(self) -> str:
        return f"Match({self.path!r}, {self.title!r})"


class FindResult:
    """What a search found: the matches (capped by the limit), their total before the cap,
    how many pages each keyword alone matched, and what went wrong along the way."""

    __slots__ = ("keyword_counts", "matches", "pages_searched", "total", "unreadable", "vault", "warnings")

    def __init__(self) -> None:
        #: The vault root searched, resolved (symlink-free); each match's path is relative to it.
        self.vault = ""
        self.matches: list[Match] = []
        self.total = 0
        self.pages_searched = 0
        #: Per keyword as given: in how many pages it occurs (title, stem or text).
        self.keyword_counts: dict[str, int] = {}
        #: One line each: a page or dir skipped, and why.
        self.warnings: list[str] = []
        #: Pages (or dirs) in scope that could not be read.
        self.unreadable = 0

    @property
    def incomplete(self) -> bool:
        """Whether something in scope went unread, so "no match" cannot be promised."""
        return self.unreadable > 0


def check_keywords(keywords: Sequence[str]) -> None:
    """Raise InvalidQueryError unless there is at least one keyword and none is blank."""
    if isinstance(keywords, str):
        raise InvalidQueryError("keywords must be a list of strings, not one string")
    if not keywords:
        raise InvalidQueryError("no keyword given: pass at least one KEYWORD")
    for keyword in keywords:
        if not keyword.strip():
            raise InvalidQueryError(f"empty keyword {keyword!r}: every KEYWORD must have a non-space character")


def search(
    vault: str | os.PathLike[str] | None,
    keywords: Sequence[str],
    *,
    limit: int = DEFAULT_LIMIT,
    dirs: Sequence[str] | None = None,
    keep_content: bool = False,
) -> FindResult:
    """Find the pages of ``vault`` (None: AION_VAULT) that hold every keyword.

    ``limit`` caps ``matches`` (0: no cap; ``total`` always counts them all); ``dirs``
    overrides the scanned dirs; ``keep_content`` keeps each match's bytes (for --cat).
    Raises VaultError or InvalidQueryError; a page that cannot be read is a warning.
    """
    check_keywords(keywords)
    if limit < 0:
        raise InvalidQueryError(f"limit {limit} is negative: pass 0 for no cap or a positive number")
    vault_real = resolve_vault(vault)
    pages = scan(vault_real, dirs)
    folded = tuple(dict.fromkeys(fold(keyword) for keyword in keywords))
    task = _Task(pages, folded, limit, keep_content)
    count = len(pages)
    part = _run_split(task, count) if count >= PARALLEL_MIN_PAGES and _can_fork() else task.run(0, count)
    result = FindResult()
    result.vault = vault_real
    result.warnings = pages.warnings + part.warnings
    # The scan meets files in directory order, which differs between file systems; each
    # warning starts with its path, so this orders them by path.
    result.warnings.sort()
    result.unreadable = pages.incomplete + part.unreadable
    result.pages_searched = part.searched
    result.total = part.total
    result.matches = [Match(*fields) for fields in part.best()]
    pages_with = dict(zip(folded, part.counts, strict=True))
    result.keyword_counts = {keyword: pages_with[fold(keyword)] for keyword in keywords}
    return result


#: Vaults this large are searched by two processes when the machine has two cores. A fork
#: costs about a millisecond and each page tens of microseconds, so the split pays from a
#: few hundred pages; the threshold is set well above that and has not been tuned.
PARALLEL_MIN_PAGES = 5000


def _can_fork() -> bool:
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    if not hasattr(os, "fork") or cores < 2:
        return False
    # Forking a process with other threads running can deadlock the child.
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


class _Part:
    """What one process found over a range of pages; parts merge in page order."""

    __slots__ = ("counts", "kept", "limit", "searched", "total", "unreadable", "warnings")

    def __init__(self, keywords: int, limit: int):
        self.limit = limit
        #: Match fields (path, title, constellation, type, in_title, content); only the best
        #: ``limit`` are kept once there are many (0: all).
        self.kept: list[tuple[Any, ...]] = []
        self.total = 0
        self.searched = 0
        self.unreadable = 0
        self.counts = [0] * keywords
        self.warnings: list[str] = []

    def keep(self, fields: tuple[Any, ...]) -> None:
        self.kept.append(fields)
        if self.limit and len(self.kept) >= 2 * self.limit + 256:
            self.kept = self.best()

    def best(self) -> list[tuple[Any, ...]]:
        """The kept matches in find's order, capped at the limit: title-or-stem matches
        first (in_title, index 4), then by path (index 0)."""
        ordered = sorted(self.kept, key=lambda fields: (not fields[4], fields[0]))
        return ordered[: self.limit] if self.limit else ordered

    def merge(self, other: _Part) -> None:
        self.kept += other.kept
        self.kept = self.best()
        self.total += other.total
        self.searched += other.searched
        self.unreadable += other.unreadable
        self.counts = [mine + theirs for mine, theirs in zip(self.counts, other.counts, strict=True)]
        self.warnings += other.warnings

    def dump(self) -> bytes:
        return marshal.dumps((self.kept, self.total, self.searched, self.unreadable, self.counts, self.warnings))

    @classmethod
    def load(cls, data: bytes, keywords: int, limit: int) -> _Part:
        part = cls(keywords, limit)
        # From our own child, through a pipe only it and we hold.
        fields = marshal.loads(data)  # noqa: S302
        part.kept, part.total, part.searched, part.unreadable, part.counts, part.warnings = fields
        return part


class _Task:
    """One search over the listed pages, runnable over any range of them."""

    def __init__(self, pages: Scan, keywords: tuple[str, ...], limit: int, keep_content: bool):
        self.pages = pages
        self.keywords = keywords
        self.limit = limit
        self.keep_content = keep_content
        #: The keywords whose absence from a page's text proves their absence from its title
        #: when its frontmatter has no backslash (see ``_title_cannot_hold``).
        self.title_safe = tuple(keyword.split() == [keyword] and "'" not in keyword for keyword in keywords)
        self.all_title_safe = all(self.title_safe)

    def run(self, start: int, stop: int) -> _Part:
        """Examine pages ``start`` to ``stop`` (in scan order)."""
        part = _Part(len(self.keywords), self.limit)
        links = self.pages.links
        offset = 0
        for dir_name, dir_path, names in self.pages.listing:
            first, last = max(start - offset, 0), min(stop - offset, len(names))
            offset += len(names)
            if first >= last:
                continue
            in_constellation = dir_name in CONSTELLATIONS
            for name in names[first:last]:
                rel_path = f"{dir_name}/{name}"
                read_path = (links.get(rel_path) if links else None) or f"{dir_path}/{name}"
                try:
                    found = self.examine(read_path, name[: -len(PAGE_SUFFIX)], part.counts)
                except OSError as error:
                    part.unreadable += 1
                    part.warnings.append(unreadable_warning(rel_path, error))
                    continue
                part.searched += 1
                if found is not None:
                    title, fields, in_title, content = found
                    constellation = string_field(fields, "constellation")
                    if constellation is None and in_constellation:
                        constellation = dir_name
                    part.total += 1
                    if self.keep_content and part.total > 1:
                        # --cat prints a page only when it is the one match: from a second
                        # match on, no page's bytes are needed, nor read.
                        self.keep_content = False
                        part.kept = [(*kept[:5], None) for kept in part.kept]
                        content = None
                    part.keep((rel_path, title, constellation, string_field(fields, "type"), in_title, content))
        return part

    def examine(
        self, read_path: str, stem: str, counts: list[int]
    ) -> tuple[str, dict[Any, Any] | None, bool, bytes | None] | None:
        """Decide one page: (title, frontmatter fields, in_title, content) if it holds every
        keyword, else None; adds the keywords it holds to ``counts``. Reads the head once,
        and past it only when title and stem do not decide."""
        keywords = self.keywords
        fd = open_page(read_path)
        try:
            data = os.read(fd, HEAD_BYTES)
            folded_stem = fold(stem)
            if len(data) < HEAD_BYTES:
                # The whole page is read: its text decides most pages without the title.
                matcher = TextMatcher(data)
                in_text = [keyword in folded_stem or matcher.contains(keyword) for keyword in keywords]
                if False in in_text and self._title_cannot_hold(data, in_text):
                    for index, present in enumerate(in_text):
                        counts[index] += present
                    return None
                fields = _fields(data)
                title = title_of(fields, stem)
                folded_title = fold(title)
                in_title = all(keyword in folded_title or keyword in folded_stem for keyword in keywords)
                holds = [present or keyword in folded_title for keyword, present in zip(keywords, in_text, strict=True)]
            else:
                data, fields = _fields_of_long_page(fd, data)
                title = title_of(fields, stem)
                folded_title = fold(title)
                holds = [keyword in folded_title or keyword in folded_stem for keyword in keywords]
                in_title = all(holds)
                if not in_title or self.keep_content:
                    data += read_to_end(fd)
                    if not in_title:
                        matcher = TextMatcher(data)
                        holds = [
                            present or matcher.contains(keyword)
                            for keyword, present in zip(keywords, holds, strict=True)
                        ]
        finally:
            os.close(fd)
        for index, present in enumerate(holds):
            counts[index] += present
        if not all(holds):
            return None
        return title, fields, in_title, data if self.keep_content else None

    def _title_cannot_hold(self, data: bytes, in_text: list[bool]) -> bool:
        """Whether the page's title surely lacks every keyword missing from its text.

        Without a backslash (escape) in the frontmatter, every character of a YAML string
        stands in the page as it is, except line breaks and whitespace (folded, collapsed)
        and a quote doubled in single quotes. So a keyword without whitespace or ``'`` that
        the text lacks is in no title. tests/test_fast_paths.py checks it against titles.
        """
        if not self.all_title_safe and not all(
            safe for safe, present in zip(self.title_safe, in_text, strict=True) if not present
        ):
            return False
        backslash = data.find(b"\\")
        if backslash < 0:
            return True
        span = locate(data)
        return span is None or backslash >= span[1]


def _fields(data: bytes) -> dict[Any, Any] | None:
    """The frontmatter mapping of a page read whole (None when it has none or it is
    unusable); only its string fields when the fast path reads it."""
    span = locate(data)
    if span is None:
        return None
    block = data[span[0] : span[1]]
    fast = fast_string_fields(block)
    return fast if fast is not None else parse_block(block.decode("utf-8", "replace"))[0]


def _fields_of_long_page(fd: int, head: bytes) -> tuple[bytes, dict[Any, Any] | None]:
    """The frontmatter of a page longer than the head, reading on only when the block may
    close past the head; returns the bytes read so far and the fields."""
    span = locate(head)
    # A closing `---` at the very end of a full head may be the start of a longer line
    # ("----", "--- x"): only the rest of the file can tell.
    if (span is None or span[2] == len(head)) and opens_frontmatter(head):
        head += read_to_end(fd)
    return head, _fields(head)


def _run_split(task: _Task, count: int) -> _Part:
    """Search the first half here and the second half in a forked child; if the child
    fails, its half is searched here too, so the answer never depends on it."""
    half = count // 2
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return task.run(0, count)
    if pid == 0:  # the child: never returns, never runs the caller's code
        code = 1
        try:
            os.close(reader)
            payload = task.run(half, count).dump()
            with open(writer, "wb", closefd=True) as pipe:
                pipe.write(payload)
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    with open(reader, "rb", closefd=True) as pipe:
        try:
            part = task.run(0, half)
            payload = pipe.read()
            _, status = os.waitpid(pid, 0)
        except BaseException:
            _end_child(pid)
            raise
    if os.waitstatus_to_exitcode(status) == 0:
        try:
            part.merge(_Part.load(payload, len(task.keywords), task.limit))
            return part
        except (ValueError, EOFError, TypeError):
            pass  # a child that died mid-write: search its half here
    part.merge(task.run(half, count))
    return part


def _end_child(pid: int) -> None:
    import signal  # only an interrupted split search needs it

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (OSError, ChildProcessError):
        pass


def find_pages(
    keywords: Sequence[str], limit: int = DEFAULT_LIMIT, *, vault: str | None = None
) -> list[dict[str, Any]]:
    """The seed's API: the matching pages as find --json reports them, vault from AION_VAULT
    unless ``vault`` is given."""
    return [match.to_dict() for match in search(vault, keywords, limit=limit).matches]
