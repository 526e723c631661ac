"""Layouts through the CLI: any folder searched as it lies on disk, the one stderr line a
miss adds about the markdown files a layout leaves out (exact output), nested --dir for
every command, and ``wiki init``."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from index_harness import index_file, index_is_complete

import mnemosyne_core.cache
from mnemosyne_cli.app import main

PAGE = "---\ntitle: {title}\nupdated: 2026-01-02\ntags: [{tag}]\n---\nbody {title}\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel_path, text in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A docs repo shaped like the Astro docs: .mdx pages per language, no config."""
    return write(
        tmp_path / "docs",
        {
            "src/content/docs/en/guides/images.mdx": PAGE.format(title="Images", tag="media"),
            "src/content/docs/en/guides/deep/fonts.md": PAGE.format(title="Fonts", tag="media"),
            "src/content/docs/fr/guides/images.mdx": PAGE.format(title="Images (fr)", tag="media"),
            "node_modules/pkg/readme.md": PAGE.format(title="Images dependency", tag="x"),
            ".gitignore": "node_modules/\n",
        },
    )


# --- any folder, no config -------------------------------------------------------------------


def test_find_on_a_docs_tree_with_nested_dir(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "images", "--vault", f"{docs}/src/content/docs/en", "--dir", "guides") == (
        0,
        "guides/images.mdx — Images\n",
        "",
    )
    assert run(capsys, "wiki", "find", "images", "--vault", str(docs), "--paths") == (
        0,
        "src/content/docs/en/guides/images.mdx\nsrc/content/docs/fr/guides/images.mdx\n",
        "",
    )


