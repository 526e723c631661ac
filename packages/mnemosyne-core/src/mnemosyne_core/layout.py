"""Layouts beyond the scan itself: the note a miss adds about the markdown files a layout
leaves out, and the ``.mnemosyne.toml`` that ``wiki init`` writes for the layout it finds.

Imported only by a miss and by ``wiki init``: a found page never pays for it. It imports
nothing the plain find path does not (no ``re``, ``typing``, ``json``).
"""

from __future__ import annotations

import contextlib
import os

from mnemosyne_core.config import (
    DEFAULT_SCANNED_DIRS,
    DEPTH_TREE,
    LAYOUT_FROM_ZERO_CONFIG,
    UNLISTED_PAGES,
    VAULT_CONFIG_FILE,
    VAULT_ROOT_DIR,
    Layout,
    load_vault_config,
    toml_array,
    vault_layout,
)
from mnemosyne_core.errors import ConfigExistsError, ConfigWriteError, VaultError
from mnemosyne_core.location import non_vault_reason
from mnemosyne_core.page import read_page_bytes
from mnemosyne_core.vault import LEFT_OUT_EXCLUDED, LEFT_OUT_NESTED, LEFT_OUT_OUTSIDE, rule_file_of, scan

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from mnemosyne_core.vault import Scan


def miss_note(
    vault_real: str,
    dirs: Sequence[str] | None = None,
    left_out: Sequence[tuple[str, str]] | None = None,
    home: str | None = None,
) -> str | None:
    """The one line a search that found nothing adds when the vault holds markdown files
    the layout leaves out (in sub-dirs of a flat layout's dirs, with a suffix it does not
    search, excluded by an ignore file, or beside the default (Aion) dirs): how many, of
    which kind, and the setting or file that decides it. None when there are none.

    ``left_out``: those files as ``scan(left_out=...)`` lists them, when the answer knows
    them already (the scan's own listing found them); None (a served answer) lists the
    vault once more for them, so only a miss pays for it; ``home`` is the caller's ``~``
    (as ``vault.scan``'s)."""
    if left_out is None:
        found: list[tuple[str, str]] = []
        pages = scan(vault_real, dirs, left_out=found, home=home)
        return _left_out_note(vault_real, found, lambda: pages.layout.suffixes if pages.layout is not None else ())
    if not left_out:
        return None
    # The layout (its config parsed) only for a file of a suffix it does not search: a miss
    # through the index took the config from it, unparsed.
    return _left_out_note(vault_real, left_out, lambda: vault_layout(vault_real, dirs).suffixes)


def no_pages_message(vault_real: str, dirs: Sequence[str] | None = None) -> str:
    """Why a search of the vault at ``vault_real`` (--dir ``dirs``) that listed no page at
    all is a vault error, not a miss: what was searched (the dirs, how deep, the suffixes)
    and that it held nothing, with the way out. A wrong path or a typo lands on a folder
    with no notes, and "no wiki page matches" would read as "no such page"."""
    layout = vault_layout(vault_real, dirs)
    present = [name for name in layout.dirs if os.path.isdir(os.path.join(vault_real, name))] or layout.dirs
    where = ", ".join("./" if name == VAULT_ROOT_DIR else f"{name}/" for name in present)
    depth = "and every dir below" if layout.tree else "(only the files directly in each)"
    suffixes = _either(layout.suffixes)
    return (
        f"vault {vault_real!r} holds no page: find searched {where} {depth} for files ending in {suffixes} "
        "and found none; pass --vault the folder that holds your notes, or name its dirs with --dir "
        "('mnemosyne wiki info' shows what is searched)"
    )


