"""Colour on a terminal: find's path and title, lint's codes, the
error: and warning: prefixes; --color, NO_COLOR, FORCE_COLOR, TERM=dumb and each stream's
own tty-ness, in that order of precedence. capsys's streams are not terminals, so each
test says which stream is one. Exact stdout, stderr and exit code through ``main``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import pytest

from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_cli.output import wants_color

FakeVault = Callable[[dict[str, str | bytes]], str]

PAGES: dict[str, str | bytes] = {
    "atlas/kestrel.md": "---\ntitle: Kestrel Notes\n---\nkestrel\n",
    "hermes/relay.md": "---\ntitle: Relay\n---\nrelay\n",
    "hermes/relay-two.md": "---\ntitle: Relay Two\n---\nrelay\n",
    "metis/ansi.md": '---\ntitle: "Red \\e[31mAlert"\n---\nalert\n',
}

PLAIN_LINE = "atlas/kestrel.md — Kestrel Notes\n"
COLOURED_LINE = "\x1b[35matlas/kestrel.md\x1b[0m — \x1b[32mKestrel Notes\x1b[0m\n"
PLAIN_ERROR = "mnemosyne: error: "
COLOURED_ERROR = "mnemosyne: \x1b[1;31merror:\x1b[0m "
COLOURED_WARNING = "mnemosyne: \x1b[1;33mwarning:\x1b[0m "


def run(capsys: pytest.CaptureFixture[str], *argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``main(argv)``, in the process's environment with ``environ`` added."""
    code = main(list(argv), Environment({**os.environ, **(environ or {})}))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Make capsys's stdout and/or stderr report that they are a terminal."""

    def make(*, stdout: bool = False, stderr: bool = False) -> None:
        monkeypatch.setattr(sys.stdout, "isatty", lambda: stdout)
        monkeypatch.setattr(sys.stderr, "isatty", lambda: stderr)

    return make


# --- find's lines: which settings colour them ---


@pytest.mark.parametrize(
    ("tty", "env", "flag", "coloured"),
    [
        (True, {}, [], True),  # auto on a terminal
        (False, {}, [], False),  # auto into a pipe or file
        (False, {}, ["--color", "always"], True),
        (True, {}, ["--color", "never"], False),
        (True, {}, ["--color=never"], False),
        (True, {"NO_COLOR": "1"}, [], False),
        (True, {"NO_COLOR": ""}, [], True),  # empty: not set
        (False, {"FORCE_COLOR": "1"}, [], True),
        (False, {"FORCE_COLOR": "0"}, [], True),  # any non-empty value forces it
        (False, {"FORCE_COLOR": ""}, [], False),
        (True, {"TERM": "dumb"}, [], False),
        (False, {"TERM": "dumb", "FORCE_COLOR": "1"}, [], True),  # FORCE_COLOR before TERM
        (True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, [], False),  # NO_COLOR before FORCE_COLOR
        (False, {"NO_COLOR": "1"}, ["--color", "always"], True),  # the flag before both
        (True, {"FORCE_COLOR": "1"}, ["--color", "never"], False),
        (False, {}, ["--color", "never", "--color", "always"], True),  # the last flag wins
    ],
)
def test_which_settings_colour_finds_lines(
    fake_vault: FakeVault,
    capsys: pytest.CaptureFixture[str],
    terminal: Callable[..., None],
    tty: bool,
    env: dict[str, str],
    flag: list[str],
    coloured: bool,
) -> None:
    vault = fake_vault(PAGES)
    terminal(stdout=tty)
    assert run(capsys, "wiki", "find", "kestrel", *flag, "--vault", vault, environ=env) == (
        0,
        COLOURED_LINE if coloured else PLAIN_LINE,
        "",
    )


def test_control_characters_are_escaped_before_the_colour_is_added(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "alert", "--color", "always", "--vault", vault) == (
        0,
        "\x1b[35mmetis/ansi.md\x1b[0m — \x1b[32mRed \\x1b[31mAlert\x1b[0m\n",
        "",
    )


@pytest.mark.parametrize(
    ("flags", "out"),
    [
        (
            ["--json"],
            '[{"path": "atlas/kestrel.md", "title": "Kestrel Notes", "constellation": "atlas", "type": null}]\n',
        ),
        (["--paths"], "atlas/kestrel.md\n"),
        (["--paths", "-0"], "atlas/kestrel.md\0"),
        (["--cat"], "---\ntitle: Kestrel Notes\n---\nkestrel\n"),
    ],
)
def test_json_paths_and_cat_are_never_coloured(
    fake_vault: FakeVault,
    capsys: pytest.CaptureFixture[str],
    terminal: Callable[..., None],
    flags: list[str],
    out: str,
) -> None:
    vault = fake_vault(PAGES)
    terminal(stdout=True)
    assert run(capsys, "wiki", "find", "kestrel", *flags, "--color", "always", "--vault", vault) == (0, out, "")