def test_every_command_takes_a_nested_dir(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = str(docs)
    nested = "src/content/docs/en/guides/deep"
    assert run(capsys, "wiki", "find", "fonts", "--vault", vault, "--dir", nested) == (
        0,
        f"{nested}/fonts.md — Fonts\n",
        "",
    )
    code, out, err = run(capsys, "wiki", "recall", "media", "--vault", vault, "--dir", nested)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"{nested}/fonts.md"
    # The other pages lie outside this run's --dir; the ignored node_modules/ is no finding.
    # The English page and its French translation are one page: one line names both dirs.
    assert run(capsys, "wiki", "lint", "--vault", vault, "--dir", nested) == (
        1,
        "src/content/docs/en/guides/images.mdx\tunscanned-dir\tin src/, which this run's --dir leaves out; "
        "add --dir src; the same in its versions in src/content/docs/fr/\n",
        "1 finding in 1 path\n",
    )
    code, out, err = run(capsys, "wiki", "info", "--vault", vault, "--dir", nested)
    assert (code, err) == (0, "")
    assert f"  {nested}/: 1 page\n" in out


def test_recall_searches_sub_articles_in_a_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(
        tmp_path / "v",
        {
            ".mnemosyne.toml": 'dirs = ["wiki"]\ndepth = "tree"\n',
            "wiki/auth.md": PAGE.format(title="Auth", tag="auth"),
            "wiki/auth/oauth-device-flow.md": PAGE.format(title="OAuth device flow", tag="auth"),
        },
    )
    code, out, err = run(capsys, "wiki", "recall", "auth", "--vault", str(vault))
    assert (code, err) == (0, "")
    assert out.splitlines()[:2] == ["wiki/auth.md", "wiki/auth/oauth-device-flow.md"]


def test_the_home_dir_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = write(tmp_path / "home", {"notes/a.md": "a"})
    monkeypatch.setenv("HOME", str(home))
    assert run(capsys, "wiki", "find", "a", "--vault", str(home)) == (
        3,
        "",
        f"mnemosyne: error: vault '{home}' is your home dir, not a notes folder, and has no .mnemosyne.toml nor "
        "any default dir (atlas, hades, mnemosyne, proteus, metis, apollo, hermes, hephaistos, athena, analyses), "
        "so find will not search all of it: pass --vault the folder that holds your notes, or run "
        "'mnemosyne wiki init' there\n",
    )


# --- a miss names what the layout leaves out ----------------------------------------------


@pytest.fixture
def flat(tmp_path: Path) -> Path:
    """An Aion vault with a nested page and a page of another suffix."""
    return write(
        tmp_path / "aion",
        {
            "atlas/a.md": PAGE.format(title="Alpha", tag="x"),
            "atlas/sub/kestrel.md": PAGE.format(title="Kestrel", tag="birds"),
            "atlas/kestrel-notes.mdx": PAGE.format(title="Kestrel notes", tag="birds"),
        },
    )


NOTE = (
    'not searched: 2 markdown files in the searched dirs: 1 in sub-dirs (set depth = "tree" in .mnemosyne.toml), '
    '1 ending in .mdx (set suffixes = [".md", ".mdx"] in .mnemosyne.toml); wiki lint lists them\n'
)


def test_a_find_miss_says_what_the_layout_leaves_out(flat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "kestrel", "--vault", str(flat)) == (
        1,
        "",
        "no wiki page matches 'kestrel'\n" + NOTE,
    )


def count_listings(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times each dir is listed (os.scandir) in this process from now on; the page
    cache's own dir, which a write of the cache lists for temporaries left by a killed
    writer, is not the vault's and does not count."""
    listings: dict[str, int] = {}
    real_scandir = os.scandir
    cache_dir = mnemosyne_core.cache.cache_dir_path(os.environ)

    def scandir(path: str) -> object:
        if os.fspath(path) != cache_dir:
            listings[os.fspath(path)] = listings.get(os.fspath(path), 0) + 1
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return listings


def test_a_flat_miss_lists_each_dir_once(
    flat: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The note's files are found in the search's own listing (find) and in recall: only
    the sub-dir the flat layout never enters is listed, once."""
    vault = os.path.realpath(flat)
    listings = count_listings(monkeypatch)
    assert run(capsys, "wiki", "find", "zyzzyva", "--vault", str(flat)) == (
        1,
        "",
        "no wiki page matches 'zyzzyva'\n" + NOTE,
    )
    assert listings == {vault: 1, f"{vault}/atlas": 1, f"{vault}/atlas/sub": 1}
    listings.clear()
    assert run(capsys, "wiki", "recall", "zyzzyva", "--vault", str(flat)) == (
        0,
        "No wiki entries matched zyzzyva\n",
        NOTE,
    )
    assert listings == {vault: 1, f"{vault}/atlas": 1, f"{vault}/atlas/sub": 1}


def test_a_flat_miss_counts_no_page_of_a_searched_dir_inside_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``dirs = [".", "atlas"]`` and one level each, atlas's pages are searched (not
    "in sub-dirs" of the root) and the page below atlas is counted once, not once per
    searched dir above it."""
    vault = write(
        tmp_path / "v",
        {
            ".mnemosyne.toml": 'dirs = [".", "atlas"]\n',
            "root.md": "alpha",
            "atlas/a.md": "alpha",
            "atlas/sub/b.md": "alpha",
        },
    )
    assert run(capsys, "wiki", "find", "alpha", "--vault", str(vault), "--paths") == (0, "atlas/a.md\nroot.md\n", "")
    assert run(capsys, "wiki", "find", "zyzzyva", "--vault", str(vault)) == (
        1,
        "",
        "no wiki page matches 'zyzzyva'\nnot searched: 1 markdown file in the searched dirs: "
        '1 in sub-dirs (set depth = "tree" in .mnemosyne.toml); wiki lint lists them\n',
    )


def test_a_tree_miss_lists_what_a_match_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write(
        tmp_path / "v",
        {
            ".mnemosyne.toml": 'depth = "tree"\nsuffixes = [".md"]\n',
            "notes/a.md": "alpha",
            "notes/deep/b.markdown": "alpha",
            "notes/deep/er/c.md": "alpha",
        },
    )
    listings = count_listings(monkeypatch)
    assert run(capsys, "wiki", "find", "alpha", "--vault", str(vault), "--paths")[0] == 0
    found = dict(listings)
    listings.clear()
    assert run(capsys, "wiki", "find", "zyzzyva", "--vault", str(vault)) == (
        1,
        "",
        "no wiki page matches 'zyzzyva'\nnot searched: 1 markdown file in the searched dirs: "
        '1 ending in .markdown (set suffixes = [".md", ".markdown"] in .mnemosyne.toml); wiki lint lists them\n',
    )
    assert listings == found


def test_a_find_miss_with_two_keywords_puts_the_note_after_the_counts(
    flat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "wiki", "find", "kestrel", "alpha", "--vault", str(flat), "--json") == (
        1,
        "[]\n",
        "no wiki page matches 'kestrel alpha'\n  'kestrel': 0 pages\n  'alpha': 1 page\n" + NOTE,
    )


def test_a_cat_miss_says_it_too(flat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "kestrel", "--cat", "--vault", str(flat)) == (
        2,
        "",
        "no wiki page matches 'kestrel'\n" + NOTE + "--cat needs exactly one match\n",
    )


def test_a_recall_miss_says_it_too(flat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "recall", "birds", "--vault", str(flat)) == (
        0,
        "No wiki entries matched birds\n",
        NOTE,
    )
    assert run(capsys, "wiki", "recall", "birds", "--vault", str(flat), "--json")[2] == (
        "No wiki entries matched birds\n" + NOTE
    )


def test_only_nested_files_name_only_depth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(tmp_path / "v", {"atlas/a.md": "a", "atlas/x/y/z.md": "kestrel"})
    assert run(capsys, "wiki", "find", "kestrel", "--vault", str(vault)) == (
        1,
        "",
        "no wiki page matches 'kestrel'\nnot searched: 1 markdown file in the searched dirs: "
        '1 in sub-dirs (set depth = "tree" in .mnemosyne.toml); wiki lint lists them\n',
    )


def test_only_other_suffixes_in_a_tree_name_only_suffixes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(
        tmp_path / "v",
        {
            ".mnemosyne.toml": 'depth = "tree"\nsuffixes = [".md"]\n',
            "notes/a.md": "a",
            "notes/deep/k.markdown": "kestrel",
        },
    )
    assert run(capsys, "wiki", "find", "kestrel", "--vault", str(vault)) == (
        1,
        "",
        "no wiki page matches 'kestrel'\nnot searched: 1 markdown file in the searched dirs: "
        '1 ending in .markdown (set suffixes = [".md", ".markdown"] in .mnemosyne.toml); wiki lint lists them\n',
    )


def test_a_miss_in_a_vault_that_leaves_nothing_out_adds_nothing(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (docs / ".gitignore").unlink()  # what it excludes is counted on a miss
    assert run(capsys, "wiki", "find", "zzz", "--vault", str(docs)) == (1, "", "no wiki page matches 'zzz'\n")


def test_a_found_page_never_pays_for_the_count(
    flat: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import mnemosyne_core.layout

    def refuse(*_args: object) -> None:
        raise AssertionError("a found page counted the files the layout leaves out")

    monkeypatch.setattr(mnemosyne_core.layout, "miss_note", refuse)
    assert run(capsys, "wiki", "find", "alpha", "--vault", str(flat)) == (0, "atlas/a.md — Alpha\n", "")


# --- wiki init ---------------------------------------------------------------------------

TREE_TOML = """\
# .mnemosyne.toml: this dir is a mnemosyne vault. Every mnemosyne command run in it, or
# in any dir below it, uses it (written by `mnemosyne wiki init`; docs/commands.md,
# "Layouts", explains each key).

# The dirs find searches, relative to this dir ("." is this dir itself).
dirs = ["."]
# "flat": only the files directly in each dir; "tree": the whole subtree, without hidden
# files and dirs and what .gitignore and .ignore files exclude.
depth = "tree"
# The endings a page's file name has (exact case).
suffixes = [".md", ".markdown", ".mdx"]
# Gitignore-style patterns, relative to this dir, never searched, e.g. ["drafts/", "*.draft.md"].
exclude = []

[lint]
# Notes named by their file names and dated by none, as in Obsidian or a docs site: lint
# leaves out the checks for a title and an updated date in every frontmatter (remove a
# code to bring its check back).
ignore = ["no-frontmatter", "missing-title", "missing-updated"]

[order]
# Versions or translations of a page (the same path under sibling dirs such as 7.4/ and
# 7.6/, or en/ and it/) tie in find's order but for their path: the pages under these dirs
# come first, in this order. wiki init chose the highest release and the language the
# others repeat most.
prefer = ["src/content/docs/en/"]
"""
#: What wiki init says of the [order] it writes for the docs tree.
TREE_PREFER = (
    "versions of a page found: find puts the one under src/content/docs/en/ first (the language the others repeat "
    "most); edit [order] prefer to change it\n"
)


def test_init_dry_run_prints_and_writes_nothing(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "init", str(docs), "--dry-run") == (0, TREE_TOML, TREE_PREFER)
    assert not (docs / ".mnemosyne.toml").exists()


def test_init_writes_the_tree_and_every_command_inside_finds_it(
    docs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "wiki", "init", str(docs)) == (
        0,
        f"{docs}/.mnemosyne.toml\n",
        "a tree layout of . (.md .markdown .mdx): 3 pages now; edit the file to change it\n" + TREE_PREFER,
    )
    assert (docs / ".mnemosyne.toml").read_text(encoding="utf-8") == TREE_TOML
    assert [name for name in os.listdir(docs) if name.startswith(".mnemosyne-init")] == []
    assert index_is_complete(docs)  # built in the foreground: the first find reads it
    monkeypatch.chdir(docs / "src" / "content" / "docs" / "fr")
    assert run(capsys, "wiki", "find", "images", "--paths") == (
        0,
        "src/content/docs/en/guides/images.mdx\nsrc/content/docs/fr/guides/images.mdx\n",
        "",
    )


def test_init_writes_the_aion_dirs_it_finds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(tmp_path / "aion", {"atlas/a.md": "a", "hermes/b.md": "b"})
    code, out, err = run(capsys, "wiki", "init", str(vault))
    assert (code, out, err) == (
        0,
        f"{vault}/.mnemosyne.toml\n",
        "a flat layout of atlas, hermes (.md): 2 pages now; edit the file to change it\n",
    )
    text = (vault / ".mnemosyne.toml").read_text(encoding="utf-8")
    assert 'dirs = ["atlas", "hermes"]\n' in text
    assert 'depth = "flat"\n' in text
    assert 'suffixes = [".md"]\n' in text
    assert "[lint]" not in text  # an Aion vault keeps every check


def test_init_beside_a_look_alike_dir_names_the_markdown_its_layout_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # stdout and the exit code keep their contract; stderr says, as a miss would, what the
    # written layout leaves out and the setting that takes it in (--dry-run too).
    vault = write(tmp_path / "repo", {"apollo/setup.md": "# Setup\n", "pages/Flashcards.md": "# F\n", "a.md": "x"})
    note = (
        "not searched: 2 markdown files: 2 outside the default (Aion) dirs, in pages/, the vault root (the vault "
        'has apollo/, so it is searched as an Aion vault; set dirs = ["."] and depth = "tree" in .mnemosyne.toml '
        "to search the whole folder); wiki lint lists them\n"
    )
    code, out, err = run(capsys, "wiki", "init", str(vault), "--dry-run")
    assert (code, err) == (0, note)
    assert 'dirs = ["apollo"]\n' in out
    assert run(capsys, "wiki", "init", str(vault)) == (
        0,
        f"{vault}/.mnemosyne.toml\n",
        "a flat layout of apollo (.md): 1 page now; edit the file to change it\n" + note,
    )


def test_init_never_overwrites(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (docs / ".mnemosyne.toml").write_text("# mine\n", encoding="utf-8")
    message = (
        f"mnemosyne: error: {docs}/.mnemosyne.toml exists already, and wiki init never overwrites one: "
        "edit it, or remove it and run 'mnemosyne wiki init' again\n"
    )
    assert run(capsys, "wiki", "init", str(docs)) == (4, "", message)
    assert run(capsys, "wiki", "init", str(docs), "--dry-run") == (4, "", message)
    assert (docs / ".mnemosyne.toml").read_text(encoding="utf-8") == "# mine\n"


def test_init_refuses_a_non_vault_and_a_missing_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "init", "/") == (
        3,
        "",
        "mnemosyne: error: '/' is the file system root, not a notes folder: run 'mnemosyne wiki init PATH' "
        "with the folder that holds your notes\n",
    )
    assert run(capsys, "wiki", "init", str(tmp_path / "nope")) == (
        3,
        "",
        f"mnemosyne: error: vault '{tmp_path}/nope' does not exist: pass --vault PATH to your vault root\n",
    )


# --- the committed nested vaults: lint, info and recall, exactly ----------------------------

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "vaults"
ZERO_CONFIG_IGNORED = (
    "--select, --ignore, [lint] ignore, and zero config leaves out no-frontmatter, missing-title, missing-updated"
)


def test_lint_on_the_obsidian_vault_leaves_out_what_it_never_chose(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "lint", "--vault", str(FIXTURES / "obsidian")) == (
        0,
        "",
        "no findings reported; findings left out: 4 missing-updated, 4 no-frontmatter, 3 missing-title "
        f"({ZERO_CONFIG_IGNORED})\n",
    )
    code, out, _ = run(capsys, "wiki", "lint", "--vault", str(FIXTURES / "obsidian"), "--select", "missing-title")
    assert (code, out.splitlines()) == (
        1,
        [
            "Projects/Archive/Old Kestrel Plan.md\tmissing-title\tno title; find shows the file name stem",
            "Templates/Daily Template.md\tmissing-title\tno title; find shows the file name stem",
            "Zettelkasten/202401151200 Atomic notes.md\tmissing-title\tno title; find shows the file name stem",
        ],
    )


def test_lint_on_the_docs_tree(capsys: pytest.CaptureFixture[str]) -> None:
    # The English "Images" and its French translation are versions of one page: their
    # shared title is no duplicate.
    assert run(capsys, "wiki", "lint", "--vault", str(FIXTURES / "docs-tree")) == (
        0,
        "",
        f"no findings reported; findings left out: 7 missing-updated, 1 no-frontmatter ({ZERO_CONFIG_IGNORED})\n",
    )


def test_lint_on_the_harness_tree_lists_the_unsearched_suffix(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "lint", "--vault", str(FIXTURES / "harness-tree")) == (
        1,
        "wiki/sandbox/notes.mdx\tunsearched-suffix\tends in '.mdx', which the layout does not search; "
        'set suffixes = [".md", ".mdx"] in .mnemosyne.toml to search it\n',
        "1 finding in 1 path\n",
    )


def test_info_on_the_obsidian_vault(capsys: pytest.CaptureFixture[str]) -> None:
    vault = FIXTURES / "obsidian"
    code, out, err = run(capsys, "wiki", "info", "--vault", str(vault))
    assert (code, err) == (0, "")
    assert out.splitlines()[2:14] == [
        "config files: none",
        "layout: tree (whole subtrees), suffixes .md .markdown .mdx; zero config: no .mnemosyne.toml layout "
        "and none of the default dirs",
        "scanned dirs (the default):",
        "  ./: 9 pages",
        "    Daily Notes/: 2 pages",
        "    Notes/: 1 page",
        "    Projects/: 2 pages",
        "    Références/: 1 page",
        "    Templates/: 1 page",
        "    Zettelkasten/: 1 page",
        "pages: 9",
        "skipped: none",
    ]


def test_recall_on_the_harness_tree_reads_sub_articles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "wiki", "recall", "auth", "--vault", str(FIXTURES / "harness-tree"), "--memory-dir", str(tmp_path)
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[:3] == ["wiki/auth/oauth-device-flow.md", "wiki/auth.md", "wiki/auth/github-token-scope.md"]
    assert out.splitlines()[-1] == "3 matches; read 3: oauth-device-flow, auth, github-token-scope; 0 not read"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_init_draws_the_index_build_on_a_terminal_and_names_the_index(docs: Path) -> None:
    from mnemosyne_cli.environment import Environment

    out, err = io.StringIO(), _Terminal()
    assert main(["wiki", "init", str(docs)], Environment(stdout=out, stderr=err)) == 0
    lines = err.getvalue().split("\n")
    assert lines[:2] == [
        "a tree layout of . (.md .markdown .mdx): 3 pages now; edit the file to change it",
        *TREE_PREFER.splitlines(),
    ]
    bar = lines[2]
    assert bar.startswith("\rindexing [..............................] 0/3 pages\x1b[K")
    assert bar.endswith(f"\r\x1b[Kindex: 3 pages in {index_file(docs)}")
    assert "\rindexing [##############################] 3/3 pages\x1b[K" in bar
    assert lines[3:] == [""]
    assert index_is_complete(docs)
