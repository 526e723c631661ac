"""Where the vault is and which of its dirs hold pages. Nothing else hard-codes a path or
a dir name."""

from __future__ import annotations

import os

from mnemosyne_core.errors import VaultError
from mnemosyne_core.record import Record

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: Environment variable naming the vault root, used when no --vault is given and no
#: .mnemosyne.toml is found from the current directory up.
VAULT_ENV_VAR = "AION_VAULT"
#: Environment variable naming recall's memory log dir (recall logs every call).
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
#: The keys a vault config file may hold. ``dirs``, ``depth``, ``suffixes`` and ``exclude``
#: make up its layout (``Layout``); docs/commands.md, "Layouts", describes each.
VAULT_CONFIG_KEYS: tuple[str, ...] = (
    "dirs",
    "depth",
    "suffixes",
    "exclude",
    "memory_dir",
    "lint",
    "serve",
    "cache",
    "order",
)
#: The keys of ``[serve]``.
SERVE_KEYS: tuple[str, ...] = ("auto", "idle_minutes")
#: How long a ``wiki serve`` waits for a call before it exits, unless ``[serve]
#: idle_minutes`` says; Gradle's daemon waits 3 hours, but a vault's server costs a call
#: that starts it again only its listing.
DEFAULT_IDLE_MINUTES = 30
MAX_IDLE_MINUTES = 7 * 24 * 60

# --- layouts: which files of a vault are its pages ---------------------------------------
#: ``depth``: the files directly in each searched dir (the Aion layout), or its whole subtree.
DEPTH_FLAT = "flat"
DEPTH_TREE = "tree"
DEPTHS: tuple[str, ...] = (DEPTH_FLAT, DEPTH_TREE)
#: The file name endings that mark a markdown file: what a tree searches by default, and what
#: lint and the miss note count as markdown the layout leaves out.
MARKDOWN_SUFFIXES: tuple[str, ...] = (".md", ".markdown", ".mdx")
#: What a flat layout searches by default: the Aion vault's pages end in .md.
FLAT_SUFFIXES: tuple[str, ...] = (".md",)

#: In ``dirs`` (and --dir), the vault root itself.
VAULT_ROOT_DIR = "."
#: The ``[order] prefer`` entry (written ``"."`` or ``"./"``) that stands for every page
#: under none of the other dirs listed: a site whose original language lies at the root
#: and whose translations lie in dirs beside it lists ``[".", "ja/", "zh-CN/"]``. No page
#: path starts with it, so it places only the pages no other entry takes
#: (``find.preferred_rank``).
UNLISTED_PAGES = "./"
#: Where a layout came from, as ``wiki info`` reports it.
LAYOUT_FROM_DEFAULT = "default"  # no layout key set, and the vault has one of the default dirs
LAYOUT_FROM_VAULT_CONFIG = VAULT_CONFIG_FILE  # .mnemosyne.toml sets at least one layout key
LAYOUT_FROM_ZERO_CONFIG = "zero-config"  # no layout key set, and none of the default dirs exists

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


class VaultConfig(Record):
    """What a vault's ``.mnemosyne.toml`` declares (docs/commands.md, "Vault layout");
    missing keys are None. ``lint_ignore`` (``[lint] ignore``) is checked for its shape
    only: ``lint`` checks the codes against its own list. ``serve_auto`` (``[serve] auto``)
    None: start a server when the listing is big enough for one to pay
    (mnemosyne_cli.autostart). ``cache_enabled``: ``[cache] enabled``, on unless false.
    ``prefer``: ``[order] prefer``, each dir ending in '/', ``UNLISTED_PAGES`` for the
    pages under none of the others (``find.preferred_rank``); empty when absent.
    """

    __slots__ = (
        "cache_enabled",
        "depth",
        "dirs",
        "exclude",
        "lint_ignore",
        "memory_dir",
        "path",
        "prefer",
        "serve_auto",
        "serve_idle_minutes",
        "suffixes",
    )

    def __init__(
        self,
        dirs: tuple[str, ...] | None = None,
        memory_dir: str | None = None,
        lint_ignore: tuple[str, ...] | None = None,
        path: str | None = None,
        serve_auto: bool | None = None,
        *,
        serve_idle_minutes: float = DEFAULT_IDLE_MINUTES,
        depth: str | None = None,
        suffixes: tuple[str, ...] | None = None,
        exclude: tuple[str, ...] | None = None,
        cache_enabled: bool = True,
        prefer: tuple[str, ...] = (),
    ):
        self.dirs = dirs
        self.prefer = prefer
        self.cache_enabled = cache_enabled
        self.memory_dir = memory_dir
        self.lint_ignore = lint_ignore
        self.serve_auto = serve_auto
        self.serve_idle_minutes = serve_idle_minutes
        #: The file it was read from; None when the vault has none.
        self.path = path
        self.depth = depth
        self.suffixes = suffixes
        self.exclude = exclude

    @property
    def sets_layout(self) -> bool:
        """Whether the file sets any layout key (then it, not the default, is the layout's source)."""
        return any(value is not None for value in (self.dirs, self.depth, self.suffixes, self.exclude))