def test_cats_candidate_list_is_never_coloured(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    code, out, err = run(capsys, "wiki", "find", "relay", "--cat", "--color", "always", "--vault", vault)
    assert (code, out) == (2, "")
    assert "\x1b" not in err
    assert "  hermes/relay.md — Relay\n" in err


# --- stderr's prefixes: stderr's own terminal decides ---


def test_stderr_colour_follows_stderr_not_stdout(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], terminal: Callable[..., None]
) -> None:
    vault = fake_vault(PAGES)
    argv = ["wiki", "find", "kestrel", "--dir", "atlas", "--dir", "nope", "--vault", vault]
    warning = "--dir 'nope' names no dir of the vault; its dirs are atlas, hermes, metis\n"
    terminal(stdout=True, stderr=False)  # find | less is fine, 2>log stays plain
    assert run(capsys, *argv) == (0, COLOURED_LINE, f"mnemosyne: warning: {warning}")
    terminal(stdout=False, stderr=True)  # find > list: the file plain, the terminal coloured
    assert run(capsys, *argv) == (0, PLAIN_LINE, f"{COLOURED_WARNING}{warning}")


@pytest.mark.parametrize(
    ("argv", "env", "stderr"),
    [
        # argparse fails before it reads --color: the flag as written still counts.
        (["wiki", "find", "x", "--bogus", "--color", "never"], {"FORCE_COLOR": "1"}, PLAIN_ERROR),
        (["wiki", "find", "x", "--bogus", "--color=always"], {}, COLOURED_ERROR),
        (["wiki", "find", "x", "--bogus"], {"FORCE_COLOR": "1"}, COLOURED_ERROR),
        # After "--" a word is a keyword, not the flag.
        (["wiki", "find", "--bogus", "--", "--color", "always"], {}, PLAIN_ERROR),
    ],
)
def test_usage_errors_honour_the_flag_as_written(
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    env: dict[str, str],
    stderr: str,
) -> None:
    code, out, err = run(capsys, *argv, environ=env)
    assert (code, out) == (64, "")
    assert err.startswith(stderr)


def test_an_error_after_parsing_is_coloured_on_a_terminal(
    capsys: pytest.CaptureFixture[str], terminal: Callable[..., None]
) -> None:
    terminal(stderr=True)
    assert run(capsys, "wiki", "find", "x", "--vault", "/missing") == (
        3,
        "",
        f"{COLOURED_ERROR}vault '/missing' does not exist: pass --vault PATH to your vault root\n",
    )


@pytest.mark.parametrize(
    "command",
    [
        ["recall", "x", "--vault", "/missing"],
        ["ingest", "missing.md", "--constellation", "atlas"],
        ["lint", "--vault", "/missing"],
        ["info", "--vault", "/missing"],
    ],
)
def test_every_command_takes_the_flag(
    capsys: pytest.CaptureFixture[str], terminal: Callable[..., None], command: list[str]
) -> None:
    terminal(stderr=True)
    _, _, err = run(capsys, "wiki", *command, "--color", "never")
    assert err.startswith(PLAIN_ERROR)
    _, _, err = run(capsys, "wiki", *command)
    assert err.startswith(COLOURED_ERROR)


def test_a_bad_color_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "x", "--color", "yes") == (
        64,
        "",
        "mnemosyne: error: argument --color: invalid choice: 'yes' (choose from 'auto', 'always', 'never') "
        "(see 'mnemosyne wiki find --help')\n",
    )


# --- lint's codes ---


def test_lint_colours_only_the_code_and_never_its_json(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], terminal: Callable[..., None]
) -> None:
    vault = fake_vault({"atlas/plain.md": "# no frontmatter\n"})
    terminal(stdout=True)
    message = "no frontmatter (first line is not ---); find shows the file name stem"
    assert run(capsys, "wiki", "lint", "--vault", vault) == (
        1,
        f"atlas/plain.md\t\x1b[33mno-frontmatter\x1b[0m\t{message}\n",
        "1 finding in 1 path\n",
    )
    code, out, _ = run(capsys, "wiki", "lint", "--json", "--color", "always", "--vault", vault)
    assert (code, "\x1b" in out) == (1, False)
    terminal(stdout=False)
    assert run(capsys, "wiki", "lint", "--vault", vault)[1] == f"atlas/plain.md\tno-frontmatter\t{message}\n"


# --- the decision itself ---


def test_a_closed_or_streamless_output_is_not_a_terminal() -> None:
    class Closed:
        def isatty(self) -> bool:
            raise ValueError("I/O operation on closed file")

    assert wants_color("auto", Closed(), {}) is False
    assert wants_color("auto", None, {}) is False
    assert wants_color("always", None, {}) is True
