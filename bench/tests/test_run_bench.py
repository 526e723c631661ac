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


def served(results: run_bench.Results, vault: str, pages: int, query: str, find: float, rg: float) -> None:
    results.pages[vault] = pages
    results.served.setdefault(vault, {})[query] = {run_bench.SERVED: (find, find), run_bench.RG: (rg, rg)}


def assert_row(row: run_bench.Row, value: float, *, met: bool) -> None:
    """The row's figure (a ratio of floats, so approximately) and whether it meets its target."""
    assert row.value == pytest.approx(value)
    assert row.met is met


def test_the_targets_are_this_rounds_table() -> None:
    assert [(target.row, target.target) for target in run_bench.TARGETS] == [
        ("fixture, warm", "≤ 1.8× bare python"),
        ("rich-yaml, warm, no server", "≤ 2.5× rg"),
        ("multilang, warm, no server", "≤ 1.8× rg"),
        ("nested, warm, no server", "≤ 1.8× rg"),
        ("plain, warm, no server", "≤ 1.2× rg"),
        ("with the server, plain: rare keyword", "≤ 0.08× rg"),
        ("with the server, plain: `the`", "≤ 0.2× rg"),
        ("with the server, plain: every page matches", "≤ 0.7× rg"),
        ("with the server, plain: no page matches", "≤ 0.08× rg"),
        ("with the server, nested", "≤ 0.5× rg"),
        ("lint, warm", "≤ 1.5× find"),
        ("recall, warm", "≤ 1.2× find"),
        ("first call, no index", "≤ 1.2× the scan (`--no-cache`)"),
        ("detached build of the plain vault", "≤ 45 s"),
        ("index size (names table included)", "≤ 3× the markdown"),
        ("peak RSS of a warm find, plain vault", "≤ 100 MB"),
    ]
    # Every target says what limits it when missed, and every served plain row has a query.
    assert set(run_bench.LIMITS) == {target.key for target in run_bench.TARGETS}
    assert set(run_bench.SERVED_PLAIN_TARGETS.values()) == set(run_bench.SERVED_PLAIN_QUERIES)


def test_targets_pass_and_miss_by_the_worst_query_of_the_same_run() -> None:
    results = run_bench.Results()
    measured(results, "fixture", 94, "rare", **{run_bench.WARM: 0.030, run_bench.BARE: 0.020, run_bench.RG: 0.004})
    measured(results, "fixture", 94, "common", **{run_bench.WARM: 0.050, run_bench.BARE: 0.020, run_bench.RG: 0.004})
    measured(
        results,
        "rich-yaml 1k",
        1000,
        "rare",
        **{run_bench.WARM: 0.060, run_bench.RG: 0.030, "lint": 0.090, "recall": 0.066},
    )
    results.builds["plain 100k"], results.pages["plain 100k"] = 42.0, 100000
    results.sizes["plain 100k"] = (300, 100)
    rows = {row.target.key: row for row in run_bench.targets(list(run_bench.PROFILES), results)}
    assert [row.target.key for row in rows.values()] == [target.key for target in run_bench.TARGETS]
    assert (rows["fixture-warm"].value, rows["fixture-warm"].met) == (2.5, False)
    assert rows["fixture-warm"].measured == "2.50× (worst: common; 50.0 / 20.0 ms)"
    assert (rows["warm-rich-yaml"].value, rows["warm-rich-yaml"].met) == (2.0, True)
    # lint and recall are two rows now, each against the warm find of its own run.
    assert_row(rows["lint"], 1.5, met=True)  # at the target is a pass
    assert rows["lint"].measured == "1.50× (worst: rich-yaml 1k; 90.0 / 60.0 ms)"
    assert_row(rows["recall"], 1.1, met=True)
    assert (rows["build"].value, rows["build"].met) == (42.0, True)
    assert (rows["size"].value, rows["size"].met) == (3.0, True)
    assert rows["warm-plain"].met is None
    assert rows["warm-plain"].measured == "not measured"
    assert rows["served-none"].measured == "not measured"


def test_a_build_over_45_s_misses_and_recall_over_find_misses() -> None:
    results = run_bench.Results()
    measured(results, "nested 10k", 10000, "rare", **{run_bench.WARM: 0.100, run_bench.RG: 0.050, "recall": 0.130})
    results.builds["plain 100k"], results.pages["plain 100k"] = 45.5, 100000
    rows = {row.target.key: row for row in run_bench.targets(list(run_bench.PROFILES), results)}
    assert (rows["build"].value, rows["build"].met) == (45.5, False)
    assert_row(rows["recall"], 1.3, met=False)
    assert rows["lint"].measured == "not measured"


def test_each_served_plain_row_takes_its_own_query() -> None:
    results = run_bench.Results()
    served(results, "plain 100k", 100000, "rare keyword", 0.030, 0.400)
    served(results, "plain 100k", 100000, "`the`", 0.090, 0.450)
    served(results, "plain 100k", 100000, run_bench.EVERY_PAGE_QUERY, 0.300, 0.400)
    served(results, "plain 100k", 100000, run_bench.NO_PAGE_QUERY, 0.034, 0.400)
    results.server_mb["plain 100k"] = 55.0
    rows = {row.target.key: row for row in run_bench.targets(list(run_bench.PROFILES), results)}
    assert_row(rows["served-rare"], 0.075, met=True)
    assert_row(rows["served-the"], 0.2, met=True)
    assert_row(rows["served-every"], 0.75, met=False)
    # Three decimals under 0.1: 0.085 misses 0.08, which two decimals would hide.
    assert_row(rows["served-none"], 0.085, met=False)
    assert rows["served-none"].measured == "0.085× (`zyzzyva`; 34.0 / 400.0 ms)"
    assert rows["served-none"].facts["server_mb"] == 55.0
    assert rows["served-nested"].measured == "not measured"


