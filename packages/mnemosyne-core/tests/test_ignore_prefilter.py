"""The walk's fast answer for paths no ignore rule matches, against pathspec's own."""

from __future__ import annotations

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemosyne_core.vault import _spec

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


@settings(max_examples=800, deadline=None)
@given(st.lists(RULES, min_size=1, max_size=5), st.lists(PATHS, min_size=1, max_size=8))
def test_the_fast_answer_is_pathspecs(rules: list[str], paths: list[str]) -> None:
    spec = _spec(rules)
    plain = pathspec.GitIgnoreSpec.from_lines(rules)
    for path in paths:
        expected = plain.check_file(path).include
        assert (None if spec is None else spec.include_of(path)) == expected
