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


@dataclass(slots=True)
class VaultInfo:
    """What ``describe_vault`` found."""

    #: The vault and which way named it.
    location: VaultLocation
    #: The config files read, in the order they were read.
    config_files: list[str]
    #: Where the scanned dirs came from (config.DIRS_FROM_*).
    dirs_source: str
    dirs: list[DirInfo]
    #: How many paths hold ``.md`` files find never searches (``wiki lint`` lists them).
    unsearched: int
    #: find's error when it can search no dir at all, else None.
    error: str | None
    #: ``error`` as the error find raises for it (``vault.Scan.failure``): an
    #: UnknownDirError says the --dir given named no dir of the vault.
    failure: VaultError | None
    #: The layout in force (``config.vault_layout``), its ``source`` saying where it came from.
    layout: Layout | None
    #: The pages find searches (a tree's dir inside another searched dir counts once).
    pages: int
    #: The vault's index (``cache.describe_index``).
    cache: IndexInfo | None
    #: The --dir the description was asked with (None: the layout's dirs).
    dirs_given: Sequence[str] | None
    #: The dirs that repeat another dir's pages, and the exclude line that drops them
    #: (``lint.vault_copies``, the rule of lint's duplicate-title per dir).
    copies: Copies | None
    #: The vault's ``[order] prefer`` (``vault.preferred_dirs``).
    prefer: tuple[str, ...]


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
    return VaultInfo(
        location,
        config_files,
        dirs_source,
        _dir_infos(pages, unreadable),
        unsearched,
        pages.error,
        pages.failure,
        pages.layout,
        len(pages),
        describe_index(pages, environ),
        dirs,
        vault_copies(pages),
        preferred_dirs(pages),
    )


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
