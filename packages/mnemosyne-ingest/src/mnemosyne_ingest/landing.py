"""Land a source document in a vault as ``<vault>/<dir>/<slug>.md``.

Every check runs before anything is written. The write is atomic: the page goes to a
temp file in the target dir (a hidden name not ending in ``.md``, so find never lists
it), is fsynced, then appears under its name in one step: ``os.link`` when it must not
replace anything, so of two racing ingests exactly one wins; ``os.replace`` with
``force``. Every failure removes the temp file. Afterwards find must locate the page by
a keyword of its title.

Only SIGKILL (or a power loss) between creating the temp file and removing it can leave
one behind. Every ingest that gets as far as writing (or finding the page already there)
first removes such leftovers from the target dir: files with exactly its temp-name shape,
untouched for over an hour (``vault.is_stale_ingest_temp``), and nothing else.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import os
import re
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from mnemosyne_core.config import (
    CONSTELLATIONS,
    DEFAULT_SCANNED_DIRS,
    LAYOUT_FROM_ZERO_CONFIG,
    VAULT_ROOT_DIR,
    check_dir_name,
    home_dir,
)
from mnemosyne_core.errors import VaultError
from mnemosyne_core.find import search
from mnemosyne_core.frontmatter import collapse_whitespace
from mnemosyne_core.location import is_inside, resolve_vault
from mnemosyne_core.page import PageRef, join_rel, read_page_bytes, read_to_end
from mnemosyne_core.vault import PAGE_SUFFIX, is_stale_ingest_temp, new_ingest_temp_name, scan
from mnemosyne_ingest.errors import (
    BadSourceError,
    IngestArgumentError,
    IngestUnverifiedError,
    TargetExistsError,
    WriteFailedError,
)
from mnemosyne_ingest.page import DEFAULT_DIR, build_page, same_ignoring_dates, split_source

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mnemosyne_ingest.page import Page

STATUS_INGESTED = "ingested"
STATUS_ALREADY_INGESTED = "already-ingested"
STATUS_REPLACED = "replaced"
STATUS_DRY_RUN = "dry-run"

# Unlike a page, a source may be a symlink: the user named it. Non-blocking: a FIFO fails.
_SOURCE_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
# os.link fails with these where the file system has no hard links (FAT, some FUSE mounts).
_NO_HARD_LINKS = frozenset(
    code for code in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, getattr(errno, "ENOSYS", None)) if code
)


@dataclass(slots=True)
class IngestResult:
    """What an ingest did (``status``) to which page.

    ``status`` is ``ingested`` (written), ``replaced`` (written over other content, with
    force), ``already-ingested`` (the page was there; nothing written) or ``dry-run``
    (nothing written; ``would`` says which of the other three a real run would do).
    """

    #: The page's path relative to the vault, as find prints it: ``<dir>/<slug>.md``.
    path: str
    #: Where the page is (or would be) on disk.
    target: str
    page: Page
    status: str
    would: str | None = None
    #: Temp files that killed ingests left in the target dir, removed by this one:
    #: paths relative to the vault, sorted.
    removed_temp_files: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.page.title

    @property
    def constellation(self) -> str:
        return self.page.constellation

    @property
    def type(self) -> str:
        return self.page.type

    def to_dict(self) -> dict[str, Any]:
        """The result as ``ingest --json`` reports it; a dry run adds ``would`` and the
        ``page`` text."""
        record: dict[str, Any] = {
            "path": self.path,
            "title": self.title,
            "constellation": self.constellation,
            "type": self.type,
            "status": self.status,
        }
        if self.status == STATUS_DRY_RUN:
            record["would"] = self.would
            record["page"] = self.page.content.decode("utf-8")
        return record


def check_constellation(name: str) -> None:
    """Raise IngestArgumentError unless ``name`` is one of CONSTELLATIONS."""
    if name not in CONSTELLATIONS:
        raise IngestArgumentError(f"unknown constellation {name!r}: pass one of {', '.join(CONSTELLATIONS)}")


#: The longest file name (NAME_MAX) of common Linux and macOS file systems, in bytes.
MAX_NAME_BYTES = 255


def check_slug(slug: str, *, option: str = "--slug") -> None:
    """Raise IngestArgumentError unless ``slug`` names exactly one visible file in the
    target dir: no path separator, no ``..``, no leading dot, no NUL or other control
    character, not blank, no ``.md`` of its own."""
    what = f"{option} {slug!r}"
    if not slug.strip() or slug != slug.strip():
        reason = "is blank or has surrounding spaces"
    elif "/" in slug or "\\" in slug or os.sep in slug or (os.altsep and os.altsep in slug):
        reason = "contains a path separator"
    elif ".." in slug:
        reason = "contains '..'"
    elif slug.startswith("."):
        reason = "starts with '.' (hidden pages are never listed)"
    elif "\0" in slug:
        reason = "contains NUL"
    elif any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in slug):
        reason = "contains a control character"
    elif slug.endswith(PAGE_SUFFIX):
        reason = f"ends in {PAGE_SUFFIX!r} (it is added for you)"
    elif len((slug + PAGE_SUFFIX).encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        reason = f"is too long: with {PAGE_SUFFIX} it must fit in {MAX_NAME_BYTES} bytes"
    else:
        return
    fix = "pass --slug NAME" if option != "--slug" else "pass a plain file name without .md, e.g. --slug my-report"
    raise IngestArgumentError(f"{what} {reason}: {fix}")


def read_source(path: str) -> bytes:
    """The whole source file. Raises BadSourceError when it is missing, not a regular
    file or unreadable."""
    try:
        fd = os.open(path, _SOURCE_FLAGS)
    except FileNotFoundError:
        raise BadSourceError(f"source {path!r} does not exist: pass the path of a markdown file") from None
    except OSError as error:
        raise BadSourceError(f"cannot read source {path!r}: {error.strerror}; check its permissions") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadSourceError(f"source {path!r} is not a regular file: pass the path of a markdown file")
        return read_to_end(fd)
    except OSError as error:
        raise BadSourceError(f"cannot read source {path!r}: {error.strerror}; check the file") from None
    finally:
        os.close(fd)


#: What a source read from standard input is called: its ``source`` key, and its name in messages.
STDIN_SOURCE_NAME = "stdin"
#: The most a source read from standard input may hold; a page is far smaller, and a runaway
#: pipe must not fill the memory.
MAX_STDIN_BYTES = 32 << 20


def read_stdin(stream: BinaryIO) -> bytes:
    """Everything on ``stream`` (standard input), up to MAX_STDIN_BYTES. Raises
    BadSourceError when it holds more, or cannot be read."""
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := stream.read(min(1 << 16, MAX_STDIN_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_STDIN_BYTES:
                raise BadSourceError(
                    f"the source on stdin is larger than {MAX_STDIN_BYTES >> 20} MiB, far more than a page: "
                    "check what is piped in"
                )
    except OSError as error:
        raise BadSourceError(f"cannot read the source from stdin: {error.strerror or error}") from None
    return b"".join(chunks)


def stdin_slug(slug: str | None, title: str | None) -> str:
    """The slug of a page whose source comes from standard input, which has no file name to
    take one from: ``slug``, else one made from ``title`` (lower case, runs of anything but
    letters and digits as one '-'). Raises IngestArgumentError when neither names the page."""
    if slug is not None:
        check_slug(slug)
        return slug
    if title is None:
        raise IngestArgumentError(
            "a source read from stdin ('-') has no file name to name the page: pass --slug NAME or --title T"
        )
    made = re.sub(r"[\W_]+", "-", collapse_whitespace(title).casefold()).strip("-")
    while len((made + PAGE_SUFFIX).encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        made = made[:-1].rstrip("-")
    if not made:
        raise IngestArgumentError(f"--title {title!r} has no letter or digit to make a file name of: pass --slug NAME")
    check_slug(made, option="the slug made from --title")
    return made


def ingest(
    source: str | os.PathLike[str],
    *,
    constellation: str,
    vault: str | os.PathLike[str] | None = None,
    dir: str = DEFAULT_DIR,  # noqa: A002 - a vault dir, named as the --dir flag
    title: str | None = None,
    type: str | None = None,  # noqa: A002 - the frontmatter key's name
    slug: str | None = None,
    force: bool = False,
    dry_run: bool = False,
    now: datetime.datetime | None = None,
    source_data: bytes | None = None,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
) -> IngestResult:
    """Land ``source`` in ``vault`` (None: found as ``location.locate_vault`` says) as ``<dir>/<slug>.md``, owned by
    ``constellation``; ``slug`` defaults to the source's stem.

    ``now`` is the clock (default: the current time; a naive datetime is taken as UTC). Its
    UTC date is the ingest date (``ingested``, and ``updated`` when the source has none),
    and a temp file in the target dir is stale when it was last modified over an hour
    before it.

    ``source_data`` is the source itself when it comes from no file (standard input,
    ``read_stdin``); ``source`` then only names it (STDIN_SOURCE_NAME), and the page's name
    is ``stdin_slug(slug, title)``, also its title when the source has none.

    ``environ``, ``cwd`` and ``home`` are where the vault is looked for when ``vault`` is
    None (``location.locate_vault``, whose defaults, this process's, are for a Python caller).

    Raises IngestArgumentError, VaultError, BadSourceError (all before anything is
    written), TargetExistsError, WriteFailedError (nothing left behind) or
    IngestUnverifiedError (the page is in place but find does not locate it).
    """
    check_constellation(constellation)
    reason = check_dir_name(dir)
    if reason:
        raise IngestArgumentError(f"--dir {dir!r} {reason}: pass a scanned dir such as {DEFAULT_DIR}")
    if source_data is not None:
        slug = stdin_slug(slug, title)
    elif slug is not None:
        check_slug(slug)
    home = home_dir(environ) if home is None else home
    vault_real = resolve_vault(vault, environ, cwd, home)
    layout = scan(vault_real, home=home).layout
    assert layout is not None  # scan always follows one
    if not layout.holds_dir(dir):
        below = " or a dir below one" if layout.tree else ""
        raise IngestArgumentError(
            f"--dir {dir!r} is not a scanned dir of this vault, so find would never list the page: "
            f"pass one of {', '.join(layout.dirs)}{below}"
        )
    top = dir.partition("/")[0]
    if (
        layout.source == LAYOUT_FROM_ZERO_CONFIG
        and top in DEFAULT_SCANNED_DIRS
        and not os.path.lexists(os.path.join(vault_real, top))
    ):
        # A vault with one of the default dirs is an Aion vault, searched in those dirs only.
        raise VaultError(
            f"--dir {dir!r} would create {top}/, one of the default dirs, and a vault that has one is searched "
            "as an Aion vault (those dirs only), leaving this vault's other notes unsearched: run "
            "'mnemosyne wiki init' first to keep its layout, or pass --dir a dir it has"
        )
    source_path = os.fspath(source)
    if source_data is None:
        data = read_source(source_path)
        source_name = os.path.basename(source_path)
        stem = os.path.splitext(source_name)[0]
    else:
        data, source_name = source_data, source_path
        stem = slug = stdin_slug(slug, title)  # checked above already: the same name again
    if slug is None:
        slug = stem
        check_slug(slug, option="the source's stem")
    document = split_source(data, source_name)
    moment = _utc(now)
    page = build_page(
        document,
        stem=stem,
        constellation=constellation,
        dir=dir,
        title=title,
        type=type,
        ingested=moment.date(),
    )
    dir_path = _target_dir(vault_real, dir)
    name = slug + PAGE_SUFFIX
    target = os.path.join(dir_path, name)
    rel_dir = "" if dir == VAULT_ROOT_DIR else dir
    rel_path = join_rel(rel_dir, name)
    existing = _read_existing(target, rel_path, rel_dir, name, force)
    if existing is not None and same_ignoring_dates(existing, page):
        plan = STATUS_ALREADY_INGESTED
    elif existing is not None and not force:
        raise _differs(rel_path)
    else:
        plan = STATUS_REPLACED if existing is not None else STATUS_INGESTED
    if dry_run:
        return IngestResult(rel_path, target, page, STATUS_DRY_RUN, would=plan)
    removed = [join_rel(rel_dir, temp) for temp in remove_stale_temp_files(dir_path, moment.timestamp())]
    status = plan
    if plan != STATUS_ALREADY_INGESTED:
        status = _land(page, dir_path, target, rel_path, dir, name, replace=force, plan=plan)
    result = IngestResult(rel_path, target, page, status, removed_temp_files=removed)
    _verify(vault_real, result, environ, home)
    return result


def _utc(now: datetime.datetime | None) -> datetime.datetime:
    if now is None:
        return datetime.datetime.now(datetime.UTC)
    return now.replace(tzinfo=datetime.UTC) if now.tzinfo is None else now.astimezone(datetime.UTC)


def remove_stale_temp_files(dir_path: str, now: float) -> list[str]:
    """Remove the temp files that killed ingests left in ``dir_path`` (see
    ``vault.is_stale_ingest_temp``; ``now`` in seconds since the epoch) and return their
    names, sorted. Best effort: a file that cannot be inspected or removed (or that a
    racing ingest removed first) is left to ``wiki lint`` to report."""
    removed = []
    try:
        with os.scandir(dir_path) as entries:
            stale = [entry for entry in entries if is_stale_ingest_temp(entry, now)]
    except OSError:
        return []  # no dir yet, or unlistable: the write reports a real problem
    for entry in stale:
        try:
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(entry.name)
    return sorted(removed)


def _target_dir(vault_real: str, dir_name: str) -> str:
    """``<vault>/<dir>``, which may not exist yet; refuses one that is not a dir or is a
    symlink leading out of the vault (find would skip it)."""
    path = os.path.join(vault_real, dir_name)
    if os.path.islink(path) and not is_inside(os.path.realpath(path), vault_real):
        raise IngestArgumentError(
            f"{dir_name}/ is a symlink that leaves the vault, so find skips it: pass another --dir"
        )
    if os.path.lexists(path) and not os.path.isdir(path):
        raise IngestArgumentError(f"{dir_name}/ in the vault is not a directory: move it away or pass another --dir")
    return path


def _read_existing(target: str, rel_path: str, dir_name: str, name: str, force: bool) -> bytes | None:
    """The bytes already at the target, or None when there is nothing."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        raise WriteFailedError(f"cannot inspect {rel_path}: {error.strerror}; check the dir's permissions") from None
    if stat.S_ISLNK(mode):
        raise IngestArgumentError(
            f"{rel_path} is a symlink, so the page would resolve outside {dir_name}/: remove it or pass another --slug"
        )
    if not stat.S_ISREG(mode):
        raise TargetExistsError(f"{rel_path} exists and is not a regular file: move it away or pass another --slug")
    try:
        return read_page_bytes(PageRef(dir_name, name, target))
    except OSError as error:
        if force:
            return b""  # unreadable, so it cannot be the same page: --force replaces it
        raise TargetExistsError(
            f"{rel_path} exists and cannot be read ({error.strerror}): pass --force to replace it, or another --slug"
        ) from None


def _differs(rel_path: str) -> TargetExistsError:
    return TargetExistsError(
        f"{rel_path} already exists with different content: pass --force to replace it, or another --slug"
    )


def _land(
    page: Page, dir_path: str, target: str, rel_path: str, dir_name: str, name: str, *, replace: bool, plan: str
) -> str:
    """Write the page; return the status. Without ``replace``, a page that appeared
    meanwhile (a racing ingest) is compared instead of overwritten."""
    created_dir = False
    try:
        if not os.path.isdir(dir_path):
            try:
                os.mkdir(dir_path)
                created_dir = True
            except FileExistsError:
                pass  # a racing ingest made it
        landed = _write_atomically(dir_path, target, page.content, replace=replace)
    except BaseException as error:
        if created_dir:
            _remove_quietly(os.rmdir, dir_path)  # fails, rightly, if a racing ingest wrote there
        if isinstance(error, OSError):
            raise WriteFailedError(
                f"cannot write {rel_path} ({error.strerror or error}), nothing was written: {_write_fix(error)}"
            ) from None
        raise
    if landed:
        return plan
    # Another ingest landed the same name between our check and our link.
    try:
        existing = read_page_bytes(PageRef(dir_name, name, target))
    except OSError:
        raise _differs(rel_path) from None
    if same_ignoring_dates(existing, page):
        return STATUS_ALREADY_INGESTED
    raise _differs(rel_path)


def _write_atomically(dir_path: str, target: str, content: bytes, *, replace: bool) -> bool:
    """Put ``content`` at ``target`` whole or not at all. Returns False, writing nothing,
    when ``replace`` is off and the target exists by the time it would appear."""
    # Hidden and not ending in .md, so find never lists it; not built from the slug, so a
    # name that fits NAME_MAX as a page also fits as a temp file.
    temp = os.path.join(dir_path, new_ingest_temp_name())
    fd = os.open(temp, _TEMP_FLAGS, 0o666)
    try:
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temp, target)
        elif not _link_without_clobbering(temp, target):
            return False
        _fsync_dir(dir_path)
        return True
    finally:
        # After os.replace the temp name is gone; after os.link (or any failure) it is
        # still there. Either way nothing but the page may remain.
        _remove_quietly(os.unlink, temp)


