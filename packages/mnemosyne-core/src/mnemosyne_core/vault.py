"""Which files of a vault are pages, and reading them safely.

A page is a regular file directly inside a scanned dir whose name ends in ``.md`` (exact
case) and does not start with ``.``. A symlink counts only when its target resolves
inside the vault; one that escapes, or is broken, is skipped with a warning and never read.
"""

from __future__ import annotations

import os
import stat

from mnemosyne_core.config import VAULT_ENV_VAR, scanned_dirs
from mnemosyne_core.errors import VaultError

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time (issue 6)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

PAGE_SUFFIX = ".md"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def resolve_vault(path: str | os.PathLike[str] | None, environ: Mapping[str, str] = os.environ) -> str:
    """The vault root as a real (symlink-free) path: ``path`` if given, else AION_VAULT.

    Raises VaultError with the reason and the fix when neither is set, or the path is
    missing, unreadable or not a directory.
    """
    name = os.fspath(path) if path is not None else environ.get(VAULT_ENV_VAR, "")
    if not name:
        raise VaultError(f"no vault given: pass --vault PATH or set {VAULT_ENV_VAR}")
    try:
        mode = os.stat(name).st_mode
    except (FileNotFoundError, ValueError):  # ValueError: a NUL byte, which no path holds
        raise VaultError(f"vault {name!r} does not exist: pass --vault PATH to your vault root") from None
    except OSError as error:
        raise VaultError(f"cannot open vault {name!r}: {error.strerror}; check its permissions") from None
    if not stat.S_ISDIR(mode):
        raise VaultError(f"vault {name!r} is not a directory: pass --vault PATH to your vault root")
    return os.path.realpath(name)


def is_page_name(name: str) -> bool:
    """Whether a file name is a page's: ends in ``.md`` exactly, not hidden."""
    return name.endswith(PAGE_SUFFIX) and not name.startswith(".")


#: Ingest writes a page to ``<prefix><16 random hex digits><suffix>`` in the target dir
#: first: hidden and not ending in .md, so find never lists it.
INGEST_TEMP_PREFIX = ".mnemosyne-ingest-"
INGEST_TEMP_SUFFIX = ".tmp"
_INGEST_TEMP_TOKEN_BYTES = 8
_HEX_DIGITS = frozenset("0123456789abcdef")
#: An ingest's temp file lives for milliseconds; untouched for this long, it can only be
#: left over from an ingest that was killed (SIGKILL, power loss) before it cleaned up.
STALE_TEMP_SECONDS = 3600


def new_ingest_temp_name() -> str:
    """A fresh name for an ingest's temp file; random, so racing ingests never share one."""
    import secrets  # lazy: only ingest writes

    return f"{INGEST_TEMP_PREFIX}{secrets.token_hex(_INGEST_TEMP_TOKEN_BYTES)}{INGEST_TEMP_SUFFIX}"


def is_ingest_temp_name(name: str) -> bool:
    """Whether ``name`` is exactly the shape ``ingest_temp_name`` makes, and nothing looser:
    a user's ``.mnemosyne-ingest-notes.tmp`` is not ingest's to judge."""
    if not (name.startswith(INGEST_TEMP_PREFIX) and name.endswith(INGEST_TEMP_SUFFIX)):
        return False
    token = name[len(INGEST_TEMP_PREFIX) : -len(INGEST_TEMP_SUFFIX)]
    return len(token) == 2 * _INGEST_TEMP_TOKEN_BYTES and _HEX_DIGITS.issuperset(token)


def is_stale_ingest_temp(entry: os.DirEntry[str], now: float) -> bool:
    """Whether ``entry`` is a temp file an interrupted ingest left behind: a regular file
    (not a symlink) with an ingest temp name, last modified more than STALE_TEMP_SECONDS
    before ``now`` (seconds since the epoch). A fresher one may belong to an ingest that is
    still running. False when the entry cannot be inspected (it vanished, say)."""
    if not is_ingest_temp_name(entry.name):
        return False
    try:
        return (
            entry.is_file(follow_symlinks=False)
            and now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS
        )
    except OSError:
        return False


def is_inside(real_path: str, vault_real: str) -> bool:
    """Whether a resolved path lies inside the resolved vault root."""
    return real_path.startswith(vault_real + os.sep)


class PageRef:
    """A page found by the scan: where it is shown (``rel_path``) and where it is read."""

    __slots__ = ("dir", "name", "read_path", "rel_path")

    def __init__(self, dir: str, name: str, read_path: str):  # noqa: A002 - a vault dir
        self.dir = dir
        self.name = name
        self.rel_path = f"{dir}/{name}"
        self.read_path = read_path

    @property
    def stem(self) -> str:
        return self.name[: -len(PAGE_SUFFIX)]

    def __repr__(self) -> str:
        return f"PageRef({self.rel_path!r})"