def empty_dir_notes(vault_real: str, dirs: Sequence[str]) -> list[str]:
    """One line per dir of ``--dir dirs`` that holds no page: what it holds instead, so
    that a search there that found nothing says why (``no page in 'po': it holds 12 files
    directly, none ending in .md``). The dir exists (a --dir the vault lacks never gets
    this far), so the search was asked well and its answer is a miss, not a vault error.
    Hidden files and dirs are not counted, as no layout reads them."""
    layout = vault_layout(vault_real, dirs)
    suffixes = _either(layout.suffixes)
    notes = []
    for name in layout.dirs:
        top = os.path.join(vault_real, name)
        if layout.tree:
            files = 0
            for _, subdirs, found in os.walk(top):
                subdirs[:] = [sub for sub in subdirs if not sub.startswith(".")]
                files += sum(not file.startswith(".") for file in found)
            where = "in it and below"
        else:
            with os.scandir(top) as entries:
                files = sum(not entry.name.startswith(".") and entry.is_file() for entry in entries)
            where = "directly"
        held = f"{files} file{'s' if files != 1 else ''} {where}, none ending in {suffixes}" if files else "no file"
        if files == 1:
            held = f"1 file {where}, not ending in {suffixes}"
        notes.append(f"no page in {name!r}: it holds {held}")
    return notes


def _either(suffixes: Sequence[str]) -> str:
    *others, last = suffixes
    return f"{', '.join(others)} or {last}" if others else last


def _left_out_note(
    vault_real: str, left_out: Sequence[tuple[str, str]], layout_suffixes: Callable[[], Sequence[str]]
) -> str | None:
    """``miss_note``'s line for the files in ``left_out`` (as ``scan(left_out=...)`` lists
    them) under a layout searching ``layout_suffixes()``; None when there are none."""
    if not left_out:
        return None
    nested = outside = excluded = 0
    outside_places: dict[str, None] = {}
    by_suffix: dict[str, int] = {}
    by_rule_file: dict[str, int] = {}
    for kind, rel_path in left_out:
        rule_file = rule_file_of(kind)
        if rule_file is not None:
            by_rule_file[rule_file] = by_rule_file.get(rule_file, 0) + 1
        elif kind == LEFT_OUT_NESTED:
            nested += 1
        elif kind == LEFT_OUT_EXCLUDED:
            excluded += 1
        elif kind == LEFT_OUT_OUTSIDE:
            outside += 1
            top, slash, _ = rel_path.partition("/")
            outside_places[f"{top}/" if slash else ""] = None
        else:
            name = rel_path.rpartition("/")[2]
            suffix = name[name.rindex(".") :]
            by_suffix[suffix] = by_suffix.get(suffix, 0) + 1
    parts = []
    if nested:
        parts.append(f'{nested} in sub-dirs (set depth = "{DEPTH_TREE}" in {VAULT_CONFIG_FILE})')
    if by_suffix:
        wanted = toml_array((*layout_suffixes(), *sorted(by_suffix)))
        ending = " or ".join(sorted(by_suffix))
        parts.append(f"{sum(by_suffix.values())} ending in {ending} (set suffixes = {wanted} in {VAULT_CONFIG_FILE})")
    if outside:
        parts.append(f"{outside} {outside_dirs_phrase(vault_real, outside_places)}")
    if by_rule_file:
        parts.append(f"{sum(by_rule_file.values())} {ignored_phrase(by_rule_file)}")
    if excluded:
        parts.append(f"{excluded} left out by exclude in {VAULT_CONFIG_FILE} (remove a pattern there to search them)")
    files = "file" if len(left_out) == 1 else "files"
    where = " in the searched dirs" if not outside else ""
    # lint lists every kind of left-out file but those left out on purpose.
    on_purpose = bool(by_rule_file) + bool(excluded)
    listed = "; wiki lint lists them" if on_purpose < len(parts) or not on_purpose else ""
    return f"not searched: {len(left_out)} markdown {files}{where}: {', '.join(parts)}{listed}"


def outside_dirs_phrase(vault_real: str, places: Iterable[str]) -> str:
    """What the default (Aion) layout leaves out beside its dirs, why it applies and the
    setting that takes it all in: for the miss note and ``wiki info``. ``places``: the
    top-level dirs those files lie in (``pages/``), "" for the vault root."""
    dirs = sorted(place for place in places if place)
    shown = dirs[:3] + ([f"{len(dirs) - 3} more dirs"] if len(dirs) > 3 else [])
    if "" in places:
        shown.append("the vault root")
    present = [name for name in DEFAULT_SCANNED_DIRS if os.path.isdir(os.path.join(vault_real, name))]
    has = ", ".join(f"{name}/" for name in present[:3]) + (", ..." if len(present) > 3 else "")
    return (
        f"outside the default (Aion) dirs, in {', '.join(shown)} (the vault has {has}, so it is searched as an "
        f'Aion vault; set dirs = ["."] and depth = "{DEPTH_TREE}" in {VAULT_CONFIG_FILE} to search the whole folder)'
    )


