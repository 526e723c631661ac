"""``mnemosyne wiki lint`` end to end through ``main``: exact stdout, stderr and exit code,
--json against the contract's schema, and the reliability tests' edge-case vault with its
real symlinks."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from reliability_vault import build_edge_vault
from vault_pages import no_vault_message

from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_contract import ExitCode, load_schema
from mnemosyne_core.lint import REASON_CODES
from mnemosyne_core.vault import scan

CLEAN_STDERR = "no findings: every markdown file is searched and every page is well-formed\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``main(argv)``, in the process's environment with ``environ`` added."""
    code = main(list(argv), Environment({**os.environ, **(environ or {})}))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def make_vault(root: Path, files: Mapping[str, str | bytes]) -> str:
    for rel_path, content in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(root)


def good(title: str) -> str:
    return f"---\ntitle: {title}\nupdated: 2026-03-01\n---\nBody.\n"


def valid_lint_json(stdout: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(stdout)
    jsonschema.Draft202012Validator(load_schema("lint")).validate(records)
    return records


CLEAN = {"atlas/a.md": good("Alpha"), "analyses/b.md": good("Beta"), ".git/config.md": "tool state"}
DEFAULT_DIRS = (
    '"atlas", "hades", "mnemosyne", "proteus", "metis", "apollo", "hermes", "hephaistos", "athena", "analyses"'
)


def unscanned(top: str) -> str:
    """The unscanned-dir message of a vault without .mnemosyne.toml."""
    line = f'dirs = [{DEFAULT_DIRS}, "{top}"]'
    return f"in {top}/, which is not scanned; to scan it, set {line} in .mnemosyne.toml, or move it"


DIRTY = {
    "atlas/a.md": good("Alpha"),
    "atlas/plain.md": "# no frontmatter\n",
    "atlas/sub/nested.md": good("Nested"),
    "atlas/LOUD.MD": good("Loud"),
    "hermes/dup.md": good("alpha"),
    "notes/idea.md": good("Idea"),
}
DIRTY_LINES = [
    ("atlas/LOUD.MD", "suffix-case", "ends in '.MD'; find reads only names ending in '.md'"),
    ("atlas/a.md", "duplicate-title", "title 'Alpha' is also the title of hermes/dup.md"),
    ("atlas/plain.md", "no-frontmatter", "no frontmatter (first line is not ---); find shows the file name stem"),
    (
        "atlas/sub/nested.md",
        "nested-file",
        'in a sub-dir; find reads only files directly in atlas/: set depth = "tree" in .mnemosyne.toml '
        "to search sub-dirs too",
    ),
    ("hermes/dup.md", "duplicate-title", "title 'alpha' is also the title of atlas/a.md"),
    ("notes/idea.md", "unscanned-dir", unscanned("notes")),
]


# --- exit 0: clean -------------------------------------------------------------------------


def test_clean_vault_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, CLEAN)
    assert run(capsys, "wiki", "lint", "--vault", vault) == (0, "", CLEAN_STDERR)


def test_clean_vault_json_is_an_empty_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, CLEAN)
    code, out, err = run(capsys, "wiki", "lint", "--json", "--vault", vault)
    assert (code, out, err) == (0, "[]\n", CLEAN_STDERR)
    assert valid_lint_json(out) == []


def test_vault_from_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "lint", environ={"AION_VAULT": make_vault(tmp_path, CLEAN)}) == (0, "", CLEAN_STDERR)


# --- exit 1: findings ----------------------------------------------------------------------


def test_findings_one_tab_separated_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, DIRTY)
    assert run(capsys, "wiki", "lint", "--vault", vault) == (
        1,
        "".join(f"{path}\t{code}\t{message}\n" for path, code, message in DIRTY_LINES),
        "6 findings in 6 paths\n",
    )


def test_findings_json_is_schema_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, DIRTY)
    code, out, err = run(capsys, "wiki", "lint", "--vault", vault, "--json")
    assert (code, err) == (1, "6 findings in 6 paths\n")
    assert valid_lint_json(out) == [{"path": p, "code": c, "message": m} for p, c, m in DIRTY_LINES]


