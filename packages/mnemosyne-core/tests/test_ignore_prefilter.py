"""The walk's fast answers to ignore rules (the regex prefilter, the rules that only name files
and dirs), against pathspec's own."""

from __future__ import annotations

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core.vault import _NameRules, _names_only_hidden, _spec

RULES = st.sampled_from(
    [
        *["drafts/", "/Archive/", "*.excalidraw.md", "!keep.md", "a/**/b", "*.md", "node_modules", "# comment"],
        *["", "\\#x", "foo[ab].md", "**/x/", "x/*", "!/a/", "b", "*", "?.md", "a b/", "(?P<x>", "**", "!*.md"],
        # Rules that only name a file or dir (answered without pathspec) and near misses.
        *["a*", "*a", "/a*/", "*.md/", "k*p*.md", "/n.md", "n.md/", "*/", "/*", "/", "//", "a/ ", " a", "a*b*a"],
        *["/drafts", "drafts//", "*x*", "fo*a.md", "./a", "..", "a\\*", "*.excalidraw.md/"],
    ]
)
PARTS = st.sampled_from(
    ["a", "b", "x", "drafts", "Archive", "keep.md", "n.md", "foo a.md", "fooa.md", "y.excalidraw.md", "aba", "kp.md"]
)
PATHS = st.tuples(st.lists(PARTS, min_size=1, max_size=4), st.booleans()).map(
    lambda parts_dir: "/".join(parts_dir[0]) + ("/" if parts_dir[1] else "")
)


@settings(max_examples=examples(250), deadline=None)
@given(st.lists(RULES, min_size=1, max_size=5), st.lists(PATHS, min_size=1, max_size=8))
def test_the_fast_answer_is_pathspecs(rules: list[str], paths: list[str]) -> None:
    spec = _spec(rules)
    plain = pathspec.GitIgnoreSpec.from_lines(rules)
    for path in paths:
        expected = plain.check_file(path).include
        assert (None if spec is None else spec.include_of(path)) == expected


@pytest.mark.parametrize(
    ("rules", "by_names"),
    [
        (["# exports", "/Archive/", "drafts/", "*.excalidraw.md", ""], True),
        (["node_modules", "*.tmp.md", "/a*/", "x y/"], True),
        (["drafts/", "!drafts/keep.md"], False),
        (["drafts/", "a/**/b"], False),
        (["drafts/", "docs/drafts"], False),
        (["drafts/", "[ab].md"], False),
        (["drafts/ "], False),
    ],
)
def test_rules_that_name_files_and_dirs_need_no_pathspec(rules: list[str], by_names: bool) -> None:
    """The rules most ignore files hold are answered by ``_NameRules`` (the comparison
    above then really tests it); a rule it does not read sends the whole file to pathspec."""
    assert isinstance(_spec(rules), _NameRules) is by_names


#: Rules as people write them for hidden files, beside a few that name visible ones.
HIDDEN_RULES = st.sampled_from(
    [
        *[".obsidian/", ".obsidian/workspace.json", "/.trash", "**/.DS_Store", ".*", "!.keep", "a/.b/c", ".x*"],
        *["# c", "", "   ", ".obsidian/**", "*/.cache", "x", "!x", ".", "./a", "a/../.b", "\\.x", "[.]x", " .x"],
    ]
)
HIDDEN_PARTS = st.sampled_from(
    ["a", "b", "x", ".obsidian", ".trash", ".DS_Store", ".b", "c", ".keep", "workspace.json"]
)


@settings(max_examples=examples(250), deadline=None)
@given(st.lists(HIDDEN_RULES, min_size=1, max_size=5), st.lists(HIDDEN_PARTS, min_size=1, max_size=4), st.booleans())
def test_rules_naming_only_hidden_paths_match_no_path_the_walk_meets(
    rules: list[str], parts: list[str], is_dir: bool
) -> None:
    """When every line names only hidden paths, the walk asks no rule at all: pathspec
    must find none of them matching a path without a hidden part (the only paths the walk
    asks about), and with a hidden part the walk never asks."""
    path = "/".join(parts) + ("/" if is_dir else "")
    plain = pathspec.GitIgnoreSpec.from_lines(rules)
    if all(_names_only_hidden(rule) for rule in rules):
        assert _spec(rules) is None
        if not any(part.startswith(".") for part in parts):
            assert plain.check_file(path).include is None
    else:
        spec = _spec(rules)
        assert (None if spec is None else spec.include_of(path)) == plain.check_file(path).include
