"""Every command and flag has help text, every --help ends with examples and exit codes,
and docs/commands.md documents every command and flag. Adding a command without them
fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mnemosyne_cli import completion
from mnemosyne_cli.app import main
from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.options import COLOR, Command, Option

COMMANDS_DOC = Path(__file__).resolve().parents[3] / "docs" / "commands.md"


def wiki_commands() -> dict[str, Command]:
    return {module.COMMAND.name: module.COMMAND for module in WIKI_COMMANDS}


def doc_section(command: str) -> str:
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## wiki {command}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/commands.md has no '## wiki {command}' section"
    return match.group(1)


def test_wiki_help_lists_every_wiki_command_and_nothing_else(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "--help"]) == 0
    listed = capsys.readouterr().out.partition("\nwiki commands:\n  COMMAND\n")[2].partition("\n\n")[0]
    assert re.findall(r"^    (\S+)", listed, re.MULTILINE) == list(wiki_commands())


@pytest.mark.parametrize("command", sorted(wiki_commands()))
def test_every_command_has_a_line_in_wiki_help_and_a_usage_in_the_docs(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["wiki", "--help"]) == 0
    listed = capsys.readouterr().out
    assert re.search(rf"^    {command}\s+\S", listed, re.MULTILINE), f"'wiki --help' gives {command} no line of help"
    assert f"    mnemosyne wiki {command}" in doc_section(command), (
        f"docs/commands.md '## wiki {command}' shows no usage line"
    )


def doc_cell(row: Option[object]) -> str:
    """How docs/commands.md's flag table names ``row`` in its first cell: ``KEYWORD``,
    ``--limit N``, ```-0`, `--null```."""
    if row.positional:
        return f"`{row.metavar}`"
    return ", ".join(f"`{name} {row.metavar}`" if row.metavar else f"`{name}`" for name in row.names)


def documented_rows(section: str) -> list[str]:
    """The first cells of the flag tables of a command's section: the rows that name a
    flag or an argument."""
    return re.findall(r"^\| ((?:`-[^`]*`(?:, )?)+|`[A-Z][A-Z_]*`) \|", section, re.MULTILINE)


@pytest.mark.parametrize("command", sorted(wiki_commands()))
def test_every_argument_has_help_and_exactly_the_declared_ones_are_documented(command: str) -> None:
    """The section's flag table has one row per declared argument, in the declared order,
    and no other; each declared argument has help, which --help shows."""
    declared = wiki_commands()[command]
    assert declared.description, f"wiki {command} has no description"
    rows = [row for row in declared.arguments.table if not row.hidden]
    for row in rows:
        assert row.help.strip(), f"wiki {command} {doc_cell(row)} has no help text"
    assert documented_rows(doc_section(command)) == [doc_cell(row) for row in rows]


def test_the_completion_command_is_documented_as_declared() -> None:
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    section = text.partition("\n## completion\n")[2].partition("\n## ")[0]
    rows = [row for row in completion.COMMAND.arguments.table if not row.hidden]
    assert documented_rows(section) == [doc_cell(row) for row in rows]


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["wiki", "--help"], *(["wiki", command, "--help"] for command in sorted(wiki_commands()))],
)
def test_every_help_ends_with_examples_and_exit_codes(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    examples, _, codes = out.partition("\nexamples:\n")[2].partition("\nexit codes:\n")
    assert examples.strip().startswith("mnemosyne "), f"{' '.join(argv)} shows no examples"
    assert re.match(r"\s+0\s+\S", codes), f"{' '.join(argv)} shows no exit codes"
    assert out.rstrip().endswith(codes.rstrip())


def test_commands_doc_lists_every_exit_code() -> None:
    from mnemosyne_contract import ExitCode

    text = COMMANDS_DOC.read_text(encoding="utf-8")
    for code in ExitCode:
        assert re.search(rf"^\| {int(code)} \| {code.name} \|", text, re.MULTILINE), (
            f"exit code {code} is not documented"
        )


def test_the_colour_section_names_exactly_the_commands_that_take_color() -> None:
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    section = text.partition("### Colour\n")[2].partition("\n## ")[0]
    match = re.search(r"bold yellow\. (.*?) take `--color WHEN`; (.*?) do not", section, re.DOTALL)
    assert match, "the Colour section no longer says which commands take --color"
    named = set(re.findall(r"\b[a-z]+\b", match.group(1).replace(" and ", ", "))) - {"and"}
    refused = set(re.findall(r"`([a-z]+)`", match.group(2)))
    commands = {**wiki_commands(), "completion": completion.COMMAND}
    takes = {name for name, command in commands.items() if COLOR in command.arguments.table}
    assert named == takes
    assert refused == set(commands) - takes


def test_serve_and_every_command_find_the_vault_the_same_way() -> None:
    """No section says a command's --vault defaults to $AION_VAULT alone: every command
    finds the vault as docs/commands.md, "Finding the vault", says."""
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    assert "default `$AION_VAULT` |" not in text
    for command in sorted(wiki_commands()):
        row = re.search(r"^\| `--vault PATH` \| (.*)$", doc_section(command), re.MULTILINE)
        if row:
            assert "[found](#finding-the-vault)" in row.group(1), command
