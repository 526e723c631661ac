"""``mnemosyne wiki find`` end to end through ``main``: exact stdout, stderr and exit code
(docs/spec.md, rules 9-14)."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from index_harness import build_index
from vault_pages import no_vault_message

from mnemosyne_cli import app
from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_contract import ExitCode

FakeVault = Callable[[dict[str, str | bytes]], str]

PAGES: dict[str, str | bytes] = {
    "analyses/mastra-framework-decision-trail.md": "---\ntitle: Mastra Framework Decision Trail\n"
    "constellation: metis\ntype: decision\n---\nWe chose not to adopt it yet.\n",
    "hermes/hermes-mastra-changelog-analysis.md": "---\ntitle: Hermes Mastra Changelog Safety Analysis\n"
    "type: changelog\n---\nThe bridge posts to Slack.\n",
    "metis/plan.md": "---\ntitle: Weekly Plan\n---\nEvaluate mastra workflows; ping slack.\n",
    "hephaistos/kestrel-build-cache.md": "---\ntitle: Kestrel Build Cache\n---\nRemote cache.\n",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``main(argv)``, in the process's environment with ``environ`` added."""
    code = main(list(argv), Environment({**os.environ, **(environ or {})}))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_plain_output_lines_in_order(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "mastra", "--vault", vault) == (
        0,
        "analyses/mastra-framework-decision-trail.md — Mastra Framework Decision Trail\n"
        "hermes/hermes-mastra-changelog-analysis.md — Hermes Mastra Changelog Safety Analysis\n"
        "metis/plan.md — Weekly Plan\n",
        "",
    )


def test_vault_from_environment(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "find", "kestrel", environ={"AION_VAULT": fake_vault(PAGES)}) == (
        0,
        "hephaistos/kestrel-build-cache.md — Kestrel Build Cache\n",
        "",
    )


def test_no_match_exit_1_exact_stderr(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "nonexistent", "--vault", vault) == (
        1,
        "",
        "no wiki page matches 'nonexistent'\n",
    )


def test_no_match_lists_each_keywords_own_count(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "mastra", "xyzzy", "Slack", "--vault", vault) == (
        1,
        "",
        "no wiki page matches 'mastra xyzzy Slack'\n  'mastra': 3 pages\n  'xyzzy': 0 pages\n  'Slack': 2 pages\n",
    )


@pytest.mark.parametrize(
    ("limit", "lines"),
    [
        ([], ["  'k0': 3 pages", "  'k1': 3 pages", "  'k2': 3 pages", "  'k3': 3 pages", "  'zz': 0 pages"]),
        (
            ["--limit", "0"],
            ["  'k0': 3 pages", "  'k1': 3 pages", "  'k2': 3 pages", "  'k3': 3 pages", "  'zz': 0 pages"],
        ),
        (
            ["--limit", "5"],
            ["  'k0': 3 pages", "  'k1': 3 pages", "  'k2': 3 pages", "  'k3': 3 pages", "  'zz': 0 pages"],
        ),
        (
            ["--limit", "4"],
            [
                "  'k0': 3 pages",
                "  'k1': 3 pages",
                "  'k2': 3 pages",
                "  'k3': 3 pages",
                "  … and 1 more keyword (--limit 0 shows them all)",
            ],
        ),
        (
            ["--limit", "2"],
            ["  'k0': 3 pages", "  'k1': 3 pages", "  … and 3 more keywords (--limit 0 shows them all)"],
        ),
    ],
)
def test_the_keyword_counts_of_a_miss_obey_the_limit(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], limit: list[str], lines: list[str]
) -> None:
    vault = fake_vault({f"atlas/{name}.md": "k0 k1 k2 k3\n" for name in "abc"})
    keywords = ["k0", "k1", "k2", "k3", "zz"]
    assert run(capsys, "wiki", "find", *keywords, *limit, "--vault", vault) == (
        1,
        "",
        "\n".join(["no wiki page matches 'k0 k1 k2 k3 zz'", *lines]) + "\n",
    )


