"""``mnemosyne wiki guide``: the guide for agents comes with the tool. It is docs/agents.md's
text, under 4 KB, shipped in the wheel; ``--skill`` frames it as an agent skill file; and
every example it gives runs, on the fixture vault, as the guide says it does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from mnemosyne_cli.app import main
from mnemosyne_cli.commands.guide import SKILL_DESCRIPTION, SKILL_NAME, guide_text

ROOT = Path(__file__).resolve().parents[3]
AGENTS_DOC = ROOT / "docs" / "agents.md"
CLI_PACKAGE = ROOT / "packages" / "mnemosyne-cli"
FIXTURE_VAULT = ROOT / "fixtures" / "vaults" / "aion"
#: What an agent reads in one call: the guide must fit.
MOST_BYTES = 4096


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_guide_prints_the_shipped_text(capsys: pytest.CaptureFixture[str]) -> None:
    shipped = (CLI_PACKAGE / "src" / "mnemosyne_cli" / "guide.md").read_text(encoding="utf-8")
    assert run(capsys, "wiki", "guide") == (0, shipped, "")
    assert guide_text() == shipped
    assert len(shipped.encode("utf-8")) < MOST_BYTES


def test_agents_doc_is_the_guide() -> None:
    header, separator, body = AGENTS_DOC.read_text(encoding="utf-8").partition("\n---\n\n")
    assert separator, "docs/agents.md has no '---' line before the guide"
    assert body == guide_text(), "docs/agents.md below its '---' line must be guide.md exactly: copy it"
    assert "mnemosyne wiki guide" in header


def test_skill_is_the_guide_with_a_name_and_a_description(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "wiki", "guide", "--skill")
    assert (code, err) == (0, "")
    assert out.startswith("---\n")
    block, _, body = out[4:].partition("\n---\n\n")
    assert yaml.safe_load(block) == {"name": SKILL_NAME, "description": SKILL_DESCRIPTION}
    assert body == guide_text()
    assert len(out.encode("utf-8")) < MOST_BYTES


def test_guide_takes_no_argument(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "wiki", "guide", "find") == (
        64,
        "",
        "mnemosyne: error: unrecognized arguments: find (see 'mnemosyne wiki guide --help')\n",
    )
    assert run(capsys, "wiki", "guide", "--skil")[2] == (
        "mnemosyne: error: unrecognized arguments: --skil: did you mean --skill?\n"
    )


def test_top_level_help_names_the_guide_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert [line for line in out.splitlines() if "wiki guide" in line] == [
        "Agents: 'mnemosyne wiki guide' prints how to find pages, in one call."
    ]


def test_the_wheel_ships_the_guide(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(CLI_PACKAGE)).build(directory=str(tmp_path), versions=["standard"])
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("mnemosyne_cli/guide.md").decode("utf-8") == guide_text()


# --- every example of the guide runs as it says -------------------------------------------


def examples() -> list[str]:
    """The guide's command lines: each line of its ``sh`` blocks, and each inline
    `` `mnemosyne ...` `` without a placeholder (KEYWORD, TOPIC, PATH), without comments."""
    text = guide_text()
    lines = [
        line.partition("  #")[0].strip()
        for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
        for line in block.splitlines()
        if line.strip()
    ]
    inline = [found for found in re.findall(r"`(mnemosyne [^`]*)`", text) if not re.search(r"[A-Z]{3,}", found)]
    return list(dict.fromkeys(lines + inline))


def shell(command: str) -> subprocess.CompletedProcess[str]:
    """``command`` as an agent runs it: a shell, this checkout's ``mnemosyne`` first on PATH,
    the fixture vault as $AION_VAULT, run from a dir with no vault of its own."""
    env = {key: value for key, value in os.environ.items() if key not in ("MNEMOSYNE_MEMORY_DIR", "XDG_CONFIG_HOME")}
    env.update(
        PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
        AION_VAULT=str(FIXTURE_VAULT),
        XDG_RUNTIME_DIR="/nonexistent/mnemosyne-tests-runtime",
        NO_COLOR="1",
    )
    return subprocess.run(
        ["/bin/sh", "-c", command], capture_output=True, text=True, check=False, env=env, cwd="/", timeout=60
    )


def test_the_guide_has_examples_for_what_agents_asked() -> None:
    commands = examples()
    for needed in (
        "--matched",
        "--limit 3",
        "--dir hermes",
        "hermes/",
        "--json --matched",
        "--paths",
        "--cat",
        "-- -v",
    ):
        assert any(needed in command for command in commands), needed


@pytest.mark.parametrize("command", examples())
def test_every_example_runs(command: str) -> None:
    done = shell(command)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert done.stdout


def test_examples_do_what_the_guide_says() -> None:
    named = shell("mnemosyne wiki find mastra --matched")
    assert (
        named.stdout.splitlines()[0] == "analyses/mastra-framework-decision-trail.md — Mastra Framework Decision Trail"
    )
    assert named.stderr == "2 pages are named by 'mastra'; 7 more mention it in their text\n"
    limited = shell("mnemosyne wiki find mastra --matched --limit 3")
    assert len([line for line in limited.stdout.splitlines() if not line.startswith("  ")]) == 3
    assert limited.stderr.splitlines()[-1] == "showing 3 of 9 matches"
    for command in ("mnemosyne wiki find mastra --dir hermes", "mnemosyne wiki find mastra hermes/"):
        paths = [line.partition(" — ")[0] for line in shell(command).stdout.splitlines()]
        assert paths, command
        assert all(path.startswith("hermes/") for path in paths), command
    items = json.loads(shell("mnemosyne wiki find mastra --json --matched").stdout)
    assert {item["matched"] for item in items} == {"title", "text"}
    assert all(("context" in item) == (item["matched"] == "text") for item in items)
    # Every keyword must match: a stop word widens nothing and narrows little.
    every = shell("mnemosyne wiki find mastra decision --matched")
    assert every.stdout.splitlines()[0].startswith("analyses/mastra-framework-decision-trail.md")