def test_dir_flag_sets_the_scanned_dirs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, {"notes/idea.md": good("Idea"), "atlas/a.md": good("A")})
    assert run(capsys, "wiki", "lint", "--vault", vault, "--dir", "notes") == (
        1,
        "atlas/a.md\tunscanned-dir\tin atlas/, which this run's --dir leaves out; add --dir atlas\n",
        "1 finding in 1 path\n",
    )
    assert run(capsys, "wiki", "lint", "--vault", vault, "--dir", "notes", "--dir", "atlas") == (0, "", CLEAN_STDERR)


def test_several_findings_on_one_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, {"atlas/t.md": "---\ntitle: [x]\nconstellation: zeus\n---\n"})
    code, out, err = run(capsys, "wiki", "lint", "--vault", vault)
    assert (code, err) == (1, "3 findings in 1 path\n")
    assert [line.split("\t")[:2] for line in out.splitlines()] == [
        ["atlas/t.md", "missing-title"],
        ["atlas/t.md", "missing-updated"],
        ["atlas/t.md", "unknown-constellation"],
    ]


def test_hostile_file_names_stay_three_fields_on_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, {"atlas/a.md": good("A")})
    os.makedirs(os.path.join(os.fsencode(vault), b"notes"))
    for name in (b"tab\there.md", b"evil\n\x1b[2J.md", b"bad-\xff.md"):
        with open(os.path.join(os.fsencode(vault), b"notes", name), "wb") as handle:
            handle.write(b"x")
    code, out, err = run(capsys, "wiki", "lint", "--vault", vault)
    message = unscanned("notes")
    assert (code, err) == (1, "3 findings in 3 paths\n")
    assert out.splitlines() == [
        f"notes/bad-\\xff.md\tunscanned-dir\t{message}",
        f"notes/evil\\x0a\\x1b[2J.md\tunscanned-dir\t{message}",
        f"notes/tab\\x09here.md\tunscanned-dir\t{message}",
    ]
    code, out, _ = run(capsys, "wiki", "lint", "--vault", vault, "--json")
    paths = [record["path"] for record in valid_lint_json(out)]
    assert paths == ["notes/bad-\udcff.md", "notes/evil\n\x1b[2J.md", "notes/tab\there.md"]


# --- exit 3 and 64 -------------------------------------------------------------------------


def test_missing_vault_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nope")
    assert run(capsys, "wiki", "lint", "--vault", missing, "--json") == (
        3,
        "",
        f"mnemosyne: error: vault '{missing}' does not exist: pass --vault PATH to your vault root\n",
    )


def test_no_vault_given_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "lint") == (
        3,
        "",
        f"mnemosyne: error: {no_vault_message()}\n",
    )


def test_vault_without_scanned_dirs_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Its own config names the dir: the vault is wrong, not the call (a --dir is 64).
    vault = make_vault(tmp_path, {"notes/a.md": good("A"), ".mnemosyne.toml": 'dirs = ["atlas"]\n'})
    code, out, err = run(capsys, "wiki", "lint", "--vault", vault)
    assert (code, out) == (3, "")
    assert err == (
        f"mnemosyne: error: vault '{vault}' has none of the scanned dirs (atlas); its dirs are notes: "
        "pass the vault root with --vault, or name its dirs with --dir\n"
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["extra"], "unrecognized arguments: extra"),
        (["--vault"], "argument --vault: expected one argument"),
        (["--dir"], "argument --dir: expected one argument"),
    ],
)
def test_usage_errors_exit_64(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "wiki", "lint", *argv)
    assert (code, out) == (ExitCode.USAGE, "")
    assert err.startswith(f"mnemosyne: error: {message}")
    assert err.count("\n") == 1


# --- choosing the codes: --select, --ignore, [lint] ignore ---------------------------------

