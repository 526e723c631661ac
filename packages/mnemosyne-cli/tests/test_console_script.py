"""The console script's argparse-free parser of plain ``wiki find`` and ``wiki recall``
calls against argparse.

console_script.fast_arguments is a fast path: whenever it answers, argparse (app's parser,
the reference) must parse the same words to the same arguments with nothing left over;
whenever argparse would refuse the words, it must not answer. And a call through the
console script prints and exits exactly as one through app.main.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_cli import app, arguments, console_script
from mnemosyne_cli.commands.find import FindArguments
from mnemosyne_cli.commands.lint import LintArguments
from mnemosyne_cli.commands.recall import RecallArguments
from mnemosyne_cli.completion import CompletionArguments, list_dirs_call
from mnemosyne_cli.environment import Environment
from mnemosyne_cli.options import HELP_FLAGS, Arguments

FakeVault = Callable[[dict[str, str | bytes]], str]

#: Words a find call is made of, the awkward ones included: flags with and without values,
#: abbreviations, help, a repeated flag, values that look like flags, NUL, non-ASCII.
WORDS = st.sampled_from(
    [
        "mastra",
        "slack",
        "a b",
        "",
        "ſ",
        "K",
        "İ",
        "ß",
        "x=y",
        "-",
        "--",
        "-x",
        "-1",
        # Every spelling of every option of the table, help's too.
        *(name for row in FindArguments.table for name in row.names),
        *(name for row in RecallArguments.table for name in row.names),
        *(name for row in LintArguments.table for name in row.names),
        *HELP_FLAGS,
        "-05",
        "-5",
        "--json=1",
        "--limit=3",
        "--limit=",
        "--limit=-1",
        "3",
        "0",
        "007",
        "٣",
        "abc",
        "--vault=/v",
        "--vault=",
        "--vault=-v",
        "/v",
        "--dir=atlas",
        "atlas",
        "--js",
        "--lim",
        "--color=always",
        "--color=yes",
        "never",
        "--version",
        "--limit=2\0",
        "a\0b",
        "find",
        "wiki",
    ]
)
#: Whole pieces of a well-formed call, so that many calls are ones the fast path takes.
PIECES = st.sampled_from(
    [
        ["mastra"],
        ["ſ"],
        ["a b"],
        [""],
        ["--json"],
        ["--cat"],
        ["--paths"],
        ["--absolute"],
        ["-0"],
        ["--limit", "0"],
        ["--limit=12"],
        ["--vault", "/v"],
        ["--vault=/w"],
        ["--dir", "atlas"],
        ["--limit", "x"],
        ["--color", "never"],
        ["--color=always"],
        ["--color", "blue"],
        ["--memory-dir", "/m"],
        ["--max-bytes", "0"],
        ["--max-bytes=-1"],
        ["--no-cache"],
        ["--no-server"],
        ["--select", "missing-title"],
        ["--select=no-frontmatter,missing-updated"],
        ["--ignore", "missing-title,"],
        ["--ignore", "bogus"],
        ["--select", ","],
    ]
)
COMMANDS = st.sampled_from(["find", "recall", "lint"])
ARGVS = st.one_of(
    st.tuples(COMMANDS, st.lists(WORDS, max_size=7)).map(lambda call: ["wiki", call[0], *call[1]]),
    st.tuples(COMMANDS, st.lists(PIECES, max_size=6)).map(
        lambda call: ["wiki", call[0], *(word for piece in call[1] for word in piece)]
    ),
    st.lists(WORDS, max_size=5),
)


#: One parser per command for every example: building one costs milliseconds, parsing with
#: it a tenth of one, and parsing leaves the parser as it was.
#: The help a parse prints goes to a sink of its own: the cached parser outlives each
#: example's captured streams.
built_parser = functools.cache(
    lambda only: app.build_parser(Environment(stdout=io.StringIO(), stderr=io.StringIO()), only)
)


def argparse_arguments(words: list[str], declared: type[Arguments] | None = None) -> Arguments | None:
    """What app's argparse parser makes of ``words``: the command's arguments (as
    app.main hands them to the command), or None when it refuses them, prints help,
    leaves words over or reaches another command."""
    if any("\0" in word for word in words):
        return None  # app.main refuses these before parsing
    named = words[1] if len(words) > 1 and words[0] == "wiki" else None
    parser = built_parser(named if named in {"find", "recall", "ingest", "lint"} else None)
    try:
        parsed, extras = parser.parse_known_args(words)
    except (arguments.UsageError, arguments.ParserExit):
        return None
    module = app._module(parsed.group, getattr(parsed, "command", None))
    if extras or module is None or (declared is not None and module.COMMAND.arguments is not declared):
        return None
    command: type[Arguments] = module.COMMAND.arguments
    if command not in (FindArguments, RecallArguments, LintArguments, CompletionArguments):
        return None
    parsed_arguments: Arguments = command(**{row.dest: getattr(parsed, row.dest) for row in command.table})
    return parsed_arguments


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=ARGVS)
@example(words=["wiki", "find", "a", "--json", "b"])  # a second run of keywords
@example(words=["wiki", "find", "--limit", "--json", "a"])  # a value that is a flag
@example(words=["wiki", "find", "--vault", "/v", "a", "--limit=0", "--cat"])
@example(words=["wiki", "find", "a", "--json", "--json"])  # repeated: argparse takes it, the fast path defers
@example(words=["wiki", "recall", "a", "b", "--max-bytes", "0", "--memory-dir", "/m"])
@example(words=["wiki", "recall", "--max-bytes=-1", "a"])  # a refused value: argparse's error
@example(words=["wiki", "lint"])
@example(words=["wiki", "lint", "--select", "missing-title", "--select", "no-frontmatter,", "--json"])
@example(words=["wiki", "lint", "--ignore", "bogus"])  # an unknown code: argparse's error
def test_fast_arguments_equal_argparses(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A find, recall or lint call the fast path parses, argparse parses alike."""
    fast = console_script.fast_arguments(words)
    reference = argparse_arguments(words)
    capsys.readouterr()  # argparse's help and errors, written as it refused
    if fast is not None:
        assert fast == reference


