"""The walk's ignore rules: a rule decides the path it names itself, as git decides, and
the fast answer for paths no rule matches equals asking every rule."""

from __future__ import annotations

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core.vault import _IgnoreSpec, _names_itself, _names_only_hidden, _spec


def every_rule_asked(spec: _IgnoreSpec, path: str) -> bool | None:
    """The last rule naming ``path`` itself, each rule asked: no fast answer."""
    decided = None
    for regex, ignores in spec.rules:
        if _names_itself(regex, path):
            decided = ignores
    return decided


@pytest.mark.parametrize(
    ("rules", "path", "decided"),
    [
        # A rule that names a dir above the path had its say when the walk met that dir.
        (["a/", "!Notes"], "Notes/a/", True),
        (["a/", "!Notes"], "Notes/", False),
        (["Notes"], "Notes/a/", None),
        (["Notes"], "x/Notes/", True),
        (["Notes"], "x/Notes", True),
        (["a/"], "x/a", None),  # a dir's rule names no file
        # ``docs/**`` names what lies inside docs/, not docs/ itself: a ``!`` rule can
        # bring a page inside back, as git does.
        (["docs/**"], "docs/", None),
        (["docs/**", "!docs/k.md"], "docs/k.md", False),
        (["docs/**", "!docs/k.md"], "docs/j.md", True),
        (["*"], "x", True),
        (["**/"], "a/b/", True),
        (["**/"], "a.md", None),
        (["a/**/b"], "a/x/y/b/", True),
        (["/n.md"], "n.md", True),
        (["/n.md"], "x/n.md", None),
        (["*.md", "!Z.md"], "d/Z.md", False),
        (["Notes"], "Notes\n", None),  # a regex's $ matches before a last newline; git's rule does not
        (["*"], "a\n/", True),
    ],
)
def test_a_rule_decides_the_path_it_names_itself_as_git_does(rules: list[str], path: str, decided: bool | None) -> None:
    spec = _spec(rules)
    assert spec is not None
    assert spec.include_of(path) == decided


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
def test_the_fast_answer_is_every_rules(rules: list[str], paths: list[str]) -> None:
    spec = _spec(rules)
    plain = pathspec.GitIgnoreSpec.from_lines(rules)
    for path in paths:
        if spec is None:  # no rule left that can match: pathspec finds none either
            assert plain.check_file(path).include is None
        else:
            assert spec.include_of(path) == every_rule_asked(spec, path)


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
        assert (None if spec is None else spec.include_of(path)) == (
            None if spec is None else every_rule_asked(spec, path)
        )