def ignored_phrase(by_rule_file: Mapping[str, int]) -> str:
    """What ignore files exclude, by the file whose rule does (``vault.ignored_kind``): for
    the miss note and ``wiki info``, after the count."""
    if len(by_rule_file) == 1:
        where = f"by {next(iter(by_rule_file))}"
    else:
        where = "by ignore files: " + ", ".join(f"{count} by {name}" for name, count in sorted(by_rule_file.items()))
    return f"excluded {where} (find skips them, as rg does; a '!' rule there takes one back)"


# --- wiki init ---

_HEADER = f"""\
# {VAULT_CONFIG_FILE}: this dir is a mnemosyne vault. Every mnemosyne command run in it, or
# in any dir below it, uses it (written by `mnemosyne wiki init`; docs/commands.md,
# "Layouts", explains each key).
"""

_KEYS = """\

# The dirs find searches, relative to this dir ("." is this dir itself).
dirs = {dirs}
# "flat": only the files directly in each dir; "tree": the whole subtree, without hidden
# files and dirs and what .gitignore and .ignore files exclude.
depth = "{depth}"
# The endings a page's file name has (exact case).
suffixes = {suffixes}
# Gitignore-style patterns, relative to this dir, never searched, e.g. ["drafts/", "*.draft.md"].
exclude = {exclude}
"""


_LINT_CONVENTIONS = """
[lint]
# Notes named by their file names and dated by none, as in Obsidian or a docs site: lint
# leaves out the checks for a title and an updated date in every frontmatter (remove a
# code to bring its check back).
ignore = {codes}
"""


_ORDER = """
[order]
# Versions or translations of a page (the same path under sibling dirs such as 7.4/ and
# 7.6/, or en/ and it/) tie in find's order but for their path: the pages under these dirs
# come first, in this order. wiki init chose the highest release and the language the
# others repeat most.{unlisted}
prefer = {prefer}
"""

#: Said in the file when ``[order] prefer`` holds ``UNLISTED_PAGES``, which reads as no dir.
_UNLISTED_NOTE = """
# "./" stands for the pages under none of the other dirs listed: the dirs after it
# translate the pages beside them, which are the original."""


def init_text(layout: Layout, prefer: Sequence[str] = ()) -> str:
    """The commented ``.mnemosyne.toml`` that writes ``layout`` down. For a zero-config
    layout it also writes down what lint leaves out there (``lint.AION_CONVENTION_CODES``),
    so the vault lints the same once the file exists; with ``prefer``, the ``[order]``
    that puts the pages under those dirs first among their versions."""
    text = _HEADER + _KEYS.format(
        dirs=toml_array(layout.dirs),
        depth=layout.depth,
        suffixes=toml_array(layout.suffixes),
        exclude=toml_array(layout.exclude),
    )
    if layout.source == LAYOUT_FROM_ZERO_CONFIG:
        from mnemosyne_core.lint import AION_CONVENTION_CODES

        text += _LINT_CONVENTIONS.format(codes=toml_array(AION_CONVENTION_CODES))
    if prefer:
        unlisted = _UNLISTED_NOTE if UNLISTED_PAGES in prefer else ""
        text += _ORDER.format(prefer=toml_array(prefer), unlisted=unlisted)
    return text


def detected_layout(vault_real: str, home: str | None = None) -> Layout:
    """The layout ``wiki init`` writes for the dir ``vault_real``: the one its commands use
    with no config: the Aion dirs it has, flat; else the whole tree. Raises VaultError for
    a dir no one keeps notes in as a whole (``location.non_vault_reason``)."""
    reason = non_vault_reason(vault_real, home)
    if reason is not None:
        raise VaultError(
            f"{vault_real!r} is {reason}, not a notes folder: run 'mnemosyne wiki init PATH' "
            "with the folder that holds your notes"
        )
    layout = vault_layout(vault_real, config=load_vault_config(vault_real))
    present = tuple(
        name for name in layout.dirs if name == VAULT_ROOT_DIR or os.path.isdir(os.path.join(vault_real, name))
    )
    if present:
        layout.dirs = present
    return layout