def test_thousands_of_missing_keywords_print_the_default_twenty(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    keywords = [f"zz{number}" for number in range(5000)]
    code, out, err = run(capsys, "wiki", "find", *keywords, "--vault", vault)
    assert (code, out) == (1, "")
    assert err.splitlines()[1:] == [
        *(f"  'zz{number}': 0 pages" for number in range(20)),
        "  … and 4980 more keywords (--limit 0 shows them all)",
    ]


def test_json_output(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    code, out, err = run(capsys, "wiki", "find", "mastra", "slack", "--json", "--vault", vault)
    assert (code, err) == (0, "")
    # Neither title nor path holds both: the page whose text holds both sooner comes first.
    assert json.loads(out) == [
        {"path": "metis/plan.md", "title": "Weekly Plan", "constellation": "metis", "type": None},
        {
            "path": "hermes/hermes-mastra-changelog-analysis.md",
            "title": "Hermes Mastra Changelog Safety Analysis",
            "constellation": "hermes",
            "type": "changelog",
        },
    ]
    assert out.count("\n") == 1


def test_json_no_match_is_empty_array_and_exit_1(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "xyzzy", "--json", "--vault", vault) == (
        1,
        "[]\n",
        "no wiki page matches 'xyzzy'\n",
    )


def test_limit_says_what_it_hides(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "mastra", "--limit", "1", "--vault", vault) == (
        0,
        "analyses/mastra-framework-decision-trail.md — Mastra Framework Decision Trail\n",
        "showing 1 of 3 matches\n",
    )
    code, out, err = run(capsys, "wiki", "find", "a", "--limit", "0", "--vault", vault)
    assert (code, out.count("\n"), err) == (0, 4, "")


@pytest.mark.parametrize("bad", ["-1", "abc", "1.5", "", "+-2", " 3", "\u0663"])
def test_bad_limit_is_a_usage_error(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], bad: str) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "x", "--limit", bad, "--vault", vault) == (
        64,
        "",
        f"mnemosyne: error: argument --limit: must be 0 (no cap) or a positive whole number, not {bad!r} "
        "(see 'mnemosyne wiki find --help')\n",
    )


