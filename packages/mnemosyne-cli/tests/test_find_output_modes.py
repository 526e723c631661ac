"""find's output modes for scripts (docs/spec.md rule 15): --paths, --absolute and -0, what
each combination means, and the exact bytes they print. Exact stdout, stderr and exit code
through ``main``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from mnemosyne_cli.app import main
from mnemosyne_contract import load_schema

FakeVault = Callable[[dict[str, str | bytes]], str]

PAGES: dict[str, str | bytes] = {
    "atlas/relay-runbook.md": "---\ntitle: Relay Runbook\nconstellation: atlas\ntype: runbook\n---\nRestart it.\n",
    "hermes/bridge.md": "---\ntitle: Slack Bridge\n---\nThe relay posts to Slack.\n",
    "metis/plan.md": "---\ntitle: Weekly Plan\n---\nCheck the relay.\n",
    "hephaistos/kestrel-build-cache.md": "---\ntitle: Kestrel Build Cache\n---\nRemote cache.\n",
}
#: Read before any test fakes the file system.
FIND_SCHEMA = load_schema("find")
#: find's order for "relay": the page that names it first, then the others by path.
RELAY = ["atlas/relay-runbook.md", "hermes/bridge.md", "metis/plan.md"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def plain_paths(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    """The paths of the plain output: the obviously correct answer --paths must equal."""
    code, out, _ = run(capsys, *argv)
    assert code == 0
    return [line.partition(" — ")[0] for line in out.splitlines()]


# --- --paths ---


def test_paths_prints_one_path_per_line_in_finds_order(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "relay", "--paths", "--vault", vault) == (
        0,
        "".join(f"{p}\n" for p in RELAY),
        "",
    )
    assert plain_paths(capsys, "wiki", "find", "relay", "--vault", vault) == RELAY


def test_paths_keeps_the_limit_and_its_note(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "relay", "--paths", "--limit", "2", "--vault", vault) == (
        0,
        f"{RELAY[0]}\n{RELAY[1]}\n",
        "showing 2 of 3 matches\n",
    )


def test_paths_with_no_match_prints_nothing_and_exits_1(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "xyzzy", "--paths", "--vault", vault) == (
        1,
        "",
        "no wiki page matches 'xyzzy'\n",
    )
    assert run(capsys, "wiki", "find", "xyzzy", "--paths", "-0", "--vault", vault) == (
        1,
        "",
        "no wiki page matches 'xyzzy'\n",
    )


@pytest.mark.parametrize("null", ["-0", "--null"])
def test_null_ends_each_path_with_nul(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], null: str) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "relay", "--paths", null, "--vault", vault) == (
        0,
        "".join(f"{p}\0" for p in RELAY),
        "",
    )


#: Names a newline-separated list cannot carry as they are: a newline, an ESC, a tab.
ODD_NAMES = [b"line\nbreak.md", b"esc\x1b[31mred.md", b"tab\there.md"]


@pytest.fixture
def odd_vault(tmp_path: Path) -> Path:
    (tmp_path / "atlas").mkdir()
    for name in [*ODD_NAMES, b"latin1-caf\xe9.md", b"plain.md"]:
        with open(os.path.join(os.fsencode(tmp_path / "atlas"), name), "wb") as page:
            page.write(b"needle\n")
    return tmp_path


def test_null_prints_every_name_as_its_bytes_on_disk(
    odd_vault: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["wiki", "find", "needle", "--paths", "-0", "--vault", str(odd_vault)]) == 0
    out, err = capsysbinary.readouterr()
    names = sorted([*ODD_NAMES, b"latin1-caf\xe9.md", b"plain.md"])
    assert (out, err) == (b"".join(b"atlas/" + name + b"\0" for name in names), b"")


def test_newline_mode_escapes_a_name_with_a_control_character_and_says_so(
    odd_vault: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["wiki", "find", "needle", "--paths", "--vault", str(odd_vault)]) == 0
    out, err = capsysbinary.readouterr()
    # Undecodable bytes (Latin-1 é) are not control characters: they stay the true bytes.
    assert out == (
        b"atlas/esc\\x1b[31mred.md\n"
        b"atlas/latin1-caf\xe9.md\n"
        b"atlas/line\\x0abreak.md\n"
        b"atlas/plain.md\n"
        b"atlas/tab\\x09here.md\n"
    )
    note = b": the name holds a control character, shown escaped; --paths -0 prints it as it is\n"
    assert err == (
        b"mnemosyne: warning: atlas/esc\\x1b[31mred.md"
        + note
        + b"mnemosyne: warning: atlas/line\\x0abreak.md"
        + note
        + b"mnemosyne: warning: atlas/tab\\x09here.md"
        + note
    )


# --- --absolute ---


def test_absolute_in_plain_paths_and_json(fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", "--absolute", "--vault", vault) == (
        0,
        "/vault/hephaistos/kestrel-build-cache.md — Kestrel Build Cache\n",
        "",
    )
    assert run(capsys, "wiki", "find", "relay", "--paths", "--absolute", "--vault", vault) == (
        0,
        "".join(f"/vault/{p}\n" for p in RELAY),
        "",
    )
    assert run(capsys, "wiki", "find", "relay", "--paths", "-0", "--absolute", "--vault", vault) == (
        0,
        "".join(f"/vault/{p}\0" for p in RELAY),
        "",
    )
    code, out, err = run(capsys, "wiki", "find", "relay", "--json", "--absolute", "--vault", vault)
    records = json.loads(out)
    jsonschema.Draft202012Validator(FIND_SCHEMA).validate(records)
    _, relative, _ = run(capsys, "wiki", "find", "relay", "--json", "--vault", vault)
    # Only the path changes: same records, same order, same keys.
    assert (code, err) == (0, "")
    assert records == [{**record, "path": f"/vault/{record['path']}"} for record in json.loads(relative)]


def test_absolute_is_the_vault_root_with_symlinks_resolved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-vault"
    (real / "atlas").mkdir(parents=True)
    (real / "atlas" / "page.md").write_text("needle\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(tmp_path)
    resolved = os.path.realpath(real)
    assert run(capsys, "wiki", "find", "needle", "--paths", "--absolute", "--vault", "link") == (
        0,
        f"{resolved}/atlas/page.md\n",
        "",
    )
    assert os.path.isfile(f"{resolved}/atlas/page.md")


def test_absolute_applies_to_cats_candidates_and_leaves_the_page_alone(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", "--cat", "--absolute", "--vault", vault) == (
        0,
        PAGES["hephaistos/kestrel-build-cache.md"],
        "",
    )
    code, out, err = run(capsys, "wiki", "find", "relay", "--cat", "--absolute", "--vault", vault)
    assert (code, out) == (2, "")
    assert "  /vault/metis/plan.md — Weekly Plan\n" in err
    assert "  metis/plan.md" not in err


# --- what combines and what does not ---


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--paths", "--json"],
            "--paths and --json cannot be combined: --paths prints bare paths, --json objects; drop one",
        ),
        (["--paths", "--cat"], "--paths and --cat cannot be combined: --cat prints the page itself; drop one"),
        (["--cat", "--json"], "--cat and --json cannot be combined: --cat prints the page itself; drop one"),
        (["-0"], "-0/--null applies only to --paths (each path then ends with a NUL byte): add --paths, or drop -0"),
        (
            ["--null", "--json"],
            "-0/--null applies only to --paths (each path then ends with a NUL byte): add --paths, or drop -0",
        ),
        (
            ["-0", "--cat"],
            "-0/--null applies only to --paths (each path then ends with a NUL byte): add --paths, or drop -0",
        ),
    ],
)
def test_contradictory_output_flags_are_usage_errors(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    vault = fake_vault(PAGES)
    assert run(capsys, "wiki", "find", "kestrel", *flags, "--vault", vault) == (
        64,
        "",
        f"mnemosyne: error: {message}\n",
    )


def test_a_negative_number_stays_a_keyword_or_a_value_beside_the_0_flag(
    fake_vault: FakeVault, capsys: pytest.CaptureFixture[str]
) -> None:
    # argparse reads words like "-5" as flags once a flag looks like one (-0); find must not.
    vault = fake_vault({**PAGES, "atlas/offsets.md": "---\ntitle: Offsets\n---\nUTC-5 and UTC-8\n"})
    assert run(capsys, "wiki", "find", "-5", "--paths", "--vault", vault) == (0, "atlas/offsets.md\n", "")
    assert run(capsys, "wiki", "find", "x", "--limit", "-5", "--vault", vault) == (
        64,
        "",
        "mnemosyne: error: argument --limit: must be 0 (no cap) or a positive whole number, not '-5' "
        "(see 'mnemosyne wiki find --help')\n",
    )
