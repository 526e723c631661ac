"""The walk's fast answer for paths no ignore rule matches, against pathspec's own."""

from __future__ import annotations

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core.vault import _names_only_hidden, _spec

RULES = st.sampled_from(
    [
        *["drafts/", "/Archive/", "*.excalidraw.md", "!keep.md", "a/**/b", "*.md", "node_modules", "# comment"],
        *["", "\\#x", "foo[ab].md", "**/x/", "x/*", "!/a/", "b", "*", "?.md", "a b/", "(?P<x>", "**", "!*.md"],
    ]
)
PARTS = st.sampled_from(
    ["a", "b", "x", "drafts", "Archive", "keep.md", "n.md", "foo a.md", "fooa.md", "y.excalidraw.md"]
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
