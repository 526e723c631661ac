"""Every --help, rendered from the command's declaration (options.py): the usage line, the
description, the arguments with their help, the subcommands, then a few real examples and
the exit codes that apply.

The layout is argparse's own (Python 3.11's), written here so that it is the same on every
Python and needs none of argparse's private formatter methods: 3.13 changed how a narrow
terminal breaks the usage line. The text wraps to the terminal's width (COLUMNS when set):
the prose of descriptions and each exit code's meaning (under its code) wrap; example
command lines stay whole, one per line, so they can be copied. Consecutive prose lines are
one paragraph, wrapped as a whole: a description written in lines of its own width would
otherwise leave a word or two of each line alone on the next at a narrower terminal.
"""

from __future__ import annotations

import os

from mnemosyne_cli.options import HELP_TEXT, flag
from mnemosyne_contract import exit_status

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from mnemosyne_cli.options import Command, Option

EXIT_CODE_MEANINGS: dict[int, str] = {
    exit_status.OK: "success",
    exit_status.NO_MATCH: "no match (find: stdout empty, or [] with --json; lint: findings)",
    exit_status.CAT_NEEDS_ONE_MATCH: "--cat matched zero pages or more than one",
    exit_status.VAULT_ERROR: "no vault found, or it is missing, not a directory, without scanned dirs or badly "
    "configured; "
    "or a page could not be read and nothing matched",
    exit_status.TARGET_EXISTS: "the target page exists with other content (--force replaces it)",
    exit_status.INGEST_UNVERIFIED: "the page was written but find cannot locate it",
    exit_status.USAGE: "usage error: unknown flag, bad value, no command or keyword",
    exit_status.BAD_SOURCE: "the source is missing, not a regular file, empty, not UTF-8 or has broken frontmatter",
    exit_status.WRITE_FAILED: "stdout could not take the results, or the page could not be written",
    exit_status.INTERRUPTED: "interrupted (Ctrl-C)",
}


def epilog(examples: list[str], codes: list[tuple[int, str]] | None = None) -> str:
    """The end of a --help: ``examples`` (shell lines), then each exit code with its
    meaning (``codes`` overrides the general wording per command)."""
    meanings = codes if codes is not None else list(EXIT_CODE_MEANINGS.items())
    lines = ["examples:"]
    lines += [f"  {example}" for example in examples]
    lines += ["", "exit codes:"]
    lines += [f"  {int(code):>3}  {meaning}" for code, meaning in meanings]
    return "\n".join(lines)


#: The help row every command has first.
HELP = flag("-h", "--help", help=HELP_TEXT)
#: argparse's indent of a section's rows, and the further indent of a subcommand's.
INDENT = 2
#: The column past which argparse never starts a row's help.
MAX_HELP_POSITION = 24


