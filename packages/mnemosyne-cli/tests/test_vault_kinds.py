"""Vaults nobody here wrote, as a new user points find at them: a folder with no page at
all, dirs merely named like the default (Aion) dirs, pages that ignore files exclude, and
docs repeated in versioned copies. Exact stdout, stderr and exit code through ``main``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reliability_vault import KNOWN_ITEM_VAULT

from mnemosyne_cli.app import main
from mnemosyne_contract import ExitCode


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(root: Path, files: dict[str, str]) -> str:
    for rel_path, text in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return str(root)


# --- a folder with no page at all: a vault error, never "no such page" ---


def no_page_error(vault: str, searched: str) -> str:
    """find's vault error for a vault whose searched dirs hold no page: ``searched`` is
    what it says it searched, from the dirs to the suffixes."""
    return (
        f"mnemosyne: error: vault '{vault}' holds no page: find searched {searched} and found none; pass "
        "--vault the folder that holds your notes, or name its dirs with --dir ('mnemosyne wiki info' shows "
        "what is searched)\n"
    )


@pytest.mark.parametrize("as_json", [False, True])
def test_a_folder_without_markdown_is_a_vault_error_naming_what_was_searched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    vault = write(tmp_path, {"notes.txt": "flashcards\n", "src/main.rs": "fn main() {}\n"})
    argv = ["wiki", "find", "flashcards", "--vault", vault, *(["--json"] if as_json else [])]
    searched = "./ and every dir below for files ending in .md, .markdown or .mdx"
    assert run(capsys, *argv) == (ExitCode.VAULT_ERROR, "", no_page_error(vault, searched))


def test_an_empty_flat_layout_says_which_dirs_and_suffix_it_searched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default dirs it has, flat, .md; the .mdx it leaves out is named as on a miss."""
    vault = write(tmp_path, {"atlas/intro.mdx": "# Intro\n"})
    (tmp_path / "hermes").mkdir()
    searched = "atlas/, hermes/ (only the files directly in each) for files ending in .md"
    assert run(capsys, "wiki", "find", "intro", "--vault", vault) == (
        ExitCode.VAULT_ERROR,
        "",
        no_page_error(vault, searched) + "not searched: 1 markdown file in the searched dirs: 1 ending in .mdx "
        '(set suffixes = [".md", ".mdx"] in .mnemosyne.toml); wiki lint lists them\n',
    )


def test_cat_on_a_folder_without_pages_is_the_same_vault_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write(tmp_path, {"README.rst": "x\n"})
    code, out, err = run(capsys, "wiki", "find", "x", "--cat", "--vault", vault)
    assert (code, out) == (ExitCode.VAULT_ERROR, "")
    assert err.startswith(f"mnemosyne: error: vault '{vault}' holds no page: ")


@pytest.mark.parametrize("as_json", [False, True])
def test_a_dir_without_pages_is_a_miss_that_says_what_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    # The call names a dir the vault has: the question was asked well, and the answer is
    # no, with what the dir holds instead (hidden files are no candidates, so not counted).
    files = {"book/a.md": "# A\n", "po/de.po": "", "po/fr.po": "", "po/.keep": "", "po/old/it.po": ""}
    vault = write(tmp_path, {**files, "empty/.keep": ""})
    argv = ["wiki", "find", "po", "--vault", vault, "--dir", "po", "--dir", "empty", *(["--json"] * as_json)]
    assert run(capsys, *argv) == (
        ExitCode.NO_MATCH,
        "[]\n" if as_json else "",
        "no wiki page matches 'po'\n"
        "no page in 'po': it holds 3 files in it and below, none ending in .md, .markdown or .mdx\n"
        "no page in 'empty': it holds no file\n",
    )
    Path(vault, ".mnemosyne.toml").write_text('dirs = ["book"]\n', encoding="utf-8")
    assert run(capsys, "wiki", "find", "po", "x", "--vault", vault, "--dir", "po", "--cat") == (
        ExitCode.CAT_NEEDS_ONE_MATCH,
        "",
        "no wiki page matches 'po x'\n  'po': 0 pages\n  'x': 0 pages\n"
        "no page in 'po': it holds 2 files directly, none ending in .md\n--cat needs exactly one match\n",
    )


def test_a_dir_that_holds_the_home_dir_is_named_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Searching it would search the home dir: that is the reason, not a system dir.
    vault = write(tmp_path / "users", {"me/notes/a.md": "a", "you/b.md": "b"})
    monkeypatch.setenv("HOME", str(tmp_path / "users" / "me"))
    assert run(capsys, "wiki", "find", "a", "--vault", vault) == (
        ExitCode.VAULT_ERROR,
        "",
        f"mnemosyne: error: vault '{vault}' is a dir that holds your home dir, not a notes folder, and has no "
        ".mnemosyne.toml nor any default dir (atlas, hades, mnemosyne, proteus, metis, apollo, hermes, hephaistos, "
        "athena, analyses), so find will not search all of it: pass --vault the folder that holds your notes, or "
        "run 'mnemosyne wiki init' there\n",
    )


def test_a_vault_with_one_page_still_misses_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(tmp_path, {"a.md": "# A\n"})
    assert run(capsys, "wiki", "find", "zzz", "--vault", vault) == (
        ExitCode.NO_MATCH,
        "",
        "no wiki page matches 'zzz'\n",
    )


# --- a dir merely named like a default dir, and what ignore files exclude ---

LOOK_ALIKE_NOTE = (
    "not searched: 1 markdown file: 1 outside the default (Aion) dirs, in pages/ (the vault has apollo/, so it is "
    'searched as an Aion vault; set dirs = ["."] and depth = "tree" in .mnemosyne.toml to search the whole '
    "folder); wiki lint lists them\n"
)