#: A vault whose pages are dated by a key recall does not read: every page is missing-updated.
DATED = {
    "atlas/a.md": "---\ntitle: Alpha\npublished: 2026-03-01\n---\n",
    "atlas/b.md": "---\ntitle: Beta\npublished: 2026-03-02\n---\n",
    "notes/n.md": good("Note"),
}
MISSING_UPDATED = "missing-updated\tno updated, lastmod or date; recall ranks the page last\n"
NOTES_UNSCANNED = f"notes/n.md\tunscanned-dir\t{unscanned('notes')}\n"
WHY = "(--select, --ignore, [lint] ignore)"
#: What the summary says the selection left out: how many findings of each code.
IGNORED_2 = f"findings left out: 2 missing-updated {WHY}"
IGNORED_3 = f"findings left out: 2 missing-updated, 1 unscanned-dir {WHY}"
IGNORED_1 = f"findings left out: 1 unscanned-dir {WHY}"
KNOWN_CODES = ", ".join(REASON_CODES)


def test_ignore_leaves_out_a_code_and_the_exit_code_follows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, DATED)
    assert run(capsys, "wiki", "lint", "--vault", vault) == (
        1,
        f"atlas/a.md\t{MISSING_UPDATED}atlas/b.md\t{MISSING_UPDATED}{NOTES_UNSCANNED}",
        "3 findings in 3 paths\n",
    )
    assert run(capsys, "wiki", "lint", "--vault", vault, "--ignore", "missing-updated") == (
        1,
        NOTES_UNSCANNED,
        f"1 finding in 1 path; {IGNORED_2}\n",
    )
    # Nothing reported: exit 0, even though the vault has findings.
    expected = (0, "", f"no findings reported; {IGNORED_3}\n")
    assert run(capsys, "wiki", "lint", "--vault", vault, "--ignore", "missing-updated,unscanned-dir") == expected
    assert run(capsys, "wiki", "lint", "--vault", vault, "--ignore", "missing-updated", "--ignore=unscanned-dir") == (
        expected
    )
    assert run(capsys, "wiki", "lint", "--vault", vault, "--ignore", "missing-updated,unscanned-dir", "--json") == (
        0,
        "[]\n",
        f"no findings reported; {IGNORED_3}\n",
    )


def test_select_reports_only_the_codes_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, DATED)
    assert run(capsys, "wiki", "lint", "--vault", vault, "--select", "unscanned-dir") == (
        1,
        NOTES_UNSCANNED,
        f"1 finding in 1 path; {IGNORED_2}\n",
    )
    assert run(
        capsys, "wiki", "lint", "--vault", vault, "--select", "hidden-file,unscanned-dir", "--select", "nested-file"
    ) == (
        1,
        NOTES_UNSCANNED,
        f"1 finding in 1 path; {IGNORED_2}\n",
    )
    assert run(capsys, "wiki", "lint", "--vault", vault, "--select", "nested-file") == (
        0,
        "",
        f"no findings reported; {IGNORED_3}\n",
    )
    # --ignore wins over --select for a code both name; "a," is the list a.
    assert run(capsys, "wiki", "lint", "--vault", vault, "--select", "unscanned-dir,", "--ignore", "unscanned-dir") == (
        0,
        "",
        f"no findings reported; {IGNORED_3}\n",
    )


def test_config_ignore_and_select_naming_a_code_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, {**DATED, ".mnemosyne.toml": '[lint]\nignore = ["missing-updated"]\n'})
    assert run(capsys, "wiki", "lint", "--vault", vault) == (1, NOTES_UNSCANNED, f"1 finding in 1 path; {IGNORED_2}\n")
    assert run(capsys, "wiki", "lint", "--vault", vault, "--ignore", "unscanned-dir") == (
        0,
        "",
        f"no findings reported; {IGNORED_3}\n",
    )
    assert run(capsys, "wiki", "lint", "--vault", vault, "--select", "missing-updated") == (
        1,
        f"atlas/a.md\t{MISSING_UPDATED}atlas/b.md\t{MISSING_UPDATED}",
        f"2 findings in 2 paths; {IGNORED_1}\n",
    )


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--select", "bogus"], f"argument --select: unknown lint code 'bogus'; known codes: {KNOWN_CODES}"),
        (
            ["--ignore", "missing-updated,Missing-Title,zz"],
            f"argument --ignore: unknown lint codes 'Missing-Title', 'zz'; known codes: {KNOWN_CODES}",
        ),
        (["--ignore", ","], "argument --ignore: expected a lint code, e.g. missing-updated"),
        (["--select"], "argument --select: expected one argument"),
    ],
)
def test_unknown_code_is_a_usage_error(argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Checked before the vault: none is given here.
    assert run(capsys, "wiki", "lint", *argv) == (
        ExitCode.USAGE,
        "",
        f"mnemosyne: error: {problem} (see 'mnemosyne wiki lint --help')\n",
    )


def test_unknown_code_in_config_is_a_vault_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path, {**DATED, ".mnemosyne.toml": '[lint]\nignore = ["missing-update"]\n'})
    assert run(capsys, "wiki", "lint", "--vault", vault) == (
        ExitCode.VAULT_ERROR,
        "",
        f"mnemosyne: error: {vault}/.mnemosyne.toml: lint.ignore has unknown lint code 'missing-update'; "
        f"known codes: {KNOWN_CODES}\n",
    )


