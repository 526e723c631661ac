"""Where the vault is and which of its dirs hold pages. Nothing else hard-codes a path or
a dir name."""

from __future__ import annotations

import os

from mnemosyne_core.errors import VaultError

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time (issue 6)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: Environment variable naming the vault root, used when no --vault is given and no
#: .mnemosyne.toml is found from the current directory up.
VAULT_ENV_VAR = "AION_VAULT"
#: Environment variable naming recall's memory log dir (issue: recall logs every call).
MEMORY_DIR_ENV_VAR = "MNEMOSYNE_MEMORY_DIR"

#: One dir per constellation (subsystem) of the Aion fleet, in scan order.
CONSTELLATIONS: tuple[str, ...] = (
    "atlas",
    "hades",
    "mnemosyne",
    "proteus",
    "metis",
    "apollo",
    "hermes",
    "hephaistos",
    "athena",
)
#: Dirs that belong to no single constellation.
CROSS_CUTTING_DIRS: tuple[str, ...] = ("analyses",)
#: What find scans when neither --dir nor the vault's config file says otherwise.
DEFAULT_SCANNED_DIRS: tuple[str, ...] = CONSTELLATIONS + CROSS_CUTTING_DIRS

#: A vault may declare its own layout in this TOML file at its root. Found in the current
#: directory or a parent, it also marks that directory as the vault root.
VAULT_CONFIG_FILE = ".mnemosyne.toml"
#: The keys a vault config file may hold.
VAULT_CONFIG_KEYS: tuple[str, ...] = ("dirs", "memory_dir", "lint", "serve")

#: The user's own config file, below $XDG_CONFIG_HOME (default ~/.config).
USER_CONFIG_PATH = ("mnemosyne", "config.toml")
#: The keys the user config file may hold. ``vault``: the vault used when nothing else names one.
USER_CONFIG_KEYS: tuple[str, ...] = ("vault",)

# The four ways to name the vault, in the order they are tried (the first that names one
# wins). Each value is what ``wiki info`` and its JSON report as the vault's source.
FROM_FLAG = "--vault"
FROM_VAULT_CONFIG = VAULT_CONFIG_FILE
FROM_ENV = VAULT_ENV_VAR
FROM_USER_CONFIG = "user-config"
VAULT_SOURCES: tuple[str, ...] = (FROM_FLAG, FROM_VAULT_CONFIG, FROM_ENV, FROM_USER_CONFIG)


class VaultConfig:
    """What a vault's ``.mnemosyne.toml`` declares. Missing keys are None.

    ``lint_ignore`` is ``[lint] ignore``: lint codes never reported for this vault. Only
    its shape is checked here; ``lint`` checks the codes against its own list.

    ``serve_auto`` is ``[serve] auto``: the first find or recall with no server to ask
    starts ``wiki serve`` for the vault (mnemosyne_cli.autostart). Off unless true.
    """

    __slots__ = ("dirs", "lint_ignore", "memory_dir", "path", "serve_auto")

    def __init__(
        self,
        dirs: tuple[str, ...] | None = None,
        memory_dir: str | None = None,
        lint_ignore: tuple[str, ...] | None = None,
        path: str | None = None,
        serve_auto: bool = False,
    ):
        self.dirs = dirs
        self.memory_dir = memory_dir
        self.lint_ignore = lint_ignore
        self.serve_auto = serve_auto
        #: The file it was read from; None when the vault has none.
        self.path = path

    def _key(self) -> tuple[object, ...]:
        return (self.dirs, self.memory_dir, self.lint_ignore, self.serve_auto)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VaultConfig):
            return NotImplemented
        return self._key() == other._key()

    def __repr__(self) -> str:
        return (
            f"VaultConfig(dirs={self.dirs!r}, memory_dir={self.memory_dir!r}, "
            f"lint_ignore={self.lint_ignore!r}, serve_auto={self.serve_auto!r})"
        )


