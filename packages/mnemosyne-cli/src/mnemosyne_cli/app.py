"""``mnemosyne``: the argument parser and ``main``. Each command lives in its own module
under ``mnemosyne_cli.commands``; adding one is a module and a line in WIKI_COMMANDS."""

from __future__ import annotations

import argparse
import os
import sys

from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.help import epilog
from mnemosyne_cli.options import COLOR_MODES
from mnemosyne_cli.output import PROG, Console, guarded
from mnemosyne_contract import ExitCode

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any, NoReturn

    from mnemosyne_cli.environment import Environment
    from mnemosyne_core.backend import Backend


class UsageError(Exception):
    """A bad command line; the message is one line naming the problem and the fix."""


class _ParserExit(Exception):
    def __init__(self, status: int):
        self.status = status


class Parser(argparse.ArgumentParser):
    """argparse, except that errors become UsageError (exit 64, one line) instead of exit 2,
    which means something else here."""

    def __init__(self, *args: Any, **kwargs: Any):
        # An abbreviation (--c for --cat) is a guess; agents should get an error instead.
        kwargs.setdefault("allow_abbrev", False)
        # Every parser, subcommands included: one help layout for the whole command.
        kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _ParserExit(status)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # A mistyped command (wiki fnd) or --color value gets a guess, as a mistyped flag
        # does; and the message is written here, so it reads the same on every Python
        # (newer argparse releases print the choices without quotes).
        if action.choices is None or value in action.choices:
            return
        import difflib  # only a mistyped command line pays for it

        choices = [str(choice) for choice in action.choices]
        guesses = difflib.get_close_matches(str(value), choices, n=1)
        if guesses:
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}: did you mean {guesses[0]!r}?")
        listed = ", ".join(repr(choice) for choice in choices)
        raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from {listed})")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes formatters while it builds parsers, and each would import shutil
        # (~3 ms with bz2 and lzma) for the terminal width: start-up time.
        formatter_class: type[argparse.HelpFormatter] = self.formatter_class  # type: ignore[assignment]
        return formatter_class(prog=self.prog, width=_help_width())


def _paragraphs(text: str) -> list[str]:
    """The lines of a help text with each run of prose lines (not blank, not indented)
    joined into one; blank and indented lines (examples, exit codes) stay as they are."""
    joined: list[str] = []
    prose = False
    for line in text.splitlines():
        is_prose = bool(line) and not line[0].isspace()
        if is_prose and prose:
            joined[-1] += " " + line
        else:
            joined.append(line)
        prose = is_prose
    return joined


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """--help wrapped to the terminal's width (``_help_width``): the prose of descriptions
    and each exit code's meaning (under its code) wrap; example command lines stay whole,
    one per line, so they can be copied. Consecutive prose lines are one paragraph, wrapped
    as a whole: a description written in lines of its own width would otherwise leave a
    word or two of each line alone on the next at a narrower terminal."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import re
        import textwrap

        lines: list[str] = []
        for line in _paragraphs(text):
            exit_code = re.match(r"(\s+\d+\s+)\S", line)
            if exit_code:
                hanging = exit_code.group(1)
                lines += textwrap.wrap(
                    line[len(hanging) :],
                    width,
                    initial_indent=indent + hanging,
                    subsequent_indent=indent + " " * len(hanging),
                )
            elif not line or line[0].isspace():  # a blank line, or an example: verbatim
                lines.append(indent + line if line else "")
            else:
                lines += textwrap.wrap(line, width, initial_indent=indent, subsequent_indent=indent)
        return "\n".join(lines)

    def _get_actions_usage_parts(self, actions: Sequence[argparse.Action], groups: Any) -> list[str]:
        # Python 3.13 made each argument one unbreakable piece of the usage, so a narrow
        # terminal got "KEYWORD [KEYWORD ...]" overhanging its edge; earlier Pythons break
        # between such words. Breaking as they do gives one usage on every Python.
        import re

        parts: list[str] = getattr(super(), "_get_actions_usage_parts")(actions, groups)  # noqa: B009
        return [piece for part in parts for piece in re.findall(_USAGE_PIECE, part)]


#: What earlier Pythons' argparse wraps a usage line between: a (group), an [optional] or a word.
_USAGE_PIECE = r"\(.*?\)+(?=\s|$)|\[.*?\]+(?=\s|$)|\S+"


class _VersionAction(argparse.Action):
    """--version, built only when asked for: reading the installed packages' metadata
    costs milliseconds no other call should pay."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None):  # noqa: A002
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from mnemosyne_cli.versions import version_report

        sys.stdout.write(version_report() + "\n")
        parser.exit()