#: Words of a completion call, the scripts' own and awkward ones.
COMPLETION_WORDS = st.sampled_from(
    ["--list-dirs", "--vault", "--vault=/v", "--vault=", "/v", "-v", "bash", "tcsh", "--", "--help", "--list", "a\0b"]
)


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(COMPLETION_WORDS, max_size=5).map(lambda words: ["completion", *words]))
@example(words=["completion", "--list-dirs", "--vault", "/v"])
@example(words=["completion", "--vault", "/v", "--list-dirs", "bash"])
def test_list_dirs_calls_equal_argparses(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The console script's parser of the scripts' --list-dirs calls, the same table read
    without argparse: whenever it answers, argparse parses the words alike."""
    fast = list_dirs_call(words)
    reference = argparse_arguments(words, CompletionArguments)
    capsys.readouterr()
    if fast is not None:
        assert fast == reference


def test_plain_find_recall_and_lint_calls_take_the_fast_path() -> None:
    for words in (
        ["wiki", "find", "mastra"],
        ["wiki", "find", "mastra", "slack", "--vault", "/v", "--limit", "0", "--json"],
        ["wiki", "find", "--cat", "--vault=/v", "kestrel"],
        ["wiki", "find", "mastra", "--color", "always"],
        ["wiki", "recall", "mastra", "slack"],
        ["wiki", "recall", "--no-server", "--vault", "/v", "mastra", "--max-bytes", "100", "--json"],
        ["wiki", "lint"],
        ["wiki", "lint", "--json", "--select", "missing-title,no-frontmatter", "--vault", "/v", "--no-cache"],
    ):
        assert console_script.fast_arguments(words) is not None


@pytest.mark.parametrize(
    "argv",
    [
        ["wiki", "find", "mastra"],
        ["wiki", "find", "mastra", "--limit", "1"],
        ["wiki", "find", "mastra", "--json"],
        ["wiki", "find", "slack", "--paths", "-0", "--absolute"],
        ["wiki", "find", "zzz"],
        ["wiki", "find", "mastra", "--cat"],
        ["wiki", "find", "slack", "--cat"],
        ["wiki", "find", "mastra", "--cat", "--json"],
        ["wiki", "find", "mastra", "--limit", "x"],
        ["wiki", "find", "--vault", "/nowhere", "mastra"],
        ["wiki", "find", "mastra", "--js"],
        ["wiki", "find", "--help"],
        ["wiki", "find", "mastra", "--color", "always"],
        ["wiki", "find", "mastra", "--color=always", "--color", "never"],
        ["wiki", "find", "mastra", "--cat", "--color", "always"],
        ["wiki", "recall", "mastra"],
        ["wiki", "recall", "slack", "mastra", "--json"],
        ["wiki", "recall", "slack", "--max-bytes", "40"],
        ["wiki", "recall", "zzz"],
        ["wiki", "recall", "--vault", "/nowhere", "mastra"],
        ["wiki", "recall", "mastra", "--max-bytes", "-1"],
        ["wiki", "recall", "   "],
        ["wiki", "lint"],
        ["wiki", "lint", "--json"],
        ["wiki", "lint", "--select", "missing-title", "--dir", "atlas"],
        ["wiki", "lint", "--ignore", "bogus"],
        ["wiki", "lint", "stray"],
        ["wiki", "lint", "--vault", "/nowhere"],
        ["wiki", "lint", "--color", "always"],
    ],
)
def test_the_console_script_answers_as_app_main(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    vault = fake_vault({"atlas/mastra.md": "---\ntitle: Mastra\n---\nslack\n", "atlas/b.md": "slack\n"})
    expected_code = app.main(argv, Environment({**os.environ, "AION_VAULT": vault}))
    expected = capsys.readouterr()
    code = console_script.main(argv, Environment({**os.environ, "AION_VAULT": vault}))
    got = capsys.readouterr()
    assert (code, got.out, got.err) == (expected_code, expected.out, expected.err)
