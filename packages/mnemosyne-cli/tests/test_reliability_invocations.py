"""Bad invocations: every usage error exits 64 with one line on stderr and
nothing on stdout, and no command line at all, however random, produces a traceback or an
exit code the contract does not document."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_examples import examples
from reliability_vault import build_edge_vault

from mnemosyne_cli.app import main
from mnemosyne_contract import ExitCode

FIND_HELP = "(see 'mnemosyne wiki find --help')"
DIR_DOTDOT = (
    "'..' has a part starting with '.' (hidden dirs and '..' are never searched); "
    "pass a vault-relative dir (docs/en; '.' is the vault root)"
)


@pytest.fixture(scope="module")
def edge_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_edge_vault(tmp_path_factory.mktemp("edge"), big_page=False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "no command given: try 'mnemosyne --help'"),
        (["wiki"], "no command given: try 'mnemosyne wiki --help'"),
        (["--bogus"], "unrecognized arguments: --bogus (see 'mnemosyne --help')"),
        (["wiki", "find", "mastra", "--bogus"], "unrecognized arguments: --bogus (see 'mnemosyne wiki find --help')"),
        (["wiki", "find"], f"the following arguments are required: KEYWORD {FIND_HELP}"),
        (["wiki", "find", ""], "empty keyword '': every KEYWORD must have a non-space character"),
        (["wiki", "find", "mastra", " \t"], "empty keyword ' \\t': every KEYWORD must have a non-space character"),
        (
            ["wiki", "find", "mastra", "--limit", "-1"],
            f"argument --limit: must be 0 (no cap) or a positive whole number, not '-1' {FIND_HELP}",
        ),
        (
            ["wiki", "find", "mastra", "--limit", "abc"],
            f"argument --limit: must be 0 (no cap) or a positive whole number, not 'abc' {FIND_HELP}",
        ),
        (
            ["wiki", "find", "mastra", "--limit", "1.5"],
            f"argument --limit: must be 0 (no cap) or a positive whole number, not '1.5' {FIND_HELP}",
        ),
        (["wiki", "find", "mastra", "--limit"], f"argument --limit: expected one argument {FIND_HELP}"),
        (["wiki", "find", "mastra", "--vault"], f"argument --vault: expected one argument {FIND_HELP}"),
        (
            ["wiki", "find", "mastra", "--cat", "--json"],
            "--cat and --json cannot be combined: --cat prints the page itself; drop one",
        ),
        (["wiki", "find", "mastra", "--dir", ".."], f"argument --dir: {DIR_DOTDOT} {FIND_HELP}"),
        (
            ["wiki", "find", "mastra", "--dir", "../etc"],
            "argument --dir: '../etc' has a part starting with '.' (hidden dirs and '..' are never searched); "
            f"pass a vault-relative dir (docs/en; '.' is the vault root) {FIND_HELP}",
        ),
        (["wiki", "lint", "--dir", ".."], f"argument --dir: {DIR_DOTDOT} (see 'mnemosyne wiki lint --help')"),
        (["wiki", "recall", "x", "--dir", ".."], f"argument --dir: {DIR_DOTDOT} (see 'mnemosyne wiki recall --help')"),
    ],
    ids=lambda value: repr(value)[:40] if isinstance(value, list) else "",
)
def test_usage_error_is_one_line_and_exit_64(
    argv: list[str], message: str, edge_vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AION_VAULT", str(edge_vault))
    assert main(argv) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"mnemosyne: error: {message}\n")


def test_mnemosyne_wiki_alone_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki"]) == 64
    assert capsys.readouterr().err.count("\n") == 1


# --- the fuzz loop ---------------------------------------------------------------------------

COMMAND_WORDS = ["wiki", "find", "recall", "lint", "ingest", "query", "-h", "--help", "--version"]
FLAGS = [
    "--cat",
    "--json",
    "--limit",
    "--vault",
    "--dir",
    "--memory-dir",
    "--constellation",
    "--title",
    "--type",
    "--slug",
    "--force",
    "--dry-run",
    "--",
    "-",
    "--lim",
    "--bogus",
    "-x",
]
VALUES = ["0", "1", "-1", "2", "abc", "", " ", "..", "../..", "/", "atlas", "analyses", "hermes", "x.md", "\x00"]
TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("\udcff\udc80\x1b\n\t"),
    max_size=12,
)
tokens = st.one_of(st.sampled_from(COMMAND_WORDS), st.sampled_from(FLAGS), st.sampled_from(VALUES), TEXT)
argvs = st.one_of(
    st.lists(tokens, max_size=8),
    st.tuples(st.lists(tokens, max_size=6)).map(lambda rest: ["wiki", "find", *rest[0]]),
    st.tuples(st.sampled_from(["find", "recall", "lint", "ingest"]), st.lists(tokens, max_size=6)).map(
        lambda parts: ["wiki", parts[0], *parts[1]]
    ),
)
DOCUMENTED_CODES = {int(code) for code in ExitCode}


@settings(max_examples=examples(70), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=argvs)
def test_random_argv_never_tracebacks(
    argv: list[str],
    edge_vault: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ingest may land pages and recall may log: both go to scratch copies, never the fixture.
    monkeypatch.setenv("AION_VAULT", str(edge_vault))
    monkeypatch.setenv("MNEMOSYNE_MEMORY_DIR", str(tmp_path_factory.mktemp("memory")))
    monkeypatch.chdir(edge_vault.parent)
    code = main(argv)
    # Bytes: --cat prints a page verbatim, and a --vault such as '..' (a folder searched as
    # one tree) may reach a page that is not UTF-8.
    out, err = (stream.decode("utf-8", "surrogateescape") for stream in capsysbinary.readouterr())
    assert code in DOCUMENTED_CODES
    assert "Traceback" not in err
    if code == ExitCode.USAGE:
        assert out == ""
        assert err.startswith("mnemosyne: error: ")
        assert err.count("\n") == 1, err
