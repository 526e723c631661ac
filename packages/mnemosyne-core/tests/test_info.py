"""``describe_vault`` (wiki info): each scanned dir's state, the config files read, and the
skipped count, on pyfakefs vaults (the CLI tests cover the output)."""

from __future__ import annotations

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from vault_pages import VAULT, MakeVault, page

from mnemosyne_core import UnknownDirError, VaultError
from mnemosyne_core.info import describe_vault

WRITE_ONLY_DIR = 0o300


def states(vault: str, dirs: list[str] | None = None) -> list[tuple[str, str, int, str | None]]:
    return [(info.name, info.state, info.pages, info.reason) for info in describe_vault(vault, dirs=dirs).dirs]


def test_each_dir_state(make_vault: MakeVault, fs: FakeFilesystem) -> None:
    make_vault({"atlas/a.md": page("A"), "atlas/b.md": page("B"), "hermes": "a file", "outside/o.md": page("O")})
    fs.create_symlink(f"{VAULT}/hades", "/elsewhere")
    fs.create_dir("/elsewhere")
    fs.create_symlink(f"{VAULT}/metis", "/gone")
    assert states(VAULT, ["atlas", "hades", "metis", "hermes", "apollo"]) == [
        ("atlas", "present", 2, None),
        ("hades", "skipped", 0, "a symlink to '/elsewhere', outside the vault, which find never reads"),
        ("metis", "skipped", 0, "a broken symlink (to '/gone')"),
        ("hermes", "not-a-dir", 0, None),
        ("apollo", "missing", 0, None),
    ]


def test_an_unlistable_dir_is_unreadable_and_not_counted_as_skipped_files(
    make_vault: MakeVault, fs: FakeFilesystem, as_non_root: None
) -> None:
    make_vault({"atlas/a.md": page("A"), "hermes/h.md": page("H")})
    fs.chmod(f"{VAULT}/hermes", WRITE_ONLY_DIR)
    info = describe_vault(VAULT, dirs=["atlas", "hermes"])
    assert [(d.name, d.state, d.pages, d.reason) for d in info.dirs] == [
        ("atlas", "present", 1, None),
        ("hermes", "unreadable", 0, "cannot list this scanned dir (Permission denied); its pages were not searched"),
    ]
    assert (info.pages, info.unsearched, info.error) == (1, 0, None)


def test_the_skipped_count_is_of_paths_not_findings(make_vault: MakeVault) -> None:
    # .Notes.MD at the root has three findings (hidden, suffix case, vault root): one path.
    make_vault({"atlas/a.md": page("A"), ".Notes.MD": "x", "atlas/sub/n.md": "x", "notes/m.md": "x"})
    info = describe_vault(VAULT)
    assert (info.pages, info.unsearched) == (1, 3)


def test_no_scanned_dir_is_described_with_finds_error(make_vault: MakeVault) -> None:
    make_vault({"notes/m.md": page("M")})
    info = describe_vault(VAULT, dirs=["atlas"])
    assert [(d.name, d.state) for d in info.dirs] == [("atlas", "missing")]
    assert info.unsearched == 1
    assert info.error == "--dir 'atlas' names no dir of the vault '/vault'; its dirs are notes"
    assert isinstance(info.failure, UnknownDirError)


def test_config_files_are_listed_in_the_order_read(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    make_vault({"wiki/a.md": page("A"), ".mnemosyne.toml": 'dirs = ["wiki"]\n'})
    monkeypatch.chdir(f"{VAULT}/wiki")
    info = describe_vault(None)
    assert (info.location.source, info.config_files, info.dirs_source) == (
        ".mnemosyne.toml",
        ["/vault/.mnemosyne.toml"],
        ".mnemosyne.toml",
    )
    assert describe_vault(VAULT, dirs=["wiki"]).dirs_source == "--dir"


def test_a_broken_vault_config_is_an_error_not_a_description(make_vault: MakeVault) -> None:
    make_vault({"wiki/a.md": page("A"), ".mnemosyne.toml": "dirs = ["})
    with pytest.raises(VaultError, match=r"\.mnemosyne\.toml is not valid TOML"):
        describe_vault(VAULT)
