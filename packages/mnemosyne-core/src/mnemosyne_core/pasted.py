"""Keywords pasted as a page's path: each form find's output (or a shell) gives a path in
is read as the vault-relative path find prints, so that it finds its page exactly as that
path does.

A bare vault-relative path (``duckdb/remote-parquet.md``) needs nothing: the path is one
of the fields a keyword matches (spec.md, rule 6). The other forms would not match it as
typed, so ``page_keywords`` rewrites them:

- a whole output line, ``<path> — <title>`` (what plain output and ``--cat``'s candidate
  list print, indented or not): its path;
- an absolute path inside the vault (what ``--absolute`` prints), also through a symlink
  to the vault or a dir above it: the path relative to the vault root;
- ``./path`` and a path with a ``..`` part: the path they name, read from the vault root
  as find's paths are (the current dir does not matter);
- a path with ``\\`` separators (Windows), on any OS: the path with ``/``, unless the vault
  has a file by the name as typed (a POSIX name may hold a ``\\``).

A keyword is one of these only when its path ends in a suffix the layout searches (a
page's name), so ordinary keywords never change meaning. Every rewrite but the ``\\`` one
only widens the match: the path found is a substring of the text typed, so each page the
typed text matched still matches.

A path that lies outside the vault names no page of it: ``PathOutsideVaultError`` (a
usage error), never a miss. But a keyword outside the vault that lies in no dir of this
machine (or directly in ``/``) is no path pasted from it, and keeps its meaning:
``/index.md`` anchors a substring at a ``/``, ``../guides/install.md`` finds the pages
that link to it. A path cut from an output line is one whatever it names.
"""

from __future__ import annotations

import os
import posixpath

from mnemosyne_core.errors import PathOutsideVaultError

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: What find prints between a page's path and its title (spec.md, rule 9).
LINE_SEPARATOR = " — "


def page_keywords(
    keywords: Sequence[str],
    vault: str | os.PathLike[str] | None,
    dirs: Sequence[str] | None,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
) -> tuple[str, ...]:
    """``keywords`` with each pasted path (module doc) replaced by the vault-relative path
    it names; the others as they are. The vault (found as ``location.locate_vault`` finds it)
    and its layout are read only when a keyword could be one (``_may_be_pasted``): words,
    phrases and bare relative paths cost nothing.

    Raises PathOutsideVaultError when a pasted path lies outside the vault, and what the
    search itself would raise first (InvalidQueryError for an empty keyword, VaultError).
    """
    if not any(_may_be_pasted(keyword) for keyword in keywords):
        return tuple(keywords)
    from mnemosyne_core.config import vault_layout
    from mnemosyne_core.location import resolve_vault
    from mnemosyne_core.results import check_keywords

    check_keywords(keywords)  # a usage error stays the search's, before any vault is read
    vault_real = resolve_vault(vault, environ, cwd, home)
    suffixes = vault_layout(vault_real, dirs).suffixes
    return tuple(_rewritten(keyword, vault_real, suffixes) for keyword in keywords)


def _may_be_pasted(keyword: str) -> bool:
    """Whether ``keyword`` could be a pasted path, judged without the layout: cheap, and
    false for words, phrases and bare relative paths, which match as typed."""
    return (
        LINE_SEPARATOR in keyword
        or "\\" in keyword
        or keyword.startswith(("/", "./"))
        or ".." in keyword.split("/")
        or os.path.isabs(keyword)
    )