#: How a TOML basic string writes the characters it may not hold as they are: the quote,
#: the backslash, and every control character (C0 and DEL).
_TOML_ESCAPES: dict[int, str] = {code: f"\\u{code:04x}" for code in (*range(0x20), 0x7F)}
_TOML_ESCAPES.update(
    {
        ord('"'): '\\"',
        ord("\\"): "\\\\",
        ord("\b"): "\\b",
        ord("\t"): "\\t",
        ord("\n"): "\\n",
        ord("\f"): "\\f",
        ord("\r"): "\\r",
    }
)


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string, which a config file (and tomllib) reads back as
    ``text`` exactly, whatever it holds: the messages that say which line to write in
    ``.mnemosyne.toml`` and the file ``wiki init`` writes all quote with it."""
    return '"' + text.translate(_TOML_ESCAPES) + '"'


def toml_array(items: Sequence[str]) -> str:
    """``items`` as a one-line TOML array of strings (``["atlas", "docs/en"]``)."""
    return "[" + ", ".join(toml_string(item) for item in items) + "]"


def check_dir_name(name: str) -> str | None:
    """Why ``name`` cannot be a searched dir, or None when it can: a vault-relative path of
    '/'-separated dir names (``wiki``, ``docs/en``), none of them hidden, ``..`` or empty;
    or ``.``, the vault root itself."""
    if not name or name != name.strip():
        return "is empty or has surrounding spaces"
    if name == VAULT_ROOT_DIR:
        return None
    if "\\" in name or "\0" in name:
        return "holds a backslash or NUL; write a vault-relative path with '/'"
    if name.startswith("/"):
        return "is an absolute path; write it relative to the vault root ('.' is the root itself)"
    for part in name.split("/"):
        if not part:
            return "has an empty part ('//' or a trailing '/')"
        if part.startswith("."):
            return "has a part starting with '.' (hidden dirs and '..' are never searched)"
    return None


def check_suffix(suffix: object) -> str | None:
    """Why ``suffix`` cannot end a page's name, or None when it can: a '.' and then letters,
    digits, '-' or '_' (``.md``, ``.mdx``); compared with the name exactly, case included."""
    if not isinstance(suffix, str) or len(suffix) < 2 or not suffix.startswith("."):
        return "must start with '.' and have a character after it"
    if not all(char.isascii() and (char.isalnum() or char in "-_") for char in suffix[1:]):
        return "may hold only ASCII letters, digits, '-' and '_' after its '.'"
    return None


def stem_of(name: str) -> str:
    """A page file name without its suffix (a suffix holds one '.', see ``check_suffix``)."""
    return name[: name.rindex(".")]


def markdown_like_endings(suffixes: Sequence[str]) -> tuple[str, ...]:
    """What ``is_markdown_like`` compares a name's end with, for a layout whose pages end
    in ``suffixes``: MARKDOWN_SUFFIXES and ``suffixes``, lowercased."""
    return tuple(dict.fromkeys((*MARKDOWN_SUFFIXES, *(suffix.lower() for suffix in suffixes))))


def is_markdown_like(name: str, endings: tuple[str, ...]) -> bool:
    """Whether the file name ``name`` reads as markdown whatever its case (``Notes.MD``):
    it ends in one of ``endings`` (``markdown_like_endings``) once lowercased. Lint and the
    miss note count such a file the layout does not take as one it leaves out."""
    return name.lower().endswith(endings)


class Layout(Record):
    """Which files of a vault are its pages.

    ``dirs``: the searched dirs, vault-relative, '/'-separated (``.``: the root itself).
    ``depth``: DEPTH_FLAT (the files directly in each dir) or DEPTH_TREE (its whole subtree,
    without hidden files and dirs and what ``.gitignore`` and ``.ignore`` files exclude).
    ``suffixes``: the endings a page's file name has, exactly. ``exclude``: gitignore-style
    patterns, relative to the vault root, never searched. ``source``: a LAYOUT_FROM_*.
    ``dirs_source``: DIRS_FROM_FLAG, DIRS_FROM_VAULT_CONFIG or DIRS_FROM_DEFAULT.
    """

    __slots__ = ("depth", "dirs", "dirs_source", "exclude", "source", "suffixes")

    def __init__(
        self,
        dirs: tuple[str, ...],
        depth: str = DEPTH_FLAT,
        suffixes: tuple[str, ...] = FLAT_SUFFIXES,
        exclude: tuple[str, ...] = (),
        source: str = LAYOUT_FROM_DEFAULT,
        dirs_source: str = "default",
    ):
        self.dirs = dirs
        self.depth = depth
        self.suffixes = suffixes
        self.exclude = exclude
        self.source = source
        self.dirs_source = dirs_source

    @property
    def tree(self) -> bool:
        return self.depth == DEPTH_TREE

    def holds_dir(self, dir_name: str) -> bool:
        """Whether pages written directly into the vault-relative dir ``dir_name`` are
        searched: it is one of ``dirs``, or, in a tree, lies below one."""
        if dir_name in self.dirs:
            return True
        return self.tree and any(name == VAULT_ROOT_DIR or dir_name.startswith(name + "/") for name in self.dirs)

    def to_dict(self) -> dict[str, object]:
        return {
            "dirs": list(self.dirs),
            "depth": self.depth,
            "suffixes": list(self.suffixes),
            "exclude": list(self.exclude),
            "source": self.source,
        }


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
    data = _load_toml(
        path, VAULT_CONFIG_KEYS, "dirs, depth, suffixes, exclude, memory_dir, [lint], [serve], [cache], [order]"
    )
    if data is None:
        return VaultConfig()
    dirs = data.get("dirs")
    if dirs is not None:
        if not isinstance(dirs, list) or not dirs or not all(isinstance(d, str) for d in dirs):
            raise VaultError(f'{path}: dirs must be a non-empty list of dir names, e.g. dirs = ["wiki"]')
        for name in dirs:
            reason = check_dir_name(name)
            if reason:
                raise VaultError(
                    f"{path}: dirs has {name!r}, which {reason}; list vault-relative dirs, e.g. "
                    'dirs = ["wiki", "docs/en"] (or ["."] for the whole vault)'
                )
        dirs = tuple(dict.fromkeys(dirs))
    depth = data.get("depth")
    if depth is not None and depth not in DEPTHS:
        raise VaultError(
            f'{path}: depth must be "{DEPTH_FLAT}" (the files directly in each dir) or "{DEPTH_TREE}" '
            f"(the whole subtree), not {_shown_value(depth)}"
        )
    suffixes = data.get("suffixes")
    if suffixes is not None:
        if not isinstance(suffixes, list) or not suffixes:
            raise VaultError(f'{path}: suffixes must be a non-empty list, e.g. suffixes = [".md", ".mdx"]')
        for suffix in suffixes:
            reason = check_suffix(suffix)
            if reason:
                raise VaultError(
                    f'{path}: suffixes has {_shown_value(suffix)}, which {reason}; e.g. suffixes = [".md", ".mdx"]'
                )
        suffixes = tuple(dict.fromkeys(suffixes))
    exclude = data.get("exclude")
    if exclude is not None:
        exclude = _exclude_patterns(path, exclude)
    memory_dir = data.get("memory_dir")
    if memory_dir is not None and (not isinstance(memory_dir, str) or not memory_dir):
        raise VaultError(f'{path}: memory_dir must be a non-empty string, e.g. "memory"')
    lint_ignore = _lint_ignore(path, data.get("lint"))
    serve_auto, serve_idle_minutes = _serve(path, data.get("serve"))
    return VaultConfig(
        dirs,
        memory_dir,
        lint_ignore,
        path,
        serve_auto,
        serve_idle_minutes=serve_idle_minutes,
        depth=depth if isinstance(depth, str) else None,
        suffixes=suffixes,
        exclude=exclude,
        cache_enabled=_cache_enabled(path, data.get("cache")),
        prefer=_order_prefer(path, data.get("order")),
    )


#: A config file's stat as ``kept_vault_config`` keys what it parsed from it by: mode, size,
#: mtime_ns, ctime_ns, inode, device (the file ``_read_config_file`` opens, symlink followed).
ConfigKey = tuple[int, int, int, int, int, int]
#: What ``kept_vault_config`` keeps of a parsed config: (its file's ``ConfigKey``, the
#: ``VaultConfig``'s values in its fields' order).
KeptConfig = tuple[ConfigKey, tuple[object, ...]]


def kept_vault_config(vault: str, kept: object, racy_from: int) -> tuple[VaultConfig, KeptConfig | None]:
    """``load_vault_config(vault)``, taken from ``kept`` (what this returned before, as the
    index keeps it) without reading or parsing the file when its stat is the one ``kept``
    was made under: a call whose config is unchanged imports no tomllib (nor, for an
    ``exclude``, pathspec, which checks its patterns). Also what to keep now: None when the
    file is absent (nothing is parsed then) or its stat cannot vouch for its bytes (git's
    racy rule: changed at or after ``racy_from``, a write in the same tick would leave the
    stat as it is, and the bytes parsed may be newer than it).

    The stat is taken before the bytes are read: a write after it gives a later stat, which
    no call finds equal to this one, so bytes newer than the key are never taken for it."""
    path = os.path.join(vault, VAULT_CONFIG_FILE)
    try:
        info = os.stat(path)
    except OSError:
        return load_vault_config(vault), None  # absent (no parse) or unreadable (its error)
    key = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
    fields = VaultConfig._fields
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == key and len(kept[1]) == len(fields):
        config = VaultConfig.__new__(VaultConfig)
        for field, value in zip(fields, kept[1], strict=True):
            setattr(config, field, value)
        return config, (key, kept[1])
    config = load_vault_config(vault)
    if max(info.st_mtime_ns, info.st_ctime_ns) >= racy_from:
        return config, None
    return config, (key, config._values())


def _shown_value(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _exclude_patterns(path: str, exclude: object) -> tuple[str, ...]:
    """``exclude``, checked: a list of gitignore-style patterns that pathspec compiles."""
    if not isinstance(exclude, list) or not all(isinstance(pattern, str) for pattern in exclude):
        raise VaultError(f'{path}: exclude must be a list of gitignore-style patterns, e.g. exclude = ["drafts/"]')
    for pattern in exclude:
        reason = pattern_error(pattern)
        if reason:
            raise VaultError(f"{path}: exclude has {pattern!r}, which {reason}; write a gitignore-style pattern")
    return tuple(exclude)


def pattern_error(pattern: str) -> str | None:
    """Why ``pattern`` is not a gitignore-style pattern, or None when it is one."""
    if "\0" in pattern or "\n" in pattern or "\r" in pattern:
        return "holds a line break or NUL"
    import pathspec  # only a vault whose config excludes something pays for it

    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, TypeError) as error:
        return f"pathspec cannot read ({error})"
    return None


def _checked_table(path: str, name: str, table: object, keys: Sequence[str], example: str) -> dict[str, object] | None:
    """The config table ``[name]``, None when absent, checked to be a table of ``keys`` only."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise VaultError(f"{path}: {name} must be a table, {example}")
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise VaultError(
            f"{path} has unknown key(s) {', '.join(f'{name}.{key}' for key in unknown)}; "
            f"allowed: {', '.join(f'{name}.{key}' for key in keys)}"
        )
    return table


