"""Every command and flag has help text, every --help ends with examples and exit codes,
and docs/commands.md documents every command and flag. Adding a command without them
fails here."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from mnemosyne_cli.app import build_parser, main
from mnemosyne_cli.commands import WIKI_COMMANDS

COMMANDS_DOC = Path(__file__).resolve().parents[3] / "docs" / "commands.md"


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def wiki_commands() -> dict[str, argparse.ArgumentParser]:
    return subparsers_of(subparsers_of(build_parser())["wiki"])


def doc_section(command: str) -> str:
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## wiki {command}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/commands.md has no '## wiki {command}' section"
    return match.group(1)


def test_every_registered_module_is_a_wiki_command() -> None:
    assert len(wiki_commands()) == len(WIKI_COMMANDS)


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


@pytest.mark.parametrize("command", sorted(wiki_commands()))
def test_every_flag_has_help_and_is_documented(command: str) -> None:
    parser = wiki_commands()[command]
    section = doc_section(command)
    assert parser.description, f"wiki {command} has no description"
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = action.option_strings[-1] if action.option_strings else str(action.metavar or action.dest)
        assert (action.help or "").strip(), f"wiki {command} {name} has no help text"
        assert name in section, f"docs/commands.md '## wiki {command}' does not mention {name}"


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
    parsers = {**wiki_commands(), "completion": subparsers_of(build_parser())["completion"]}
    takes = {name for name, parser in parsers.items() if any("--color" in a.option_strings for a in parser._actions)}
    assert named == takes
    assert refused == set(parsers) - takes


def test_serve_and_every_command_find_the_vault_the_same_way() -> None:
    """No section says a command's --vault defaults to $AION_VAULT alone: every command
    finds the vault as docs/commands.md, "Finding the vault", says."""
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    assert "default `$AION_VAULT` |" not in text
    for command in sorted(wiki_commands()):
        row = re.search(r"^\| `--vault PATH` \| (.*)$", doc_section(command), re.MULTILINE)
        if row:
            assert "[found](#finding-the-vault)" in row.group(1), command
