"""Where the vault is: the root a command searches, from --vault, AION_VAULT, a
``.mnemosyne.toml`` above the current dir or the user config, and the dirs no vault is (/,
the home dir, the system's dirs)."""

from __future__ import annotations

import os
import stat

from mnemosyne_core.config import (
    DEFAULT_SCANNED_DIRS,
    FROM_ENV,
    FROM_FLAG,
    FROM_USER_CONFIG,
    FROM_VAULT_CONFIG,
    VAULT_CONFIG_FILE,
    VAULT_ENV_VAR,
    expand_path,
    find_vault_config_upwards,
    home_dir,
    load_user_vault,
    user_config_path,
)
from mnemosyne_core.errors import VaultError
from mnemosyne_core.record import Record

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping


class VaultLocation(Record):
    """The vault root and how it was found.

    ``path``: the root as a real (symlink-free) path. ``source``: which of the four ways
    named it (a ``config.FROM_*``). ``given``: the text that named it, before ``~`` and
    ``$VAR`` expansion (for a ``.mnemosyne.toml`` found from the current directory, the dir
    holding it). ``source_file``: the config file that named it, or None.
    """

    __slots__ = ("given", "path", "source", "source_file")

    def __init__(self, path: str, source: str, given: str, source_file: str | None = None):
        self.path = path
        self.source = source
        self.given = given
        self.source_file = source_file


# The defaults (this process's environment, current dir and home) are for a Python caller
# asking as the process it runs in; the CLI passes the ones of its call (``Environment``).
def resolve_vault(
    path: str | os.PathLike[str] | None,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
) -> str:
    """The vault root as a real (symlink-free) path; see ``locate_vault``."""
    return locate_vault(path, environ, cwd, home).path


def locate_vault(
    path: str | os.PathLike[str] | None,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
) -> VaultLocation:
    """Find the vault root; the first of these that names one wins:

    1. ``path`` (--vault);
    2. the nearest ``.mnemosyne.toml`` in ``cwd`` (default: the current directory) or a
       parent: its dir is the vault root;
    3. AION_VAULT in ``environ``;
    4. ``vault = "..."`` in the user config file (``config.user_config_path``).

    ``~`` (``home``; default: the one ``environ`` names, ``config.home_dir``) and ``$VAR``
    are expanded in 1, 3 and 4. Only the ways reached are consulted: a call with --vault
    never walks the dirs nor reads the user config.

    Raises VaultError with the reason and the fix when none names a vault, the user config
    is broken, or the path is missing, unreadable or not a directory.
    """
    home = home_dir(environ) if home is None else home
    if path is not None:
        given = os.fspath(path)
        if not given:
            raise VaultError("--vault is empty: pass --vault PATH to your vault root")
        return _checked(given, FROM_FLAG, None, environ, home)
    marked = _vault_config_dir(cwd)
    if marked is not None:
        return _checked(marked, FROM_VAULT_CONFIG, os.path.join(marked, VAULT_CONFIG_FILE), environ, home)
    from_env = environ.get(VAULT_ENV_VAR)
    if from_env:
        return _checked(from_env, FROM_ENV, None, environ, home)
    config_path = user_config_path(environ, home)
    from_user = load_user_vault(config_path)
    if from_user is not None:
        return _checked(from_user, FROM_USER_CONFIG, config_path, environ, home)
    raise VaultError(
        f"no vault found: pass --vault PATH, run inside a vault that has a {VAULT_CONFIG_FILE}, "
        f'set {VAULT_ENV_VAR}, or set vault = "PATH" in {config_path}'
    )


def _vault_config_dir(cwd: str | None) -> str | None:
    try:
        start = os.getcwd() if cwd is None else cwd
    except OSError:  # the current directory was removed: there is nothing to walk up from
        return None
    return find_vault_config_upwards(start)


def _checked(given: str, source: str, source_file: str | None, environ: Mapping[str, str], home: str) -> VaultLocation:
    """The location of the vault ``given`` by ``source``, once it is known to be a dir."""
    if source == FROM_FLAG:
        origin, fix = "", "pass --vault PATH to your vault root"
    elif source == FROM_ENV:
        origin, fix = f" (from {VAULT_ENV_VAR})", f"set {VAULT_ENV_VAR} to your vault root or pass --vault PATH"
    else:
        origin, fix = f" (from {source_file})", "fix it there or pass --vault PATH"
    try:
        name = expand_path(given, environ, home) if source != FROM_VAULT_CONFIG else given
    except VaultError as error:
        raise VaultError(f"vault{origin}: {error}") from None
    if source == FROM_USER_CONFIG and not os.path.isabs(name):
        raise VaultError(f"vault {given!r}{origin} is not an absolute path: write it from / or ~")
    try:
        mode = os.stat(name).st_mode
    except (FileNotFoundError, ValueError):  # ValueError: a NUL byte, which no path holds
        raise VaultError(f"vault {name!r}{origin} does not exist: {fix}") from None
    except OSError as error:
        raise VaultError(f"cannot open vault {name!r}{origin}: {error.strerror}; check its permissions") from None
    if not stat.S_ISDIR(mode):
        raise VaultError(f"vault {name!r}{origin} is not a directory: {fix}")
    return VaultLocation(os.path.realpath(name), source, given, source_file)


def is_inside(real_path: str, vault_real: str) -> bool:
    """Whether a resolved path lies inside the resolved vault root."""
    return real_path.startswith(vault_real + os.sep)


#: Dirs that hold a system or many people's files, never one person's notes: with no
#: config and no default dir, find refuses to search them as a whole tree (``scan``).
NON_VAULT_DIRS = frozenset(
    (
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib64",
        "/media",
        "/mnt",
        "/opt",
        "/private",
        "/proc",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/tmp",  # noqa: S108 - a dir refused as a vault, never written
        "/Users",
        "/usr",
        "/var",
        "/Volumes",
    )
)


def non_vault_reason(vault: str, home: str | None = None) -> str | None:
    """Why the dir ``vault`` (a real path) is no vault to search as a whole tree, or None:
    the file system root, the home dir (``home``, the caller's ``~``; default: this
    process's, for a Python caller), a dir holding it, or a system dir."""
    home = os.path.realpath(home_dir(os.environ) if home is None else home)
    if vault == home:
        return "your home dir"
    if vault == "/":
        return "the file system root"
    if is_inside(home, vault):
        # Searching it searches the whole home dir too: that, not the dir itself, is what to say.
        return "a dir that holds your home dir"
    if vault in NON_VAULT_DIRS:
        return "a system dir"
    return None


def refuse_non_vault(vault: str, home: str | None = None) -> None:
    """Raise VaultError, naming the way out, when ``non_vault_reason`` has a reason."""
    reason = non_vault_reason(vault, home)
    if reason is not None:
        raise VaultError(
            f"vault {vault!r} is {reason}, not a notes folder, and has no {VAULT_CONFIG_FILE} nor any default dir "
            f"({', '.join(DEFAULT_SCANNED_DIRS)}), so find will not search all of it: pass --vault the folder "
            "that holds your notes, or run 'mnemosyne wiki init' there"
        )