def test_the_report_names_what_limits_each_missed_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_bench, "machine", dict)
    monkeypatch.setitem(run_bench.LIMITS, "fixture-warm", "{find_ms:.0f} ms against {bare_ms:.0f} ms ({query})")
    results = run_bench.Results()
    measured(results, "fixture", 94, "common", **{run_bench.WARM: 0.050, run_bench.BARE: 0.020, run_bench.RG: 0.004})
    measured(results, "fixture", 94, "common", **{run_bench.WARM: 0.050, run_bench.BARE: 0.020, "lint": 0.100})
    text = run_bench.report([run_bench.PROFILES[0]], results, quick=False, seconds=60)
    assert "| fixture, warm | ≤ 1.8× bare python | 2.50× (worst: common; 50.0 / 20.0 ms) | **miss** |" in text
    assert "| nested 10k, warm, no server | ≤ 1.8× rg | not measured | not measured |" in text
    assert "| with the server, plain 100k: no page matches | ≤ 0.08× rg | not measured | not measured |" in text
    assert "- **fixture, warm**: 50 ms against 20 ms (common)" in text
    assert "| lint, warm | ≤ 1.5× find | 2.00× (worst: fixture; 100.0 / 50.0 ms) | **miss** |" in text
    # The lint line is filled from the run: nothing is left as a placeholder.
    assert "- **lint, warm**: `wiki lint` took 100 ms to find's 50 ms on fixture: " in text
    assert "- **rich-yaml" not in text  # not measured: not missed
    assert "- **recall" not in text


def test_every_limit_fills_from_the_facts_its_row_gives() -> None:
    """Each LIMITS line, filled with the facts its row has, leaves no placeholder: a typo in
    a fact's name would show in the report as written."""
    results = run_bench.Results()
    for label, pages in (("fixture", 94), ("rich-yaml 1k", 1000), ("multilang 6k", 6000), ("nested 10k", 10000)):
        times = {run_bench.WARM: 0.5, run_bench.RG: 0.01, run_bench.BARE: 0.02, run_bench.SCAN: 0.4}
        measured(results, label, pages, "rare", **times, lint=1.0, recall=1.0)
        results.matches[label] = {"rare": 3}
    measured(results, "plain 100k", 100000, "rare", **{run_bench.WARM: 5.0, run_bench.RG: 0.4, run_bench.BARE: 0.02})
    results.matches["plain 100k"] = dict.fromkeys(run_bench.SERVED_PLAIN_QUERIES, 1) | {"rare": 1}
    for query in run_bench.SERVED_PLAIN_QUERIES:
        served(results, "plain 100k", 100000, query, 1.0, 0.4)
        results.served["plain 100k"][query][run_bench.BARE] = (0.02, 0.02)
    served(results, "nested 10k", 10000, "rare", 1.0, 0.05)
    results.served["nested 10k"]["rare"][run_bench.BARE] = (0.02, 0.02)
    results.cold["rich-yaml 1k"] = {run_bench.COLD: (0.6, 0.6), run_bench.SCAN: (0.4, 0.4)}
    results.builds["plain 100k"] = 60.0
    results.sizes["plain 100k"] = (4_000_000, 1_000_000)
    results.rss["plain 100k"] = {"rare": 150.0}
    rows = run_bench.targets(list(run_bench.PROFILES), results)
    assert all(row.met is False for row in rows), [row.target.key for row in rows if row.met is not False]
    for row in rows:
        line = run_bench.fill(run_bench.LIMITS[row.target.key], row.facts)
        assert "{" not in line, (row.target.key, line)


def test_source_lines_counts_code_apart_from_comments_docstrings_and_blank_lines() -> None:
    source = '''"""A module's docstring,
over two lines."""

import os  # a comment after code is a code line

# a comment alone


def joined(
    parts: list[str],
) -> str:
    """A function's docstring."""
    text = """a string that is no docstring
    spans two lines"""
    return os.sep.join(parts) + text


class Empty:
    ""
    size = 0'''
    assert run_bench.source_lines(source) == (20, 9)  # no newline after the last line: still a line


def test_the_core_size_section_says_miss_over_the_target_and_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_bench, "CORE_LINES_TARGET", 10)
    section = "\n".join(run_bench.core_size())
    assert ", against a target of at most 10 lines: **miss**." in section
    assert run_bench.CORE_SIZE_TEXT[0] in section
    assert "| index.py |" in section
    monkeypatch.setattr(run_bench, "CORE_LINES_TARGET", 10**9)
    section = "\n".join(run_bench.core_size())
    assert section.count(": pass.") == 1
    assert run_bench.CORE_SIZE_TEXT[0] not in section