def _lint_ignore(path: str, table: object) -> tuple[str, ...] | None:
    """``[lint] ignore``, checked for shape: a list of code strings (possibly empty)."""
    lint = _checked_table(path, "lint", table, ("ignore",), 'e.g. [lint] then ignore = ["missing-updated"]')
    ignore = None if lint is None else lint.get("ignore")
    if ignore is None:
        return None
    if not isinstance(ignore, list) or not all(isinstance(code, str) for code in ignore):
        raise VaultError(f'{path}: lint.ignore must be a list of lint codes, e.g. ignore = ["missing-updated"]')
    return tuple(dict.fromkeys(ignore))


def _order_prefer(path: str, table: object) -> tuple[str, ...]:
    """``[order] prefer``, checked: vault-relative dirs, each given back ending in '/', and
    ``"."``, the pages under none of them, given back as ``UNLISTED_PAGES``."""
    example = 'e.g. [order] then prefer = ["reference/7.6/", "content/en/"]'
    order = _checked_table(path, "order", table, ("prefer",), example)
    prefer = [] if order is None else order.get("prefer", [])
    if not isinstance(prefer, list) or not all(isinstance(name, str) for name in prefer):
        raise VaultError(f"{path}: order.prefer must be a list of vault-relative dirs, {example}")
    dirs = []
    for name in prefer:
        bare = name[:-1] if name.endswith("/") else name
        if bare == VAULT_ROOT_DIR:
            dirs.append(UNLISTED_PAGES)
            continue
        reason = check_dir_name(bare)
        if reason:
            raise VaultError(f"{path}: order.prefer has {name!r}, which {reason}; {example}")
        dirs.append(bare + "/")
    return tuple(dict.fromkeys(dirs))