def _help_width() -> int:
    """The width argparse wraps help to: shutil.get_terminal_size()'s columns, less 2."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    # A width below ~20 leaves argparse no room for a word per line; 22 - 2 is the floor.
    return max(columns or 80, 22) - 2


def command_name(command: ModuleType) -> str:
    """The wiki command a module of WIKI_COMMANDS registers: its module name (a test holds
    every module to that)."""
    return command.__name__.rpartition(".")[2]


def build_parser(only: str | None = None) -> Parser:
    """The whole command tree: ``mnemosyne wiki <command>``; with ``only``, the tree with
    that one wiki command, which parses a call to it exactly as the whole tree does."""
    parser = Parser(
        prog=PROG,
        description="Find pages of a markdown wiki vault by keyword, deterministically: "
        "no LLM, answered from the files themselves (nothing kept that could go stale), exact exit codes.\n\n"
        "Agents: 'mnemosyne wiki guide' prints how to find pages, in one call.",
        epilog=epilog(
            [
                "mnemosyne wiki find mastra --vault ~/aion",
                "mnemosyne wiki find mastra slack --json",
                "mnemosyne wiki find kestrel --cat",
            ]
        ),
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="print the version of mnemosyne and of each installed package, and exit",
    )
    groups = parser.add_subparsers(title="commands", dest="group", metavar="COMMAND")
    wiki = groups.add_parser(
        "wiki",
        help="work with the wiki vault",
        description="Work with the wiki vault: find pages, recall knowledge, ingest sources, lint; "
        "'wiki guide' prints how an agent finds pages.",
        epilog=epilog(
            ["mnemosyne wiki find mastra", "mnemosyne wiki find --help"],
        ),
    )
    commands = wiki.add_subparsers(title="wiki commands", dest="command", metavar="COMMAND")
    for command in WIKI_COMMANDS:
        if only is None or command_name(command) == only:
            command.register(commands)
    if only is None:  # a wiki command's call never imports completion (start-up time)
        from mnemosyne_cli import completion

        completion.register(groups, build_parser)
    return parser


def main(
    argv: Sequence[str] | None = None,
    env: Environment | None = None,
    *,
    ask_server: bool = True,
    backend: Backend | None = None,
) -> int:
    """Run ``mnemosyne`` with ``argv`` (default: sys.argv[1:]) in ``env`` (default: this
    process's environment, current dir, home and streams) and return the exit code.

    A find or recall call goes to the vault's ``wiki serve`` when one runs (unless
    ``ask_server`` is false or the call says --no-server); its answer is the same bytes.
    ``backend`` is where find and recall get their pages (default: the scan); given one,
    no server is asked.
    """
    if env is None:
        from mnemosyne_cli.environment import Environment

        env = Environment()
    console = Console(env)
    words = sys.argv[1:] if argv is None else list(argv)
    ask = ask_server and backend is None
    return guarded(console, lambda: _run(words, console, ask, backend))


def _run(words: list[str], console: Console, ask_server: bool, backend: Backend | None) -> int:
    # Errors can come before argparse has read --color: honour it as written.
    console.color_mode = color_flag(words)
    if any("\0" in word for word in words):
        # No shell can pass one, but main() can be called directly; no path holds one.
        console.error("an argument contains a NUL byte: remove it")
        return ExitCode.USAGE
    wiki_command_names = {command_name(command) for command in WIKI_COMMANDS}
    if words and words[0] in wiki_command_names:
        console.error(f"unknown command {words[0]!r}: did you mean '{PROG} wiki {words[0]}'?")
        return ExitCode.USAGE
    # A call to one wiki command builds only its parser: the others' cost ~3 ms of
    # start-up; anything else (help, a typo) gets the whole tree.
    named = words[1] if len(words) > 1 and words[0] == "wiki" else None
    parser = build_parser(named if named in wiki_command_names else None)
    try:
        args, extras = parser.parse_known_args(words)
    except UsageError as error:
        console.error(_without_keywords_message(parser, words, named) or str(error))
        return ExitCode.USAGE
    except _ParserExit as done:
        return done.status
    # Named by the command they were given to, so the pointer goes to the right --help.
    where = " ".join(word for word in (PROG, args.group, getattr(args, "command", None)) if word)
    if extras:
        console.error(unrecognized_message(parser, args, extras, where, words))
        return ExitCode.USAGE
    console.color_mode = getattr(args, "color", "auto")
    handler = getattr(args, "handler", None)
    if handler is None:
        console.error(f"no command given: try '{where} --help'")
        return ExitCode.USAGE
    return int(handler(args, console, backend or backend_for(args, console.env, ask_server)))


def backend_for(args: Any, env: Environment, ask_server: bool) -> Backend:
    """Where a call's pages come from: for find and recall, as ``client.backend_for``
    says (the server is asked only when ``ask_server``); else the scan."""
    if getattr(args, "command", None) in ("find", "recall"):
        from mnemosyne_cli.client import backend_for as pages_for

        return pages_for(env, no_cache=args.no_cache, no_server=args.no_server or not ask_server)
    from mnemosyne_core.backend import SCAN

    return SCAN


def color_flag(words: Sequence[str]) -> str:
    """The last valid ``--color WHEN`` or ``--color=WHEN`` before any ``--``, else auto."""
    mode = "auto"
    for index, word in enumerate(words):
        if word == "--":
            break
        if word.startswith("--color="):
            value: str | None = word.partition("=")[2]
        elif word == "--color" and index + 1 < len(words):
            value = words[index + 1]
        else:
            continue
        if value in COLOR_MODES:
            mode = value
    return mode


#: The wiki commands whose words are keywords: one that starts with '-' goes after '--'.
KEYWORD_COMMANDS = ("find", "recall")
#: A placeholder keyword (no shell passes a NUL) that lets argparse say which words it did
#: not know when the keywords are missing.
_PLACEHOLDER = "\0"


def unrecognized_message(
    parser: Parser, args: argparse.Namespace, extras: list[str], where: str, words: Sequence[str] = ()
) -> str:
    """The error for arguments no parser took: each unknown flag close to one the command
    knows gets ``did you mean --json?``; else, in find and recall, an unknown short flag
    (``-v``) is taken for a keyword and gets the command that searches for it; without
    either, the pointer to --help."""
    import difflib  # only a mistyped command line pays for it

    command_parser = _command_parser(parser, args.group, getattr(args, "command", None))
    known = [option for action in command_parser._actions for option in action.option_strings]
    guesses = []
    for word in extras:
        if word.startswith("-"):
            guesses += difflib.get_close_matches(word.partition("=")[0], known, n=1)
    unknown = f"unrecognized arguments: {' '.join(extras)}"
    if guesses:
        return f"{unknown}: did you mean {', '.join(dict.fromkeys(guesses))}?"
    if getattr(args, "command", None) in KEYWORD_COMMANDS:
        flags = [word for word in extras if _looks_like_flag(word)]
        if flags and all(not word.startswith("--") for word in flags):
            return f"{unknown}; {_keywords_after_double_dash(command_parser, words)}"
    return f"{unknown} (see '{where} --help')"


def _command_parser(parser: argparse.ArgumentParser, *names: str | None) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``names`` leads to, as far as they lead."""
    for name in names:
        subparsers = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
        if name is None or not subparsers or name not in subparsers[0].choices:
            break
        parser = subparsers[0].choices[name]
    return parser


