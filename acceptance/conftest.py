"""The release gate's shared pieces: where the installed ``mnemosyne`` and the fixtures are,
running it the way agents do, and the closing table of one verdict per criterion.

The suite tests the released artifacts: ``nox -s acceptance`` installs the built wheels into
a fresh venv, so ``mnemosyne`` is the console script next to ``sys.executable`` and the
packages are imported from that venv's site-packages, never from ``packages/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Kept after the run (the hyperfine JSON, the unit tests' JUnit XML); ``build/`` is gitignored.
ARTIFACT_DIR = REPO_ROOT / "build" / "acceptance"
#: The acceptance criteria (README.md), as the closing table names them.
CRITERIA: dict[int, str] = {
    1: "find mastra < 500 ms (hyperfine)",
    2: "no match: exit 1, message, stdout empty",
    3: "AND = intersection of single keywords",
    4: "--cat prints the one page byte for byte",
    5: "--cat with several matches: exit 2",
    6: "--json valid against the contract schema",
    7: "unit tests green, find module >= 6 cases",
    8: "ingested report: atlas, findable",
}
#: No call of the installed ``mnemosyne`` may hang the gate: each takes milliseconds, and a
#: stuck one fails its test with this timeout, before pytest-timeout's 120 s per test.
SUBPROCESS_TIMEOUT_SECONDS = 60
_CRITERION_NAME = re.compile(r"^test_criterion_(\d+)_")


@dataclass
class Installed:
    """The installed ``mnemosyne`` console script, run as a subprocess."""

    executable: Path
    #: The environment every run gets: no AION_VAULT, no PYTHONPATH leading back to the source tree.
    env: dict[str, str]

    def run(
        self, *args: str | os.PathLike[str], extra_env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """``mnemosyne ARGS``; stdout and stderr captured as bytes, never raising on an exit code."""
        return subprocess.run(
            [str(self.executable), *map(str, args)],
            capture_output=True,
            env={**self.env, **(extra_env or {})},
            cwd=cwd or REPO_ROOT,
            timeout=SUBPROCESS_TIMEOUT_SECONDS,
            check=False,
        )


def clean_environment() -> dict[str, str]:
    """This process's environment without the variables that would change what is tested."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"AION_VAULT", "PYTHONPATH", "PYTHONHOME", "FORCE_COLOR", "NO_COLOR"}
    }
    # Output bytes must not depend on the caller's locale.
    env["LC_ALL"] = "C.UTF-8"
    return env


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def aion_vault() -> Path:
    """The committed 93-page fixture vault (plus the ingested report)."""
    return REPO_ROOT / "fixtures" / "vaults" / "aion"


@pytest.fixture(scope="session")
def artifact_dir() -> Path:
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    return ARTIFACT_DIR


@pytest.fixture(scope="session")
def subprocess_env() -> dict[str, str]:
    return clean_environment()


@pytest.fixture(scope="session")
def mnemosyne(subprocess_env: dict[str, str]) -> Installed:
    """The ``mnemosyne`` installed into the venv running this suite."""
    executable = Path(sys.executable).parent / ("mnemosyne.exe" if os.name == "nt" else "mnemosyne")
    if not executable.is_file():
        pytest.fail(
            f"no installed mnemosyne at {executable}: run the gate with 'nox -s acceptance', "
            "which installs the built wheels into its own venv"
        )
    return Installed(executable, subprocess_env)


@dataclass
class GateReport:
    """Collects each criterion's test outcomes and figures; prints the closing table."""

    outcomes: dict[int, list[str]] = field(default_factory=dict)
    figures: dict[int, list[str]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def record(self, criterion: int, figure: str) -> None:
        self.figures.setdefault(criterion, []).append(figure)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        criterion = criterion_of(report.nodeid.rpartition("::")[2])
        if criterion is None:
            return
        if report.skipped:
            self.skipped.append(report.nodeid)
        if report.when == "call" or report.outcome != "passed":
            self.outcomes.setdefault(criterion, []).append(report.outcome)

    def verdict(self, criterion: int) -> str:
        outcomes = self.outcomes.get(criterion, [])
        if not outcomes:
            return "NOT RUN"
        if any(outcome == "failed" for outcome in outcomes):
            return "FAIL"
        if any(outcome == "skipped" for outcome in outcomes):
            return "SKIPPED"
        return "PASS"

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # A skip must never stand in for a verdict: the gate fails instead.
        if self.skipped and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        terminalreporter.section("acceptance criteria")
        width = max(len(text) for text in CRITERIA.values())
        for criterion, text in CRITERIA.items():
            figures = "; ".join(self.figures.get(criterion, [])) or "-"
            terminalreporter.write_line(f"{criterion}  {text:<{width}}  {self.verdict(criterion):<7}  {figures}")
        for nodeid in self.skipped:
            terminalreporter.write_line(f"SKIPPED, which fails the gate: {nodeid}", red=True)


def criterion_of(test_name: str) -> int | None:
    """The criterion a test guards, from its name ``test_criterion_N_...``."""
    found = _CRITERION_NAME.match(test_name)
    return int(found.group(1)) if found else None


_REPORT_KEY = pytest.StashKey[GateReport]()


def pytest_configure(config: pytest.Config) -> None:
    report = GateReport()
    config.stash[_REPORT_KEY] = report
    config.pluginmanager.register(report, "acceptance-gate-report")


@pytest.fixture
def record_figure(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """``record_figure("mean 41 ms")``: a figure for this test's criterion in the closing table."""
    criterion = criterion_of(request.node.name)
    if criterion is None:
        raise ValueError(f"{request.node.name} is not named test_criterion_N_...")
    report = request.config.stash[_REPORT_KEY]
    return lambda figure: report.record(criterion, figure)