def _cache_enabled(path: str, table: object) -> bool:
    """``[cache] enabled``: true or false, true when absent."""
    cache = _checked_table(path, "cache", table, ("enabled",), "e.g. [cache] then enabled = false")
    value = True if cache is None else cache.get("enabled", True)
    if not isinstance(value, bool):
        raise VaultError(f"{path}: cache.enabled must be true or false (no quotes), e.g. enabled = false")
    return value


def _serve(path: str, table: object) -> tuple[bool | None, float]:
    """``[serve] auto``: true or false, None (by the vault's size) when absent; and
    ``[serve] idle_minutes``: a number of minutes above 0 and at most a week."""
    serve = _checked_table(path, "serve", table, SERVE_KEYS, "e.g. [serve] then auto = true")
    if serve is None:
        return None, DEFAULT_IDLE_MINUTES
    auto = serve.get("auto")
    if auto is not None and not isinstance(auto, bool):
        raise VaultError(f"{path}: serve.auto must be true or false (no quotes), e.g. auto = true")
    value = serve.get("idle_minutes", DEFAULT_IDLE_MINUTES)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_IDLE_MINUTES:
        raise VaultError(
            f"{path}: serve.idle_minutes must be a number of minutes above 0 and at most {MAX_IDLE_MINUTES} "
            f"(a week), not {_shown_value(value)}; e.g. idle_minutes = {DEFAULT_IDLE_MINUTES}"
        )
    return auto, float(value)


