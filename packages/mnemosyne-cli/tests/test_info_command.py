"""``mnemosyne wiki info`` and ``mnemosyne --version``:
exact output and exit codes, the JSON against its contract schema, and the skipped count
against lint's own findings."""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import sys
from importlib.metadata import version
from pathlib import Path

import jsonschema
import pytest
from index_harness import build_index
from reliability_vault import build_edge_vault

from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_contract import load_schema
from mnemosyne_core.cache import cache_dir_path, index_path

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "vaults"
PAGE = "---\ntitle: {title}\nupdated: 2026-01-02\n---\nbody\n"
PACKAGES = ("mnemosyne-wiki-cli", "mnemosyne-wiki-contract", "mnemosyne-wiki-core", "mnemosyne-wiki-ingest")
#: lint's codes for files find never searches (docs/commands.md, "never searched" and "not searched").
UNSEARCHED = {
    "nested-file",
    "unscanned-dir",
    "vault-root-file",
    "suffix-case",
    "unsearched-suffix",
    "hidden-file",
    "symlink-escapes",
    "broken-symlink",
    "not-regular-file",
    "unreadable",
    "skipped-by-find",
}


def cache_file(vault: Path) -> str:
    """The vault's index, in the test session's own cache dir."""
    cache_dir = cache_dir_path(os.environ)
    assert cache_dir is not None
    return index_path(cache_dir, os.path.realpath(vault))


def last_lines(vault: Path, pages: int) -> str:
    """The report's last lines: no index of the vault is built yet, no server runs in these
    tests (the vault of ``pages`` pages is too small for a call to start one), then the
    versions."""
    packages = ", ".join(f"{name} {version(name)}" for name in PACKAGES)
    return (
        f"index: {cache_file(vault)}, not built yet (the next find, recall or wiki init builds it)\n"
        f"server: none (auto-start is off: the vault lists {pages} pages, fewer than 5,000; "
        "'wiki serve' or [serve] auto = true starts one)\n"
        f"version: mnemosyne {version('mnemosyne-wiki-cli')} ({packages})\n"
    )


@pytest.fixture
def vault(home: Path) -> Path:
    """Default layout: atlas/ with two pages and a nested one, hermes as a file, a page at
    the root; the other default dirs are missing."""
    root = home / "aion"
    (root / "atlas" / "drafts").mkdir(parents=True)
    (root / "atlas" / "a.md").write_text(PAGE.format(title="A"), encoding="utf-8")
    (root / "atlas" / "b.md").write_text(PAGE.format(title="B"), encoding="utf-8")
    (root / "atlas" / "drafts" / "c.md").write_text(PAGE.format(title="C"), encoding="utf-8")
    (root / "hermes").write_text("not a dir", encoding="utf-8")
    (root / "README.md").write_text("# readme\n", encoding="utf-8")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``main(argv)``, in the process's environment with ``environ`` added."""
    code = main(list(argv), Environment({**os.environ, **(environ or {})}))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_describes_the_vault_given_by_the_flag(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "info", "--vault", str(vault)) == (
        0,
        f"vault: {vault}\n"
        f"found by: --vault {vault}\n"
        "config files: none\n"
        "layout: flat (the files directly in each dir), suffixes .md; the default (Aion) layout, "
        "as the vault has default dirs\n"
        "scanned dirs (the default):\n"
        "  atlas/: 2 pages\n"
        "  hades/: missing\n"
        "  mnemosyne/: missing\n"
        "  proteus/: missing\n"
        "  metis/: missing\n"
        "  apollo/: missing\n"
        "  hermes/: not a dir\n"
        "  hephaistos/: missing\n"
        "  athena/: missing\n"
        "  analyses/: missing\n"
        "pages: 2\n"
        f"skipped: 2 markdown files find never searches; 'mnemosyne wiki lint --vault {vault}' lists them\n"
        # What a miss would add, word for word: the same files, by kind, with the way out.
        'not searched: 2 markdown files: 1 in sub-dirs (set depth = "tree" in .mnemosyne.toml), 1 outside the '
        "default (Aion) dirs, in the vault root (the vault has atlas/, so it is searched as an Aion vault; set "
        'dirs = ["."] and depth = "tree" in .mnemosyne.toml to search the whole folder); wiki lint lists them\n'
        + last_lines(vault, 2),
        "",
    )