def test_following_the_unscanned_dir_hint_scans_the_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hint's line, pasted into .mnemosyne.toml, scans notes/ and keeps atlas/."""
    vault = make_vault(tmp_path, {"atlas/a.md": good("Alpha"), "notes/n.md": good("Note")})
    code, out, _ = run(capsys, "wiki", "lint", "--vault", vault)
    assert (code, out) == (1, NOTES_UNSCANNED)
    line = out.split("\t")[2].partition("set ")[2].partition(" in .mnemosyne.toml")[0]
    (tmp_path / ".mnemosyne.toml").write_text(line + "\n", encoding="utf-8")
    assert run(capsys, "wiki", "lint", "--vault", vault) == (0, "", CLEAN_STDERR)
    assert run(capsys, "wiki", "find", "alpha", "note", "--vault", vault)[0] == ExitCode.NO_MATCH
    assert run(capsys, "wiki", "find", "note", "--vault", vault)[:2] == (0, "notes/n.md — Note\n")
    assert run(capsys, "wiki", "find", "alpha", "--vault", vault)[:2] == (0, "atlas/a.md — Alpha\n")


# --- the edge-case vault (fixtures/vaults/edge, made whole with real symlinks) -------------

#: Every file of the edge vault that find never searches, with why.
EDGE_NEVER_SEARCHED = {
    "root-page.md": ["vault-root-file"],
    "outside/outside-scope.md": ["unscanned-dir"],
    "atlas/nested/deep.md": ["nested-file"],
    "atlas/x.md/inner.md": ["nested-file"],
    "atlas/UPPER.MD": ["suffix-case"],
    "atlas/Mixed.Md": ["suffix-case"],
    "atlas/.hidden.md": ["hidden-file"],
    "apollo/.hidden-link.md": ["hidden-file"],
    "apollo/link-escape.md": ["symlink-escapes"],
    "apollo/link-dotdot.md": ["symlink-escapes"],
    "apollo/link-broken.md": ["broken-symlink"],
    "apollo/link-loop.md": ["broken-symlink"],
    "apollo/link-to-dir.md": ["not-regular-file"],
    "hephaistos": ["symlink-escapes"],
}
#: Searched pages of the edge vault and what is wrong with each (besides missing-updated,
#: which the fixture leaves out of most pages).
EDGE_DEGRADED = {
    "atlas/empty.md": ["no-frontmatter"],
    "atlas/only-bom.md": ["no-frontmatter"],
    "atlas/latin1.md": ["not-utf8"],
    "atlas/latin1-title.md": ["not-utf8"],
    "atlas/crlf.md": ["duplicate-title"],
    "apollo/link-inside.md": ["duplicate-title"],  # the same page as atlas/crlf.md, via a symlink
    "hades/title-empty.md": ["missing-title"],
    "hades/title-whitespace.md": ["missing-title"],
    "hades/title-null.md": ["missing-title"],
    "hades/title-list.md": ["missing-title"],
    "hades/title-number.md": ["missing-title"],
    "hades/title-mapping.md": ["missing-title"],
    "hades/title-block-folded.md": [],
    "hades/title-quoted-escapes.md": [],
    "hermes/fields-non-string.md": ["unknown-constellation"],
    "hermes/fields-null.md": ["unknown-constellation"],
    "hermes/fields-strings.md": [],
    "mnemosyne/unterminated.md": ["unclosed-frontmatter"],
    "mnemosyne/closing-dots.md": [],  # YAML's document end closes its frontmatter
    "mnemosyne/invalid-yaml.md": ["invalid-frontmatter"],
    "mnemosyne/invalid-date.md": ["invalid-frontmatter"],
    "mnemosyne/python-tag.md": ["invalid-frontmatter"],
    "mnemosyne/deep-nesting.md": ["invalid-frontmatter"],
    "mnemosyne/billion-laughs.md": [],
    "mnemosyne/empty-frontmatter.md": ["frontmatter-not-mapping"],
    "mnemosyne/not-mapping-list.md": ["frontmatter-not-mapping"],
    "mnemosyne/not-mapping-scalar.md": ["frontmatter-not-mapping"],
    "mnemosyne/late-frontmatter.md": ["no-frontmatter"],
    "proteus/bad-\udcff-name.md": ["no-frontmatter"],
    "proteus/evil\n\x1b[2Jname.md": ["no-frontmatter"],
}
NEVER_SEARCHED_CODES = {
    "vault-root-file",
    "unscanned-dir",
    "nested-file",
    "suffix-case",
    "hidden-file",
    "symlink-escapes",
    "broken-symlink",
    "not-regular-file",
}


