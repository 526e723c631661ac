"""A path pasted back into find finds its page, in every form find's output (or a shell)
gives it: a whole output line, an ``--absolute`` path (through a symlinked vault path
too), ``./path``, ``\\`` separators. Each answers exactly as the bare vault-relative path
does; a path outside the vault is a usage error naming the vault; keywords that merely
look like paths keep their meaning. Exact stdout, stderr and exit code through ``main``,
on small vaults in tmp_path (real symlinks)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemosyne_cli.app import main

PAGES = {
    "duckdb/remote-parquet.md": "---\ntitle: Remote Parquet\n---\nRead parquet over HTTP.\n",
    "duckdb/local.md": "---\ntitle: Local Files\n---\nRead local files.\n",
    # Quotes the page's path, so the bare path matches two pages: the order must hold too.
    "notes/links.md": "---\ntitle: Links\n---\n"
    "See duckdb/remote-parquet.md and ../guides/install.md.\nOn Windows: C:\\docs\\local.md\n",
    "index.md": "---\ntitle: Index\n---\nThe way in.\n",
}
BARE = "duckdb/remote-parquet.md"
#: What the bare path prints: the page itself, then the page that quotes its path.
BARE_OUTPUT = "duckdb/remote-parquet.md — Remote Parquet\nnotes/links.md — Links\n"


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A zero-config (tree) vault; its real path, as --absolute prints it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "vault"
    for rel_path, text in PAGES.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="utf-8")
    return Path(os.path.realpath(root))


def find(capsys: pytest.CaptureFixture[str], vault: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["wiki", "find", *argv, "--vault", str(vault)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_bare_path_finds_its_page_first(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert find(capsys, vault, BARE) == (0, BARE_OUTPUT, "")


def pasted_forms(vault: Path) -> dict[str, str]:
    return {
        "./path": f"./{BARE}",
        "backslashes": "duckdb\\remote-parquet.md",
        ".\\ and backslashes": ".\\duckdb\\remote-parquet.md",
        "a dot-dot part": "duckdb/../duckdb/remote-parquet.md",
        "an output line": f"{BARE} — Remote Parquet",
        "a --cat candidate line": f"  {BARE} — Remote Parquet",
        "an absolute path": f"{vault}/{BARE}",
        "an --absolute output line": f"{vault}/{BARE} — Remote Parquet",
    }


@pytest.mark.parametrize(
    "form",
    [
        "./path",
        "backslashes",
        ".\\ and backslashes",
        "a dot-dot part",
        "an output line",
        "a --cat candidate line",
        "an absolute path",
        "an --absolute output line",
    ],
)
@pytest.mark.parametrize("mode", [[], ["--json", "--matched"], ["--paths"], ["--absolute"], ["--cat"]])
def test_every_pasted_form_answers_as_the_bare_path(
    vault: Path, capsys: pytest.CaptureFixture[str], form: str, mode: list[str]
) -> None:
    pasted = pasted_forms(vault)[form]
    assert find(capsys, vault, pasted, *mode) == find(capsys, vault, BARE, *mode)


def test_a_pasted_form_with_another_keyword_answers_as_the_bare_path(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = (0, "duckdb/remote-parquet.md — Remote Parquet\n", "")
    assert find(capsys, vault, BARE, "http") == expected
    assert find(capsys, vault, f"{vault}/{BARE} — Remote Parquet", "http") == expected


def test_the_line_find_prints_finds_its_page_when_pasted_back(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for mode in ([], ["--absolute"]):
        _, out, _ = find(capsys, vault, "parquet", *mode)
        line = out.splitlines()[0]
        assert find(capsys, vault, line, *mode)[1].splitlines()[0] == line


def test_a_root_page_is_found_by_its_line(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # No separator in the path: the line form is known by the page suffix before the dash.
    assert find(capsys, vault, "index.md — Index") == find(capsys, vault, "index.md") == (0, "index.md — Index\n", "")


def test_an_absolute_path_through_a_symlinked_vault_finds_its_page(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link-to-vault"
    link.symlink_to(vault)
    above = tmp_path / "link-above"
    above.symlink_to(vault.parent)
    for pasted in (f"{link}/{BARE}", f"{above}/vault/{BARE}", f"{link}/{BARE} — Remote Parquet"):
        assert find(capsys, vault, pasted) == (0, BARE_OUTPUT, "")
    # --vault given through the link answers alike: the vault is compared by its real path.
    code = main(["wiki", "find", f"{vault}/{BARE}", "--vault", str(link)])
    assert (code, capsys.readouterr().out) == (0, BARE_OUTPUT)


def test_a_page_that_is_gone_misses_as_its_bare_path_does(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = (1, "", "no wiki page matches 'duckdb/gone.md'\n")
    assert find(capsys, vault, "duckdb/gone.md") == expected
    assert find(capsys, vault, f"{vault}/duckdb/gone.md — Gone") == expected
    assert find(capsys, vault, "./duckdb/gone.md") == expected


def test_an_absolute_path_outside_the_vault_is_a_usage_error(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for pasted in (f"{elsewhere}/page.md", f"{elsewhere}/page.md — Page"):
        assert find(capsys, vault, pasted) == (
            64,
            "",
            f"mnemosyne: error: '{elsewhere}/page.md' is outside the vault '{vault}': "
            "pass the path of a page inside the vault, or --vault the vault that holds it\n",
        )


@pytest.mark.parametrize("pasted", ["../page.md", "./../page.md", "duckdb/../../page.md", "..\\page.md"])
def test_a_relative_path_leaving_the_vault_is_a_usage_error(
    vault: Path, capsys: pytest.CaptureFixture[str], pasted: str
) -> None:
    shown = pasted.replace("\\", "/")
    assert find(capsys, vault, pasted) == (
        64,
        "",
        f"mnemosyne: error: '{shown}' is outside the vault '{vault}' (a relative path is read from the "
        "vault root, as find prints it): pass the path of a page inside the vault, or --vault the vault "
        "that holds it\n",
    )


@pytest.mark.parametrize(
    ("keyword", "output"),
    [
        # A leading '/' anchors a substring at a dir boundary; '/' holds no such file.
        ("/local.md", "duckdb/local.md — Local Files\n"),
        # A link quoted in a page: no guides/ dir beside the vault, so not a path of one.
        ("../guides/install.md", "notes/links.md — Links\n"),
        # No page suffix before the dash: a phrase, not a line of find's output.
        ("parquet — over", ""),
        # No page suffix at all: a keyword as typed.
        ("./local", ""),
        ("duckdb\\local", ""),
        # A Windows path quoted in a page: no path of this machine, so matched as typed.
        ("C:\\docs\\local.md", "notes/links.md — Links\n"),
    ],
)
def test_keywords_that_only_look_like_paths_keep_their_meaning(
    vault: Path, capsys: pytest.CaptureFixture[str], keyword: str, output: str
) -> None:
    code, out, _ = find(capsys, vault, keyword)
    assert (code, out) == (0 if output else 1, output)


def test_a_backslash_that_is_part_of_a_file_name_stays_one(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # On POSIX '\' is a name character: the vault's own file by that name is found.
    (vault / "notes" / "a\\b.md").write_text("---\ntitle: Backslash\n---\n", encoding="utf-8")
    assert find(capsys, vault, "notes/a\\b.md") == (0, "notes/a\\b.md — Backslash\n", "")


def test_a_line_form_under_a_flat_layout_uses_its_suffixes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A layout searching .txt pages: a pasted line of one ends in .txt.
    root = tmp_path / "v"
    (root / "wiki").mkdir(parents=True)
    (root / ".mnemosyne.toml").write_text('dirs = ["wiki"]\nsuffixes = [".txt"]\n', encoding="utf-8")
    (root / "wiki" / "plain.txt").write_text("plain words\n", encoding="utf-8")
    expected = (0, "wiki/plain.txt — plain\n", "")
    assert find(capsys, root, "wiki/plain.txt") == expected
    assert find(capsys, root, "wiki/plain.txt — plain") == expected
    assert find(capsys, root, "./wiki/plain.txt") == expected


def test_a_line_pasted_from_another_vault_is_a_usage_error(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An output line is a pasted path whatever it names, even a dir this machine lacks.
    gone = tmp_path / "gone"
    for line, shown in ((f"{gone}/{BARE} — Remote Parquet", f"{gone}/{BARE}"), ("../x.md — X", "../x.md")):
        code, out, err = find(capsys, vault, line)
        assert (code, out) == (64, "")
        assert err.startswith(f"mnemosyne: error: '{shown}' is outside the vault '{vault}'")
