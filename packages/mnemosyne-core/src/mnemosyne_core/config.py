"""Where the vault is and which of its dirs hold pages. Nothing else hard-codes a path or
a dir name."""

from __future__ import annotations

import os

from mnemosyne_core.errors import VaultError

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time (issue 6)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: Environment variable naming the vault root, used when no --vault is given.
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

#: A vault may declare its own layout in this TOML file at its root.
VAULT_CONFIG_FILE = ".mnemosyne.toml"


def vault_root_from_env(environ: Mapping[str, str] = os.environ) -> str | None:
    """The vault named by AION_VAULT, or None when it is unset or empty."""
    return environ.get(VAULT_ENV_VAR) or None


#: The seed's module-level constant: AION_VAULT as it was when this module was imported.
#: Commands resolve the vault per call (``vault.resolve_vault``), so tests can change it.
VAULT_ROOT: str | None = vault_root_from_env()


class VaultConfig:
    """What a vault's ``.mnemosyne.toml`` declares. Missing keys are None.

    ``lint_ignore`` is ``[lint] ignore``: lint codes never reported for this vault. Only
    its shape is checked here; ``lint`` checks the codes against its own list.
    """

    __slots__ = ("dirs", "lint_ignore", "memory_dir", "path")

    def __init__(
        self,
        dirs: tuple[str, ...] | None = None,
        memory_dir: str | None = None,
        lint_ignore: tuple[str, ...] | None = None,
        path: str | None = None,
    ):
        self.dirs = dirs
        self.memory_dir = memory_dir
        self.lint_ignore = lint_ignore
        #: The file it was read from; None when the vault has none.
        self.path = path

    def _key(self) -> tuple[object, ...]:
        return (self.dirs, self.memory_dir, self.lint_ignore)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VaultConfig):
            return NotImplemented
        return self._key() == other._key()

    def __repr__(self) -> str:
        return f"VaultConfig(dirs={self.dirs!r}, memory_dir={self.memory_dir!r}, lint_ignore={self.lint_ignore!r})"


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


def load_vault_config(vault: str) -> VaultConfig:
    """Read ``<vault>/.mnemosyne.toml``; an absent file gives an empty config.

    Raises VaultError, naming the file and the fix, when it is not valid TOML or a key has
    the wrong shape.
    """
    path = os.path.join(vault, VAULT_CONFIG_FILE)
    try:
        raw = _read_config_file(path)
    except FileNotFoundError:
        return VaultConfig()
    except OSError as error:
        raise VaultError(f"cannot read {path}: {error.strerror}; fix its permissions") from None
    if raw is None:
        raise VaultError(f"{path} is not a regular file of at most {MAX_CONFIG_BYTES} bytes; replace it")
    import tomllib  # only vaults that carry a config file pay for the import

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as error:
        raise VaultError(f"{path} is not valid TOML ({error}); fix or remove it") from None
    unknown = sorted(set(data) - {"dirs", "memory_dir", "lint"})
    if unknown:
        raise VaultError(f"{path} has unknown key(s) {', '.join(unknown)}; allowed: dirs, memory_dir, [lint]")
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
    return VaultConfig(dirs, memory_dir, _lint_ignore(path, data.get("lint")), path)


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


def scanned_dirs(vault: str, override: Sequence[str] | None = None) -> tuple[str, ...]:
    """The dirs to scan, in order: ``override`` (--dir) if given, else the vault's config
    file, else DEFAULT_SCANNED_DIRS."""
    if override:
        for name in override:
            reason = check_dir_name(name)
            if reason:
                raise VaultError(f"--dir {name!r} {reason}; pass a top-level dir name")
        return tuple(dict.fromkeys(override))
    return load_vault_config(vault).dirs or DEFAULT_SCANNED_DIRS
