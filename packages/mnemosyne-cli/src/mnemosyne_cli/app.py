"""``mnemosyne``: the argument parser and ``main``. Each command lives in its own module
under ``mnemosyne_cli.commands``; adding one is a module and a line in WIKI_COMMANDS."""

from __future__ import annotations

import sys

from mnemosyne_cli.arguments import MNEMOSYNE, WIKI, Parser, ParserExit, UsageError, command_name
from mnemosyne_cli.arguments import build_parser as build_tree
from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.options import (
    COLOR,
    END_OF_OPTIONS,
    HELP_FLAGS,
    Arguments,
    BadValue,
    Command,
    PagesArguments,
    looks_like_a_negative_number,
    one_of,
    shell_line,
)
from mnemosyne_cli.output import PROG, Console, guarded
from mnemosyne_contract import exit_status

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import NoReturn

    from mnemosyne_cli.environment import Environment
    from mnemosyne_core.backend import Backend


def build_parser(env: Environment, only: str | None = None) -> Parser:
    """The whole command tree (``arguments.build_parser``), completion included; with
    ``only``, the tree with that one wiki command, which a call to it parses with."""
    if only is not None:  # a wiki command's call never imports completion (start-up time)
        return build_tree(env, only)
    from mnemosyne_cli import completion

    return build_tree(env, beside=[completion.COMMAND])


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
    ``backend`` is where find and recall get their pages (default: ``backend_for``); given one,
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
        return exit_status.USAGE
    wiki_command_names = {command_name(command) for command in WIKI_COMMANDS}
    if words and words[0] in wiki_command_names:
        console.error(f"unknown command {words[0]!r}: did you mean '{PROG} wiki {words[0]}'?")
        return exit_status.USAGE
    mistyped = mistyped_command(words)
    if mistyped:
        console.error(mistyped)
        return exit_status.USAGE
    # A call to one wiki command builds only its parser: the others' cost ~3 ms of
    # start-up; anything else (help, a typo) gets the whole tree.
    named = words[1] if len(words) > 1 and words[0] == "wiki" else None
    parser = build_parser(console.env, named if named in wiki_command_names else None)
    try:
        parsed, extras = parser.parse_known_args(words)
    except UsageError as error:
        console.error(_without_keywords_message(parser, words, named) or str(error))
        return exit_status.USAGE
    except ParserExit as done:
        return done.status
    group, name = parsed.group, getattr(parsed, "command", None)
    # Named by the command they were given to, so the pointer goes to the right --help.
    where = " ".join(word for word in (PROG, group, name) if word)
    module = _module(group, name)
    if extras:
        console.error(unrecognized_message(_declared(group, module), extras, where, words))
        return exit_status.USAGE
    if module is None:
        console.error(f"no command given: try '{where} --help'")
        return exit_status.USAGE
    declared: Command = module.COMMAND
    arguments = declared.arguments(**{row.dest: getattr(parsed, row.dest) for row in declared.arguments.table})
    console.color_mode = getattr(arguments, COLOR.dest, COLOR.default)
    return int(module.run(arguments, console, backend or backend_for(arguments, console.env, ask_server)))


def _module(group: str | None, name: str | None) -> ModuleType | None:
    """The module that runs the command argparse reached, if it reached one."""
    if group == "completion":
        from mnemosyne_cli import completion

        return completion
    return next((module for module in WIKI_COMMANDS if command_name(module) == name), None)


def _declared(group: str | None, module: ModuleType | None) -> Command:
    """The declaration of the (sub)command a call reached."""
    if module is not None:
        command: Command = module.COMMAND
        return command
    return WIKI if group == WIKI.name else MNEMOSYNE


def backend_for(arguments: Arguments, env: Environment, ask_server: bool) -> Backend | None:
    """Where a call's pages come from: for find and recall, as ``client.backend_for``
    says (the server is asked only when ``ask_server``); None for the other commands,
    which ask no Backend."""
    if isinstance(arguments, PagesArguments):
        from mnemosyne_cli.client import backend_for as pages_for

        return pages_for(env, no_cache=arguments.no_cache, no_server=arguments.no_server or not ask_server)
    return None


def color_flag(words: Sequence[str]) -> str:
    """The last valid ``--color WHEN`` or ``--color=WHEN`` before any ``--``, else auto."""
    mode = COLOR.default
    for index, word in enumerate(words):
        if word == END_OF_OPTIONS:
            break
        name, equals, value = word.partition("=")
        if name not in COLOR.names:
            continue
        if not equals:
            if index + 1 == len(words):
                continue
            value = words[index + 1]
        if COLOR.choices is not None and value in COLOR.choices:
            mode = value
    return mode


def mistyped_command(words: Sequence[str]) -> str | None:
    """The error for a command name that is none (``wkii``, ``wiki fnd``), with a guess, as
    argparse would give it: for the first word it reads as no option at each level
    (``--`` included: argparse hands it to the command's choice). None when there is none,
    or when one of the level's own options comes first (argparse then prints help or
    --version, or says what is wrong with it)."""
    index = _command_word(words, 0, (*HELP_FLAGS, "--version"))
    if index is None:
        return None
    if words[index] != WIKI.name:
        from mnemosyne_cli import completion  # not for a wiki command's call: start-up time

        return _choice_error(words[index], (WIKI.name, completion.COMMAND.name), PROG)
    index = _command_word(words, index + 1, HELP_FLAGS)
    if index is None:
        return None
    return _choice_error(words[index], tuple(command_name(module) for module in WIKI_COMMANDS), f"{PROG} wiki")