def test_info_names_the_vault_config_found_from_the_cwd(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (vault / ".mnemosyne.toml").write_text('dirs = ["atlas", "notes"]\n', encoding="utf-8")
    monkeypatch.chdir(vault / "atlas" / "drafts")
    assert run(capsys, "wiki", "info") == (
        0,
        f"vault: {vault}\n"
        f"found by: {vault}/.mnemosyne.toml, the nearest .mnemosyne.toml from the current dir up\n"
        f"config files: {vault}/.mnemosyne.toml\n"
        "layout: flat (the files directly in each dir), suffixes .md; from .mnemosyne.toml\n"
        "scanned dirs (from .mnemosyne.toml):\n"
        "  atlas/: 2 pages\n"
        "  notes/: missing\n"
        "pages: 2\n"
        "skipped: 2 markdown files find never searches; 'mnemosyne wiki lint' lists them\n"
        'not searched: 1 markdown file in the searched dirs: 1 in sub-dirs (set depth = "tree" in .mnemosyne.toml); '
        "wiki lint lists them\n" + last_lines(vault, 2),
        "",
    )


def test_info_names_the_env_as_written(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "wiki", "info", "--dir", "atlas/", environ={"AION_VAULT": "~/aion"})
    assert (code, err) == (0, "")
    assert out.splitlines()[:6] == [
        f"vault: {vault}",
        "found by: AION_VAULT=~/aion",
        "config files: none",
        "layout: flat (the files directly in each dir), suffixes .md; the default (Aion) layout, as the vault has "
        "default dirs",
        "scanned dirs (from --dir):",
        "  atlas/: 2 pages",
    ]
    assert out.splitlines()[7] == (
        "skipped: 2 markdown files find never searches; 'mnemosyne wiki lint --dir atlas' lists them"
    )


def test_info_lists_the_user_config_it_read(
    vault: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (vault / ".mnemosyne.toml").write_text('dirs = ["atlas"]\n', encoding="utf-8")
    config = home / ".config" / "mnemosyne" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('vault = "$HOME/aion"\n', encoding="utf-8")
    code, out, err = run(capsys, "wiki", "info")
    assert (code, err) == (0, "")
    assert out.splitlines()[:3] == [
        f"vault: {vault}",
        f'found by: vault = "$HOME/aion" in {config}',
        f"config files: {config}, {vault}/.mnemosyne.toml",
    ]


def test_info_json_is_the_report_and_matches_the_schema(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "wiki", "info", "--json", "--vault", str(vault), "--dir", "atlas", "--dir", "hermes")
    assert (code, err) == (0, "")
    report = json.loads(out)
    jsonschema.validate(report, load_schema("info"))
    assert report == {
        "vault": str(vault),
        "source": "--vault",
        "given": str(vault),
        "source_file": None,
        "config_files": [],
        "layout": {
            "dirs": ["atlas", "hermes"],
            "depth": "flat",
            "suffixes": [".md"],
            "exclude": [],
            "source": "default",
        },
        "prefer": [],
        "dirs_source": "--dir",
        "dirs": [
            {"name": "atlas", "state": "present", "pages": 2, "reason": None, "subdirs": []},
            {"name": "hermes", "state": "not-a-dir", "pages": 0, "reason": None, "subdirs": []},
        ],
        "pages": 2,
        "unsearched": 2,
        "error": None,
        "cache": {
            "enabled": True,
            "path": cache_file(vault),
            "bytes": 0,
            "pages": 0,
            "fresh": 0,
            "complete": False,
            "outdated": False,
            "written": None,
            "building": None,
            "damaged": None,
            "failed": None,
            "unused": None,
        },
        "server": None,
        "auto_start": {
            "enabled": False,
            "reason": "the vault lists 2 pages, fewer than 5,000",
            "idle_minutes": 30,
            "log": None,
        },
        "version": version("mnemosyne-wiki-cli"),
        "packages": {name: version(name) for name in PACKAGES},
    }
    assert out.count("\n") == 1


def test_info_shows_a_vault_find_cannot_search_and_exits_3(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    root = home / "v"
    root.mkdir()
    (root / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    (root / "wiki").symlink_to(elsewhere)
    reason = f"a symlink to '{elsewhere}', outside the vault, which find never reads"
    assert run(capsys, "wiki", "info", "--vault", str(root)) == (
        3,
        f"vault: {root}\n"
        f"found by: --vault {root}\n"
        f"config files: {root}/.mnemosyne.toml\n"
        "layout: flat (the files directly in each dir), suffixes .md; from .mnemosyne.toml\n"
        "scanned dirs (from .mnemosyne.toml):\n"
        f"  wiki/: skipped: {reason}\n"
        "pages: 0\n"
        "skipped: none\n" + last_lines(root, 0),
        f"mnemosyne: error: vault '{root}' has no scanned dir find can read (wiki): wiki/ is {reason}; "
        "move the dir into the vault, or pass the dir that holds it as --vault\n",
    )
    code, out, _ = run(capsys, "wiki", "info", "--vault", str(root), "--json")
    assert code == 3
    jsonschema.validate(json.loads(out), load_schema("info"))
    assert json.loads(out)["dirs"] == [
        {"name": "wiki", "state": "skipped", "pages": 0, "reason": reason, "subdirs": []}
    ]


def test_info_without_a_vault_names_the_four_ways(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "info") == (
        3,
        "",
        "mnemosyne: error: no vault found: pass --vault PATH, run inside a vault that has a .mnemosyne.toml, "
        f'set AION_VAULT, or set vault = "PATH" in {home}/.config/mnemosyne/config.toml\n',
    )


def test_info_with_a_broken_vault_config_exits_3(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vault / ".mnemosyne.toml").write_text("dirs = 3\n", encoding="utf-8")
    assert run(capsys, "wiki", "info", "--vault", str(vault)) == (
        3,
        "",
        f"mnemosyne: error: {vault}/.mnemosyne.toml: dirs must be a non-empty list of dir names, "
        'e.g. dirs = ["wiki"]\n',
    )


def test_info_usage_errors_exit_64(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "wiki", "info", "extra", "--vault", str(vault))
    assert (code, out) == (64, "")
    assert err.startswith("mnemosyne: error: unrecognized arguments: extra")


@pytest.mark.parametrize("vault_name", ["aion", "harness", "edge"])
def test_the_skipped_count_is_the_paths_lint_reports_as_never_searched(
    vault_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """info counts without reading a page; lint reads every page. They must agree, and
    info's page count must be what find lists."""
    root = build_edge_vault(tmp_path) if vault_name == "edge" else FIXTURES / vault_name
    code, out, _ = run(capsys, "wiki", "lint", "--json", "--vault", str(root))
    assert code in (0, 1)
    never_searched = {finding["path"] for finding in json.loads(out) if finding["code"] in UNSEARCHED}
    code, out, _ = run(capsys, "wiki", "info", "--json", "--vault", str(root))
    assert code == 0
    report = json.loads(out)
    scanned = {entry["name"] for entry in report["dirs"]}
    assert report["unsearched"] == len(never_searched - scanned)
    assert report["pages"] == len(main_find_all(capsys, root))
    assert vault_name != "edge" or report["unsearched"] > 5  # the comparison is not 0 == 0


def main_find_all(capsys: pytest.CaptureFixture[str], root: Path) -> list[str]:
    """Every page find lists: a keyword in every path (the '.md' of the file name)."""
    code, out, _ = run(capsys, "wiki", "find", ".md", "--limit", "0", "--json", "--vault", str(root))
    return [match["path"] for match in json.loads(out)] if code == 0 else []


def test_version_names_each_installed_package(capsys: pytest.CaptureFixture[str]) -> None:
    expected = [f"mnemosyne {version('mnemosyne-wiki-cli')}"]
    expected += [f"  {name} {version(name)}" for name in PACKAGES]
    expected.append(f"  Python {platform.python_version()} ({sys.executable})")
    assert run(capsys, "--version") == (0, "\n".join(expected) + "\n", "")


def test_version_says_when_a_package_is_not_installed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.metadata

    real = importlib.metadata.version

    def version_without_ingest(name: str) -> str:
        if name == "mnemosyne-wiki-ingest":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version_without_ingest)
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.splitlines()[4] == "  mnemosyne-wiki-ingest not installed"


#: What each change to a built index makes of it: the SQL, then info's state and --json's outdated.
OTHER_VERSIONS = {
    "code": (
        ["UPDATE meta SET value = 'an older mnemosyne' WHERE name = 'code'"],
        "written by another version (the next find, recall or wiki init rebuilds it)",
        True,
    ),
    "format": (
        ["PRAGMA user_version = 1"],
        "written by another version (the next find, recall or wiki init rebuilds it)",
        True,
    ),
    # Under the same format, said of a whole build only: one cut short is no more built than none.
    "half": (
        [
            "UPDATE meta SET value = 'an older mnemosyne' WHERE name = 'code'",
            "UPDATE meta SET value = 0 WHERE name = 'complete'",
        ],
        "not built yet (the next find, recall or wiki init builds it)",
        False,
    ),
}


@pytest.mark.parametrize("change", sorted(OTHER_VERSIONS))
def test_info_says_an_index_another_version_wrote_is_rebuilt_not_that_none_is_built(
    vault: Path, capsys: pytest.CaptureFixture[str], change: str
) -> None:
    """A whole build by other code (another mnemosyne, or an index format since changed) is
    no index find reads, but it is there: info says why it is not read."""
    statements, state, outdated = OTHER_VERSIONS[change]
    path = build_index(vault)
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
    code, out, err = run(capsys, "wiki", "info", "--vault", str(vault))
    assert (code, err) == (0, "")
    assert f"index: {path}, {state}\n" in out
    code, out, err = run(capsys, "wiki", "info", "--vault", str(vault), "--json")
    cache = json.loads(out)["cache"]
    assert (cache["complete"], cache["outdated"]) == (False, outdated)
