"""Criteria 2 to 6, each twice: in-process (``main([...])``) against a small vault built in
pyfakefs, whose answers are known by construction, and as a subprocess of the installed
``mnemosyne`` against the committed fixture vault, whose answers are checked against a
plain read-every-file oracle."""

from __future__ import annotations

import json
import sysconfig
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft202012Validator

import mnemosyne_contract
import mnemosyne_core  # noqa: F401 - loaded before pyfakefs hides site-packages from run()'s lazy import
from mnemosyne_cli.app import main

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyfakefs.fake_filesystem import FakeFilesystem

    from acceptance.conftest import Installed

FAKE_VAULT = Path("/vault")
#: A page for every case the criteria need. mastra: the title, the body in capitals, only
#: the body; slack: the title, the body. Both in two pages, only one in three, none in one.
FAKE_PAGES: dict[str, bytes] = {
    "atlas/mastra-rollout.md": (
        b"---\ntitle: Mastra Rollout\nconstellation: atlas\ntype: decision\n---\n\n"
        b"# Mastra Rollout\n\nAnnounced in the #infra Slack channel.\n"
    ),
    "atlas/slack-bridge.md": (
        b"---\ntitle: Slack Bridge\nconstellation: atlas\ntype: design\n---\n\nBridges alerts to chat.\n"
    ),
    # No frontmatter: the title falls back to the stem, constellation to the dir.
    "hermes/webhook-notes.md": b"# Webhook notes\n\nMASTRA posts to SLACK through a webhook.\n",
    # --cat must keep every byte: CRLF line ends, UTF-8 beyond ASCII, a tab, no final newline.
    "hermes/kestrel-cache.md": (
        b"---\r\ntitle: Kestrel Cache\r\nconstellation: hermes\r\ntype: design\r\n---\r\n\r\n"
        b"# Kestrel Cache\r\n\r\nCaf\xc3\xa9 \xe2\x80\x94 keyed by content hash.\tTabs stay.\r\nNo newline at the end"
    ),
    "analyses/framework-survey.md": (
        b"---\ntitle: Framework Survey\ntype: analysis\n---\n\nWe looked at mastra and LangGraph.\n"
    ),
    "proteus/routing.md": b"---\ntitle: Routing\n---\n\nProvider routing, nothing else.\n",
}
FAKE_MASTRA = {"atlas/mastra-rollout.md", "hermes/webhook-notes.md", "analyses/framework-survey.md"}
FAKE_SLACK = {"atlas/mastra-rollout.md", "atlas/slack-bridge.md", "hermes/webhook-notes.md"}
FAKE_UNIQUE_PAGE = "hermes/kestrel-cache.md"


@pytest.fixture
def fake_vault(fs: FakeFilesystem) -> Path:
    for rel_path, content in FAKE_PAGES.items():
        fs.create_file(FAKE_VAULT / rel_path, contents=content)
    return FAKE_VAULT


def run_main(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, bytes]:
    """``mnemosyne ARGS`` in this process: the exit code, stdout and stderr."""
    code = main(list(args))
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err


def paths_of(stdout: bytes) -> list[str]:
    """The paths of find's default output, ``<dir>/<file>.md — <title>`` per line."""
    return [line.split(" — ", 1)[0] for line in stdout.decode("utf-8").splitlines()]


def pages_holding(vault: Path, keyword: str) -> set[str]:
    """The obviously-correct answer for an ASCII keyword: every ``*.md`` one level below a
    top-level dir whose vault-relative path or text contains it, ignoring case."""
    needle = keyword.casefold()
    return {
        f"{page.parent.name}/{page.name}"
        for page in vault.glob("*/*.md")
        if needle in f"{page.parent.name}/{page.name}".casefold()
        or needle in page.read_text(encoding="utf-8").casefold()
    }


@pytest.fixture(scope="session")
def find_schema() -> Draft202012Validator:
    """The validator of the find schema shipped in the installed contract package (loaded
    before any test's pyfakefs hides the real site-packages)."""
    schema = mnemosyne_contract.load_schema("find")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(validator: Draft202012Validator, document: Any) -> list[str]:
    return [error.message for error in validator.iter_errors(document)]


# Criterion 2: no match exits 1, says so on stderr, prints nothing on stdout.


