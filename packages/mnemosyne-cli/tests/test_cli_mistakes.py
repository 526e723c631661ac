"""Mistakes get a way out: a near-miss flag gets a guess, a wiki
command without ``wiki`` gets the right spelling, ``--dir atlas/`` is ``atlas``, and a
``--dir`` that names no dir of the vault is said, with the dirs it has. Exact stdout,
stderr and exit code through ``main``."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from mnemosyne_cli.app import main
from mnemosyne_cli.arguments import command_name
from mnemosyne_cli.commands import WIKI_COMMANDS

FakeVault = Callable[[dict[str, str | bytes]], str]

PAGES: dict[str, str | bytes] = {
    "atlas/kestrel.md": "---\ntitle: Kestrel Notes\nupdated: 2026-01-01\n---\nkestrel\n",
    "hermes/relay.md": "---\ntitle: Relay\nupdated: 2026-01-01\n---\nkestrel relay\n",
    "notes/idea.md": "---\ntitle: Idea\nupdated: 2026-01-01\n---\nkestrel idea\n",
    "README.md": "not a dir\n",
    ".git/HEAD": "hidden: never listed\n",
}
#: The dirs the vault above has, as a warning or an error lists them.
ITS_DIRS = "its dirs are atlas, hermes, notes"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- a flag close to a known one ---


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["wiki", "find", "x", "--jsn"], "unrecognized arguments: --jsn: did you mean --json?"),
        (["wiki", "find", "x", "--limt=3"], "unrecognized arguments: --limt=3: did you mean --limit?"),
        (["wiki", "find", "x", "--c"], "unrecognized arguments: --c: did you mean --cat?"),
        (
            ["wiki", "find", "x", "--jsn", "--limt", "3"],
            "unrecognized arguments: --jsn --limt 3: did you mean --json, --limit?",
        ),
        (["wiki", "lint", "--jason"], "unrecognized arguments: --jason: did you mean --json?"),
        (
            ["wiki", "recall", "x", "--memory-dri", "m"],
            "unrecognized arguments: --memory-dri m: did you mean --memory-dir?",
        ),
        (["--verison"], "unrecognized arguments: --verison: did you mean --version?"),
        # No flag of the command is close: the pointer to --help instead of a guess.
        (["wiki", "find", "x", "--bogus"], "unrecognized arguments: --bogus (see 'mnemosyne wiki find --help')"),
        (["wiki", "lint", "extra"], "unrecognized arguments: extra (see 'mnemosyne wiki lint --help')"),
    ],
)
def test_an_unknown_flag_close_to_a_known_one_gets_a_guess(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    vault = fake_vault(PAGES)
    extra = ["--vault", vault] if argv[:1] == ["wiki"] else []
    assert run(capsys, *argv, *extra) == (64, "", f"mnemosyne: error: {message}\n")


def test_a_guess_comes_only_from_the_commands_own_flags(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    # --memory-dir is recall's; find never had it, so find must not suggest it.
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "x", "--memory-dri", "--vault", vault) == (
        64,
        "",
        "mnemosyne: error: unrecognized arguments: --memory-dri (see 'mnemosyne wiki find --help')\n",
    )


# --- a wiki command without `wiki` ---


@pytest.mark.parametrize("command", [command_name(module) for module in WIKI_COMMANDS])
def test_a_wiki_command_without_wiki_names_the_right_call(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, command, "mastra", "--json") == (
        64,
        "",
        f"mnemosyne: error: unknown command '{command}': did you mean 'mnemosyne wiki {command}'?\n",
    )


def test_another_unknown_command_keeps_argparses_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "fnd") == (
        64,
        "",
        "mnemosyne: error: argument COMMAND: invalid choice: 'fnd' (choose from 'wiki', 'completion') "
        "(see 'mnemosyne --help')\n",
    )


@pytest.mark.parametrize(
    ("argv", "typo", "guess", "where"),
    [
        (["wiki", "fnd", "mastra"], "fnd", "find", "mnemosyne wiki"),
        (["wiki", "recal", "mastra"], "recal", "recall", "mnemosyne wiki"),
        (["wiki", "lnt"], "lnt", "lint", "mnemosyne wiki"),
        (["wik", "find", "mastra"], "wik", "wiki", "mnemosyne"),
    ],
)
def test_a_mistyped_command_gets_a_guess_as_a_flag_does(
    capsys: pytest.CaptureFixture[str], argv: list[str], typo: str, guess: str, where: str
) -> None:
    assert run(capsys, *argv) == (
        64,
        "",
        f"mnemosyne: error: argument COMMAND: invalid choice: {typo!r}: did you mean {guess!r}? "
        f"(see '{where} --help')\n",
    )


@pytest.mark.parametrize(
    ("argv", "typo", "where"),
    [
        (["--color", "never", "wkii"], "never", "mnemosyne"),  # mnemosyne takes no --color: never is the command
        (["--bogus", "wkii"], "wkii", "mnemosyne"),
        (["wiki", "--bogus", "fnd"], "fnd", "mnemosyne wiki"),
        (["wiki", "fnd", "--help"], "fnd", "mnemosyne wiki"),
        (["--", "wiki"], "--", "mnemosyne"),  # argparse offers "--" itself as the command
    ],
)
def test_the_first_word_that_is_no_flag_is_the_command(
    capsys: pytest.CaptureFixture[str], argv: list[str], typo: str, where: str
) -> None:
    """As argparse reads a command line: flags before the command are skipped over, and a
    help flag after a mistyped command does not print help."""
    code, out, err = run(capsys, *argv)
    assert (code, out) == (64, "")
    assert err.startswith(f"mnemosyne: error: argument COMMAND: invalid choice: {typo!r}")
    assert err.endswith(f"(see '{where} --help')\n")


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--help=x", "wkii"], "argument -h/--help: ignored explicit argument 'x' (see 'mnemosyne --help')"),
        (["--version=x", "wkii"], "argument --version: ignored explicit argument 'x' (see 'mnemosyne --help')"),
        # wiki has no --version of its own: argparse passes over it to the command.
        (
            ["wiki", "--version", "fnd"],
            "argument COMMAND: invalid choice: 'fnd': did you mean 'find'? (see 'mnemosyne wiki --help')",
        ),
        # A word with a space is no option to argparse, even after a dash.
        (
            ["wiki", "-find x", "find"],
            "argument COMMAND: invalid choice: '-find x': did you mean 'find'? (see 'mnemosyne wiki --help')",
        ),
        (
            ["wiki", "zzz"],
            "argument COMMAND: invalid choice: 'zzz' (choose from 'find', 'recall', 'ingest', 'lint', 'info', "
            "'init', 'serve', 'guide') (see 'mnemosyne wiki --help')",
        ),
    ],
)
def test_the_command_is_read_as_argparse_reads_the_words_before_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert run(capsys, *argv) == (64, "", f"mnemosyne: error: {error}\n")


@pytest.mark.parametrize(
    ("argv", "where"), [(["-hx", "wkii"], "mnemosyne"), (["wiki", "-hv", "fnd"], "mnemosyne wiki")]
)
def test_a_help_flag_run_on_is_read_as_this_pythons_argparse_reads_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], where: str
) -> None:
    """``-hx`` before a mistyped command: Python 3.13's argparse reads it as -h then -x and
    prints help; earlier ones refuse the x. Either way argparse decides, not the guess."""
    code, out, err = run(capsys, *argv)
    if sys.version_info >= (3, 13):
        assert (code, err) == (0, "")
        assert out.startswith(f"usage: {where} [-h]")
    else:
        letter = argv[-2][2:]
        assert (code, out) == (64, "")
        assert (
            err
            == f"mnemosyne: error: argument -h/--help: ignored explicit argument {letter!r} (see '{where} --help')\n"
        )


@pytest.mark.parametrize("argv", [["--help", "wkii"], ["wiki", "-h", "fnd"], ["--version", "wkii"]])
def test_help_or_version_before_a_mistyped_command_is_printed(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    assert out.startswith(("usage: mnemosyne", "mnemosyne "))


def test_a_mistyped_choice_of_a_flag_gets_a_guess_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "x", "--color", "alway") == (
        64,
        "",
        "mnemosyne: error: argument --color: invalid choice: 'alway': did you mean 'always'? "
        "(see 'mnemosyne wiki find --help')\n",
    )
    assert run(capsys, "wiki", "find", "x", "--color", "blue") == (
        64,
        "",
        "mnemosyne: error: argument --color: invalid choice: 'blue' (choose from 'auto', 'always', 'never') "
        "(see 'mnemosyne wiki find --help')\n",
    )


# --- a keyword that starts with '-' ---

#: The way out the error gives, before the command it names.
AFTER_DASHES = "to search for a word that starts with '-', put the keywords after '--': "


@pytest.mark.parametrize(
    ("words", "unknown", "fixed"),
    [
        (["find", "-v"], "-v", ["find", "--vault", "V", "--", "-v"]),
        (["find", "-mastra"], "-mastra", ["find", "--vault", "V", "--", "-mastra"]),
        (["find", "--verbose"], "--verbose", ["find", "--vault", "V", "--", "--verbose"]),
        (["find", "-v", "--json"], "-v", ["find", "--json", "--vault", "V", "--", "-v"]),
        (["find", "kestrel", "-v"], "-v", ["find", "--vault", "V", "--", "kestrel", "-v"]),
        (["find", "-v", "kestrel"], "-v", ["find", "--vault", "V", "--", "-v", "kestrel"]),
        # A second run of keywords is unknown too; after '--' all are one run.
        (["find", "kestrel", "-v", "relay"], "-v relay", ["find", "--vault", "V", "--", "kestrel", "-v", "relay"]),
        (["find", "-v", "-x", "--limit", "3"], "-v -x", ["find", "--limit", "3", "--vault", "V", "--", "-v", "-x"]),
        (["find", "-v", "--dir=atlas", "k"], "-v", ["find", "--dir=atlas", "--vault", "V", "--", "-v", "k"]),
        (["recall", "-v"], "-v", ["recall", "--vault", "V", "--", "-v"]),
        (["recall", "relay", "-x"], "-x", ["recall", "--vault", "V", "--", "relay", "-x"]),
        # A space in a word is quoted, so the line can be pasted.
        (["find", "a b", "-v"], "-v", ["find", "--vault", "V", "--", "'a b'", "-v"]),
    ],
)
def test_a_flag_meant_as_a_keyword_gets_the_command_that_searches_for_it(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], words: list[str], unknown: str, fixed: list[str]
) -> None:
    vault = fake_vault(PAGES)
    command = " ".join(["mnemosyne", "wiki", *(vault if word == "V" else word for word in fixed)])
    assert run(capsys, "wiki", *words, "--vault", vault) == (
        64,
        "",
        f"mnemosyne: error: unrecognized arguments: {unknown}; {AFTER_DASHES}{command}\n",
    )
    # The command it names runs: the flag-like words are keywords there.
    code, _, err = run(capsys, *[vault if word == "V" else word.strip("'") for word in ["wiki", *fixed]])
    assert code in (0, 1)
    assert "error" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # A keyword was given: an unknown long flag is more likely a mistyped flag.
        (["wiki", "find", "x", "--bogus"], "unrecognized arguments: --bogus (see 'mnemosyne wiki find --help')"),
        (
            ["wiki", "find", "x", "-v", "--bogus"],
            "unrecognized arguments: -v --bogus (see 'mnemosyne wiki find --help')",
        ),
        # A known flag and no keyword: the keyword is missing, not misplaced.
        (["wiki", "find", "-0"], "the following arguments are required: KEYWORD (see 'mnemosyne wiki find --help')"),
        # Another command's words are not keywords.
        (["wiki", "lint", "-v"], "unrecognized arguments: -v (see 'mnemosyne wiki lint --help')"),
    ],
)
def test_no_double_dash_advice_where_no_keyword_was_meant(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert run(capsys, *argv) == (64, "", f"mnemosyne: error: {message}\n")


# --- --dir atlas/ ---


@pytest.mark.parametrize("given", ["atlas/", "atlas//", "atlas"])
def test_dir_with_a_trailing_slash_is_the_dir(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", "--dir", given, "--vault", vault) == (
        0,
        "atlas/kestrel.md — Kestrel Notes\n",
        "",
    )


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("/", "is an absolute path; write it relative to the vault root ('.' is the root itself)"),
        ("../", "has a part starting with '.' (hidden dirs and '..' are never searched)"),
        ("atlas//sub/", "has an empty part ('//' or a trailing '/')"),
        (" atlas/", "is empty or has surrounding spaces"),
    ],
)
def test_dir_slash_stripping_lets_no_bad_name_through(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], given: str, reason: str
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", "--dir", given, "--vault", vault) == (
        64,
        "",
        f"mnemosyne: error: argument --dir: {given!r} {reason}; "
        "pass a vault-relative dir (docs/en; '.' is the vault root) (see 'mnemosyne wiki find --help')\n",
    )


# --- a --dir the vault does not have ---


def test_find_warns_about_a_dir_the_vault_does_not_have(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", "--dir", "atlas", "--dir", "nope", "--vault", vault) == (
        0,
        "atlas/kestrel.md — Kestrel Notes\n",
        f"mnemosyne: warning: --dir 'nope' names no dir of the vault; did you mean notes? {ITS_DIRS}\n",
    )


def test_a_file_or_hidden_name_given_as_dir_is_not_a_dir(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", "--dir", "README.md", "--dir", "notes", "--vault", vault) == (
        0,
        "notes/idea.md — Idea\n",
        f"mnemosyne: warning: --dir 'README.md' names no dir of the vault; {ITS_DIRS}\n",
    )


def test_the_warning_does_not_change_a_no_match(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "xyzzy", "--dir", "atlas", "--dir", "atlsa", "--vault", vault) == (
        1,
        "",
        "no wiki page matches 'xyzzy'\n"
        f"mnemosyne: warning: --dir 'atlsa' names no dir of the vault; did you mean atlas? {ITS_DIRS}\n",
    )


def test_recall_warns_about_a_dir_the_vault_does_not_have(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    code, out, err = run(capsys, "wiki", "recall", "relay", "--dir", "hermes", "--dir", "nope", "--vault", vault)
    assert (code, out.splitlines()[0], err) == (
        0,
        "hermes/relay.md",
        f"mnemosyne: warning: --dir 'nope' names no dir of the vault; did you mean notes? {ITS_DIRS}\n",
    )


def test_lint_says_the_missing_dir_but_does_not_count_it_as_a_finding(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault({"atlas/a.md": "---\ntitle: A\nupdated: 2026-01-01\n---\n", "notes/b.txt": "x"})
    assert run(capsys, "wiki", "lint", "--dir", "atlas", "--dir", "nope", "--vault", vault) == (
        0,
        "",
        "mnemosyne: warning: --dir 'nope' names no dir of the vault; did you mean notes? its dirs are atlas, notes\n"
        "no findings: every markdown file is searched and every page is well-formed\n",
    )
    assert run(capsys, "wiki", "lint", "--dir", "atlas", "--dir", "nope", "--json", "--vault", vault) == (
        0,
        "[]\n",
        "mnemosyne: warning: --dir 'nope' names no dir of the vault; did you mean notes? its dirs are atlas, notes\n"
        "no findings: every markdown file is searched and every page is well-formed\n",
    )


def test_default_dirs_the_vault_lacks_are_not_warned_about(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    # The default scan names ten dirs; a vault with two of them is normal, not a mistake.
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "relay", "--vault", vault) == (0, "hermes/relay.md — Relay\n", "")


@pytest.mark.parametrize("command", [["find", "kestrel"], ["recall", "kestrel"], ["lint"], ["info"]])
def test_when_no_given_dir_exists_it_is_a_usage_error_with_the_closest_dirs(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # The call is mistyped, the vault is fine: 64, not 3 (a vault find cannot search).
    vault = fake_vault(PAGES)
    code, out, err = run(capsys, "wiki", *command, "--dir", "nope", "--dir", "atlsa", "--vault", vault)
    assert (code, err) == (
        64,
        f"mnemosyne: error: --dir 'nope', 'atlsa' name no dir of the vault '{vault}'; "
        f"did you mean notes, atlas? {ITS_DIRS}\n",
    )
    # info still describes what it was asked about; the others print nothing.
    assert (out == "") == (command != ["info"])
