"""--help wraps to the terminal's width: COLUMNS when set. Prose and
exit-code meanings wrap; example command lines stay whole so they can be copied."""

from __future__ import annotations

import itertools
import re

import pytest

from mnemosyne_cli.app import main
from mnemosyne_cli.commands import WIKI_COMMANDS

HELP_CALLS = [["--help"], ["wiki", "--help"]] + [
    ["wiki", command.__name__.rpartition(".")[2], "--help"] for command in WIKI_COMMANDS
]


def help_text(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def examples_of(text: str) -> list[str]:
    """The example lines: between 'examples:' and the blank line before 'exit codes:'."""
    block = text.partition("\nexamples:\n")[2].partition("\n\nexit codes:\n")[0]
    return block.splitlines()


@pytest.mark.parametrize("columns", [40, 60, 100])
@pytest.mark.parametrize("argv", HELP_CALLS, ids=" ".join)
def test_every_line_but_an_example_fits_the_terminal(
    argv: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    text = help_text(capsys, argv)
    usage, _, rest = text.partition("\n\n")
    examples = set(examples_of(text))
    too_wide = [line for line in rest.splitlines() if len(line) > columns - 2 and line not in examples]
    assert too_wide == []
    # argparse indents the usage under the command's name and never splits one [--flag
    # VALUE] group: a usage line may overhang only when it holds a single group.
    overhanging = [line.strip() for line in usage.splitlines() if len(line) > columns - 2]
    assert [line for line in overhanging if " [" in line or line.count(" ") > 1] == []
    assert columns < 60 or overhanging == []


def test_a_narrow_usage_breaks_between_words_on_every_python(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python 3.13's argparse keeps each argument whole in the usage; the usage breaks
    between the words of KEYWORD [KEYWORD ...] on every Python all the same."""
    monkeypatch.setenv("COLUMNS", "40")
    usage = help_text(capsys, ["wiki", "find", "--help"]).partition("\n\n")[0]
    indent = " " * len("usage: mnemosyne wiki find ")
    assert usage.splitlines()[-3:] == [f"{indent}[--no-cache]", f"{indent}KEYWORD", f"{indent}[KEYWORD ...]"]


def test_a_wide_terminal_gets_long_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a fixed 80: at 200 columns the find description runs past 80 characters."""
    monkeypatch.setenv("COLUMNS", "200")
    wide = help_text(capsys, ["wiki", "find", "--help"])
    monkeypatch.setenv("COLUMNS", "80")
    narrow = help_text(capsys, ["wiki", "find", "--help"])
    assert max(map(len, wide.splitlines())) > 100
    assert max(len(line) for line in narrow.splitlines() if line not in examples_of(narrow)) <= 78
    assert " ".join(wide.split()) == " ".join(narrow.split())  # the same words, wrapped apart


def test_examples_stay_whole_and_exit_codes_hang_under_their_meaning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    text = help_text(capsys, ["wiki", "find", "--help"])
    assert "  mnemosyne wiki find mastra --paths -0 --absolute | xargs -0 wc -l" in examples_of(text)
    codes = text.partition("\nexit codes:\n")[2].split("\n\n")[0].splitlines()
    assert codes[0] == "    0  one or more pages match; they"
    assert codes[1] == "       are on stdout"
    assert all(re.match(r"( {2}[ \d]{3}  \S| {7}\S)", line) for line in codes)


def test_a_tiny_or_bad_columns_value_still_prints_help(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "1")
    tiny = help_text(capsys, ["wiki", "info", "--help"])
    monkeypatch.setenv("COLUMNS", "20")
    assert help_text(capsys, ["wiki", "info", "--help"]) == tiny  # 20 columns is the floor
    monkeypatch.setenv("COLUMNS", "wide")
    assert help_text(capsys, ["wiki", "info", "--help"]).startswith("usage: mnemosyne wiki info ")


@pytest.mark.parametrize("columns", [60, 80, 100])
@pytest.mark.parametrize("argv", HELP_CALLS, ids=" ".join)
def test_a_description_wraps_as_paragraphs_without_orphans(
    argv: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each line of a description's paragraph is filled as far as the next word allows:
    a source line wrapped on its own left "a" or "it." alone on a line at 80 columns."""
    monkeypatch.setenv("COLUMNS", str(columns))
    text = help_text(capsys, argv)
    description = text.split("\n\n")[1:]
    first_block = next(block for block in description if not block.startswith(("options:", "positional", " ")))
    width = columns - 2
    lines = first_block.splitlines()
    underfilled = [
        (line, following)
        for line, following in itertools.pairwise(lines)
        if len(line) + 1 + len(following.split()[0]) <= width
    ]
    assert underfilled == []