def check_dir_name(name: str) -> str | None:
    """Why ``name`` cannot be a scanned dir, or None when it can: one path component,
    not hidden, not empty."""
    if not name or name != name.strip():
        return "is empty or has surrounding spaces"
    if "/" in name or "\\" in name or "\0" in name:
        return "is not a single dir name (it contains a path separator or NUL)"
    if name.startswith("."):
        return "starts with '.' (hidden dirs and '..' are never scanned)"
    return None


#: A config file is a few lines; anything larger is refused rather than read.
MAX_CONFIG_BYTES = 1 << 16


def _read_config_file(path: str) -> bytes | None:
    """The file's bytes, or None unless it is a regular file within MAX_CONFIG_BYTES. Opened
    non-blocking, so a FIFO in its place cannot hang the command."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            return None
        return os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)


def _load_toml(path: str, allowed_keys: Sequence[str], shown_keys: str | None = None) -> dict[str, object] | None:
    """The table in the TOML file at ``path``, or None when there is no such file.

    Raises VaultError, naming the file and the fix, when it cannot be read, is not a small
    regular file, is not valid TOML or holds a key not in ``allowed_keys`` (listed in the
    message as ``shown_keys``, default: the keys joined by commas).
    """
    try:
        raw = _read_config_file(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise VaultError(f"cannot read {path}: {error.strerror}; fix its permissions") from None
    if raw is None:
        raise VaultError(f"{path} is not a regular file of at most {MAX_CONFIG_BYTES} bytes; replace it")
    import tomllib  # only calls that find a config file pay for the import

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as error:
        raise VaultError(f"{path} is not valid TOML ({error}); fix or remove it") from None
    unknown = sorted(set(data) - set(allowed_keys))
    if unknown:
        allowed = shown_keys or ", ".join(allowed_keys)
        raise VaultError(f"{path} has unknown key(s) {', '.join(unknown)}; allowed: {allowed}")
    return data


def load_vault_config(vault: str) -> VaultConfig:
    """Read ``<vault>/.mnemosyne.toml``; an absent file gives an empty config.

    Raises VaultError, naming the file and the fix, when it is not valid TOML or a key has
    the wrong shape.
    """
    path = os.path.join(vault, VAULT_CONFIG_FILE)
    data = _load_toml(path, VAULT_CONFIG_KEYS, "dirs, memory_dir, [lint], [serve]")
    if data is None:
        return VaultConfig()
    dirs = data.get("dirs")
    if dirs is not None:
        if not isinstance(dirs, list) or not dirs or not all(isinstance(d, str) for d in dirs):
            raise VaultError(f'{path}: dirs must be a non-empty list of dir names, e.g. dirs = ["wiki"]')
        for name in dirs:
            reason = check_dir_name(name)
            if reason:
                raise VaultError(f"{path}: dir {name!r} {reason}; list top-level dir names")
        dirs = tuple(dict.fromkeys(dirs))
    memory_dir = data.get("memory_dir")
    if memory_dir is not None and (not isinstance(memory_dir, str) or not memory_dir):
        raise VaultError(f'{path}: memory_dir must be a non-empty string, e.g. "memory"')
    lint_ignore = _lint_ignore(path, data.get("lint"))
    return VaultConfig(dirs, memory_dir, lint_ignore, path, _serve_auto(path, data.get("serve")))


def _lint_ignore(path: str, table: object) -> tuple[str, ...] | None:
    """``[lint] ignore``, checked for shape: a list of code strings (possibly empty)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise VaultError(f'{path}: lint must be a table, e.g. [lint] then ignore = ["missing-updated"]')
    unknown = sorted(set(table) - {"ignore"})
    if unknown:
        raise VaultError(
            f"{path} has unknown key(s) {', '.join(f'lint.{key}' for key in unknown)}; allowed: lint.ignore"
        )
    ignore = table.get("ignore")
    if ignore is None:
        return None
    if not isinstance(ignore, list) or not all(isinstance(code, str) for code in ignore):
        raise VaultError(f'{path}: lint.ignore must be a list of lint codes, e.g. ignore = ["missing-updated"]')
    return tuple(dict.fromkeys(ignore))