def _link_without_clobbering(temp: str, target: str) -> bool:
    try:
        os.link(temp, target)
    except FileExistsError:
        return False
    except OSError as error:
        if error.errno not in _NO_HARD_LINKS:
            raise
        # No hard links here: fall back to check-then-rename, which two ingests racing
        # within microseconds could both pass; the page is still never partial.
        if os.path.lexists(target):
            return False
        os.replace(temp, target)
    return True


def _fsync_dir(dir_path: str) -> None:
    # Makes the new name durable. Not every platform can open a dir; the page itself is
    # already safe on disk, so this is best effort.
    try:
        fd = os.open(dir_path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_quietly(remove: Any, path: str) -> None:
    with contextlib.suppress(OSError):
        remove(path)


def _write_fix(error: OSError) -> str:
    if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return "free some disk space and run it again"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "make the dir writable and run it again"
    return "fix the cause and run it again"


def _verify(vault_real: str, result: IngestResult, environ: Mapping[str, str], home: str) -> None:
    """Raise IngestUnverifiedError unless find locates the page, with its title, by the
    longest word of that title (searching as the caller would: its environment and home)."""
    keyword = max(result.title.split(), key=len)
    found = search(vault_real, [keyword], limit=0, environ=environ, home=home)
    if any(match.path == result.path and match.title == result.title for match in found.matches):
        return
    where = "wrote" if result.status != STATUS_ALREADY_INGESTED else "found"
    raise IngestUnverifiedError(
        f"{where} {result.path} but 'mnemosyne wiki find {keyword}' does not list it with its title: "
        f"run that find with --vault {vault_real} to see why"
    )