def help_width(environ: Mapping[str, str], stdout: object) -> int:
    """The width help wraps to: the columns of the terminal ``stdout`` is (COLUMNS in
    ``environ`` when set), less 2, as argparse's ``shutil.get_terminal_size()``, without
    importing shutil (start-up time)."""
    try:
        columns = int(environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns  # type: ignore[attr-defined]
        except (AttributeError, ValueError, OSError):
            columns = 0
    # A width below ~20 leaves no room for a word per line; 22 - 2 is the floor.
    return max(columns or 80, 22) - 2


def render(
    prog: str,
    command: Command,
    subcommands: Sequence[Command] = (),
    title: str = "",
    width: int = 78,
) -> str:
    """The --help of ``command``, called as ``prog``, wrapped to ``width``: with
    ``subcommands``, the list of them under ``title``, each with its summary."""
    rows = [HELP, *(row for row in command.arguments.table if not row.hidden)]
    positionals = [row for row in rows if row.positional]
    optionals = [row for row in rows if not row.positional]
    epilog = _epilog(command)
    blocks = [_usage(prog, optionals, positionals, bool(subcommands), width)]
    blocks.append(fill(command.description, max(width, 11)))
    commands = [("COMMAND", "", INDENT)] if subcommands else []
    commands += [(sub.name, sub.summary, 2 * INDENT) for sub in subcommands]
    sections = [
        ("positional arguments", [(row.invocation(), row.help, INDENT) for row in positionals]),
        ("options", [(row.invocation(), row.help, INDENT) for row in optionals]),
        (title, commands),
    ]
    # argparse's help column: past the longest name (a subcommand's counted as a row's),
    # but no further than 24, and leaving 20 columns for the help.
    longest = max(len(name) + INDENT for _, items in sections for name, _, _ in items)
    max_help_position = min(MAX_HELP_POSITION, max(width - 20, 2 * INDENT))
    help_position = min(longest + 2, max_help_position)
    for title, items in sections:
        if items:
            lines = [f"{title}:"]
            for name, text, indent in items:
                lines += _row(name, text, indent, help_position, width)
            blocks.append("\n".join(lines))
    blocks.append(fill(epilog, max(width, 11)))
    return "\n\n".join(blocks) + "\n"


def _epilog(command: Command) -> str:
    text = epilog(list(command.examples), None if command.exit_codes is None else list(command.exit_codes))
    return f"{text}\n\n{command.note}" if command.note else text


def _row(name: str, text: str, indent: int, help_position: int, width: int) -> list[str]:
    """One row of a section: its name, then its help from the help column (on the same
    line when the name leaves room, else on the next)."""
    import textwrap

    help_lines = textwrap.wrap(" ".join(text.split()), max(width - help_position, 11))
    name_width = help_position - indent - 2
    if not help_lines:
        return [" " * indent + name]
    if len(name) <= name_width:
        lines = [" " * indent + name.ljust(name_width) + "  " + help_lines[0]]
    else:
        lines = [" " * indent + name, " " * help_position + help_lines[0]]
    return lines + [" " * help_position + line for line in help_lines[1:]]


def _usage(
    prog: str, optionals: list[Option[Any]], positionals: list[Option[Any]], subcommands: bool, width: int
) -> str:
    """argparse's usage line: ``usage: PROG [-h] [--flag VALUE] ... POSITIONAL``, broken
    between the words of a [--flag VALUE] group (never inside one) when it is too long:
    the options under the first, the positionals on lines of their own."""
    prefix = "usage: "
    option_parts = [part for row in optionals for part in _parts(row.spelled())]
    positional_parts = [part for row in positionals for part in _parts(row.spelled())]
    if subcommands:
        positional_parts += ["COMMAND", "..."]
    usage = " ".join([prog, *option_parts, *positional_parts])
    if len(prefix) + len(usage) <= width:
        return prefix + usage
    if len(prefix) + len(prog) <= 0.75 * width:
        indent = " " * (len(prefix) + len(prog) + 1)
        if option_parts:
            lines = _lines([prog, *option_parts], indent, width, prefix)
            lines += _lines(positional_parts, indent, width)
        elif positional_parts:
            lines = _lines([prog, *positional_parts], indent, width, prefix)
        else:
            lines = [prog]
    else:
        indent = " " * len(prefix)
        lines = _lines(option_parts + positional_parts, indent, width)
        if len(lines) > 1:
            lines = _lines(option_parts, indent, width) + _lines(positional_parts, indent, width)
        lines = [prog, *lines]
    return prefix + "\n".join(lines)


def _parts(spelled: str) -> list[str]:
    """The pieces a usage line breaks between: a [bracketed group] or a word."""
    import re

    return re.findall(r"\[.*?\]+(?=\s|$)|\S+", spelled)


def _lines(parts: list[str], indent: str, width: int, prefix: str | None = None) -> list[str]:
    """``parts`` laid out in lines of ``width``, each after ``indent`` (the first after
    ``prefix``, when given, instead)."""
    lines: list[str] = []
    line: list[str] = []
    length = len(prefix) - 1 if prefix is not None else len(indent) - 1
    for part in parts:
        if length + 1 + len(part) > width and line:
            lines.append(indent + " ".join(line))
            line = []
            length = len(indent) - 1
        line.append(part)
        length += len(part) + 1
    if line:
        lines.append(indent + " ".join(line))
    if prefix is not None:
        lines[0] = lines[0][len(indent) :]
    return lines


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


def fill(text: str, width: int) -> str:
    """A description or closing text wrapped to ``width``: prose by paragraphs, each exit
    code's meaning hanging under its code, blank lines and examples as they are."""
    import re
    import textwrap

    lines: list[str] = []
    for line in _paragraphs(text):
        exit_code = re.match(r"(\s+\d+\s+)\S", line)
        if exit_code:
            hanging = exit_code.group(1)
            lines += textwrap.wrap(
                line[len(hanging) :], width, initial_indent=hanging, subsequent_indent=" " * len(hanging)
            )
        elif not line or line[0].isspace():  # a blank line, or an example: verbatim
            lines.append(line)
        else:
            lines += textwrap.wrap(line, width)
    return "\n".join(lines)
