"""The bench's own logic: resetting one index (its builders killed, its files gone, no
other index's builder touched), the targets it reads from its measurements, and the
"what limits it" lines it fills."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import reset_index
import run_bench

#: A stand-in for the detached builder: same command line, sleeps instead of building.
FAKE_BUILDER = "import time\ntime.sleep(60)\n"


def start_fake_builder(package_root: Path, index: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    return subprocess.Popen([sys.executable, "-m", "mnemosyne_core.build", index, "/vault", "/home"], env=env)


def wait_listed(index: str, pid: int) -> None:
    """Until the fake builder's command line shows in /proc (the interpreter has started)."""
    deadline = time.monotonic() + 10
    while pid not in reset_index.builders(index):
        assert time.monotonic() < deadline, "the fake builder never showed up"
        time.sleep(0.01)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_reset_kills_the_builders_of_that_index_only_and_removes_its_files(tmp_path: Path) -> None:
    package = tmp_path / "fake" / "mnemosyne_core"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "build.py").write_text(FAKE_BUILDER, encoding="utf-8")
    index, other = str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")
    for suffix in reset_index.SUFFIXES:
        Path(index + suffix).write_bytes(b"x")
    Path(other).write_bytes(b"x")
    mine = start_fake_builder(tmp_path / "fake", index)
    theirs = start_fake_builder(tmp_path / "fake", other)
    try:
        wait_listed(index, mine.pid)
        wait_listed(other, theirs.pid)
        assert reset_index.reset(index) == [mine.pid]
        assert mine.wait(10) == -9
        assert theirs.poll() is None
        assert sorted(os.listdir(tmp_path)) == ["b.sqlite", "fake"]
        assert reset_index.reset(index) == []  # nothing left to kill or remove: no error
    finally:
        for process in (mine, theirs):
            process.kill()
            process.wait(10)


def test_the_builders_are_found_by_their_exact_command_line(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    lines = {
        "10": [b"/usr/bin/python3", b"-m", b"mnemosyne_core.build", b"/c/x.sqlite", b"/v", b"/h"],
        "11": [b"/usr/bin/python3", b"-m", b"mnemosyne_core.build", b"/c/x.sqlite-other", b"/v", b"/h"],
        "12": [b"/bin/sh", b"-c", b"echo -m mnemosyne_core.build /c/x.sqlite"],
        "13": [b"python", b"-m", b"mnemosyne_core.build", b"/c/x.sqlite", b"/v", b"/h"],
        # As a call starts it: the interpreter's -P before -m.
        "14": [b"/usr/bin/python3", b"-P", b"-m", b"mnemosyne_core.build", b"/c/x.sqlite", b"/v", b"/h"],
        "self": [b"python", b"-m", b"mnemosyne_core.build", b"/c/x.sqlite"],
    }
    for pid, argv in lines.items():
        (proc / pid).mkdir(parents=True)
        (proc / pid / "cmdline").write_bytes(b"\0".join(argv) + b"\0")
    assert sorted(reset_index.builders("/c/x.sqlite", str(proc))) == [10, 13, 14]


def test_a_zombie_counts_as_gone(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    for pid, state in (("20", b"S"), ("21", b"Z")):
        (proc / pid).mkdir(parents=True)
        (proc / pid / "stat").write_bytes(pid.encode() + b" (python3 (x)) " + state + b" 1 2 3\n")
    assert not reset_index.gone(20, str(proc))
    assert reset_index.gone(21, str(proc))
    assert reset_index.gone(22, str(proc))


def test_fill_leaves_an_unmeasured_placeholder_as_written() -> None:
    assert run_bench.fill("{find_ms:.0f} ms to rg's {rg_ms:.0f}", {"find_ms": 12.4, "rg_ms": 3.0}) == "12 ms to rg's 3"
    assert run_bench.fill("took {find_ms} on {vault}", {"find_ms": 5}) == "took 5 on {vault}"
    # A format spec on a fact that was not measured cannot be applied: the facts are listed.
    assert run_bench.fill("{nope:.0f} ms", {"find_ms": 5}) == "{nope:.0f} ms (find_ms=5)"


def measured(results: run_bench.Results, vault: str, pages: int, query: str, **times: float) -> None:
    results.pages[vault] = pages
    results.warm.setdefault(vault, {})[query] = {tool: (seconds, seconds) for tool, seconds in times.items()}


def test_targets_pass_and_miss_by_the_worst_query_of_the_same_run() -> None:
    results = run_bench.Results()
    measured(results, "fixture", 94, "rare", **{run_bench.WARM: 0.030, run_bench.BARE: 0.020, run_bench.RG: 0.004})
    measured(results, "fixture", 94, "common", **{run_bench.WARM: 0.050, run_bench.BARE: 0.020, run_bench.RG: 0.004})
    measured(results, "rich-yaml 1k", 1000, "rare", **{run_bench.WARM: 0.060, run_bench.RG: 0.030, "lint": 0.090})
    results.builds["plain 100k"], results.pages["plain 100k"] = 42.0, 100000
    results.sizes["plain 100k"] = (300, 100)
    rows = {row.target.key: row for row in run_bench.targets(list(run_bench.PROFILES), results)}
    assert [row.target.key for row in rows.values()] == [target.key for target in run_bench.TARGETS]
    assert (rows["fixture-warm"].value, rows["fixture-warm"].met) == (2.5, False)
    assert rows["fixture-warm"].measured == "2.50× (worst: common; 50.0 / 20.0 ms)"
    assert (rows["warm-rich-yaml"].value, rows["warm-rich-yaml"].met) == (2.0, True)
    assert (rows["commands"].value, rows["commands"].met) == (1.5, False)
    assert (rows["build"].value, rows["build"].met) == (42.0, True)
    assert (rows["size"].value, rows["size"].met) == (3.0, True)  # at the target is a pass
    assert rows["warm-plain"].met is None
    assert rows["warm-plain"].measured == "not measured"


def test_the_report_names_what_limits_each_missed_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_bench, "machine", dict)
    monkeypatch.setitem(run_bench.LIMITS, "fixture-warm", "{find_ms:.0f} ms against {bare_ms:.0f} ms ({query})")
    results = run_bench.Results()
    measured(results, "fixture", 94, "common", **{run_bench.WARM: 0.050, run_bench.BARE: 0.020, run_bench.RG: 0.004})
    text = run_bench.report([run_bench.PROFILES[0]], results, quick=False, seconds=60)
    assert "| fixture, warm | ≤ 2.0× bare python | 2.50× (worst: common; 50.0 / 20.0 ms) | **miss** |" in text
    assert "| nested 10k, warm, no server | ≤ 2.0× rg | not measured | not measured |" in text
    assert "- **fixture, warm**: 50 ms against 20 ms (common)" in text
    assert "- **rich-yaml" not in text  # not measured: not missed