def test_a_dir_named_like_a_default_dir_never_narrows_a_miss_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write(tmp_path, {"pages/Flashcards.md": "# Flashcards\n", "apollo/setup.md": "# Setup\n"})
    assert run(capsys, "wiki", "find", "flashcards", "--vault", vault) == (
        ExitCode.NO_MATCH,
        "",
        "no wiki page matches 'flashcards'\n" + LOOK_ALIKE_NOTE,
    )
    # info says the same, word for word; the setting it names finds the page.
    code, out, _ = run(capsys, "wiki", "info", "--vault", vault)
    assert code == ExitCode.OK
    assert LOOK_ALIKE_NOTE in out
    (tmp_path / ".mnemosyne.toml").write_text('dirs = ["."]\ndepth = "tree"\n', encoding="utf-8")
    assert run(capsys, "wiki", "find", "flashcards", "--vault", vault) == (
        ExitCode.OK,
        "pages/Flashcards.md — Flashcards\n",
        "",
    )


def test_a_miss_counts_what_gitignore_excludes_and_info_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write(tmp_path, {"Welcome.md": "# Welcome\n", "Private/Passwords.md": "x\n", ".gitignore": "Private/\n"})
    note = (
        "not searched: 1 markdown file in the searched dirs: 1 excluded by .gitignore "
        "(find skips them, as rg does; a '!' rule there takes one back)\n"
    )
    assert run(capsys, "wiki", "find", "passwords", "--vault", vault) == (
        ExitCode.NO_MATCH,
        "",
        "no wiki page matches 'passwords'\n" + note,
    )
    assert note in run(capsys, "wiki", "info", "--vault", vault)[1]


# --- docs repeated in versioned copies: only equal pages under sibling dirs are copies ---

DOCUSAURUS = KNOWN_ITEM_VAULT.parent / "docusaurus"
WHERE = "(the same bytes, or the same text after the frontmatter)"


def test_lint_names_the_copies_of_a_release_that_also_holds_changed_pages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # version-1.0/ repeats three pages of version-2.0/ byte for byte and changed its
    # installation page: an exclude of it would drop that page, so none is offered. docs/
    # (Docusaurus's next release) and versioned_docs/version-X/ hold versions of one page:
    # their shared titles are no duplicates, and a finding about them is said once, at the
    # highest release, naming the other versions' dirs.
    assert run(capsys, "wiki", "lint", "--vault", str(DOCUSAURUS)) == (
        ExitCode.NO_MATCH,
        "blog/2024-05-01-introduction.md\tduplicate-title\ttitle 'Introduction' is also the title of docs/intro.md, "
        "versioned_docs/version-1.0/intro.md, versioned_docs/version-2.0/intro.md\n"
        "versioned_docs/version-1.0\tduplicate-title\t3 of the 4 pages here are copies of the pages at the same "
        f"path in versioned_docs/version-2.0/ {WHERE}: guides/configuration.mdx, guides/deployment.md, intro.md; "
        "an exclude of versioned_docs/version-1.0/ would also drop the 1 that is no copy, so none is suggested: to "
        "leave out the copies alone, exclude them by name\n"
        "versioned_docs/version-2.0/intro.md\tduplicate-title\ttitle 'Introduction' is also the title of "
        "blog/2024-05-01-introduction.md; the same in its versions in docs/, versioned_docs/version-1.0/\n",
        "3 findings in 3 paths; findings left out: 5 missing-updated (--select, --ignore, [lint] ignore, and zero "
        "config leaves out no-frontmatter, missing-title, missing-updated)\n",
    )


def test_info_names_the_copies_and_offers_no_exclude_that_drops_other_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "wiki", "info", "--vault", str(DOCUSAURUS))
    assert code == ExitCode.OK
    assert [line for line in out.splitlines() if line.startswith("copies: ")] == [
        "copies: versioned_docs/version-1.0/ copies 3 of its 4 pages from versioned_docs/version-2.0/ "
        "(guides/configuration.mdx, guides/deployment.md, intro.md), and an exclude of it would drop 1 page that "
        "is no copy; find lists every copy, and no dir is all copies: no exclude is suggested"
    ]
    # wiki init prefers the highest release, and find puts its page first among the copies.
    vault = tmp_path / "site"
    shutil.copytree(DOCUSAURUS, vault)
    assert run(capsys, "wiki", "init", str(vault)) == (
        ExitCode.OK,
        f"{vault}/.mnemosyne.toml\n",
        "a tree layout of . (.md .markdown .mdx): 14 pages now; edit the file to change it\n"
        "versions of a page found: find puts the one under versioned_docs/version-2.0/ first (the highest release); "
        "edit [order] prefer to change it\n",
    )
    assert run(capsys, "wiki", "find", "installation", "--vault", str(vault)) == (
        ExitCode.OK,
        "versioned_docs/version-2.0/installation.md — Installation\n"
        "docs/installation.md — Installation\n"
        "versioned_docs/version-1.0/installation.md — Installation\n",
        "",
    )
    prefer = "prefer: versioned_docs/version-2.0/ (their pages come first among the versions of a page; [order] "
    assert prefer + "prefer in .mnemosyne.toml)" in run(capsys, "wiki", "info", "--vault", str(vault))[1]
    # An exclude hides pages from a miss no more than an ignore file does: the miss counts them.
    config = vault / ".mnemosyne.toml"
    config.write_text(config.read_text().replace("exclude = []", 'exclude = ["versioned_docs/"]'))
    assert run(capsys, "wiki", "find", "zzz", "--vault", str(vault)) == (
        ExitCode.NO_MATCH,
        "",
        "no wiki page matches 'zzz'\nnot searched: 8 markdown files in the searched dirs: 8 left out by exclude in "
        ".mnemosyne.toml (remove a pattern there to search them)\n",
    )
