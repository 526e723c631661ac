"""The ``mnemosyne`` console script.

A plain ``wiki find`` call (keywords, ``--vault``, ``--limit`` and the output flags) is
parsed here, without argparse: importing argparse and building its parser cost more than
searching a small vault (issue 13). Every other call, and every call this parser is not
sure of (help, ``--dir``, a keyword starting with ``-``, a repeated or unknown flag, a bad
value), goes to ``app.main`` and its argparse parser, which stays the reference:
tests/test_console_script.py holds the two to the same arguments.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time (issue 6)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import SimpleNamespace
    from typing import NoReturn

#: find's flags and options this parser takes, by their attribute in the parsed arguments.
_FIND_FLAGS = {
    "--json": "json",
    "--matched": "matched",
    "--cat": "cat",
    "--paths": "paths",
    "--absolute": "absolute",
    "--null": "null",
    "-0": "null",
    "--no-server": "no_server",
}
_FIND_OPTIONS = {"--vault": "vault", "--limit": "limit", "--color": "color"}


def find_arguments(words: Sequence[str]) -> SimpleNamespace | None:
    """The arguments argparse would parse from ``words`` for a plain ``wiki find`` call, or
    None when the call is not one (then argparse decides, errors included)."""
    if len(words) < 3 or words[0] != "wiki" or words[1] != "find":
        return None
    from types import SimpleNamespace

    from mnemosyne_cli.commands import find
    from mnemosyne_cli.output import COLOR_MODES

    parsed: dict[str, object] = dict.fromkeys(_FIND_FLAGS.values(), False)
    parsed.update(limit=find.DEFAULT_LIMIT, vault=None, color="auto")
    keywords: list[str] = []
    keyword_runs = 0
    seen: set[str] = set()
    after_keyword = False
    position = 2
    while position < len(words):
        word = words[position]
        position += 1
        if "\0" in word:
            return None
        if not word.startswith("-"):
            # argparse takes one run of keywords; a second run is an unrecognized argument.
            keyword_runs += 0 if after_keyword else 1
            if keyword_runs > 1:
                return None
            keywords.append(word)
            after_keyword = True
            continue
        after_keyword = False
        name, equals, value = word.partition("=")
        if name in seen:
            return None
        seen.add(name)
        if name in _FIND_FLAGS and not equals:
            parsed[_FIND_FLAGS[name]] = True
            continue
        if name not in _FIND_OPTIONS:
            return None
        if not equals:
            if position == len(words):
                return None
            value = words[position]
            position += 1
        if value.startswith("-") or "\0" in value:
            return None
        if name == "--limit":
            limit = find.parse_limit(value)
            if limit is None:
                return None
            parsed["limit"] = limit
        elif name == "--color" and value not in COLOR_MODES:
            return None
        else:
            parsed[_FIND_OPTIONS[name]] = value
    if not keywords:
        return None
    return SimpleNamespace(group="wiki", command="find", keywords=keywords, dir=None, handler=find.run, **parsed)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mnemosyne`` with ``argv`` (default: sys.argv[1:]) and return the exit code."""
    words = sys.argv[1:] if argv is None else list(argv)
    from mnemosyne_cli import client

    try:
        # A running 'wiki serve' for the vault answers with the same bytes (docs/server.md).
        answer = client.ask(words)
    except KeyboardInterrupt:
        if sys.stderr is not None:
            sys.stderr.write("\n")  # end the ^C line the terminal echoed, as main does
        return 130  # ExitCode.INTERRUPTED, not imported: start-up time
    if answer is not None:
        return client.print_answer(answer)
    args = find_arguments(words)
    listed = _list_dirs_call(words) if args is None else None
    if args is None and listed is None:
        from mnemosyne_cli.app import main as parse_and_run

        return parse_and_run(words, ask_server=False)
    from mnemosyne_cli.output import Console, guarded
    from mnemosyne_core.backend import SCAN

    console = Console()
    if listed is not None:
        from mnemosyne_cli.completion import list_dirs

        return guarded(console, lambda: list_dirs(listed[0], console))
    assert args is not None
    console.color_mode = args.color
    return guarded(console, lambda: int(args.handler(args, console, SCAN)))


def _list_dirs_call(words: list[str]) -> tuple[str | None] | None:
    """The vault of a ``completion --list-dirs`` call, which the completion scripts make on
    every Tab, when it needs no argparse (see ``completion.list_dirs_arguments``)."""
    if words[:2] != ["completion", "--list-dirs"]:
        return None
    from mnemosyne_cli.completion import list_dirs_arguments

    return list_dirs_arguments(words)


def run() -> NoReturn:
    """The console script."""
    sys.exit(main())