class Scan:
    """The pages of a vault, in scan order, and the warnings met while listing them.

    ``incomplete`` counts what was in scope but could not be listed (a dir that vanished
    or could not be opened): a search over an incomplete scan cannot promise "no match".

    The listing is kept compact (``listing``: one file name list per dir) and ``pages``
    builds the PageRef objects on first use: at 100,000 pages they would cost ~30 MB that
    find, which streams over ``listing``, never needs.
    """

    __slots__ = ("_pages", "dir_warnings", "dirs", "incomplete", "links", "listing", "vault", "warnings")

    def __init__(self, vault: str, dirs: tuple[str, ...]):
        self.vault = vault
        self.dirs = dirs
        #: (dir name, path of the dir as read, page file names in scan order), per dir listed.
        self.listing: list[tuple[str, str, list[str]]] = []
        #: The read path of each page that is a symlink, by rel_path (its target, resolved).
        self.links: dict[str, str] = {}
        self.warnings: list[str] = []
        #: The warnings (also in ``warnings``) about the command line rather than a file:
        #: a --dir that names no dir of the vault.
        self.dir_warnings: list[str] = []
        self.incomplete = 0
        self._pages: list[PageRef] | None = None

    def __len__(self) -> int:
        return sum(len(names) for _, _, names in self.listing)

    @property
    def pages(self) -> list[PageRef]:
        if self._pages is None:
            links = self.links
            self._pages = [
                PageRef(dir_name, name, links.get(f"{dir_name}/{name}") or f"{dir_path}/{name}")
                for dir_name, dir_path, names in self.listing
                for name in names
            ]
        return self._pages


def scan(vault: str, dirs: Sequence[str] | None = None) -> Scan:
    """List the pages of the vault at ``vault`` (a real path, see ``resolve_vault``).

    ``dirs`` overrides the scanned dirs (--dir). Raises VaultError when none of the scanned
    dirs exists.
    """
    result = Scan(vault, scanned_dirs(vault, dirs))
    try:
        with os.scandir(vault) as entries:
            top = {entry.name: entry for entry in entries}
    except OSError as error:
        raise VaultError(f"cannot list vault {vault!r}: {error.strerror}; check its permissions") from None
    found_any = False
    not_dirs: list[str] = []
    for dir_name in result.dirs:
        entry = top.get(dir_name)
        if entry is None:
            not_dirs.append(dir_name)
            continue
        dir_path = entry.path
        if entry.is_symlink():
            real = os.path.realpath(dir_path)
            if not os.path.exists(real):
                result.warnings.append(f"{dir_name}/: broken symlink; skipped")
                continue
            if not is_inside(real, vault):
                result.warnings.append(f"{dir_name}/: symlink leaves the vault; skipped")
                continue
            if not os.path.isdir(real):
                not_dirs.append(dir_name)
                continue
            dir_path = real
        elif not entry.is_dir(follow_symlinks=False):
            not_dirs.append(dir_name)
            continue
        found_any = True
        _scan_dir(result, dir_name, dir_path)
    if not found_any:
        raise VaultError(
            f"vault {vault!r} has none of the scanned dirs ({', '.join(result.dirs)}); {_its_dirs(top)}: "
            "pass the vault root with --vault, or name its dirs with --dir"
        )
    if dirs:
        # A default or configured dir may well be absent; a dir typed on the command line
        # that is not there is a typo the user should hear about.
        for dir_name in not_dirs:
            warning = f"--dir {dir_name!r} names no dir of the vault; {_its_dirs(top)}"
            result.dir_warnings.append(warning)
            result.warnings.append(warning)
    return result


def _its_dirs(top: Mapping[str, os.DirEntry[str]]) -> str:
    """The vault's top-level dirs that could be scanned (not hidden), for a message."""
    names = []
    for name, entry in top.items():
        try:
            if not name.startswith(".") and entry.is_dir():
                names.append(name)
        except OSError:
            continue
    return f"its dirs are {', '.join(sorted(names))}" if names else "it has no dirs"


def _scan_dir(result: Scan, dir_name: str, dir_path: str) -> None:
    names: list[str] = []
    # Listed first, so the pages met before a failure mid-listing are still searched.
    result.listing.append((dir_name, dir_path, names))
    try:
        with os.scandir(dir_path) as entries:
            for entry in entries:
                name = entry.name
                if not is_page_name(name):
                    continue
                if entry.is_symlink():
                    rel_path = f"{dir_name}/{name}"
                    read_path = _followed_symlink(result, rel_path, entry.path)
                    if read_path is not None:
                        result.links[rel_path] = read_path
                        names.append(name)
                elif entry.is_file(follow_symlinks=False):
                    names.append(name)
    except OSError as error:
        result.incomplete += 1
        result.warnings.append(f"{dir_name}/: cannot list ({error.strerror}); its pages were not searched")


def _followed_symlink(result: Scan, rel_path: str, link_path: str) -> str | None:
    real = os.path.realpath(link_path)
    if not os.path.exists(real):
        result.warnings.append(f"{rel_path}: broken symlink; skipped")
        return None
    if not is_inside(real, result.vault):
        result.warnings.append(f"{rel_path}: symlink leaves the vault; skipped")
        return None
    return real if os.path.isfile(real) else None


def unreadable_warning(rel_path: str, error: OSError) -> str:
    """The warning for a listed page that could not be read; the search goes on."""
    reason = "vanished during the search" if isinstance(error, FileNotFoundError) else error.strerror
    return f"{rel_path}: cannot read ({reason}); skipped"


def open_page(read_path: str) -> int:
    """An fd for reading a listed page. O_NOFOLLOW: a page swapped for a symlink after the
    scan is refused, not followed out of the vault; O_NONBLOCK: one swapped for a FIFO
    fails instead of hanging."""
    return os.open(read_path, _READ_FLAGS | getattr(os, "O_NOFOLLOW", 0))


def read_to_end(fd: int) -> bytes:
    """Everything left to read from ``fd``."""
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def read_page_bytes(page: PageRef) -> bytes:
    """The whole page, as bytes."""
    fd = open_page(page.read_path)
    try:
        return read_to_end(fd)
    finally:
        os.close(fd)
