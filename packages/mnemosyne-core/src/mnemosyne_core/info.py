"""``wiki info``: what find would search, and why. It answers "why can't find see my page?"
with the pieces find itself uses: ``location.locate_vault`` for the vault and how it was
found, ``vault.scan`` for the dirs and pages, and lint's walk for the files find skips.
Nothing here scans a second way."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mnemosyne_core.cache import describe_index
from mnemosyne_core.config import VAULT_CONFIG_FILE, VAULT_ROOT_DIR, home_dir, scanned_dirs_and_source
from mnemosyne_core.lint import UNREADABLE, unsearched_findings, vault_copies
from mnemosyne_core.vault import preferred_dirs, scan

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from mnemosyne_core.cache import IndexInfo
    from mnemosyne_core.config import Layout
    from mnemosyne_core.errors import VaultError
    from mnemosyne_core.lint import Copies
    from mnemosyne_core.location import VaultLocation
    from mnemosyne_core.vault import Scan

# What became of a scanned dir.
DIR_PRESENT = "present"  # listed: its pages are searched
DIR_MISSING = "missing"  # nothing by that name in the vault
DIR_NOT_A_DIR = "not-a-dir"  # a file (or a symlink to one) by that name
DIR_SKIPPED = "skipped"  # a symlink find does not follow (broken, or leaving the vault)
DIR_UNREADABLE = "unreadable"  # could not be listed (in full): its pages were not all searched


@dataclass(slots=True)
class DirInfo:
    """One scanned dir: its ``state`` (a DIR_*), the pages find lists in it (in a tree,
    below it too), for a dir that is skipped or unreadable, why, and in a tree the pages
    below each dir directly in it (``subdirs``: name, pages; by name; pages directly in the
    dir itself are not in any)."""

    name: str
    state: str
    pages: int = 0
    reason: str | None = None
    subdirs: list[tuple[str, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "state": self.state,
            "pages": self.pages,
            "reason": self.reason,
            "subdirs": [{"name": name, "pages": pages} for name, pages in self.subdirs],
        }


class VaultInfo:
    """What ``describe_vault`` found.

    ``location``: the vault and which way named it. ``config_files``: the config files
    read, in the order they were read. ``dirs_source``: where the scanned dirs came from
    (config.DIRS_FROM_*). ``unsearched``: how many paths hold ``.md`` files find never
    searches (``wiki lint`` lists them). ``error``: find's error when it can search no
    dir at all, else None.
    """

    __slots__ = (
        "cache",
        "config_files",
        "copies",
        "dirs",
        "dirs_given",
        "dirs_source",
        "error",
        "failure",
        "layout",
        "location",
        "pages",
        "prefer",
        "unsearched",
    )

    def __init__(
        self,
        location: VaultLocation,
        config_files: list[str],
        dirs_source: str,
        dirs: list[DirInfo],
        unsearched: int,
        error: str | None,
        layout: Layout | None = None,
        pages: int | None = None,
        cache: IndexInfo | None = None,
    ):
        self.location = location
        self.config_files = config_files
        self.dirs_source = dirs_source
        self.dirs = dirs
        self.unsearched = unsearched
        self.error = error
        #: The layout in force (``config.vault_layout``), its ``source`` saying where it came from.
        self.layout = layout
        #: The pages find searches (a tree's dir inside another searched dir counts once).
        self.pages = sum(info.pages for info in dirs) if pages is None else pages
        #: The vault's index (``cache.describe_index``).
        self.cache = cache
        #: ``error`` as the error find raises for it (``vault.Scan.failure``): an
        #: UnknownDirError says the --dir given named no dir of the vault.
        self.failure: VaultError | None = None
        #: The --dir the description was asked with (None: the layout's dirs).
        self.dirs_given: Sequence[str] | None = None
        #: The dirs that repeat another dir's pages, and the exclude line that drops them
        #: (``lint.vault_copies``, the rule of lint's duplicate-title per dir).
        self.copies: Copies | None = None
        #: The vault's ``[order] prefer`` (``vault.preferred_dirs``).
        self.prefer: tuple[str, ...] = ()


def describe_vault(
    vault: str | os.PathLike[str] | None,
    *,
    dirs: Sequence[str] | None = None,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
) -> VaultInfo:
    """Describe the vault find would search with these arguments (``vault``: --vault,
    ``dirs``: --dir). A vault with no scanned dir is described, with find's error in
    ``error``. Raises VaultError when there is no vault to describe: none found, or a
    broken config file. ``environ``, ``cwd`` and ``home`` are where the vault is looked for
    (``location.locate_vault``, whose defaults, this process's, are for a Python caller) and
    where its cache lives."""
    from mnemosyne_core.location import locate_vault

    home = home_dir(environ) if home is None else home
    location = locate_vault(vault, environ, cwd, home)
    root = location.path
    config_files = [location.source_file] if location.source_file else []
    vault_config = os.path.join(root, VAULT_CONFIG_FILE)
    if vault_config not in config_files and os.path.lexists(vault_config):
        config_files.append(vault_config)
    _, dirs_source = scanned_dirs_and_source(root, dirs)  # raises on a broken .mnemosyne.toml
    pages = scan(root, dirs, require_dirs=False, home=home)
    findings = unsearched_findings(pages, environ)
    unreadable = {finding.path: finding.message for finding in findings if finding.code == UNREADABLE}
    # A scanned dir that is skipped or unreadable shows in the dir list, not in the count.
    unsearched = len({finding.path for finding in findings} - set(pages.dirs))
    described = VaultInfo(
        location,
        config_files,
        dirs_source,
        _dir_infos(pages, unreadable),
        unsearched,
        pages.error,
        pages.layout,
        len(pages),
        describe_index(pages, environ),
    )
    described.dirs_given = dirs
    described.failure = pages.failure
    described.copies = vault_copies(pages)
    described.prefer = preferred_dirs(pages)
    return described


def _dir_infos(pages: Scan, unreadable: Mapping[str, str]) -> list[DirInfo]:
    tree = pages.layout is not None and pages.layout.tree
    listed: dict[str, int] = {}
    subdirs: dict[str, dict[str, int]] = {}
    for rel, _, page_names in pages.listing:
        for name in pages.dirs:
            base = "" if name == VAULT_ROOT_DIR else name
            if rel == base or (tree and (not base or rel.startswith(base + "/"))):
                listed[name] = listed.get(name, 0) + len(page_names)
                if tree and rel != base:
                    child = rel[len(base) + 1 :] if base else rel
                    counts = subdirs.setdefault(name, {})
                    top = child.partition("/")[0]
                    counts[top] = counts.get(top, 0) + len(page_names)
    infos = []
    for name in pages.dirs:
        children = sorted((child, count) for child, count in subdirs.get(name, {}).items() if count)
        if name in unreadable:
            infos.append(DirInfo(name, DIR_UNREADABLE, listed.get(name, 0), unreadable[name], children))
        elif name in listed:
            infos.append(DirInfo(name, DIR_PRESENT, listed[name], subdirs=children))
        elif name in pages.skipped:
            infos.append(DirInfo(name, DIR_SKIPPED, reason=pages.skipped[name]))
        elif os.path.lexists(os.path.join(pages.vault, name)):
            infos.append(DirInfo(name, DIR_NOT_A_DIR))
        else:
            infos.append(DirInfo(name, DIR_MISSING))
    return infos