@pytest.fixture(scope="module")
def edge_vault(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build_edge_vault(tmp_path_factory.mktemp("edge"), big_page=False))


@pytest.fixture(scope="module")
def edge_findings(edge_vault: str) -> dict[str, list[str]]:
    from mnemosyne_core.lint import lint_report

    by_path: dict[str, list[str]] = {}
    for finding in lint_report(edge_vault).findings:
        by_path.setdefault(finding.path, []).append(finding.code)
    return by_path


def test_edge_vault_never_searched_files(edge_findings: dict[str, list[str]]) -> None:
    never_searched = {path: codes for path, codes in edge_findings.items() if set(codes) & NEVER_SEARCHED_CODES}
    assert never_searched == EDGE_NEVER_SEARCHED


def test_edge_vault_degraded_pages(edge_findings: dict[str, list[str]]) -> None:
    degraded = {
        path: [code for code in edge_findings.get(path, []) if code != "missing-updated"] for path in EDGE_DEGRADED
    }
    assert degraded == EDGE_DEGRADED


def test_edge_vault_findings_agree_with_finds_scan(edge_vault: str, edge_findings: dict[str, list[str]]) -> None:
    """No page find searches is called never-searched, and no never-searched file is one."""
    searched = {page.rel_path for page in scan(os.path.realpath(edge_vault)).pages}
    assert not searched & set(EDGE_NEVER_SEARCHED)
    assert set(EDGE_DEGRADED) <= searched
    for path in searched:
        assert not set(edge_findings.get(path, [])) & NEVER_SEARCHED_CODES, path


def test_edge_vault_through_the_cli(edge_vault: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "wiki", "lint", "--vault", edge_vault, "--json")
    records = valid_lint_json(out)
    assert code == ExitCode.NO_MATCH
    assert err == f"{len(records)} findings in {len({record['path'] for record in records})} paths\n"
    assert records == sorted(records, key=lambda record: (record["path"], record["code"]))
    code, plain, _ = run(capsys, "wiki", "lint", "--vault", edge_vault)
    assert code == ExitCode.NO_MATCH
    assert len(plain.splitlines()) == len(records)
    assert all(line.count("\t") == 2 for line in plain.splitlines())
    assert "proteus/evil\\x0a\\x1b[2Jname.md\tno-frontmatter\t" in plain


# --- docs ----------------------------------------------------------------------------------


def test_docs_table_lists_every_reason_code_once() -> None:
    from mnemosyne_core.lint import REASON_CODES

    doc = (Path(__file__).resolve().parents[3] / "docs" / "commands.md").read_text(encoding="utf-8")
    section = doc[doc.index("## wiki lint") :]
    rows = [line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")]
    assert [row for row in rows if row in REASON_CODES] == list(REASON_CODES)
