"""Criterion 7: every package's unit tests pass against the installed packages, and the
find test module has at least six test cases, all passing."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING
from xml.etree import ElementTree

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

FIND_TEST_MODULE = "packages/mnemosyne-core/tests/test_find.py"
MIN_FIND_CASES = 6
#: The JUnit elements that mark a case as not passed.
NOT_PASSED = {"failure", "error", "skipped"}
#: The whole unit suite, on a loaded CI machine; each of its tests has pytest-timeout's own
#: limit (pyproject.toml), which dumps the stacks of a hung one into the output shown here.
UNIT_SUITE_TIMEOUT_SECONDS = 600


# Above the suite's subprocess timeout, so that timeout fails the test with the suite's output.
@pytest.mark.timeout(UNIT_SUITE_TIMEOUT_SECONDS + 60)
def test_criterion_7_unit_tests_pass_and_find_has_at_least_6_cases(
    repo_root: Path, artifact_dir: Path, subprocess_env: dict[str, str], record_figure: Callable[[str], None]
) -> None:
    test_dirs = sorted(path.relative_to(repo_root).as_posix() for path in repo_root.glob("packages/*/tests"))
    assert FIND_TEST_MODULE.startswith(tuple(f"{test_dir}/" for test_dir in test_dirs))
    junit = artifact_dir / "criterion-7-unit-tests.xml"
    junit.unlink(missing_ok=True)
    # -P: nothing of the working dir on sys.path; the packages come from the installed wheels.
    # xunit1 records each case's file, which names the find module whatever the import mode;
    # pytest-xdist's workers (a CPU each, as nox's tests session) report every case to the
    # one process that writes the file. A worker's stdout is xdist's channel: faulthandler
    # dumps a hung test's stacks to stderr, shown here, before pytest-timeout ends the worker.
    report = [f"--junitxml={junit}", "-o", "junit_family=xunit1"]
    parallel = ["-n", "auto"]
    completed = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", *test_dirs, "-p", "no:cacheprovider", "-q", *parallel, *report],
        capture_output=True,
        text=True,
        cwd=repo_root,
        env=subprocess_env,
        timeout=UNIT_SUITE_TIMEOUT_SECONDS,
        check=False,
    )
    assert junit.is_file(), f"the unit tests did not run:\n{completed.stdout}\n{completed.stderr}"
    cases = ElementTree.parse(junit).getroot().iter("testcase")  # noqa: S314 - our own pytest's report
    outcomes = {
        f"{case.get('file')}::{case.get('name')}": next(
            (child.tag for child in case if child.tag in NOT_PASSED), "passed"
        )
        for case in cases
    }
    find_outcomes = {case: outcome for case, outcome in outcomes.items() if case.startswith(f"{FIND_TEST_MODULE}::")}
    passed = sum(outcome == "passed" for outcome in outcomes.values())
    record_figure(
        f"{passed}/{len(outcomes)} unit tests passed; test_find.py {len(find_outcomes)} cases, "
        f"{sum(outcome == 'passed' for outcome in find_outcomes.values())} passed"
    )
    summary = completed.stdout[-3000:]
    assert completed.returncode == 0, f"the unit tests failed (exit {completed.returncode}):\n{summary}"
    assert outcomes, "no unit test ran"
    assert {case: outcome for case, outcome in outcomes.items() if outcome != "passed"} == {}, summary
    assert len(find_outcomes) >= MIN_FIND_CASES, (
        f"{FIND_TEST_MODULE} has {len(find_outcomes)} test cases; criterion 7 needs at least {MIN_FIND_CASES}"
    )