#: Where the scanned dirs came from (``scanned_dirs_and_source``).
DIRS_FROM_FLAG = "--dir"
DIRS_FROM_VAULT_CONFIG = VAULT_CONFIG_FILE
DIRS_FROM_DEFAULT = "default"


def scanned_dirs_and_source(vault: str, override: Sequence[str] | None = None) -> tuple[tuple[str, ...], str]:
    """The dirs to scan, in order: ``override`` (--dir) if given, else the vault's config
    file, else DEFAULT_SCANNED_DIRS, or the vault root when none of them exists; and which
    of DIRS_FROM_FLAG, DIRS_FROM_VAULT_CONFIG and DIRS_FROM_DEFAULT gave them."""
    layout = vault_layout(vault, override)
    return layout.dirs, layout.dirs_source


def has_default_dir(vault: str, top: Mapping[str, os.DirEntry[str]] | None = None) -> bool:
    """Whether any of DEFAULT_SCANNED_DIRS is in the vault as a dir or a symlink (then the
    vault is an Aion one; see ``vault_layout``). ``top``: the vault's entries by name, when
    the caller listed them already."""
    if top is not None:
        return any(
            (entry := top.get(name)) is not None and (entry.is_symlink() or entry.is_dir())
            for name in DEFAULT_SCANNED_DIRS
        )
    return any(
        os.path.islink(path := os.path.join(vault, name)) or os.path.isdir(path) for name in DEFAULT_SCANNED_DIRS
    )


#: The dir Obsidian keeps a vault's settings in, at the vault's root: it marks an Obsidian vault.
OBSIDIAN_DIR = ".obsidian"


def titles_from_headings(layout: Layout, top: Mapping[str, os.DirEntry[str]]) -> bool:
    """Whether a page without a frontmatter title is titled by its opening ``# `` heading
    (``frontmatter.heading_title``) rather than its file name, in the vault whose entries
    by name are ``top``, under ``layout`` (docs/spec.md, rule 5): in every layout but the
    default (Aion) one, whose pages are named by their file names as the harness names
    them, and but an Obsidian vault's (``.obsidian/`` at its root, a symlink to a dir
    counts), where a note's name is its file name (Obsidian shows and links it so,
    whatever heading the note opens with)."""
    obsidian = top.get(OBSIDIAN_DIR)
    return layout.source != LAYOUT_FROM_DEFAULT and not (obsidian is not None and obsidian.is_dir())


