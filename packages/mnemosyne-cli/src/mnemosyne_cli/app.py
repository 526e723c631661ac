"""``mnemosyne``: the argument parser and ``main``. Each command lives in its own module
under ``mnemosyne_cli.commands``; adding one is a module and a line in WIKI_COMMANDS."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, NoReturn

from mnemosyne_cli import __version__
from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.help import epilog
from mnemosyne_cli.output import PROG, Console
from mnemosyne_contract import ExitCode

if TYPE_CHECKING:
    from collections.abc import Sequence


class UsageError(Exception):
    """A bad command line; the message is one line naming the problem and the fix."""


class _ParserExit(Exception):
    def __init__(self, status: int):
        self.status = status


class Parser(argparse.ArgumentParser):
    """argparse, except that errors become UsageError (exit 64, one line) instead of exit 2,
    which means something else here."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _ParserExit(status)


def build_parser() -> Parser:
    """The whole command tree: ``mnemosyne wiki <command>``."""
    parser = Parser(
        prog=PROG,
        description="Find pages of a markdown wiki vault by keyword, deterministically: "
        "no LLM, no index, exact exit codes.",
        epilog=epilog(
            [
                "mnemosyne wiki find mastra --vault ~/aion",
                "mnemosyne wiki find mastra slack --json",
                "mnemosyne wiki find kestrel --cat",
            ]
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version and exit"
    )
    groups = parser.add_subparsers(title="commands", dest="group", metavar="COMMAND")
    wiki = groups.add_parser(
        "wiki",
        help="work with the wiki vault",
        description="Work with the wiki vault: find pages, recall knowledge, ingest sources, lint.",
        epilog=epilog(
            ["mnemosyne wiki find mastra", "mnemosyne wiki find --help"],
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = wiki.add_subparsers(title="wiki commands", dest="command", metavar="COMMAND")
    for command in WIKI_COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mnemosyne`` with ``argv`` (default: sys.argv[1:]) and return the exit code."""
    console = Console()
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except UsageError as error:
            console.error(str(error))
            return ExitCode.USAGE
        except _ParserExit as done:
            return done.status
        handler = getattr(args, "handler", None)
        if handler is None:
            where = "mnemosyne wiki" if args.group == "wiki" else "mnemosyne"
            console.error(f"no command given: try '{where} --help'")
            return ExitCode.USAGE
        return int(handler(args, console))
    except KeyboardInterrupt:
        console.err("")  # end the ^C line the terminal echoed
        return ExitCode.INTERRUPTED


def run() -> NoReturn:
    """The console script."""
    sys.exit(main())
