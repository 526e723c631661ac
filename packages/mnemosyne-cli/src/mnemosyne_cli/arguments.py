"""The command tree as argparse takes it, from the commands' declarations (options.py):
each command a parser, each row one argument, help rendered by help.py. argparse parses;
what it would print (help, usage) is written from the same declarations."""

from __future__ import annotations

import argparse

from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.help import help_width, render
from mnemosyne_cli.options import (
    HELP_FLAGS,
    HELP_TEXT,
    Arguments,
    BadValue,
    Command,
    flag,
    looks_like_a_negative_number,
)
from mnemosyne_cli.output import PROG

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType
    from typing import Any, NoReturn

    from mnemosyne_cli.environment import Environment
    from mnemosyne_cli.options import Option

    #: What a completion script completes a row with (completion.py), or None.
    Completer = Callable[[Option[Any]], object]


class UsageError(Exception):
    """A bad command line; the message is one line naming the problem and the fix."""


class ParserExit(Exception):
    """argparse is done (help or --version printed): the exit code."""

    def __init__(self, status: int):
        self.status = status


class Formatter(argparse.HelpFormatter):
    """argparse makes a formatter for each argument it adds, and one without a width
    imports shutil (~3 ms with bz2 and lzma) for the terminal's: start-up time. argparse
    never prints with it here (help.py renders the help, ``Parser.error`` the errors), so
    any width will do."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int = 80):
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """argparse, except that errors become UsageError (exit 64, one line) instead of exit 2,
    which means something else here, and that abbreviations (--c for --cat) are refused:
    they are a guess, and agents should get an error instead."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("add_help", False)
        kwargs["formatter_class"] = Formatter
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        # argparse passes a message only from error(), which raises UsageError instead.
        raise ParserExit(status)