def _command_word(words: Sequence[str], start: int, options: Sequence[str]) -> int | None:
    """Where argparse finds the command among ``words[start:]``, for a parser whose only
    options are ``options``; None when it finds none, or one of those options first."""
    for index in range(start, len(words)):
        read = _read_before_command(words[index], options)
        if read == _OWN_OPTION:
            return None
        if read == _POSITIONAL:
            return index
    return None


def _choice_error(word: str, names: tuple[str, ...], where: str) -> str | None:
    """argparse's error for a command ``word`` that is none of ``names``, worded as for a
    flag's value (with a guess), or None when it is one."""
    try:
        one_of(names)(word)
    except BadValue as bad:
        return f"argument COMMAND: {bad} (see '{where} --help')"
    return None


#: How argparse reads a word before a command's name (``_read_before_command``).
_OWN_OPTION, _UNKNOWN_OPTION, _POSITIONAL = "own option", "unknown option", "positional"


def _read_before_command(word: str, options: Sequence[str]) -> str:
    """As argparse reads ``word`` where a parser whose only options are ``options`` expects
    its command: one of them (given a value with ``=`` or run on, as in ``-hx``, it is still
    one, which argparse then refuses), another option, or a positional word (``-``, ``--``,
    a negative number, a word with a space)."""
    if not word.startswith("-") or word in ("-", END_OF_OPTIONS):
        return _POSITIONAL
    if word.partition("=")[0] in options or (not word.startswith("--") and word[:2] in options):
        return _OWN_OPTION
    if looks_like_a_negative_number(word) or " " in word:
        return _POSITIONAL
    return _UNKNOWN_OPTION


#: The wiki commands whose words are keywords: one that starts with '-' goes after '--'.
KEYWORD_COMMANDS = ("find", "recall")
#: A placeholder keyword (no shell passes a NUL) that lets argparse say which words it did
#: not know when the keywords are missing.
_PLACEHOLDER = "\0"


def unrecognized_message(command: Command, extras: list[str], where: str, words: Sequence[str] = ()) -> str:
    """The error for arguments no parser took: each unknown flag close to one the command
    knows gets ``did you mean --json?``; else, in find and recall, an unknown short flag
    (``-v``) is taken for a keyword and gets the command that searches for it; without
    either, the pointer to --help."""
    import difflib  # only a mistyped command line pays for it

    known = [*HELP_FLAGS, *(name for row in command.arguments.table for name in row.names)]
    guesses = []
    for word in extras:
        if word.startswith("-"):
            guesses += difflib.get_close_matches(word.partition("=")[0], known, n=1)
    unknown = f"unrecognized arguments: {' '.join(extras)}"
    if guesses:
        return f"{unknown}: did you mean {', '.join(dict.fromkeys(guesses))}?"
    if command.name in KEYWORD_COMMANDS:
        flags = [word for word in extras if _looks_like_flag(word)]
        if flags and all(not word.startswith("--") for word in flags):
            return f"{unknown}; {_keywords_after_double_dash(command, words)}"
    return f"{unknown} (see '{where} --help')"


def _without_keywords_message(parser: Parser, words: list[str], name: str | None) -> str | None:
    """For a find or recall call with no keyword but words argparse does not know as
    flags (``find -v``, ``find --verbose``): the command that searches for them. None for
    any other call."""
    if name not in KEYWORD_COMMANDS:
        return None
    placeholder = [_PLACEHOLDER] if END_OF_OPTIONS in words else [END_OF_OPTIONS, _PLACEHOLDER]
    try:
        _, extras = parser.parse_known_args([*words, *placeholder])
    except (UsageError, ParserExit):
        return None  # something else is wrong too: argparse's own message says what
    flags = [word for word in extras if _looks_like_flag(word)]
    if not flags or len(flags) != len(extras):
        return None
    command = _declared("wiki", _module("wiki", name))
    return f"unrecognized arguments: {' '.join(flags)}; {_keywords_after_double_dash(command, words)}"


def _looks_like_flag(word: str) -> bool:
    """A word argparse reads as a flag: a dash and more, but not a negative number
    (find and recall take those as keywords)."""
    return word.startswith("-") and word != "-" and not looks_like_a_negative_number(word)


def _keywords_after_double_dash(command: Command, words: Sequence[str]) -> str:
    """The way out for words meant as keywords that argparse took for flags: the same
    ``wiki <command>`` call with its options first, then ``--``, then every keyword, in
    the order given (argparse takes one run of keywords, so all of them go after it)."""
    options: list[str] = []
    keywords: list[str] = []
    index = 2  # past "wiki <command>"
    while index < len(words):
        word = words[index]
        index += 1
        if word == END_OF_OPTIONS:
            keywords += words[index:]
            break
        name = word.partition("=")[0]
        row = command.arguments.option(name) if word.startswith("-") else None
        if row is None and name not in HELP_FLAGS:
            keywords.append(word)  # a keyword, or a flag-like word meant as one
            continue
        options.append(word)
        if row is not None and row.takes_value and "=" not in word and index < len(words):
            options.append(words[index])  # the option's value
            index += 1
    command_line = shell_line([PROG, *words[:2], *options, "--", *keywords])
    return f"to search for a word that starts with '-', put the keywords after '--': {command_line}"


def run() -> NoReturn:
    """Run main as a script (the console script is ``console_script.run``)."""
    sys.exit(main())
