"""``wiki recall``: the harness's ``/wiki-query`` contract (any term in a title, slug or tags;
newest first; the first three read) on find's scanner and parser.

An entry matches when ANY term of the topic (split on whitespace) is a case-insensitive
substring of its frontmatter ``title``, ``slug`` or ``tags``, folded as find folds
(``fold(term) in fold(field)``). Body, file name and other keys are never searched.

Matches are ranked by their date, newest first: the first of ``updated``, ``lastmod``
(Hugo) and ``date`` (Jekyll, Hugo) that holds a valid one. A YAML date, a YAML datetime (by
its date as written, no time-zone conversion), a string holding an ISO date ``YYYY-MM-DD``,
optionally followed by ``T`` or a space and a time, or a whole number of milliseconds since
1970 (Dendron's ``updated``; its UTC date). Entries without a valid date come last; ties
go by path in code-point order. The full text of the top ``READ_CAP`` is kept.

Every call may be logged to ``<memory-dir>/<UTC-date>/log.md`` (``append_log``): one
entry per call, written with a single ``write`` on an ``O_APPEND`` descriptor under an
exclusive ``flock``, so concurrent calls never interleave.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import os

from mnemosyne_core.config import MEMORY_DIR_ENV_VAR, load_vault_config
from mnemosyne_core.diagnostics import Diagnostic
from mnemosyne_core.errors import InvalidQueryError, MnemosyneError, VaultError
from mnemosyne_core.fold import decode, fold
from mnemosyne_core.frontmatter import collapse_whitespace
from mnemosyne_core.location import resolve_vault
from mnemosyne_core.page import read_as_judged, read_page_bytes, unreadable_warning
from mnemosyne_core.page_recall import RecallFields, recall_fields
from mnemosyne_core.record import Record
from mnemosyne_core.vault import left_out_files, listed_vault, preferred_dirs

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from mnemosyne_core.page import Identity, PageRef
    from mnemosyne_core.vault import Scan

#: How many of the ranked matches are read into context. Fixed, as ``/wiki-query``'s is, so
#: that every logged call reads alike: not a flag.
READ_CAP = 3
#: The most bytes the text of a recall writes by default (``recall --max-bytes``): 3 pages
#: read whole flooded an agent's context (one 163 KB page), so each is cut to its first
#: lines within its share of these (``cut_text``).
DEFAULT_MAX_BYTES = 32 * 1024
#: The heading the harness memory protocol greps for; recall implements /wiki-query.
LOG_HEADING = "/wiki-query"
LOG_FILE_NAME = "log.md"
#: Shown as Read-Slugs when nothing was read.
NO_SLUGS = "—"

#: C0 and C1 controls, each as its ``\xNN`` escape: a log field or query must stay on its
#: one line. (A table for ``str.translate``: one pass, and no regex compiled at import.)
_CONTROL_ESCAPES = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}


class MemoryLogError(MnemosyneError):
    """The memory log could not be written (the dir cannot be created, the file cannot be
    opened, locked or written). A failed write is truncated away, never left half done."""


class Entry(Record):
    """A wiki entry that matched: its path and the frontmatter fields recall reads."""

    __slots__ = ("content", "page", "slug", "tags", "title", "updated", "version_of")

    def __init__(
        self,
        page: PageRef,
        title: str | None,
        slug: str | None,
        tags: list[str],
        updated: datetime.date | None,
        content: bytes,
    ):
        self.page = page
        #: Frontmatter title with whitespace collapsed, or None when absent or not a string.
        self.title = title
        #: Frontmatter slug when a string, else None.
        self.slug = slug
        #: Frontmatter tags: the string items of a list, or a string tag as one item.
        self.tags = tags
        #: The valid ``updated`` date, or None (ranked last).
        self.updated = updated
        #: The whole file, as bytes; dropped for entries below the read cap.
        self.content: bytes | None = content
        #: The path of the version of this page that is read in its stead (``rank``), or
        #: None: this entry is no other version of a page read.
        self.version_of: str | None = None

    @property
    def path(self) -> str:
        """Path relative to the vault, ``<dir>/<file>.md``."""
        return self.page.rel_path

    @property
    def file_slug(self) -> str:
        """The slug the memory log names a read entry by: the file name without ``.md``
        (``basename $path .md``, as ``/wiki-query`` names it)."""
        return self.page.stem

    def to_dict(self) -> dict[str, Any]:
        """The entry as ``recall --json`` reports it (content included when it was read;
        ``version_of`` only on another version of a page read)."""
        fields = {
            "path": self.path,
            "title": self.title,
            "slug": self.slug,
            "tags": list(self.tags),
            "updated": self.updated.isoformat() if self.updated is not None else None,
            "content": decode(self.content) if self.content is not None else None,
        }
        if self.version_of is not None:
            fields["version_of"] = self.version_of
        return fields


class RecallResult:
    """What a recall found: every match in rank order, the first ``READ_CAP`` with their
    text, and what went wrong along the way."""

    __slots__ = (
        "left_out",
        "matches",
        "memory_dir",
        "pages_searched",
        "terms",
        "topic",
        "unreadable",
        "unseen",
        "vault",
        "warnings",
    )

    def __init__(self, pages: Scan, topic: str | Sequence[str], terms: tuple[str, ...]):
        self.vault = pages.vault
        #: The topic as given (terms joined by one space when given as a list).
        self.topic = topic if isinstance(topic, str) else " ".join(topic)
        self.terms = terms
        self.matches: list[Entry] = []
        self.pages_searched = 0
        self.warnings: list[Diagnostic] = list(pages.warnings)
        #: Pages (or dirs) in scope that could not be read.
        self.unreadable = pages.incomplete
        #: Pages read whose frontmatter has no title, slug or tags: no topic can match them,
        #: though find may (a "no match" here says nothing about them).
        self.unseen = 0
        #: The vault config's ``memory_dir`` as written (None: none), read with the listing:
        #: the command logs there without reading the config again (``resolve_memory_dir``).
        self.memory_dir: str | None = pages.memory_dir
        #: As ``FindResult.left_out``: on a miss, the markdown files the layout leaves out,
        #: when the answer knows them; else None.
        self.left_out: list[tuple[str, str]] | None = None

    @property
    def read(self) -> list[Entry]:
        """The first READ_CAP matches that are no other version of a page read (``rank``):
        the entries whose full text was kept."""
        return [entry for entry in self.matches if entry.version_of is None][:READ_CAP]

    @property
    def read_slugs(self) -> list[str]:
        return [entry.file_slug for entry in self.read]

    @property
    def not_read(self) -> int:
        """Matches beyond the read cap."""
        return len(self.matches) - len(self.read)

    @property
    def incomplete(self) -> bool:
        """Whether something in scope went unread, so "no match" cannot be promised."""
        return self.unreadable > 0


def cut_text(text: bytes, budget: int) -> tuple[bytes, int]:
    """``text`` (a page's UTF-8 bytes) cut to its first whole lines that fit in ``budget``
    bytes, and how many lines were left out (0: it fits whole, and comes back as it is).
    Whole lines only, so a cut never splits a character or a line; a first line longer
    than the budget leaves nothing. A last line without its newline is a line."""
    if len(text) <= budget:
        return text, 0
    end = text.rfind(b"\n", 0, max(budget, 0)) + 1
    kept = text[:end]
    lines = text.count(b"\n") + (not text.endswith(b"\n"))
    return kept, lines - kept.count(b"\n")


def split_topic(topic: str | Sequence[str]) -> tuple[str, ...]:
    """The terms of a topic: a string split on whitespace, or each item of a list split so.
    Raises InvalidQueryError when there is no term at all."""
    parts = [topic] if isinstance(topic, str) else list(topic)
    terms = tuple(term for part in parts for term in part.split())
    if not terms:
        raise InvalidQueryError("no topic given: pass at least one TOPIC word with a non-space character")
    return terms


def fold_terms(terms: Sequence[str]) -> tuple[str, ...]:
    """The terms as ``entry_if_match`` looks for them: folded, each once, in order."""
    return tuple(dict.fromkeys(fold(term) for term in terms))


def rank_key(entry: Entry) -> tuple[int, int, str]:
    """Newest ``updated`` first, entries without one last, ties by path (code points)."""
    if entry.updated is None:
        return (1, 0, entry.path)
    return (0, -entry.updated.toordinal(), entry.path)


def recall(
    vault: str | os.PathLike[str] | None,
    topic: str | Sequence[str],
    *,
    dirs: Sequence[str] | None = None,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
    listing: Scan | None = None,
) -> RecallResult:
    """The entries of ``vault`` (None: found as ``location.locate_vault`` says) whose title, slug or tags hold any term
    of ``topic``, ranked; the top READ_CAP keep their text.

    ``environ``, ``cwd`` and ``home`` are where the vault is looked for when ``vault`` is
    None (their defaults: this process's, for a Python caller). Raises InvalidQueryError
    (no term) or VaultError; a page that cannot be read is a warning and counts in
    ``unreadable``.
    """
    terms = split_topic(topic)
    # ``listing``: resolved and listed by the caller already.
    pages = listing if listing is not None else listed_vault(vault, dirs, environ, cwd, home)
    result = RecallResult(pages, topic, terms)
    folded_terms = fold_terms(terms)
    for page in pages.pages:
        try:
            data = read_page_bytes(page)
        except OSError as error:
            result.unreadable += 1
            result.warnings.append(unreadable_warning(page.rel_path, error))
            continue
        result.pages_searched += 1
        fields = recall_fields(data)
        if fields is None or not fields.folded:
            result.unseen += 1  # no title, slug or tag recall could search
            continue
        entry = entry_if_match(page, fields, folded_terms, data)
        if entry is not None:
            result.matches.append(entry)
    rank(result, preferred_dirs(pages))
    if not result.matches and not result.incomplete:
        result.left_out = left_out_files(pages)
    return result


def rank(result: RecallResult, prefer: Sequence[str] = ()) -> None:
    """Put the matches in rank order, the versions of one page together (``one_version``),
    drop the text of those not read, and sort the warnings so no file system's listing
    order shows. ``prefer``: the vault's ``[order] prefer``."""
    result.warnings.sort(key=Diagnostic.sort_key)
    result.matches.sort(key=rank_key)
    result.matches = one_version(result.matches, prefer)
    read = {id(entry) for entry in result.read}
    for entry in result.matches:
        if id(entry) not in read:
            entry.content = None


def one_version(matches: Sequence[Entry], prefer: Sequence[str]) -> list[Entry]:
    """``matches`` (in rank order) with the versions of each page (``versions.page_key``:
    the same path under sibling release or language dirs) together at the place of the
    first of them: the version ``versions.chosen_version`` picks first (the one under a
    preferred dir; else the highest release; else the first in rank order), to be read,
    then the others, each marked as another version of it (never read: one page's
    versions must not fill the read cap)."""
    from mnemosyne_core.versions import chosen_version, page_keys

    groups: dict[str, list[Entry]] = {}
    keys = page_keys(entry.path for entry in matches)
    for entry in matches:
        groups.setdefault(keys[entry.path], []).append(entry)
    if all(len(group) == 1 for group in groups.values()):
        return list(matches)
    ordered: list[Entry] = []
    for group in groups.values():
        chosen = group[chosen_version([entry.path for entry in group], prefer)]
        ordered.append(chosen)
        for entry in group:
            if entry is not chosen:
                entry.version_of = chosen.path
                ordered.append(entry)
    return ordered


def fill_read_entries(result: RecallResult, identities: Sequence[Identity]) -> bool:
    """Read the text of the read entries of a result someone else ranked, by the scan's
    rules and this process's rights (``page.read_as_judged``); False (the result must not
    be used) when any is not the version that was judged."""
    for entry, identity in zip(result.read, identities, strict=True):
        content = read_as_judged(result.vault, entry.path, identity)
        if content is None:
            return False
        entry.content = content
    return True


def entry_if_match(
    page: PageRef, fields: RecallFields | None, folded_terms: tuple[str, ...], content: bytes
) -> Entry | None:
    """The one rule deciding recall's matches: ANY term in the title, slug or a tag."""
    if fields is None or not any(term in field for term in folded_terms for field in fields.folded):
        return None
    return Entry(page, fields.title, fields.slug, fields.tags, fields.updated, content)


# --- the memory log ---


def resolve_memory_dir(
    flag: str | os.PathLike[str] | None,
    vault: str | os.PathLike[str] | None,
    environ: Mapping[str, str] = os.environ,
    result: RecallResult | None = None,
    cwd: str | None = None,
    home: str | None = None,
) -> str | None:
    """The memory dir, or None when none is configured: ``flag`` (--memory-dir), else
    MNEMOSYNE_MEMORY_DIR, else ``memory_dir`` in the vault's config file (relative to the
    vault root). A vault that cannot be resolved or whose config is invalid configures
    nothing, so a failed call is still logged when the flag or the variable names a dir.
    ``environ``, ``cwd`` and ``home`` are as ``recall``'s."""
    if flag is not None and os.fspath(flag):
        return os.fspath(flag)
    from_env = environ.get(MEMORY_DIR_ENV_VAR)
    if from_env:
        return from_env
    if result is not None:  # the recall read the config already
        return os.path.join(result.vault, result.memory_dir) if result.memory_dir else None
    try:
        vault_real = resolve_vault(vault, environ, cwd, home)
        configured = load_vault_config(vault_real).memory_dir
    except VaultError:
        return None
    return os.path.join(vault_real, configured) if configured else None


def one_line(text: str) -> str:
    """``text`` on one line: whitespace runs as one space, other controls as ``\\xNN``."""
    return collapse_whitespace(text).translate(_CONTROL_ESCAPES)


def observation(result: RecallResult) -> str:
    """One sentence on what a successful recall found, or why it found nothing."""
    query = one_line(result.topic)
    count = len(result.matches)
    if count == 0:
        if result.pages_searched == 0 and not result.incomplete:
            return f"the wiki has no entries to search, so nothing matched `{query}`."
        return f"no entry among {result.pages_searched} matched `{query}` in its title, slug or tags."
    noun = "entry" if count == 1 else "entries"
    read = len(result.read)
    sentence = f"matched {count} {noun} on `{query}`; "
    if result.not_read:
        return sentence + f"read the {read} most recently updated, {result.not_read} not read."
    return sentence + ("it was read into context." if count == 1 else f"all {read} read into context.")


def failure_observation(error: Exception) -> str:
    """One sentence on why a recall failed."""
    return f"recall failed: {one_line(str(error)).rstrip('.')}."


def format_log_entry(
    *,
    ok: bool,
    query: str,
    match_count: int,
    read_slugs: Sequence[str],
    observation: str,
    when: datetime.datetime,
) -> str:
    """A ``/wiki-query`` log entry, as the harness memory protocol reads it: a heading with
    the UTC time, then the five fields."""
    utc = when.astimezone(datetime.UTC)
    slugs = ", ".join(one_line(slug) for slug in read_slugs) or NO_SLUGS
    return (
        f"## {LOG_HEADING} -- {utc:%H:%M} UTC\n"
        f"- **Result**: {'OP' if ok else 'FAIL'}\n"
        f"- **Query**: {one_line(query)}\n"
        f"- **Match-Count**: {match_count}\n"
        f"- **Read-Slugs**: {slugs}\n"
        f"- **Observation**: {one_line(observation)}\n"
    )


def log_path(memory_dir: str | os.PathLike[str], when: datetime.datetime) -> str:
    """``<memory-dir>/<UTC-date>/log.md`` for the moment ``when``."""
    utc = when.astimezone(datetime.UTC)
    return os.path.join(os.fspath(memory_dir), f"{utc:%Y-%m-%d}", LOG_FILE_NAME)


def utc_now() -> datetime.datetime:
    """The current moment in UTC (a function so tests can fix the clock)."""
    return datetime.datetime.now(datetime.UTC)


def append_log(memory_dir: str | os.PathLike[str], entry: str, when: datetime.datetime) -> None:
    """Append ``entry`` (see ``format_log_entry``) to the day's log under ``memory_dir``.

    The entry goes out as one ``os.write`` on an ``O_APPEND`` descriptor while an exclusive
    ``flock`` is held, so entries of concurrent calls never interleave; it is preceded by a
    blank line when the file already has content. Raises MemoryLogError naming the file.
    """
    import fcntl  # recall's log only; POSIX

    path = log_path(memory_dir, when)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as error:
        raise MemoryLogError(f"cannot open the memory log {path}: {error.strerror}; check --memory-dir") from None
    size_before: int | None = None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size_before = os.fstat(fd).st_size
        data = entry.encode("utf-8", "surrogateescape")
        if size_before > 0:
            data = b"\n" + data
        written = os.write(fd, data)
        # A short write is finished under the same lock: the entry stays whole.
        while written < len(data):
            chunk = os.write(fd, data[written:])
            if chunk <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written += chunk
    except OSError as error:
        if size_before is not None:
            # Drop what a failed write left, so the log never holds half an entry.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size_before)
        raise MemoryLogError(f"cannot write the memory log {path}: {error.strerror}") from None
    finally:
        os.close(fd)  # closing releases the lock