def _rewritten(keyword: str, vault_real: str, suffixes: tuple[str, ...]) -> str:
    path, from_line = _pasted_path(keyword, suffixes)
    if path is None:
        return keyword
    if os.path.isabs(path):
        return _inside(path, vault_real, None if from_line else keyword)
    if "\\" in path and not _exists(os.path.join(vault_real, path)):
        path = path.replace("\\", "/")
    if not (from_line or path.startswith("./") or ".." in path.split("/")):
        # Nothing to read: a bare relative path (a typed '\\' kept as a name) matches as typed.
        return keyword if path == keyword else path
    relative = posixpath.normpath(path)
    if relative == ".." or relative.startswith("../"):
        if not from_line and not _names_a_dir(os.path.join(vault_real, relative)):
            return keyword  # a link's target quoted in a page, not a path to a file
        raise PathOutsideVaultError(
            f"{path!r} is outside the vault {vault_real!r} (a relative path is read from the vault root, "
            "as find prints it): pass the path of a page inside the vault, or --vault the vault that holds it"
        )
    return relative if relative != "." else keyword


def _pasted_path(keyword: str, suffixes: tuple[str, ...]) -> tuple[str | None, bool]:
    """The path ``keyword`` was pasted as, and whether it came from an output line; None
    when it is no pasted path. A line is cut at the first separator whose left side ends
    in a page suffix (a title, and in theory a file name, may hold the separator too)."""
    start = 0
    while (cut := keyword.find(LINE_SEPARATOR, start)) >= 0:
        left = keyword[:cut].strip()
        if left.endswith(suffixes):
            return left, True
        start = cut + 1
    if not keyword.endswith(suffixes) or _windows_drive(keyword):
        return None, False
    if os.path.isabs(keyword) or keyword.startswith(("./", ".\\")) or "\\" in keyword or ".." in keyword.split("/"):
        return keyword, False
    return None, False


def _windows_drive(path: str) -> bool:
    """Whether ``path`` starts with a Windows drive (``C:\\``) on another OS, where it is
    no path of this machine: a quoted Windows path keeps its meaning as typed."""
    return os.sep == "/" and len(path) > 2 and path[0].isascii() and path[0].isalpha() and path[1:3] in (":\\", ":/")


def _inside(path: str, vault_real: str, keyword: str | None) -> str:
    """The vault-relative path of the absolute ``path``, or PathOutsideVaultError; but
    ``keyword`` as it is when the path lies in no dir here (``_names_a_dir``); None for a
    path cut from an output line, which is one whatever it names. The vault root in
    ``path`` may be spelled through symlinks (a linked vault, ``/tmp`` for
    ``/private/tmp``): the first dir on the path that resolves to the vault root is it.
    Only the dirs up to the root are resolved, never the page: a page that is a symlink is
    found by its own path, as find prints it."""
    normal = os.path.normpath(path)
    root = vault_real.rstrip(os.sep) + os.sep
    if normal.startswith(root):
        return _slashed(normal[len(root) :])
    if keyword is not None and not _names_a_dir(normal):
        # '/index.md' anchors a substring at a '/'; '/docs/guide.md' names no dir here: a
        # keyword as typed, not a path pasted from this machine.
        return keyword
    parts = normal.split(os.sep)
    for end in range(2, len(parts)):
        try:
            if os.path.realpath(os.sep.join(parts[:end])) == vault_real:
                return _slashed(os.sep.join(parts[end:]))
        except (OSError, ValueError):  # ValueError: a NUL byte, which no path holds
            break
    raise PathOutsideVaultError(
        f"{path!r} is outside the vault {vault_real!r}: pass the path of a page inside the vault, "
        "or --vault the vault that holds it"
    )


def _names_a_dir(path: str) -> bool:
    """Whether the file ``path`` lies in a dir that exists, other than the file system
    root: what a path copied from this machine does, and a keyword that merely looks like
    a path (``/index.md``, ``../guides/install.md`` quoted from a link) mostly does not."""
    above = os.path.dirname(os.path.normpath(path))
    try:
        return above != os.path.dirname(above) and os.path.isdir(above)
    except ValueError:  # a NUL byte: no such dir
        return False


def _slashed(relative: str) -> str:
    return relative if os.sep == "/" else relative.replace(os.sep, "/")


def _exists(path: str) -> bool:
    try:
        return os.path.lexists(path)
    except ValueError:  # a NUL byte: no such file
        return False
