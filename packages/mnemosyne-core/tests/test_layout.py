"""Layouts: the keys of .mnemosyne.toml that say which files are pages, the zero-config
tree, the tree walk (hidden entries, .gitignore and .ignore, exclude) checked against git's
own answer, and the server's index, which serves only the flat layout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core import VaultError, search
from mnemosyne_core.backend import FindRequest
from mnemosyne_core.config import (
    DEFAULT_SCANNED_DIRS,
    LAYOUT_FROM_DEFAULT,
    LAYOUT_FROM_VAULT_CONFIG,
    LAYOUT_FROM_ZERO_CONFIG,
    Layout,
    vault_layout,
)
from mnemosyne_core.layout import miss_note
from mnemosyne_core.vault import left_out_files, scan


def build(root: Path, files: dict[str, str]) -> str:
    for rel_path, text in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return os.path.realpath(root)


def listed(vault: str, dirs: list[str] | None = None) -> list[str]:
    return sorted(page.rel_path for page in scan(vault, dirs).pages)


# --- which layout, and where it came from ------------------------------------------------


def test_a_vault_with_a_default_dir_keeps_the_aion_layout(tmp_path: Path) -> None:
    vault = build(tmp_path, {"atlas/a.md": "a", "atlas/sub/b.md": "b", "notes/c.md": "c", "atlas/d.mdx": "d"})
    assert vault_layout(vault) == Layout(DEFAULT_SCANNED_DIRS, "flat", (".md",), (), LAYOUT_FROM_DEFAULT, "default")
    assert listed(vault) == ["atlas/a.md"]


def test_a_vault_without_config_or_default_dirs_is_one_tree(tmp_path: Path) -> None:
    vault = build(
        tmp_path,
        {"a.md": "", "notes/b.markdown": "", "notes/deep/er/c.mdx": "", "notes/x.txt": "", "notes/X.MD": ""},
    )
    layout = vault_layout(vault)
    assert layout == Layout((".",), "tree", (".md", ".markdown", ".mdx"), (), LAYOUT_FROM_ZERO_CONFIG, "default")
    assert listed(vault) == ["a.md", "notes/b.markdown", "notes/deep/er/c.mdx"]


def test_dir_on_a_tree_is_that_subtree(tmp_path: Path) -> None:
    vault = build(tmp_path, {"en/guides/images.mdx": "---\ntitle: Images\n---\n", "en/other.md": "images"})
    assert listed(vault, ["en/guides"]) == ["en/guides/images.mdx"]
    assert [match.path for match in search(vault, ["images"], dirs=["en/guides"]).matches] == ["en/guides/images.mdx"]
    # From the language dir as the vault, as a docs repo is searched.
    assert [match.path for match in search(vault + "/en", ["images"], dirs=["guides"]).matches] == ["guides/images.mdx"]


def test_config_keys_make_the_layout(tmp_path: Path) -> None:
    vault = build(
        tmp_path,
        {
            ".mnemosyne.toml": 'dirs = ["docs/en", "."]\ndepth = "tree"\nsuffixes = [".mdx"]\nexclude = ["drafts/"]\n',
            "docs/en/a.mdx": "",
            "docs/en/drafts/b.mdx": "",
            "docs/en/c.md": "",
            "top.mdx": "",
            "atlas/d.mdx": "",
        },
    )
    layout = vault_layout(vault)
    assert layout == Layout(
        ("docs/en", "."), "tree", (".mdx",), ("drafts/",), LAYOUT_FROM_VAULT_CONFIG, ".mnemosyne.toml"
    )
    # "." holds docs/en: its pages are listed once.
    assert listed(vault) == ["atlas/d.mdx", "docs/en/a.mdx", "top.mdx"]


def test_plain_dirs_stay_flat_and_nested_dirs_are_allowed(tmp_path: Path) -> None:
    vault = build(
        tmp_path,
        {".mnemosyne.toml": 'dirs = ["wiki", "docs/en"]\n', "wiki/a.md": "", "wiki/sub/b.md": "", "docs/en/c.md": ""},
    )
    assert vault_layout(vault).depth == "flat"
    assert listed(vault) == ["docs/en/c.md", "wiki/a.md"]
    assert listed(vault, ["wiki/sub"]) == ["wiki/sub/b.md"]


def test_the_root_itself_may_be_a_flat_dir(tmp_path: Path) -> None:
    vault = build(tmp_path, {".mnemosyne.toml": 'dirs = ["."]\n', "a.md": "", "sub/b.md": ""})
    assert listed(vault) == ["a.md"]
    assert [match.title for match in search(vault, ["a"]).matches] == ["a"]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('dirs = ["../up"]\n', "dirs has '../up', which has a part starting with '.'"),
        ('dirs = ["/abs"]\n', "dirs has '/abs', which is an absolute path"),
        ('dirs = ["a//b"]\n', "dirs has 'a//b', which has an empty part"),
        ('dirs = ["wiki/.hidden"]\n', "dirs has 'wiki/.hidden', which has a part starting with '.'"),
        ("dirs = []\n", "dirs must be a non-empty list of dir names"),
        (
            'depth = "deep"\n',
            'depth must be "flat" (the files directly in each dir) or "tree" (the whole subtree), not \'deep\'',
        ),
        ("depth = 2\n", 'depth must be "flat"'),
        ('suffixes = "md"\n', "suffixes must be a non-empty list"),
        ('suffixes = ["md"]\n', "suffixes has 'md', which must start with '.'"),
        ('suffixes = [".m.d"]\n', "suffixes has '.m.d', which may hold only ASCII letters, digits"),
        ("suffixes = [3]\n", "suffixes has 3, which must start with '.'"),
        ('exclude = "drafts/"\n', "exclude must be a list of gitignore-style patterns"),
        ('exclude = ["a\\nb"]\n', "exclude has 'a\\nb', which holds a line break or NUL"),
        (
            'layout = "tree"\n',
            "has unknown key(s) layout; allowed: dirs, depth, suffixes, exclude, memory_dir, [lint], [serve], [cache], "
            "[order]",
        ),
    ],
)
def test_every_bad_layout_key_is_named_with_its_fix(tmp_path: Path, toml: str, message: str) -> None:
    vault = build(tmp_path, {".mnemosyne.toml": toml, "atlas/a.md": ""})
    with pytest.raises(VaultError) as raised:
        scan(vault)
    assert str(raised.value).startswith(f"{vault}/.mnemosyne.toml")
    assert message in str(raised.value)


@pytest.mark.parametrize("where", ["root", "home", "home-parent"])
def test_obvious_non_vaults_are_refused_not_crawled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    home = tmp_path / "home" / "me"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    vault = {"root": "/", "home": str(home), "home-parent": str(tmp_path / "home")}[where]
    what = {"root": "the file system root", "home": "your home dir", "home-parent": "a dir that holds your home dir"}[
        where
    ]
    with pytest.raises(VaultError) as raised:
        scan(os.path.realpath(vault))
    assert str(raised.value) == (
        f"vault {os.path.realpath(vault)!r} is {what}, not a notes folder, and has no .mnemosyne.toml nor any "
        f"default dir ({', '.join(DEFAULT_SCANNED_DIRS)}), so find will not search all of it: pass --vault the "
        "folder that holds your notes, or run 'mnemosyne wiki init' there"
    )


def test_a_named_dir_of_the_home_dir_is_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    vault = build(tmp_path, {"notes/a.md": "", "other/b.md": ""})
    assert listed(vault, ["notes"]) == ["notes/a.md"]


# --- the tree walk ------------------------------------------------------------------------


def test_the_tree_skips_hidden_entries_and_what_ignore_files_exclude(tmp_path: Path) -> None:
    vault = build(
        tmp_path,
        {
            ".gitignore": "build/\n*.draft.md\n",
            ".obsidian/workspace.md": "",
            ".trash/old.md": "",
            ".hidden.md": "",
            "build/out.md": "",
            "a.draft.md": "",
            "notes/.ignore": "!keep.draft.md\nprivate.md\n",
            "notes/keep.draft.md": "",
            "notes/private.md": "",
            "notes/sub/private.md": "",
            "notes/sub/.gitignore": "!private.md\n",
            "Daily Notes/2024-01-01 Über.md": "",
        },
    )
    assert listed(vault) == ["Daily Notes/2024-01-01 Über.md", "notes/keep.draft.md", "notes/sub/private.md"]


def test_the_ignore_files_above_a_searched_dir_apply(tmp_path: Path) -> None:
    vault = build(tmp_path, {".gitignore": "secret.md\n", "docs/en/secret.md": "", "docs/en/open.md": ""})
    assert listed(vault, ["docs/en"]) == ["docs/en/open.md"]


def test_a_symlinked_dir_inside_a_tree_is_not_followed(tmp_path: Path) -> None:
    vault = build(tmp_path, {"notes/a.md": ""})
    os.symlink(tmp_path / "notes", tmp_path / "again")
    assert listed(vault) == ["notes/a.md"]


def test_the_memory_dir_is_not_searched(tmp_path: Path) -> None:
    vault = build(
        tmp_path,
        {".mnemosyne.toml": 'memory_dir = "memory"\n', "memory/2026-01-01/log.md": "", "notes/a.md": ""},
    )
    assert listed(vault) == ["notes/a.md"]


# --- the tree walk against git's own answer -------------------------------------------------

NAMES = st.sampled_from(["a", "b", "Notes", "x y", "é", "build", "drafts"])
FILES = st.sampled_from(["n.md", "m.mdx", "k.markdown", "t.txt", "d.draft.md", "Z.md"])
PATTERNS = st.sampled_from(
    [
        *["build/", "*.draft.md", "!d.draft.md", "/n.md", "a/", "x y/", "**/m.mdx", "Notes", "!Notes", "*.md"],
        *["!Z.md", "é/", "drafts/**", "!drafts/n.md", "!b/"],
    ]
)


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[str], dict[str, list[str]]]:
    dirs = [""] + ["/".join(draw(st.lists(NAMES, min_size=1, max_size=3))) for _ in range(draw(st.integers(1, 5)))]
    files = [f"{d}/{draw(FILES)}" if d else draw(FILES) for d in dirs for _ in range(draw(st.integers(0, 3)))]
    ignores = {d: draw(st.lists(PATTERNS, max_size=3)) for d in draw(st.lists(st.sampled_from(dirs), max_size=3))}
    return files, ignores


GIT = shutil.which("git")


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=trees())
# A rule naming a dir above a path decides nothing of it: git ignores Notes/a/ here.
@example(tree=(["Notes/a/n.md"], {"": ["a/", "!Notes"]}))
# ``drafts/**`` leaves drafts/ itself to be entered, so a ``!`` rule brings a page back.
@example(tree=(["drafts/n.md", "drafts/Z.md"], {"": ["drafts/**", "!drafts/n.md"]}))
def test_the_tree_walk_lists_what_git_lists(
    tmp_path_factory: pytest.TempPathFactory, tree: tuple[list[str], dict[str, list[str]]]
) -> None:
    files, ignores = tree
    root = tmp_path_factory.mktemp("tree")
    for rel_path in files:
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text("x", encoding="utf-8")
    for rel_dir, patterns in ignores.items():
        (root / rel_dir).mkdir(parents=True, exist_ok=True)
        (root / rel_dir / ".gitignore").write_text("".join(f"{p}\n" for p in patterns), encoding="utf-8")
    empty = root.parent / f"{root.name}-excludes"
    empty.write_text("", encoding="utf-8")
    environment = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(empty)}
    run = ["git", "-c", f"core.excludesFile={empty}", "-c", "core.quotePath=false"]
    subprocess.run([*run, "init", "-q", str(root)], check=True, env=environment, timeout=60)
    answer = subprocess.run(
        [*run, "-C", str(root), "ls-files", "-co", "--exclude-standard", "-z"],
        check=True,
        env=environment,
        capture_output=True,
        timeout=60,
    ).stdout.decode("utf-8")
    by_git = sorted(
        path
        for path in answer.split("\0")
        if path
        and path.endswith((".md", ".markdown", ".mdx"))
        and not any(part.startswith(".") for part in path.split("/"))
    )
    # The plain walk: every markdown file under the root, then git's answer filters it.
    plain = sorted(
        os.path.relpath(os.path.join(here, name), root)
        for here, dir_names, names in os.walk(root)
        for name in names
        if ".git" not in Path(here).relative_to(root).parts
        and name.endswith((".md", ".markdown", ".mdx"))
        and not any(part.startswith(".") for part in Path(here, name).relative_to(root).parts)
    )
    assert listed(os.path.realpath(root)) == [path for path in plain if path in set(by_git)]


# --- a miss says what the layout leaves out --------------------------------------------------


def test_a_miss_note_counts_nested_files_and_other_suffixes(tmp_path: Path) -> None:
    vault = build(
        tmp_path,
        {
            "atlas/a.md": "",
            "atlas/sub/b.md": "",
            "atlas/sub/c.mdx": "",
            "atlas/d.mdx": "",
            "atlas/e.MD": "",
            "notes/f.md": "",
        },
    )
    assert miss_note(vault) == (
        'not searched: 5 markdown files: 2 in sub-dirs (set depth = "tree" in .mnemosyne.toml), '
        '2 ending in .MD or .mdx (set suffixes = [".md", ".MD", ".mdx"] in .mnemosyne.toml), '
        "1 outside the default (Aion) dirs, in notes/ (the vault has atlas/, so it is searched as an Aion vault; "
        'set dirs = ["."] and depth = "tree" in .mnemosyne.toml to search the whole folder); wiki lint lists them'
    )


def test_a_miss_note_counts_what_ignore_files_exclude_by_the_file_that_does(tmp_path: Path) -> None:
    """Hidden files are left out on purpose; what an ignore file excludes is counted, by
    that file, inside ignored dirs too, and what the config excludes is counted apart: an
    excluded copy may be the very page asked for."""
    vault = build(
        tmp_path,
        {
            ".gitignore": "old/\n",
            "old/a.md": "",
            "old/deep/b.mdx": "",
            "docs/.ignore": "*.draft.md\n",
            "docs/x.draft.md": "",
            ".trash/b.md": "",
            "c.md": "",
            "d.txt": "",
            "skip/e.md": "",
            ".mnemosyne.toml": 'exclude = ["skip/"]\n',
        },
    )
    assert miss_note(vault) == (
        "not searched: 4 markdown files in the searched dirs: 3 excluded by ignore files: 2 by .gitignore, "
        "1 by docs/.ignore (find skips them, as rg does; a '!' rule there takes one back), 1 left out by "
        "exclude in .mnemosyne.toml (remove a pattern there to search them)"
    )


def test_a_miss_note_says_nothing_when_nothing_is_left_out(tmp_path: Path) -> None:
    vault = build(tmp_path, {".trash/b.md": "", "c.md": "", "d.txt": "", ".gitignore": ".DS_Store\n"})
    assert miss_note(vault) is None


def test_dirs_named_like_default_ones_never_narrow_a_miss_silently(tmp_path: Path) -> None:
    """A Logseq graph with an apollo/ dir: the Aion layout applies, and the miss says what
    lies beside it, in which dirs, and the setting that searches the whole folder."""
    vault = build(
        tmp_path,
        {"pages/Flashcards.md": "", "journals/2024_01_01.md": "", "apollo/setup.md": "", "README.md": ""},
    )
    assert miss_note(vault) == (
        "not searched: 3 markdown files: 3 outside the default (Aion) dirs, in journals/, pages/, the vault root "
        '(the vault has apollo/, so it is searched as an Aion vault; set dirs = ["."] and depth = "tree" in '
        ".mnemosyne.toml to search the whole folder); wiki lint lists them"
    )
    # --dir and a config's dirs are the user's own choice: nothing beside them is counted.
    assert miss_note(vault, ["apollo"]) is None


def test_a_miss_note_says_lint_lists_the_files_not_left_out_on_purpose_however_many_ignore_files(
    tmp_path: Path,
) -> None:
    """Ignore files are one kind of left-out file however many there are: the other kinds
    beside them are still the ones lint lists."""
    vault = build(
        tmp_path,
        {".gitignore": "old/\n", "old/a.md": "", "docs/.ignore": "*.draft.md\n", "docs/x.draft.md": "", "b.MD": ""},
    )
    assert miss_note(vault) == (
        "not searched: 3 markdown files in the searched dirs: 1 ending in .MD "
        '(set suffixes = [".md", ".markdown", ".mdx", ".MD"] in .mnemosyne.toml), 2 excluded by ignore files: '
        "1 by .gitignore, 1 by docs/.ignore (find skips them, as rg does; a '!' rule there takes one back); "
        "wiki lint lists them"
    )


# --- a miss finds what the layout leaves out in the search's own listing ---------------------

LEFT_OUT_DIRS = st.sampled_from(
    [
        "atlas",
        "notes",
        "atlas/sub",
        "atlas/sub/deep",
        "notes/x y",
        "docs/en",
        ".hidden",
        "atlas/.h",
        "atlas/mem",
        "k.md",
        "atlas/p.md",
    ]
)
LEFT_OUT_FILES = st.sampled_from(["n.md", "m.mdx", "k.markdown", "t.txt", "Z.MD", ".h.md", "d.draft.md", "e.Markdown"])
LEFT_OUT_CONFIGS = st.sampled_from(
    [
        None,
        'dirs = ["atlas", "docs"]\n',
        'depth = "tree"\n',
        'dirs = ["."]\ndepth = "flat"\nsuffixes = [".md", ".mdx"]\n',
        'dirs = ["docs/en", "atlas"]\ndepth = "tree"\nsuffixes = [".markdown"]\n',
        'dirs = ["."]\ndepth = "tree"\nexclude = ["*.draft.md", "deep/"]\n',
        'exclude = ["*.draft.md", "sub/", "atlas/t.txt"]\nmemory_dir = "atlas/mem"\n',
        'dirs = ["atlas", "k.md"]\nmemory_dir = "atlas/mem"\n',
        'exclude = ["*.txt"]\n',
        'dirs = ["atlas", "notes"]\nsuffixes = [".md", ".markdown"]\nexclude = ["/atlas/sub/"]\n',
    ]
)
LEFT_OUT_RULES = st.sampled_from(["*.mdx", "sub/", "!m.mdx", "deep/", "*.markdown", "/n.md", "x y/"])


#: Nested files, a dir named like a page, other suffixes, the memory dir, an ignored file.
LEFT_OUT_EXAMPLE = {
    "atlas/n.md": "x",
    "atlas/m.mdx": "x",
    "atlas/Z.MD": "x",
    "atlas/sub/k.markdown": "x",
    "atlas/p.md/n.md": "x",
    "atlas/mem/n.md": "x",
    "atlas/.h/n.md": "x",
    "atlas/.gitignore": "*.markdown\n",
}


@st.composite
def left_out_vaults(draw: st.DrawFn) -> tuple[dict[str, str], str | None, bool]:
    """Files (vault-relative path: text), a .mnemosyne.toml or None, and whether to add a
    symlinked dir and a symlinked page of another suffix in atlas."""
    dirs = ["", "atlas", *draw(st.lists(LEFT_OUT_DIRS, max_size=5))]
    files = {f"{d}/{name}" if d else name: "x" for d in dirs for name in draw(st.lists(LEFT_OUT_FILES, max_size=3))}
    for rel_dir in draw(st.lists(st.sampled_from(dirs), max_size=2)):
        files[f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"] = "".join(
            f"{rule}\n" for rule in draw(st.lists(LEFT_OUT_RULES, min_size=1, max_size=3))
        )
    return files, draw(LEFT_OUT_CONFIGS), draw(st.booleans())


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(vault_shape=left_out_vaults())
# Every way a listing passes over a file or dir, whatever the drawn examples: a flat
# layout's own listing, one with an exclude (the walk's), and a tree.
@example(vault_shape=(LEFT_OUT_EXAMPLE, None, True))
@example(vault_shape=(LEFT_OUT_EXAMPLE, 'exclude = ["*.txt"]\nmemory_dir = "atlas/mem"\n', False))
@example(vault_shape=(LEFT_OUT_EXAMPLE, 'depth = "tree"\n', True))
def test_a_miss_finds_in_its_own_listing_what_a_second_listing_finds(
    tmp_path_factory: pytest.TempPathFactory,
    vault_shape: tuple[dict[str, str], str | None, bool],
) -> None:
    """The plain path lists the searched dirs once more with ``scan(left_out=...)``; the
    scan's own listing must find the same files, so the note reads the same."""
    files, toml, links = vault_shape
    root = tmp_path_factory.mktemp("miss")
    (root / "atlas").mkdir()
    for rel_path, text in files.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        if not (root / rel_path).is_dir():
            (root / rel_path).write_text(text, encoding="utf-8")
    if toml is not None:
        (root / ".mnemosyne.toml").write_text(toml, encoding="utf-8")
    if links:
        (root / "atlas" / "lnk.mdx").symlink_to(root / "atlas" / "target.txt")
        (root / "atlas" / "target.txt").write_text("x", encoding="utf-8")
        (root / "atlas" / "linked").symlink_to(root / "atlas")
    vault = os.path.realpath(root)
    reference: list[tuple[str, str]] = []
    scan_error = None
    try:
        scan(vault, left_out=reference)
    except VaultError as error:
        scan_error = str(error)
    if scan_error is not None:
        # No searched dir there: no miss to tell about, and the search says so as the scan does.
        with pytest.raises(VaultError, match=f"^{re.escape(scan_error)}$"):
            search(vault, ["zyzzyva"])
        return
    result = search(vault, ["zyzzyva"])
    assert result.total == 0
    assert result.left_out is not None
    assert sorted(result.left_out) == sorted(reference)
    from_listing = left_out_files(scan(vault))
    assert from_listing is not None
    assert sorted(from_listing) == sorted(reference)
    assert miss_note(vault, None, result.left_out) == miss_note(vault)