def _serve_auto(path: str, table: object) -> bool:
    """``[serve] auto``: true or false, false when absent."""
    if table is None:
        return False
    if not isinstance(table, dict):
        raise VaultError(f"{path}: serve must be a table, e.g. [serve] then auto = true")
    unknown = sorted(set(table) - {"auto"})
    if unknown:
        raise VaultError(
            f"{path} has unknown key(s) {', '.join(f'serve.{key}' for key in unknown)}; allowed: serve.auto"
        )
    auto = table.get("auto", False)
    if not isinstance(auto, bool):
        raise VaultError(f"{path}: serve.auto must be true or false (no quotes), e.g. auto = true")
    return auto


#: Where the scanned dirs came from (``scanned_dirs_and_source``).
DIRS_FROM_FLAG = "--dir"
DIRS_FROM_VAULT_CONFIG = VAULT_CONFIG_FILE
DIRS_FROM_DEFAULT = "default"


def scanned_dirs(vault: str, override: Sequence[str] | None = None) -> tuple[str, ...]:
    """The dirs to scan, in order: ``override`` (--dir) if given, else the vault's config
    file, else DEFAULT_SCANNED_DIRS."""
    return scanned_dirs_and_source(vault, override)[0]


def scanned_dirs_and_source(vault: str, override: Sequence[str] | None = None) -> tuple[tuple[str, ...], str]:
    """``scanned_dirs``, and which of DIRS_FROM_FLAG, DIRS_FROM_VAULT_CONFIG and
    DIRS_FROM_DEFAULT gave them."""
    if override:
        for name in override:
            reason = check_dir_name(name)
            if reason:
                raise VaultError(f"--dir {name!r} {reason}; pass a top-level dir name")
        return tuple(dict.fromkeys(override)), DIRS_FROM_FLAG
    configured = load_vault_config(vault).dirs
    if configured:
        return configured, DIRS_FROM_VAULT_CONFIG
    return DEFAULT_SCANNED_DIRS, DIRS_FROM_DEFAULT


def user_config_path(environ: Mapping[str, str] = os.environ) -> str:
    """``$XDG_CONFIG_HOME/mnemosyne/config.toml``; ``~/.config`` when XDG_CONFIG_HOME is
    unset, empty or relative (the XDG spec says to ignore a relative one)."""
    base = environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(_home(environ), ".config")
    return os.path.join(base, *USER_CONFIG_PATH)


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def load_user_vault(path: str) -> str | None:
    """The ``vault = "..."`` of the user config file at ``path``, as written, or None when
    the file or the key is absent. Raises VaultError when the file is broken."""
    data = _load_toml(path, USER_CONFIG_KEYS)
    if data is None or "vault" not in data:
        return None
    vault = data["vault"]
    if not isinstance(vault, str) or not vault.strip():
        raise VaultError(f'{path}: vault must be a non-empty string, e.g. vault = "~/aion"')
    return vault


def find_vault_config_upwards(start: str) -> str | None:
    """The nearest dir, ``start`` or a parent of it, holding a ``.mnemosyne.toml`` (as git
    finds ``.git``), or None when there is none up to the filesystem root. Anything by that
    name counts, so a broken one is reported rather than walked past."""
    here = os.path.abspath(start)
    while True:
        if os.path.lexists(os.path.join(here, VAULT_CONFIG_FILE)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def expand_path(text: str, environ: Mapping[str, str] = os.environ) -> str:
    """``text`` with a leading ``~`` or ``~user`` and every ``$NAME`` or ``${NAME}``
    expanded. A ``$`` not followed by a name stays as it is. Raises VaultError naming the
    variable when one is not set: a path with a hole in it would name the wrong dir."""
    if text.startswith("~"):
        head, sep, rest = text.partition("/")
        home = _home(environ) if head == "~" else os.path.expanduser(head)  # an unknown ~user stays
        text = home.rstrip("/") + sep + rest if sep else home
    if "$" not in text:
        return text
    import re  # only a path with a $ in it pays for the import

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in environ:
            raise VaultError(f"{text!r} uses ${name}, which is not set: set it or write the path out")
        return environ[name]

    return re.sub(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", value, text)
