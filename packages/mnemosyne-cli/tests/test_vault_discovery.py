"""Every command finds the vault the same four ways (docs/spec.md rule 1): --vault, a
.mnemosyne.toml in the current directory or a parent, AION_VAULT, the user config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment

ALPHA = "---\ntitle: Alpha\nupdated: 2026-01-02\ntags: [alpha]\n---\nAlpha body.\n"


def harness_vault(root: Path) -> Path:
    """A vault with one flat wiki/ dir, declared in its .mnemosyne.toml."""
    (root / "wiki").mkdir(parents=True)
    (root / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    (root / "wiki" / "alpha.md").write_text(ALPHA, encoding="utf-8")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``main(argv)``, in the process's environment with ``environ`` added."""
    code = main(list(argv), Environment({**os.environ, **(environ or {})}))
    out, err = capsys.readouterr()
    return code, out, err


def test_find_inside_a_vault_needs_no_flag(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = harness_vault(home / "v")
    monkeypatch.chdir(vault / "wiki")
    assert run(capsys, "wiki", "find", "alpha") == (0, "wiki/alpha.md — Alpha\n", "")


def test_recall_inside_a_vault_needs_no_flag(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(harness_vault(home / "v"))
    assert run(capsys, "wiki", "recall", "alpha") == (
        0,
        f"wiki/alpha.md\n\n==> wiki/alpha.md <==\n{ALPHA}\n1 match; read 1: alpha; 0 not read\n",
        "",
    )


def test_lint_inside_a_vault_needs_no_flag(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = harness_vault(home / "v")
    (vault / "notes").mkdir()
    (vault / "notes" / "n.md").write_text(ALPHA, encoding="utf-8")
    monkeypatch.chdir(vault / "notes")
    assert run(capsys, "wiki", "lint") == (
        1,
        "notes/n.md\tunscanned-dir\tin notes/, which is not scanned; to scan it, "
        'set dirs = ["wiki", "notes"] in .mnemosyne.toml, or move it\n',
        "1 finding in 1 path\n",
    )


def test_ingest_inside_a_vault_needs_no_flag(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = harness_vault(home / "v")
    source = home / "beta.md"
    source.write_text("---\ntitle: Beta\ntype: note\n---\nBeta text.\n", encoding="utf-8")
    monkeypatch.chdir(vault / "wiki")
    code, out, err = run(capsys, "wiki", "ingest", str(source), "--constellation", "atlas", "--dir", "wiki")
    assert (code, out, err) == (0, "wiki/beta.md — Beta\n", "")
    assert (vault / "wiki" / "beta.md").is_file()


@pytest.mark.parametrize(
    "argv",
    [
        ["wiki", "find", "alpha"],
        ["wiki", "recall", "alpha"],
        ["wiki", "lint"],
        ["wiki", "ingest", "src.md", "--constellation", "atlas"],
    ],
)
def test_every_command_names_the_four_ways_when_none_gives_a_vault(
    home: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    (home / "src.md").write_text("---\ntitle: S\ntype: note\n---\n", encoding="utf-8")
    assert run(capsys, *argv) == (
        3,
        "",
        "mnemosyne: error: no vault found: pass --vault PATH, run inside a vault that has a .mnemosyne.toml, "
        f'set AION_VAULT, or set vault = "PATH" in {home}/.config/mnemosyne/config.toml\n',
    )


def test_a_quoted_tilde_in_the_env_or_the_flag_is_the_home_dir(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    harness_vault(home / "aion")
    assert run(capsys, "wiki", "find", "alpha", environ={"AION_VAULT": "~/aion"}) == (0, "wiki/alpha.md — Alpha\n", "")
    assert run(capsys, "wiki", "find", "alpha", "--vault", "~/aion") == (0, "wiki/alpha.md — Alpha\n", "")
    assert run(capsys, "wiki", "find", "alpha", "--vault", "$HOME/aion") == (0, "wiki/alpha.md — Alpha\n", "")


def test_the_user_config_names_the_vault_last(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    harness_vault(home / "aion")
    config = home / "xdg" / "mnemosyne" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('vault = "~/aion"\n', encoding="utf-8")
    environ = {"XDG_CONFIG_HOME": str(home / "xdg")}
    assert run(capsys, "wiki", "find", "alpha", environ=environ) == (0, "wiki/alpha.md — Alpha\n", "")
    environ["AION_VAULT"] = str(home / "gone")  # the env comes first
    assert run(capsys, "wiki", "find", "alpha", environ=environ) == (
        3,
        "",
        f"mnemosyne: error: vault '{home}/gone' (from AION_VAULT) does not exist: "
        "set AION_VAULT to your vault root or pass --vault PATH\n",
    )


def test_a_broken_user_config_is_an_error_only_when_it_is_needed(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = harness_vault(home / "aion")
    config = home / ".config" / "mnemosyne" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("vault = ~/aion\n", encoding="utf-8")
    assert run(capsys, "wiki", "find", "alpha", "--vault", str(vault)) == (0, "wiki/alpha.md — Alpha\n", "")
    assert run(capsys, "wiki", "find", "alpha") == (
        3,
        "",
        f"mnemosyne: error: {config} is not valid TOML (Invalid value (at line 1, column 9)); fix or remove it\n",
    )


def test_a_broken_vault_config_found_from_the_cwd_fails_loudly(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = harness_vault(home / "v")
    (vault / ".mnemosyne.toml").write_text('dirs = "wiki"\n', encoding="utf-8")
    monkeypatch.chdir(vault / "wiki")
    # AION_VAULT is not consulted: the walk-up found a vault first.
    assert run(capsys, "wiki", "find", "alpha", environ={"AION_VAULT": str(home)}) == (
        3,
        "",
        f"mnemosyne: error: {vault}/.mnemosyne.toml: dirs must be a non-empty list of dir names, "
        'e.g. dirs = ["wiki"]\n',
    )


def test_a_vault_whose_only_dir_is_an_escaping_symlink_says_so(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = harness_vault(home / "elsewhere")
    vault = home / "v"
    vault.mkdir()
    (vault / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    (vault / "wiki").symlink_to(elsewhere / "wiki")
    assert run(capsys, "wiki", "find", "alpha", "--vault", str(vault)) == (
        3,
        "",
        f"mnemosyne: error: vault '{vault}' has no scanned dir find can read (wiki): wiki/ is a symlink to "
        f"'{elsewhere}/wiki', outside the vault, which find never reads; move the dir into the vault, or pass "
        "the dir that holds it as --vault\n",
    )