# --- the server's index serves every layout as the scan lists it -------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"notes/a.md": "alpha", "notes/deep/b.mdx": "alpha", ".hidden/c.md": "alpha"}, 2),
        ({".mnemosyne.toml": 'dirs = ["wiki"]\ndepth = "tree"\n', "wiki/a.md": "alpha", "wiki/x/b.md": "alpha"}, 2),
        ({".mnemosyne.toml": 'dirs = ["docs/en"]\n', "docs/en/a.md": "alpha", "docs/a.md": "alpha"}, 1),
        (
            {
                ".mnemosyne.toml": 'dirs = ["wiki"]\nsuffixes = [".md", ".mdx"]\n',
                "wiki/a.md": "x",
                "wiki/b.mdx": "alpha",
            },
            1,
        ),
        (
            {
                ".mnemosyne.toml": 'dirs = ["."]\nexclude = ["b.md"]\n',
                "a.md": "alpha",
                "b.md": "alpha",
                "c/d.md": "alpha",
            },
            1,
        ),
    ],
)
def test_the_index_answers_every_layout_as_the_scan(tmp_path: Path, files: dict[str, str], expected: int) -> None:
    from index_harness import build_index

    from mnemosyne_core.cache import IndexedScan

    vault = build(tmp_path, files)
    scanned = search(vault, ["alpha"])
    build_index(vault)
    for _call in ("built", "kept fresh"):
        backend = IndexedScan(os.environ)
        cached = backend.search(FindRequest(vault, ["alpha"]))
        assert backend.indexed
        assert [match.path for match in cached.matches] == [match.path for match in scanned.matches]
        assert (cached.total, cached.pages_searched) == (scanned.total, scanned.pages_searched)
    assert scanned.total == expected