def test_criterion_2_no_match_exit_1_in_process(
    capsysbinary: pytest.CaptureFixture[bytes], fake_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AION_VAULT", str(fake_vault))  # as an agent's harness runs it: no --vault
    assert run_main(capsysbinary, "wiki", "find", "nonexistent") == (1, b"", b"no wiki page matches 'nonexistent'\n")


def test_criterion_2_no_match_exit_1_subprocess(
    mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    assert pages_holding(aion_vault, "nonexistent") == set()
    result = mnemosyne.run("wiki", "find", "nonexistent", extra_env={"AION_VAULT": str(aion_vault)})
    assert (result.returncode, result.stdout, result.stderr) == (1, b"", b"no wiki page matches 'nonexistent'\n")
    record_figure("exit 1, stdout 0 bytes, stderr exact")


# Criterion 3: several keywords AND: the answer is exactly the intersection of each one's.


def test_criterion_3_and_is_the_intersection_in_process(
    capsysbinary: pytest.CaptureFixture[bytes], fake_vault: Path
) -> None:
    answers: dict[str, list[str]] = {}
    for query in (["mastra"], ["slack"], ["mastra", "slack"]):
        code, out, err = run_main(capsysbinary, "wiki", "find", *query, "--limit", "0", "--vault", str(fake_vault))
        assert (code, err) == (0, b"")
        answers[" ".join(query)] = paths_of(out)
    mastra, slack, both = (set(answers[key]) for key in ("mastra", "slack", "mastra slack"))
    assert len(answers["mastra slack"]) == len(both)  # no page twice
    assert mastra == FAKE_MASTRA
    assert slack == FAKE_SLACK
    assert both <= mastra
    assert both <= slack
    assert both == mastra & slack == FAKE_MASTRA & FAKE_SLACK


def test_criterion_3_and_is_the_intersection_subprocess(
    mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    answers: dict[str, list[str]] = {}
    for query in (["mastra"], ["slack"], ["mastra", "slack"]):
        result = mnemosyne.run("wiki", "find", *query, "--limit", "0", "--vault", aion_vault)
        assert (result.returncode, result.stderr) == (0, b"")
        answers[" ".join(query)] = paths_of(result.stdout)
    mastra, slack, both = (set(answers[key]) for key in ("mastra", "slack", "mastra slack"))
    assert len(answers["mastra slack"]) == len(both)  # no page twice
    # The single-keyword answers are complete and exact, so the set relation means something.
    assert mastra == pages_holding(aion_vault, "mastra")
    assert slack == pages_holding(aion_vault, "slack")
    # Non-trivial: some pages hold both keywords, and each keyword has pages of its own.
    assert both
    assert mastra - slack
    assert slack - mastra
    assert both <= mastra
    assert both <= slack
    assert both == mastra & slack
    record_figure(f"mastra {len(mastra)}, slack {len(slack)}, mastra slack {len(both)} (= intersection)")


# Criterion 4: --cat on a keyword only one page holds prints that page, byte for byte.


def test_criterion_4_cat_prints_the_page_byte_for_byte_in_process(
    capsysbinary: pytest.CaptureFixture[bytes], fake_vault: Path
) -> None:
    assert run_main(capsysbinary, "wiki", "find", "kestrel", "--cat", "--vault", str(fake_vault)) == (
        0,
        FAKE_PAGES[FAKE_UNIQUE_PAGE],
        b"",
    )


def test_criterion_4_cat_prints_the_page_byte_for_byte_subprocess(
    mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    (unique_page,) = pages_holding(aion_vault, "kestrel")
    listed = mnemosyne.run("wiki", "find", "kestrel", "--vault", aion_vault)
    assert (listed.returncode, paths_of(listed.stdout)) == (0, [unique_page])
    result = mnemosyne.run("wiki", "find", "kestrel", "--cat", "--vault", aion_vault)
    page = (aion_vault / unique_page).read_bytes()
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == page
    record_figure(f"{unique_page}: {len(page)} bytes identical")


def test_criterion_1_the_readmes_example_is_lines_1_and_2_subprocess(
    mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    """The README's output example, in its order: the page an agent names is on line 1."""
    result = mnemosyne.run("wiki", "find", "mastra", "--vault", aion_vault)
    assert result.returncode == 0
    assert result.stdout.decode("utf-8").splitlines()[:2] == [
        "analyses/mastra-framework-decision-trail.md — Mastra Framework Decision Trail",
        "hermes/hermes-mastra-changelog-analysis.md — Hermes Mastra Changelog Safety Analysis",
    ]
    record_figure("the README's two example lines are lines 1 and 2")


# Criterion 5: --cat with several matches exits 2, prints nothing, names the candidates.


def test_criterion_5_cat_with_several_matches_exits_2_in_process(
    capsysbinary: pytest.CaptureFixture[bytes], fake_vault: Path
) -> None:
    code, out, err = run_main(capsysbinary, "wiki", "find", "mastra", "--cat", "--vault", str(fake_vault))
    assert (code, out) == (2, b"")
    stderr_lines = err.decode("utf-8").splitlines()
    for candidate in FAKE_MASTRA:
        assert any(candidate in line for line in stderr_lines), f"{candidate} is not listed on stderr:\n{err!r}"


def test_criterion_5_cat_with_several_matches_exits_2_subprocess(
    mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    candidates = pages_holding(aion_vault, "mastra")
    assert len(candidates) > 1
    result = mnemosyne.run("wiki", "find", "mastra", "--cat", "--vault", aion_vault)
    assert (result.returncode, result.stdout) == (2, b"")
    stderr_lines = result.stderr.decode("utf-8").splitlines()
    unlisted = sorted(path for path in candidates if not any(path in line for line in stderr_lines))
    assert unlisted == [], f"candidates missing from stderr:\n{result.stderr.decode()}"
    record_figure(f"exit 2, stdout empty, {len(candidates)} of {len(candidates)} candidates on stderr")


# Criterion 6: --json output is valid against the schema the contract package ships.


def test_criterion_6_schema_comes_from_the_installed_contract_package() -> None:
    schema_file = Path(str(files("mnemosyne_contract.schemas").joinpath("find.schema.json")))
    assert schema_file.resolve().is_relative_to(Path(sysconfig.get_paths()["purelib"]).resolve())
    assert mnemosyne_contract.load_schema("find") == json.loads(schema_file.read_text(encoding="utf-8"))


def test_criterion_6_json_valid_for_many_one_and_no_match_in_process(
    find_schema: Draft202012Validator, capsysbinary: pytest.CaptureFixture[bytes], fake_vault: Path
) -> None:
    for keyword, expected_code, expected_paths in (
        ("mastra", 0, FAKE_MASTRA),
        ("kestrel", 0, {FAKE_UNIQUE_PAGE}),
        ("nonexistent", 1, set()),
    ):
        code, out, _ = run_main(capsysbinary, "wiki", "find", keyword, "--json", "--vault", str(fake_vault))
        document = json.loads(out)
        assert code == expected_code
        assert schema_errors(find_schema, document) == []
        assert {item["path"] for item in document} == expected_paths
    code, out, _ = run_main(capsysbinary, "wiki", "find", "webhook", "--json", "--vault", str(fake_vault))
    assert (code, json.loads(out)) == (
        0,
        [{"path": "hermes/webhook-notes.md", "title": "webhook-notes", "constellation": "hermes", "type": None}],
    )


def test_criterion_6_json_valid_for_many_one_and_no_match_subprocess(
    find_schema: Draft202012Validator, mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    sizes = []
    for keyword, expected_code in (("mastra", 0), ("kestrel", 0), ("nonexistent", 1)):
        result = mnemosyne.run("wiki", "find", keyword, "--json", "--limit", "0", "--vault", aion_vault)
        listed = mnemosyne.run("wiki", "find", keyword, "--limit", "0", "--vault", aion_vault)
        document = json.loads(result.stdout)
        assert result.returncode == expected_code
        assert schema_errors(find_schema, document) == []
        # Agents get the same answer, in the same order, whichever output they parse.
        assert [item["path"] for item in document] == paths_of(listed.stdout)
        assert {item["path"] for item in document} == pages_holding(aion_vault, keyword)
        sizes.append(f"{keyword} {len(document)}")
    assert result.stdout == b"[]\n"
    record_figure(f"valid: {', '.join(sizes)} items")


def test_criterion_6_schema_rejects_a_missing_key_and_a_wrong_type(
    find_schema: Draft202012Validator, mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    result = mnemosyne.run("wiki", "find", "kestrel", "--json", "--vault", aion_vault)
    (item,) = json.loads(result.stdout)
    assert schema_errors(find_schema, [item]) == []
    missing_key = {key: value for key, value in item.items() if key != "constellation"}
    assert schema_errors(find_schema, [missing_key]) == ["'constellation' is a required property"]
    wrong_type = {**item, "title": 42}
    assert schema_errors(find_schema, [wrong_type]) == ["42 is not of type 'string'"]
    record_figure("schema rejects a missing key and a wrong type")
