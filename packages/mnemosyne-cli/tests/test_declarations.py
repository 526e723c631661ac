"""Each command's arguments are declared once (options.py and the command's module), and
argparse's parser, the console script's parser and the help are all made from that
declaration: here each is held to the declaration, and the help to argparse's own."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import pytest
from golden import check_golden
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_cli import arguments, completion
from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.environment import Environment
from mnemosyne_cli.help import HELP, _epilog, fill, render
from mnemosyne_cli.options import Arguments, BadValue, Command, Option, flag, parse_words, shell_line

COMMANDS = [module.COMMAND for module in WIKI_COMMANDS]
#: Words that satisfy each command's required arguments, so that one more row can be tried.
REQUIRED = {"find": ["k"], "recall": ["t"], "ingest": ["s.md", "--constellation", "atlas"]}
#: A valid value for each kind of row.
SAMPLES = {
    "--limit": "3",
    "--max-bytes": "4096",
    "--dir": "atlas",
    "--select": "missing-title",
    "--ignore": "missing-title",
    "--constellation": "atlas",
}


def words_of(command: Command) -> list[str]:
    return ["completion"] if command is completion.COMMAND else ["wiki", command.name]


def parsed_by_argparse(command: Command, words: list[str]) -> argparse.Namespace:
    parser = arguments.build_parser(Environment(), beside=[completion.COMMAND])
    namespace, extras = parser.parse_known_args([*words_of(command), *words])
    assert extras == []
    return namespace


def sample(row: Option[object]) -> str:
    if row.choices:
        return row.choices[-1]
    return SAMPLES.get(row.names[0] if row.names else "", "x")


@pytest.mark.parametrize("command", [*COMMANDS, completion.COMMAND], ids=lambda command: command.name)
def test_every_row_parses_through_argparse_as_declared(command: Command) -> None:
    """Each spelling of each option, with a valid value, sets the declared attribute to
    the value the row reads; the other attributes keep their declared defaults."""
    required = REQUIRED.get(command.name, [])
    for row in command.arguments.table:
        for name in row.names:
            words = [name, sample(row)] if row.takes_value else [name]
            namespace = parsed_by_argparse(command, [*words, *required])
            expected: object = True if not row.takes_value else row.value(sample(row))
            if row.repeatable:
                expected = [expected]
            assert getattr(namespace, row.dest) == expected, (command.name, name)
        if not row.names and row.nargs == "?":
            assert getattr(parsed_by_argparse(command, required), row.dest) == row.default


@pytest.mark.parametrize("command", [*COMMANDS, completion.COMMAND], ids=lambda command: command.name)
def test_the_console_scripts_parser_reads_every_row_as_argparse(command: Command) -> None:
    """parse_words, the console script's parser, against argparse: a call with every
    option of the command given once gives the same arguments."""
    declared = command.arguments
    if sum(row.positional for row in declared.table) > 1:
        pytest.fail(f"{command.name} has two positionals: parse_words takes one")
    words = list(REQUIRED.get(command.name, ["x"] if any(row.positional for row in declared.table) else []))
    if command is completion.COMMAND:
        words = []
    for row in declared.table:
        if row.names and not (row.positional or (row.names[0] in words)):
            words += [row.names[-1], sample(row)] if row.takes_value else [row.names[-1]]
    namespace = parsed_by_argparse(command, words)
    fast = parse_words(declared, words)
    assert fast == declared(**{row.dest: getattr(namespace, row.dest) for row in declared.table})


def test_parse_words_refuses_what_it_is_not_sure_of() -> None:
    find = next(command for command in COMMANDS if command.name == "find").arguments
    for words in (["--help", "k"], ["k", "--", "-v"], ["k", "--json", "--json"], ["k", "--limit", "x"], ["k", "-v"]):
        assert parse_words(find, words) is None, words


def test_arguments_are_records_of_their_rows() -> None:
    class Probe(Arguments):
        loud = flag("--loud", help="h")
        count: Option[int] = Option(("--count",), "h", 1, metavar="N", read=int)

    assert Probe() == Probe(loud=False, count=1)
    assert Probe(count=2) != Probe()
    assert repr(Probe(loud=True)) == "Probe(loud=True, count=1)"
    with pytest.raises(TypeError, match="has no argument lod"):
        Probe(lod=True)
    assert Probe.option("--count") is Probe.count
    assert Probe().count == 1


def test_a_shared_row_must_have_one_name() -> None:
    shared = flag("--shared", help="h")

    class First(Arguments):
        shared_name = shared

    with pytest.raises(TypeError, match="--shared is 'shared_name' in one command and 'other_name' in another"):

        class Second(Arguments):
            other_name = shared

    assert First.table == (shared,)


def test_a_bad_value_is_one_line_naming_what_it_must_be() -> None:
    find = next(command for command in COMMANDS if command.name == "find").arguments
    with pytest.raises(BadValue, match=r"^must be 0 \(no cap\) or a positive whole number, not '-1'$"):
        find.limit.value("-1")
    with pytest.raises(BadValue, match=r"did you mean 'always'\?$"):
        find.color.value("alway")


def reference_help(prog: str, command: Command, subcommands: list[Command], title: str, width: int) -> str:
    """The help argparse's own formatter gives a parser built by hand from ``command``'s
    declaration: the reference for help.render."""

    def formatter(prog: str) -> argparse.HelpFormatter:
        return argparse.RawDescriptionHelpFormatter(prog, width=width)

    parser = argparse.ArgumentParser(
        prog=prog,
        formatter_class=formatter,
        description=fill(command.description, max(width, 11)),
        epilog=fill(_epilog(command), max(width, 11)),
    )
    for row in command.arguments.table:
        help_text = argparse.SUPPRESS if row.hidden else row.help
        if row.positional:
            parser.add_argument(row.dest, metavar=row.metavar, nargs=row.nargs, help=help_text)
        elif row.takes_value:
            parser.add_argument(*row.names, metavar=row.metavar, required=row.required, help=help_text)
        else:
            parser.add_argument(*row.names, action="store_true", help=help_text)
    if subcommands:
        group = parser.add_subparsers(title=title, metavar="COMMAND")
        for sub in subcommands:
            group.add_parser(sub.name, help=sub.summary)
    return parser.format_help()


TOP = [arguments.WIKI, completion.COMMAND]
HELPS = [
    ("mnemosyne", arguments.MNEMOSYNE, TOP, "commands"),
    ("mnemosyne wiki", arguments.WIKI, COMMANDS, "wiki commands"),
    ("mnemosyne completion", completion.COMMAND, [], ""),
    *((f"mnemosyne wiki {command.name}", command, [], "") for command in COMMANDS),
]


#: Python 3.13's argparse lays out two things otherwise: a usage line too long for the
#: terminal (each argument kept whole) and the help column of a list of subcommands (one
#: longer than every option pushes it right). help.render keeps the earlier layout on
#: every Python; there argparse is the reference for the rest.
ARGPARSE_CHANGED_LAYOUT = sys.version_info >= (3, 13)


@pytest.mark.parametrize("width", [20, 38, 58, 78, 129, 198])
@pytest.mark.parametrize(("prog", "command", "subcommands", "title"), HELPS, ids=[entry[0] for entry in HELPS])
def test_help_is_laid_out_as_argparse_lays_it_out(
    prog: str, command: Command, subcommands: list[Command], title: str, width: int
) -> None:
    """help.render against argparse's formatter, at narrow and wide terminals (on 3.13,
    the blocks it lays out as before: the description, an argument list without
    subcommands, the examples and exit codes)."""
    ours = render(prog, command, subcommands, title, width)
    theirs = reference_help(prog, command, subcommands, title, width)
    if ARGPARSE_CHANGED_LAYOUT:
        ours_blocks, theirs_blocks = ours.split("\n\n"), theirs.split("\n\n")
        assert len(ours_blocks) == len(theirs_blocks)
        kept = [
            index
            for index, block in enumerate(ours_blocks)
            if index > 0 and not (subcommands and block.startswith(("options:", f"{title}:")))
        ]
        ours = "\n\n".join(ours_blocks[index] for index in kept)
        theirs = "\n\n".join(theirs_blocks[index] for index in kept)
    assert ours == theirs


HELP_GOLDEN = Path(__file__).parent / "golden" / "help"
HELP_COLUMNS = (40, 80)


def help_golden(prog: str, columns: int) -> Path:
    return HELP_GOLDEN / f"{prog.replace(' ', '-')}-{columns}.txt"


@pytest.mark.parametrize("columns", HELP_COLUMNS)
@pytest.mark.parametrize(("prog", "command", "subcommands", "title"), HELPS, ids=[entry[0] for entry in HELPS])
def test_help_matches_golden_on_every_python(
    prog: str, command: Command, subcommands: list[Command], title: str, columns: int
) -> None:
    """Every --help, byte for byte, at a narrow and a common terminal, on every Python."""
    check_golden(help_golden(prog, columns), render(prog, command, subcommands, title, columns - 2).encode())


def test_every_help_golden_belongs_to_a_help() -> None:
    expected = {help_golden(entry[0], columns) for entry in HELPS for columns in HELP_COLUMNS}
    assert sorted(set(HELP_GOLDEN.glob("*.txt")) - expected) == [], "stale golden files: delete them"


def test_help_lists_the_help_row_first() -> None:
    assert render("p", arguments.WIKI, [], "", 80).splitlines()[0] == "usage: p [-h]"
    assert HELP.names == ("-h", "--help")


@settings(max_examples=examples(2000), deadline=None)
@given(
    words=st.lists(
        st.one_of(st.text(st.sampled_from([*"ab-_.=@%+:,/'\" $*\\!é\t\n"]), max_size=6), st.text(max_size=6)),
        max_size=4,
    )
)
def test_shell_line_quotes_as_shlex_join_does(words: list[str]) -> None:
    """The way-out lines are quoted without shlex (its import compiles a regex): word for
    word as shlex.join quotes them."""
    assert shell_line(words) == shlex.join(words)