class HelpAction(argparse.Action):
    """-h/--help: the command's help, rendered from its declaration, on the call's stdout
    at its terminal's width."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        text: Callable[[int], str],
        env: Environment,
        help: str | None = None,  # noqa: A002
    ):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.text = text
        self.env = env

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        print_message(self.env, self.text(help_width(self.env.environ, self.env.stdout)))
        parser.exit()


def print_message(env: Environment, text: str) -> None:
    """Help or --version on the call's stdout, as argparse prints them: on stderr when the
    process started with stdout closed, and nothing at all (still exit 0) when the stream
    cannot take it (full, closed)."""
    import contextlib  # only a help or --version call pays for it

    with contextlib.suppress(AttributeError, OSError):
        (env.stdout or env.stderr).write(text)


def add_help(
    parser: argparse.ArgumentParser,
    env: Environment,
    command: Command,
    subcommands: Callable[[], Sequence[Command]] = tuple,
    title: str = "",
) -> None:
    """-h/--help for ``parser``, which ``command`` declares; ``subcommands`` lists the
    commands under it only when help is asked for (their modules cost start-up time)."""
    prog = parser.prog
    parser.add_argument(
        *HELP_FLAGS,
        action=HelpAction,
        text=lambda width: render(prog, command, subcommands(), title, width),
        env=env,
        help=HELP_TEXT,
    )


def add_command(
    subparsers: Any, env: Environment, command: Command, complete: Completer | None = None
) -> argparse.ArgumentParser:
    """``command`` as a subcommand of ``subparsers``. With ``complete`` the parser is for a
    completion script (argparse's own help, each row marked with what completes it), and
    the one-line summary stands beside the command's name there."""
    for_script = complete is not None
    parser: argparse.ArgumentParser = subparsers.add_parser(
        command.name,
        help=command.summary,
        add_help=for_script,
        description=command.summary if for_script else None,
    )
    if not for_script:
        add_help(parser, env, command)
    for row in command.arguments.table:
        add_argument(parser, row, complete)
    return parser


def add_argument(parser: argparse.ArgumentParser, row: Option[Any], complete: Completer | None = None) -> None:
    """``row`` as argparse takes it."""
    text = argparse.SUPPRESS if row.hidden else row.help
    kwargs: dict[str, Any] = {"help": text}
    if row.read is not None:
        kwargs["type"] = _checked(row)
    if row.choices is not None:
        kwargs["choices"] = row.choices
    if row.positional:
        if row.nargs is not None:
            kwargs["nargs"] = row.nargs
        if row.nargs == "?":
            kwargs["default"] = row.default
        action = parser.add_argument(row.dest, metavar=row.metavar, **kwargs)
    elif not row.takes_value:
        action = parser.add_argument(*row.names, dest=row.dest, action="store_true", help=text)
    else:
        action = parser.add_argument(
            *row.names,
            dest=row.dest,
            action="append" if row.repeatable else "store",
            metavar=row.metavar,
            default=row.default,
            required=row.required,
            **kwargs,
        )
    if any(looks_like_a_negative_number(name) for name in row.names):
        # argparse reads every word that looks like a negative number as a flag once one
        # flag (-0) does: "--limit -1" and a keyword "-5" would stop parsing. They stay
        # values. argparse has no public switch for this: it is the one private name used.
        parser._has_negative_number_optionals.clear()
    if complete is not None and not row.hidden:
        completes = complete(row)
        if completes is not None:
            action.complete = completes  # type: ignore[attr-defined]  # shtab's attribute


def _checked(row: Option[Any]) -> Callable[[str], Any]:
    """argparse's reader of ``row``'s value: the row's own, its BadValue as the error."""

    def value(text: str) -> object:
        try:
            return row.value(text)
        except BadValue as bad:
            raise argparse.ArgumentTypeError(str(bad)) from None

    return value


class MnemosyneArguments(Arguments):
    """``mnemosyne``'s own arguments, before its command."""

    version = flag("--version", help="print the version of mnemosyne and of each installed package, and exit")


class WikiArguments(Arguments):
    """``mnemosyne wiki`` takes no argument of its own before its command."""


MNEMOSYNE = Command(
    PROG,
    MnemosyneArguments,
    summary="",
    description="Find pages of a markdown wiki vault by keyword, deterministically: "
    "no LLM, answered from the files themselves (nothing kept that could go stale), exact exit codes.\n\n"
    "Agents: 'mnemosyne wiki guide' prints how to find pages, in one call.",
    examples=[
        "mnemosyne wiki find mastra --vault ~/aion",
        "mnemosyne wiki find mastra slack --json",
        "mnemosyne wiki find kestrel --cat",
    ],
)
WIKI = Command(
    "wiki",
    WikiArguments,
    summary="work with the wiki vault",
    description="Work with the wiki vault: find pages, recall knowledge, ingest sources, lint; "
    "'wiki guide' prints how an agent finds pages.",
    examples=["mnemosyne wiki find mastra", "mnemosyne wiki find --help"],
)


class _VersionAction(argparse.Action):
    """--version, built only when asked for: reading the installed packages' metadata
    costs milliseconds no other call should pay."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        env: Environment,
        help: str | None = None,  # noqa: A002
    ):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.env = env

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from mnemosyne_cli.versions import version_report

        print_message(self.env, version_report() + "\n")
        parser.exit()


def command_name(command: ModuleType) -> str:
    """The wiki command a module of WIKI_COMMANDS registers: its module name (a test holds
    every module to that)."""
    return command.__name__.rpartition(".")[2]


def build_parser(
    env: Environment,
    only: str | None = None,
    complete: Completer | None = None,
    beside: Sequence[Command] = (),
) -> Parser:
    """The whole command tree: ``mnemosyne wiki <command>``, and the commands ``beside``
    wiki (``completion``, which app passes: its scripts are made from this tree, so this
    module cannot import it). With ``only``, the tree with that one wiki command, which
    parses a call to it exactly as the whole tree does. With ``complete``, the whole tree
    for a completion script (``add_command``). Help and --version are written to the
    call's (``env``) stdout."""
    for_script = complete is not None
    parser = Parser(prog=PROG, add_help=for_script)
    if not for_script:
        add_help(parser, env, MNEMOSYNE, lambda: [WIKI, *beside], "commands")
    parser.add_argument("--version", action=_VersionAction, env=env, help=MnemosyneArguments.version.help)
    groups = parser.add_subparsers(title="commands", dest="group", metavar="COMMAND")
    wiki = groups.add_parser(
        WIKI.name, help=WIKI.summary, add_help=for_script, description=WIKI.summary if for_script else None
    )
    if not for_script:
        add_help(wiki, env, WIKI, wiki_commands, "wiki commands")
    commands = wiki.add_subparsers(title="wiki commands", dest="command", metavar="COMMAND")
    for module in WIKI_COMMANDS:
        if only is None or command_name(module) == only:
            add_command(commands, env, module.COMMAND, complete)
    for command in beside:
        add_command(groups, env, command, complete)
    return parser


def wiki_commands() -> list[Command]:
    """Every wiki command, in --help's order."""
    return [module.COMMAND for module in WIKI_COMMANDS]