def vault_layout(
    vault: str,
    override: Sequence[str] | None = None,
    top: Mapping[str, os.DirEntry[str]] | None = None,
    config: VaultConfig | None = None,
) -> Layout:
    """The layout in force for the vault at ``vault`` (a real path), --dir being ``override``.

    Each key comes from ``.mnemosyne.toml`` when it sets it, else from the default, which
    depends on the vault: one that has any of DEFAULT_SCANNED_DIRS is an Aion vault (those
    dirs, flat, ``.md``, exactly as before layouts existed); one that has none is searched
    as a whole tree (``.``, of MARKDOWN_SUFFIXES). ``dirs`` set in the config makes the
    depth default to flat, as a plain ``dirs = [...]`` always meant. ``depth`` decides the
    default suffixes: FLAT_SUFFIXES or MARKDOWN_SUFFIXES. --dir replaces only the dirs.
    ``top``: the vault's entries by name, when the caller listed them already. Raises
    VaultError for a bad --dir or config file.
    """
    if config is None:
        config = load_vault_config(vault)
    aion: bool | None = None
    if config.dirs is None or config.depth is None:
        aion = has_default_dir(vault, top)
    if override:
        for name in override:
            reason = check_dir_name(name)
            if reason:
                raise VaultError(f"--dir {name!r} {reason}; pass a dir of the vault, e.g. --dir docs/en")
        dirs, dirs_source = tuple(dict.fromkeys(override)), DIRS_FROM_FLAG
    elif config.dirs is not None:
        dirs, dirs_source = config.dirs, DIRS_FROM_VAULT_CONFIG
    else:
        dirs, dirs_source = (DEFAULT_SCANNED_DIRS if aion else (VAULT_ROOT_DIR,)), DIRS_FROM_DEFAULT
    depth = config.depth or (DEPTH_FLAT if config.dirs is not None or aion else DEPTH_TREE)
    suffixes = config.suffixes or (FLAT_SUFFIXES if depth == DEPTH_FLAT else MARKDOWN_SUFFIXES)
    if config.sets_layout:
        source = LAYOUT_FROM_VAULT_CONFIG
    else:
        source = LAYOUT_FROM_DEFAULT if aion else LAYOUT_FROM_ZERO_CONFIG
    return Layout(dirs, depth, suffixes, config.exclude or (), source, dirs_source)


def user_config_path(environ: Mapping[str, str], home: str) -> str:
    """``$XDG_CONFIG_HOME/mnemosyne/config.toml``; ``home/.config`` when XDG_CONFIG_HOME is
    unset, empty or relative (the XDG spec says to ignore a relative one)."""
    base = environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(home, ".config")
    return os.path.join(base, *USER_CONFIG_PATH)


def home_dir(environ: Mapping[str, str]) -> str:
    """``~`` as ``os.path.expanduser`` reads it, but from ``environ``: HOME when it is set
    (a trailing ``/`` dropped, ``/`` for an empty one), else the user database's."""
    home = environ.get("HOME")
    if home is None:
        import pwd  # only a process without HOME pays for the lookup

        try:
            home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:  # a uid the database does not know: no home to name
            home = ""
    return home.rstrip("/") or "/"


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


def expand_path(text: str, environ: Mapping[str, str], home: str) -> str:
    """``text`` with a leading ``~`` (``home``) or ``~user`` and every ``$NAME`` or
    ``${NAME}`` (from ``environ``) expanded. A ``$`` not followed by a name stays as it is.
    Raises VaultError naming the variable when one is not set: a path with a hole in it
    would name the wrong dir."""
    if text.startswith("~"):
        head, sep, rest = text.partition("/")
        base = home if head == "~" else os.path.expanduser(head)  # an unknown ~user stays
        text = base.rstrip("/") + sep + rest if sep else base
    if "$" not in text:
        return text
    import re  # only a path with a $ in it pays for the import

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in environ:
            raise VaultError(f"{text!r} uses ${name}, which is not set: set it or write the path out")
        return environ[name]

    return re.sub(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", value, text)