class InitPlan:
    """What ``wiki init`` writes: the file's ``path``, its ``text``, the ``layout`` it
    writes down and how many ``pages`` that layout finds in the dir now."""

    __slots__ = ("layout", "note", "pages", "path", "prefer", "text")

    def __init__(
        self, path: str, text: str, layout: Layout, pages: int, note: str | None = None, prefer: Sequence[str] = ()
    ):
        self.path = path
        #: The ``[order] prefer`` written (``versions.preferred_dirs_of``); empty: none.
        self.prefer = prefer
        self.text = text
        self.layout = layout
        self.pages = pages
        #: The miss note's line for the markdown files that layout leaves out and a setting
        #: would take in (beside the default dirs, nested, another suffix); None when none.
        self.note = note


def plan_init(path: str, environ: Mapping[str, str], home: str) -> InitPlan:
    """The ``.mnemosyne.toml`` ``wiki init`` would write in the dir ``path`` (``~`` and
    ``$VAR`` in it expanded from ``home`` and ``environ``). Raises VaultError when ``path``
    is not a dir or no vault (``detected_layout``), and ConfigExistsError when it has a
    ``.mnemosyne.toml`` already."""
    from mnemosyne_core.location import locate_vault

    vault_real = locate_vault(path, environ, home=home).path
    target = os.path.join(vault_real, VAULT_CONFIG_FILE)
    if os.path.lexists(target):
        raise ConfigExistsError(
            f"{target} exists already, and wiki init never overwrites one: edit it, or remove it and run "
            "'mnemosyne wiki init' again"
        )
    layout = detected_layout(vault_real, home)
    left_out: list[tuple[str, str]] = []
    pages = scan(vault_real, left_out=left_out, home=home)
    # What ignore files exclude stays out on purpose, as rg leaves it out: not init's news.
    settable = [
        (kind, rel_path) for kind, rel_path in left_out if rule_file_of(kind) is None and kind != LEFT_OUT_EXCLUDED
    ]
    note = _left_out_note(vault_real, settable, lambda: layout.suffixes)
    prefer = _preferred_dirs(pages)
    return InitPlan(target, init_text(layout, prefer), layout, len(pages), note, prefer)


def _preferred_dirs(pages: Scan) -> list[str]:
    """The ``[order] prefer`` for the pages of ``pages`` (``versions.preferred_dirs_of``),
    a translation's page read only when its language's choice needs it."""
    from mnemosyne_core.pagefields import content_digests
    from mnemosyne_core.versions import preferred_dirs_of

    refs = {page.rel_path: page for page in pages.pages}

    def digests_of(rel_path: str) -> tuple[bytes | None, bytes | None]:
        try:
            return content_digests(read_page_bytes(refs[rel_path]))
        except OSError:
            return None, None

    return preferred_dirs_of(refs, digests_of)


def write_init(plan: InitPlan) -> None:
    """Write ``plan``'s file whole or not at all: a temp file beside it, fsynced, then
    linked to its name, which fails rather than replace a file that appeared meanwhile.
    Raises ConfigExistsError then, ConfigWriteError when it cannot be written."""
    import secrets  # only wiki init writes

    dir_path = os.path.dirname(plan.path)
    temp = os.path.join(dir_path, f".mnemosyne-init-{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            view = memoryview(plan.text.encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, plan.path)
        except OSError as error:
            # Taken, or no hard links on this file system: check, then rename (never a partial file).
            if isinstance(error, FileExistsError) or os.path.lexists(plan.path):
                raise ConfigExistsError(f"{plan.path} appeared meanwhile; wiki init never overwrites one") from None
            os.replace(temp, plan.path)
    except OSError as error:
        raise ConfigWriteError(
            f"cannot write {plan.path} ({error.strerror or error}), nothing was written: check the dir's permissions"
        ) from None
    finally:
        # After os.replace the temp name is gone; after os.link (or a failure) it is not.
        with contextlib.suppress(OSError):
            os.unlink(temp)