def test_cat_prints_the_one_page_verbatim(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    raw = "\ufeff---\r\ntitle: Unique Café\r\n---\r\nbody — text\r\n".encode()
    vault = fake_vault({**PAGES, "atlas/unique.md": raw})
    assert run(capsys, "wiki", "find", "unique", "--cat", "--vault", vault) == (0, raw.decode(), "")


def test_cat_bytes_reach_stdout_unchanged(fake_vault: FakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = b"---\ntitle: Unique\n---\nbody \xff bytes\r\n"
    vault = fake_vault({"atlas/unique.md": raw})
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr("sys.stdout", stdout)
    assert main(["wiki", "find", "unique", "--cat", "--vault", vault]) == 0
    assert isinstance(stdout.buffer, io.BytesIO)
    assert stdout.buffer.getvalue() == raw


def test_cat_with_several_matches_lists_candidates(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "mastra", "--cat", "--vault", vault) == (
        2,
        "",
        "--cat needs exactly one match, but 3 pages match 'mastra'; add a keyword to narrow it:\n"
        "  analyses/mastra-framework-decision-trail.md — Mastra Framework Decision Trail\n"
        "  hermes/hermes-mastra-changelog-analysis.md — Hermes Mastra Changelog Safety Analysis\n"
        "  metis/plan.md — Weekly Plan\n",
    )


def test_cat_lists_at_most_limit_candidates_then_how_many_more(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "mastra", "--cat", "--limit", "1", "--vault", vault) == (
        2,
        "",
        "--cat needs exactly one match, but 3 pages match 'mastra'; add a keyword to narrow it:\n"
        "  analyses/mastra-framework-decision-trail.md — Mastra Framework Decision Trail\n"
        "… and 2 more: add a keyword to narrow it\n",
    )


def test_cat_with_limit_0_lists_every_candidate(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    code, out, err = run(capsys, "wiki", "find", "mastra", "--cat", "--limit", "0", "--vault", vault)
    assert (code, out, err.count("\n  "), err.endswith("  metis/plan.md — Weekly Plan\n")) == (2, "", 3, True)


def test_a_keyword_starting_with_a_dash_goes_after_double_dash(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault({**PAGES, "atlas/flags.md": "---\ntitle: Flags\n---\nrun it with -v for more\n"})
    assert run(capsys, "wiki", "find", "--vault", vault, "--", "-v") == (0, "atlas/flags.md — Flags\n", "")


def test_cat_with_no_match_exits_2(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "xyzzy", "--cat", "--vault", vault) == (
        2,
        "",
        "no wiki page matches 'xyzzy'\n--cat needs exactly one match\n",
    )


def test_cat_with_json_is_rejected(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", "--cat", "--json", "--vault", vault) == (
        64,
        "",
        "mnemosyne: error: --cat and --json cannot be combined: --cat prints the page itself; drop one\n",
    )


def test_control_characters_in_titles_are_escaped(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault({"atlas/ansi.md": '---\ntitle: "Red \\e[31mAlert\\e[0m \\x07"\n---\n'})
    assert run(capsys, "wiki", "find", "alert", "--vault", vault) == (
        0,
        "atlas/ansi.md — Red \\x1b[31mAlert\\x1b[0m \\x07\n",
        "",
    )
    _, out, _ = run(capsys, "wiki", "find", "alert", "--json", "--vault", vault)
    assert json.loads(out)[0]["title"] == "Red \x1b[31mAlert\x1b[0m \x07"


def test_path_is_spelled_as_on_disk(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    nfd = "Cafe\u0301 Notes"
    vault = fake_vault({f"atlas/{nfd}.md": "x"})
    assert run(capsys, "wiki", "find", "caf\u00e9", "--vault", vault) == (0, f"atlas/{nfd}.md — {nfd}\n", "")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "no command given: try 'mnemosyne --help'"),
        (["wiki"], "no command given: try 'mnemosyne wiki --help'"),
        (["wiki", "find"], "the following arguments are required: KEYWORD (see 'mnemosyne wiki find --help')"),
        (["wiki", "find", "x", "--bogus"], "unrecognized arguments: --bogus (see 'mnemosyne wiki find --help')"),
        (["wiki", "find", ""], "empty keyword '': every KEYWORD must have a non-space character"),
        (["wiki", "find", "ok", "  "], "empty keyword '  ': every KEYWORD must have a non-space character"),
        (
            ["nope"],
            "argument COMMAND: invalid choice: 'nope' (choose from 'wiki', 'completion') (see 'mnemosyne --help')",
        ),
        (["wiki", "find", "a\0b"], "an argument contains a NUL byte: remove it"),
        (["wiki", "find", "x", "--c"], "unrecognized arguments: --c: did you mean --cat?"),
        (["wiki", "lint", "extra"], "unrecognized arguments: extra (see 'mnemosyne wiki lint --help')"),
    ],
)
def test_usage_errors_exit_64_with_one_line(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    vault = fake_vault(PAGES)
    extra = ["--vault", vault] if argv[:2] == ["wiki", "find"] and len(argv) > 2 else []
    assert run(capsys, *argv, *extra) == (64, "", f"mnemosyne: error: {message}\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["wiki", "find", "x"], None),
        (
            ["wiki", "find", "x", "--vault", "/missing"],
            "vault '/missing' does not exist: pass --vault PATH to your vault root",
        ),
        (
            ["wiki", "find", "x", "--vault", "/vault/atlas/a.md"],
            "vault '/vault/atlas/a.md' is not a directory: pass --vault PATH to your vault root",
        ),
    ],
)
def test_vault_errors_exit_3_never_1(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], argv: list[str], message: str | None
) -> None:
    fake_vault({"atlas/a.md": "x"})
    assert run(capsys, *argv) == (3, "", f"mnemosyne: error: {message or no_vault_message()}\n")


AFTER_SEPARATOR = "came after '--', which made"


def test_a_failure_says_when_options_came_after_the_separator(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault({**PAGES, "atlas/flags.md": "---\ntitle: Flags\n---\nfind takes --json.\n"})
    # The --vault after '--' is a keyword: no vault is found, and stderr says why.
    assert run(capsys, "wiki", "find", "--", "kestrel", "--vault", vault) == (
        3,
        "",
        f"mnemosyne: error: {no_vault_message()}\n"
        f"mnemosyne: warning: '--vault' {AFTER_SEPARATOR} it a keyword, not an option; put the options before '--'\n",
    )
    assert run(capsys, "wiki", "find", "--vault", vault, "--", "kestrel", "--json", "--limit=3") == (
        1,
        "",
        "no wiki page matches 'kestrel --json --limit=3'\n"
        "  'kestrel': 1 page\n  '--json': 1 page\n  '--limit=3': 0 pages\n"
        f"mnemosyne: warning: '--json', '--limit=3' {AFTER_SEPARATOR} them keywords, not options; "
        "put the options before '--'\n",
    )
    # Searching for an option's name on purpose, and finding it, says nothing more.
    assert run(capsys, "wiki", "find", "--vault", vault, "--", "--json") == (0, "atlas/flags.md — Flags\n", "")
    # A word that only looks like an option is no option of find's.
    assert AFTER_SEPARATOR not in run(capsys, "wiki", "find", "--vault", vault, "--", "--verbose")[2]


#: The two ways a find reads its pages, and the flags that choose each: the plain scan
#: (find.py) and the scan through the page cache (cache.py), each with its own open_page.
@pytest.mark.parametrize("indexed", [False, True], ids=["plain", "indexed"])
def test_incomplete_search_with_no_match_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    vault = tmp_path / "vault"
    for rel_path, text in {"atlas/locked.md": "needle", "atlas/open.md": "hay"}.items():
        (vault / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel_path).write_text(text, encoding="utf-8")
    if indexed:
        build_index(vault)  # the pages were just written: racy, so the call reads them again

    def deny(path: str) -> int:
        raise PermissionError(13, "Permission denied")

    # The scan reads through find's reader, a call through the index through the page reader.
    monkeypatch.setattr(f"mnemosyne_core.{'page' if indexed else 'find'}.open_page", deny)
    flags = ["--no-server"] if indexed else ["--no-cache"]
    assert run(capsys, "wiki", "find", "needle", "--vault", str(vault), *flags) == (
        3,
        "",
        "no wiki page matches 'needle' among the pages that could be read\n"
        "mnemosyne: error: the search was incomplete (see the warnings below): fix them and search again\n"
        "mnemosyne: warning: atlas/locked.md: cannot read (Permission denied); skipped\n"
        "mnemosyne: warning: atlas/open.md: cannot read (Permission denied); skipped\n",
    )


def test_dir_flag_overrides_scanned_dirs(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault({**PAGES, "wiki/mastra-notes.md": "x"})
    assert run(capsys, "wiki", "find", "mastra", "--dir", "wiki", "--vault", vault) == (
        0,
        "wiki/mastra-notes.md — mastra-notes\n",
        "",
    )


def failing_stream(error: OSError) -> io.TextIOWrapper:
    """A stdout whose every write, text or bytes, raises ``error``."""

    class Failing(io.TextIOWrapper):
        def write(self, text: str) -> int:
            raise error

    stream = Failing(io.BytesIO(), encoding="utf-8")
    stream.buffer.write = stream.write  # type: ignore[method-assign, assignment]
    return stream


def test_closed_stdout_ends_quietly(
    fake_vault: FakeVault, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    monkeypatch.setattr("sys.stdout", failing_stream(BrokenPipeError(32, "Broken pipe")))
    assert main(["wiki", "find", "mastra", "--vault", vault]) == ExitCode.OK
    assert capsys.readouterr().err == ""


def test_ctrl_c_exits_130_without_traceback(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = fake_vault(PAGES)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("mnemosyne_core.find.search", interrupted)
    monkeypatch.setattr("mnemosyne_core.cache.IndexedScan.search", interrupted)
    assert run(capsys, "wiki", "find", "mastra", "--vault", vault) == (130, "", "\n")
    assert run(capsys, "wiki", "find", "mastra", "--vault", vault, "--no-cache") == (130, "", "\n")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from mnemosyne_cli import __version__

    code, out, err = run(capsys, "--version")
    # The first line alone is the command's version; test_info_command checks the rest.
    assert (code, out.splitlines()[0], err) == (0, f"mnemosyne {__version__}", "")


def test_run_wrapper_exits_with_mains_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app, "main", lambda argv=None: 3)
    with pytest.raises(SystemExit) as exited:
        app.run()
    assert exited.value.code == 3


def test_stdout_that_cannot_be_written_exits_74_not_1(
    fake_vault: FakeVault, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    monkeypatch.setattr("sys.stdout", failing_stream(OSError(28, "No space left on device")))
    assert main(["wiki", "find", "mastra", "--vault", vault]) == ExitCode.WRITE_FAILED
    assert capsys.readouterr().err == (
        "mnemosyne: error: cannot write the results to stdout: [Errno 28] No space left on device\n"
    )


def test_closed_stdout_and_stderr_never_read_as_no_match(
    fake_vault: FakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = fake_vault(PAGES)
    monkeypatch.setattr("sys.stdout", None)
    monkeypatch.setattr("sys.stderr", None)
    assert main(["wiki", "find", "mastra", "--vault", vault]) == ExitCode.WRITE_FAILED
    assert main(["wiki", "find", "xyzzy", "--vault", vault]) == ExitCode.NO_MATCH


# --- where the pages matched (--matched) and --cat's way out --------------------------------

MENTIONS: dict[str, str | bytes] = {
    "atlas/2094-nll.md": "Borrows end at their last use: non-lexical lifetimes.\n",
    "atlas/1774-roadmap.md": "Goals for the year.\n\nLater, the borrow checker gets non-lexical scopes.\n",
    "atlas/lifetimes.md": "---\ntitle: Non-lexical lifetimes\n---\nThe rule itself.\n",
}


def test_matched_line_says_that_no_title_or_path_holds_the_keywords(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault({path: text for path, text in MENTIONS.items() if "lifetimes.md" not in path})
    assert run(capsys, "wiki", "find", "non-lexical", "--matched", "--vault", vault) == (
        0,
        "atlas/2094-nll.md — 2094-nll\n"
        "  1: Borrows end at their last use: non-lexical lifetimes.\n"
        "atlas/1774-roadmap.md — 1774-roadmap\n"
        "  3: Later, the borrow checker gets non-lexical scopes.\n",
        "no title or path holds 'non-lexical'; these 2 pages mention it in their text\n",
    )
    # --paths says it too, with no context (stdout stays one path a line); several keywords
    # are "them"; one page "mentions".
    assert run(
        capsys, "wiki", "find", "borrow", "lexical", "--paths", "--matched", "--limit", "1", "--vault", vault
    ) == (
        0,
        "atlas/2094-nll.md\n",
        "no title or path holds 'borrow lexical'; these 2 pages mention them in their text\nshowing 1 of 2 matches\n",
    )
    assert run(capsys, "wiki", "find", "goals", "--matched", "--vault", vault)[2] == (
        "no title or path holds 'goals'; this page mentions it in its text\n"
    )
    # Without --matched, stdout has no context and stderr stays empty (agents take anything
    # there on exit 0 for trouble).
    assert run(capsys, "wiki", "find", "non-lexical", "--vault", vault) == (
        0,
        "atlas/2094-nll.md — 2094-nll\natlas/1774-roadmap.md — 1774-roadmap\n",
        "",
    )


def test_matched_line_marks_where_the_named_pages_end(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(MENTIONS)
    assert run(capsys, "wiki", "find", "non-lexical", "--matched", "--vault", vault) == (
        0,
        "atlas/lifetimes.md — Non-lexical lifetimes\n"
        "atlas/2094-nll.md — 2094-nll\n"
        "  1: Borrows end at their last use: non-lexical lifetimes.\n"
        "atlas/1774-roadmap.md — 1774-roadmap\n"
        "  3: Later, the borrow checker gets non-lexical scopes.\n",
        "1 page is named by 'non-lexical'; 2 more mention it in their text\n",
    )
    assert run(capsys, "wiki", "find", "lexical", "lifetimes", "--paths", "--matched", "--vault", vault) == (
        0,
        "atlas/lifetimes.md\natlas/2094-nll.md\n",
        "1 page is named by 'lexical lifetimes'; 1 more mentions them in its text\n",
    )
    # Every page named (by its path, the shortest first): the line says that none only
    # mentions them.
    assert run(capsys, "wiki", "find", "atlas", "--matched", "--limit", "2", "--vault", vault) == (
        0,
        "atlas/2094-nll.md — 2094-nll\natlas/lifetimes.md — Non-lexical lifetimes\n",
        "3 pages are named by 'atlas'; no page only mentions it\nshowing 2 of 3 matches\n",
    )


def test_json_matched_says_where_each_page_matched(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault({**MENTIONS, "atlas/non-lexical-notes.md": "---\ntitle: Notes\n---\n"})
    code, out, err = run(capsys, "wiki", "find", "non-lexical", "--json", "--matched", "--vault", vault)
    assert (code, err) == (0, "")
    assert json.loads(out) == [
        {
            "path": "atlas/non-lexical-notes.md",
            "title": "Notes",
            "constellation": "atlas",
            "type": None,
            "matched": "title",
        },
        {
            "path": "atlas/lifetimes.md",
            "title": "Non-lexical lifetimes",
            "constellation": "atlas",
            "type": None,
            "matched": "title",
        },
        {
            "path": "atlas/2094-nll.md",
            "title": "2094-nll",
            "constellation": "atlas",
            "type": None,
            "matched": "text",
            "context": {"line": 1, "text": "Borrows end at their last use: non-lexical lifetimes."},
        },
        {
            "path": "atlas/1774-roadmap.md",
            "title": "1774-roadmap",
            "constellation": "atlas",
            "type": None,
            "matched": "text",
            "context": {"line": 3, "text": "Later, the borrow checker gets non-lexical scopes."},
        },
    ]
    # Without --matched, the four keys of the contract and nothing else.
    code, out, _ = run(capsys, "wiki", "find", "non-lexical", "--json", "--vault", vault)
    assert {tuple(item) for item in json.loads(out)} == {("path", "title", "constellation", "type")}
    # --absolute changes the path only; the context is read by the vault-relative one.
    code, out, _ = run(capsys, "wiki", "find", "goals", "--json", "--matched", "--absolute", "--vault", vault)
    assert json.loads(out) == [
        {
            "path": "/vault/atlas/1774-roadmap.md",
            "title": "1774-roadmap",
            "constellation": "atlas",
            "type": None,
            "matched": "text",
            "context": {"line": 1, "text": "Goals for the year."},
        },
    ]


def test_matched_context_is_marked_in_colour(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault({"atlas/a.md": "Later, the \x1b[2J NON-LEXICAL scopes.\n"})
    code, out, _ = run(capsys, "wiki", "find", "non-lexical", "--matched", "--color", "always", "--vault", vault)
    assert (code, out.splitlines()[1]) == (0, "  1: Later, the \\x1b[2J \x1b[1;31mNON-LEXICAL\x1b[0m scopes.")


class _AnsweredElsewhere:
    """A backend that answers as the scan did a moment ago (a server's answer), for pages
    that changed or went away since."""

    def __init__(self, answer: object):
        self.answer = answer

    def search(self, *_args: object, **_options: object) -> object:
        return self.answer

    def recall(self, *_args: object, **_options: object) -> object:
        raise AssertionError("find never recalls")


def test_matched_context_is_read_from_the_page_whoever_answered(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from mnemosyne_core import search

    vault = fake_vault(MENTIONS)
    answer = search(vault, ["borrow"], limit=0)
    os.remove("/vault/atlas/2094-nll.md")
    with open("/vault/atlas/1774-roadmap.md", "w", encoding="utf-8") as page:
        page.write("Goals.\nThe borrow checker, now and later.\n")
    code = main(["wiki", "find", "borrow", "--matched", "--vault", vault], backend=_AnsweredElsewhere(answer))  # type: ignore[arg-type]
    captured = capsys.readouterr()
    assert (code, captured.out) == (
        0,
        "atlas/2094-nll.md — 2094-nll\natlas/1774-roadmap.md — 1774-roadmap\n  2: The borrow checker, now and later.\n",
    )
    assert captured.err == (
        "no title or path holds 'borrow'; these 2 pages mention it in their text\n"
        "mnemosyne: warning: atlas/2094-nll.md: cannot read it again to show its context (it is gone)\n"
    )
    code = main(["wiki", "find", "borrow", "--json", "--matched", "--vault", vault], backend=_AnsweredElsewhere(answer))  # type: ignore[arg-type]
    assert [item["context"] for item in json.loads(capsys.readouterr().out)] == [
        None,
        {"line": 2, "text": "The borrow checker, now and later."},
    ]


CITED: dict[str, str | bytes] = {
    "atlas/0243-trait-based-exception-handling.md": "Add a question mark operator.\n",
    "atlas/1859-try-trait.md": "Generalises 0243-trait-based-exception-handling.md to any type.\n",
    "atlas/2388-try-expr.md": "Follows 0243-trait-based ideas.\n",
}


def test_cat_names_the_one_page_its_title_or_path_names(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(CITED)
    assert run(capsys, "wiki", "find", "0243-trait-based", "--cat", "--vault", vault, "--dir", "atlas") == (
        2,
        "",
        "only atlas/0243-trait-based-exception-handling.md — 0243-trait-based-exception-handling holds "
        "'0243-trait-based' in its title or path; to print it, run: "
        f"mnemosyne wiki find --cat --vault {vault} --dir atlas atlas/0243-trait-based-exception-handling.md\n"
        "--cat needs exactly one match, but 3 pages match '0243-trait-based'; add a keyword to narrow it:\n"
        "  atlas/0243-trait-based-exception-handling.md — 0243-trait-based-exception-handling\n"
        "  atlas/2388-try-expr.md — 2388-try-expr\n"
        "  atlas/1859-try-trait.md — 1859-try-trait\n",
    )
    # The command it gives prints the page.
    assert run(
        capsys,
        "wiki",
        "find",
        "--cat",
        "--vault",
        vault,
        "--dir",
        "atlas",
        "atlas/0243-trait-based-exception-handling.md",
    ) == (
        0,
        "Add a question mark operator.\n",
        "",
    )


def test_cat_names_the_page_by_its_path_when_that_path_is_quoted_elsewhere(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another page quotes the path: the path as a keyword still names its own page first,
    and --cat with it prints that page."""
    vault = fake_vault({**CITED, "atlas/1859-try-trait.md": "See atlas/0243-trait-based-exception-handling.md.\n"})
    code, out, err = run(capsys, "wiki", "find", "0243-trait-based", "--cat", "--limit", "1", "--vault", vault)
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (
        "only atlas/0243-trait-based-exception-handling.md — 0243-trait-based-exception-handling holds "
        "'0243-trait-based' in its title or path; to print it, run: "
        f"mnemosyne wiki find --cat --vault {vault} atlas/0243-trait-based-exception-handling.md"
    )
    path = "atlas/0243-trait-based-exception-handling.md"
    assert run(capsys, "wiki", "find", path, "--cat", "--vault", vault) == (0, CITED[path], "")
    assert run(capsys, "wiki", "find", path, "--vault", vault) == (
        0,
        f"{path} — 0243-trait-based-exception-handling\natlas/1859-try-trait.md — 1859-try-trait\n",
        "",
    )


def test_cat_adds_no_way_out_when_two_pages_are_named(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault({**CITED, "atlas/0243-trait-based-notes.md": "Notes.\n"})
    code, _, err = run(capsys, "wiki", "find", "0243-trait-based", "--cat", "--vault", vault)
    assert code == 2
    assert err.startswith("--cat needs exactly one match, but 4 pages match '0243-trait-based'")


# --- pages that are not text, and wide pages ---------------------------------------------


def test_a_miss_counts_the_pages_that_are_not_text(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault({**PAGES, "atlas/no-mark.md": "Sixteen\n".encode("utf-16-le"), "atlas/x.md": b"\x00"})
    assert run(capsys, "wiki", "find", "sixteen", "--vault", vault) == (
        1,
        "",
        "no wiki page matches 'sixteen'\n2 files could not be read as text; wiki lint lists them\n",
    )
    assert run(capsys, "wiki", "find", "sixteen", "--json", "--dir", "atlas", "--vault", vault) == (
        1,
        "[]\n",
        "no wiki page matches 'sixteen'\n2 files could not be read as text; wiki lint lists them\n",
    )
    # A hit says nothing of them.
    assert run(capsys, "wiki", "find", "kestrel", "--vault", vault)[::2] == (0, "")


def test_one_page_that_is_not_text(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault({**PAGES, "atlas/x.md": b"\x00"})
    assert run(capsys, "wiki", "find", "nothing", "here", "--vault", vault) == (
        1,
        "",
        "no wiki page matches 'nothing here'\n  'nothing': 0 pages\n  'here': 0 pages\n"
        "1 file could not be read as text; wiki lint lists it\n",
    )


def test_a_utf16_page_is_found_and_printed_verbatim(
    fake_vault: FakeVault, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    data = "---\ntitle: Wide Heron\n---\nBy the shore.\n".encode("utf-16")
    vault = fake_vault({**PAGES, "atlas/wide.md": data})
    assert main(["wiki", "find", "shore", "--vault", vault]) == ExitCode.OK
    assert capsysbinary.readouterr() == ("atlas/wide.md — Wide Heron\n".encode(), b"")
    assert main(["wiki", "find", "heron", "--cat", "--vault", vault]) == ExitCode.OK
    assert capsysbinary.readouterr() == (data, b"")


# --- a miss names the words near a keyword in no page ---


@pytest.mark.parametrize("answer", ["scan", "index"])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_keyword_in_no_page_names_the_words_near_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, answer: str, as_json: bool
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    vault = tmp_path / "vault"
    vault.mkdir()
    for number in (1, 2, 3):
        (vault / f"frames-{number}.md").write_text(f"# Frames {number}\n\nDataFrames, and a DataFrame.\n")
    (vault / "other.md").write_text("# Other\n\nOne dataframe, one dataform.\n")
    flags = ["--json"] * as_json + (["--no-cache"] if answer == "scan" else [])
    if answer == "index":
        build_index(vault)

        def unread(*_: object) -> None:
            raise AssertionError("the index answers: no page is read again")

        monkeypatch.setattr("mnemosyne_core.suggest.scan_suggestions", unread)
    stdout = "[]\n" if as_json else ""
    # Never the match, stdout or the exit code: one more stderr line, the nearest first,
    # then the most pages ("dataframe" is in "dataframes" too: 4 pages, as find counts it).
    assert run(capsys, "wiki", "find", "DataFrams", "--vault", str(vault), *flags) == (
        1,
        stdout,
        "no wiki page matches 'DataFrams'\ndid you mean: dataframe (4 pages), dataframes (3 pages)\n",
    )
    # Several keywords: the line says which one it is for. Two edits from a keyword of 6
    # characters or more ("dataframes" and "dataform" from "datafrms"), one below it.
    assert run(capsys, "wiki", "find", "frames", "datafrms", "othr", "--vault", str(vault), *flags) == (
        1,
        stdout,
        "no wiki page matches 'frames datafrms othr'\n  'frames': 3 pages\n  'datafrms': 0 pages\n  'othr': 0 pages\n"
        "did you mean: dataframe (4 pages), dataframes (3 pages), dataform (1 page) for 'datafrms'\n"
        "did you mean: other (1 page) for 'othr'\n",
    )
    # Nothing near, or a keyword under 4 characters: the miss says what it said before.
    for keyword in ("zzzzqqq", "frm"):
        assert run(capsys, "wiki", "find", keyword, "--vault", str(vault), *flags) == (
            1,
            stdout,
            f"no wiki page matches '{keyword}'\n",
        )