def _without_keywords_message(parser: Parser, words: list[str], command: str | None) -> str | None:
    """For a find or recall call with no keyword but words argparse does not know as
    flags (``find -v``, ``find --verbose``): the command that searches for them. None for
    any other call."""
    if command not in KEYWORD_COMMANDS:
        return None
    placeholder = [_PLACEHOLDER] if "--" in words else ["--", _PLACEHOLDER]
    try:
        _, extras = parser.parse_known_args([*words, *placeholder])
    except (UsageError, _ParserExit):
        return None  # something else is wrong too: argparse's own message says what
    flags = [word for word in extras if _looks_like_flag(word)]
    if not flags or len(flags) != len(extras):
        return None
    command_parser = _command_parser(parser, "wiki", command)
    return f"unrecognized arguments: {' '.join(flags)}; {_keywords_after_double_dash(command_parser, words)}"


def _looks_like_flag(word: str) -> bool:
    """A word argparse reads as a flag: a dash and more, but not a negative number
    (find and recall take those as keywords)."""
    return word.startswith("-") and word != "-" and not word[1:].replace(".", "", 1).isdigit()


def _keywords_after_double_dash(command_parser: argparse.ArgumentParser, words: Sequence[str]) -> str:
    """The way out for words meant as keywords that argparse took for flags: the same
    ``wiki <command>`` call with its options first, then ``--``, then every keyword, in
    the order given (argparse takes one run of keywords, so all of them go after it)."""
    import shlex

    options: list[str] = []
    keywords: list[str] = []
    index = 2  # past "wiki <command>"
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            keywords += words[index:]
            break
        action = command_parser._option_string_actions.get(word.partition("=")[0]) if word.startswith("-") else None
        if action is None:
            keywords.append(word)  # a keyword, or a flag-like word meant as one
            continue
        options.append(word)
        if action.nargs is None and "=" not in word and index < len(words):
            options.append(words[index])  # the option's value
            index += 1
    command = shlex.join([PROG, *words[:2], *options, "--", *keywords])
    return f"to search for a word that starts with '-', put the keywords after '--': {command}"


def run() -> NoReturn:
    """Run main as a script (the console script is ``console_script.run``)."""
    sys.exit(main())
