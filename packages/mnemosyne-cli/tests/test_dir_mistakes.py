"""A --dir that names no dir of the vault is a mistake in the call: exit 64 (usage), with
the vault's dirs closest to it (``did you mean reference/7.6?``) and its top-level dirs
on one line, in find, recall, lint and info alike. Exit 3 stays for a vault that cannot
be searched. Exact stdout, stderr and exit code through ``main``, on small vaults in
tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemosyne_cli.app import main

COMMANDS = [["find", "install"], ["recall", "install"], ["lint"], ["info"]]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A tree vault of versioned docs: reference/5.1, reference/7.4, reference/7.6."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "vault"
    for version in ("5.1", "7.4", "7.6"):
        (root / "reference" / version).mkdir(parents=True)
        (root / "reference" / version / "install.md").write_text(
            f"---\ntitle: Install {version}\nupdated: 2026-01-01\n---\ninstall\n", encoding="utf-8"
        )
    (root / "notes").mkdir()
    return os.path.realpath(root)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_dir_named_by_its_last_part_gets_its_place(
    versions: str, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, err = run(capsys, "wiki", *command, "--dir", "7.6", "--vault", versions)
    assert (code, err) == (
        64,
        f"mnemosyne: error: --dir '7.6' names no dir of the vault '{versions}'; "
        "did you mean reference/7.6? its dirs are notes, reference\n",
    )
    # info still describes the dir it was asked about; the others print nothing.
    if command == ["info"]:
        assert "scanned dirs (from --dir):\n  7.6/: missing\n" in out
    else:
        assert out == ""


def test_a_release_named_without_its_prefix_gets_its_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Docusaurus names its releases version-30.4: ``--dir 30.4`` means that one, not
    version-130.4 nor 0.4."""
    for version in ("version-29.7", "version-30.4", "version-130.4", "0.4"):
        (tmp_path / "website" / "versioned_docs" / version).mkdir(parents=True)
        (tmp_path / "website" / "versioned_docs" / version / "intro.md").write_text("intro\n", encoding="utf-8")
    vault = os.path.realpath(tmp_path)
    assert run(capsys, "wiki", "find", "intro", "--dir", "30.4", "--vault", vault) == (
        64,
        "",
        f"mnemosyne: error: --dir '30.4' names no dir of the vault '{vault}'; "
        "did you mean website/versioned_docs/version-30.4? its dirs are website\n",
    )


def test_the_dir_it_suggests_is_the_one_that_works(versions: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "install", "--dir", "reference/7.6", "--vault", versions) == (
        0,
        "reference/7.6/install.md — Install 7.6\n",
        "",
    )


def test_a_typo_gets_difflibs_closest_dirs(versions: str, capsys: pytest.CaptureFixture[str]) -> None:
    # No dir ends in 7.7: the closest names follow, at most three, closest first.
    assert run(capsys, "wiki", "find", "install", "--dir", "reference/7.7", "--vault", versions) == (
        64,
        "",
        f"mnemosyne: error: --dir 'reference/7.7' names no dir of the vault '{versions}'; "
        "did you mean reference/7.4, reference/7.6, reference/5.1? its dirs are notes, reference\n",
    )


def test_a_dir_close_to_none_lists_the_vaults_dirs(versions: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "install", "--dir", "zzz", "--vault", versions) == (
        64,
        "",
        f"mnemosyne: error: --dir 'zzz' names no dir of the vault '{versions}'; its dirs are notes, reference\n",
    )


def test_beside_a_dir_that_exists_the_missing_one_is_a_warning_with_the_guess(
    versions: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "wiki", "find", "install", "--dir", "reference/5.1", "--dir", "7.6", "--vault", versions) == (
        0,
        "reference/5.1/install.md — Install 5.1\n",
        "mnemosyne: warning: --dir '7.6' names no dir of the vault; did you mean reference/7.6? "
        "its dirs are notes, reference\n",
    )


def test_a_vault_of_80_dirs_is_listed_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "vault"
    for number in range(1, 81):
        (root / f"topic-{number:02}").mkdir(parents=True)
    vault = os.path.realpath(root)
    code, out, err = run(capsys, "wiki", "find", "x", "--dir", "topic-7", "--vault", vault)
    assert (code, out, err) == (
        64,
        "",
        f"mnemosyne: error: --dir 'topic-7' names no dir of the vault '{vault}'; "
        "did you mean topic-07, topic-17, topic-27? its dirs are topic-01, topic-02, topic-03, topic-04, "
        "topic-05, topic-06, topic-07, topic-08, … and 72 more\n",
    )


def test_the_vaults_own_dirs_missing_is_still_a_vault_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # .mnemosyne.toml names the dir, not the command line: the vault is wrong (3).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    vault = os.path.realpath(root)
    assert run(capsys, "wiki", "find", "x", "--vault", vault) == (
        3,
        "",
        f"mnemosyne: error: vault '{vault}' has none of the scanned dirs (wiki); its dirs are notes: "
        "pass the vault root with --vault, or name its dirs with --dir\n",
    )


def test_a_given_dir_that_leaves_the_vault_is_still_a_vault_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The dir is there, as a symlink find never follows: the vault's problem, not a typo.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "vault"
    root.mkdir()
    (root / "wiki").symlink_to(elsewhere)
    vault = os.path.realpath(root)
    code, out, err = run(capsys, "wiki", "find", "x", "--dir", "wiki", "--vault", vault)
    assert (code, out) == (3, "")
    assert err.startswith(f"mnemosyne: error: vault '{vault}' has no scanned dir find can read (wiki): ")
