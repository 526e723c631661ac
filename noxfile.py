"""Sessions of the mnemosyne monorepo. Plain ``nox`` runs tests, lint, typecheck and
acceptance (which builds the wheels it tests). build, bench, properties,
serve-soak and retrieval (slow), readme-install (installs with pipx and uv) and
ingest-report (writes into a vault) run only when named."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import nox

if TYPE_CHECKING:
    from collections.abc import MutableMapping

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = True
# The interpreters already on this machine are the ones tested; nothing is fetched.
nox.options.download_python = "never"

#: Every Python the packages claim (requires-python and the classifiers): the unit tests
#: run on each. The other sessions run on the interpreter that runs nox.
SUPPORTED_PYTHONS = ["3.11", "3.12", "3.13"]


def select_pyenv_pythons(environ: MutableMapping[str, str] = os.environ) -> None:
    """Make pyenv's ``python3.12``-style shims answer for every supported Python installed
    under pyenv, not only for the one pyenv has selected: ``PYENV_VERSION`` becomes the
    selection in force, then the newest installed patch release of each supported version
    (pyenv's own multi-version selection). A bare ``python3`` still runs the selected one.
    Without pyenv, nothing changes: the versions are found on PATH as they are."""
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return

    def ask(command: str) -> str:
        return subprocess.run([pyenv, command], capture_output=True, text=True, check=False).stdout.strip()

    root = environ.get("PYENV_ROOT") or ask("root")
    selected = ask("version-name")
    versions = [version for version in selected.split(":") if version]
    installed = os.listdir(os.path.join(root, "versions")) if os.path.isdir(os.path.join(root, "versions")) else []
    for wanted in SUPPORTED_PYTHONS:
        if any(version == wanted or version.startswith(wanted + ".") for version in versions):
            continue
        releases = [name for name in installed if re.fullmatch(re.escape(wanted) + r"\.\d+", name)]
        if releases:
            versions.append(max(releases, key=lambda name: int(name.rpartition(".")[2])))
    if versions:
        environ["PYENV_VERSION"] = ":".join(versions)


select_pyenv_pythons()

ROOT = Path(__file__).parent
#: In dependency order: each one's dependencies come before it.
PACKAGES = [
    "packages/mnemosyne-contract",
    "packages/mnemosyne-core",
    "packages/mnemosyne-ingest",
    "packages/mnemosyne-cli",
]
#: pytest-timeout is required wherever pytest runs on this repo: pyproject's pytest options
#: set its timeout, and --strict-config rejects an option no plugin knows. pytest-xdist runs
#: the unit tests in parallel (TEST_WORKERS).
TEST_REQUIREMENTS = [
    "pytest>=8",
    "pytest-timeout>=2.3",
    "pytest-xdist>=3.5",
    "pyfakefs>=5.4",
    "hypothesis>=6.100",
    "jsonschema>=4.20",
]
#: pytest-xdist's workers for the unit tests: one a CPU ("auto"). The suite is CPU-bound
#: (Python start-ups, subprocesses, property searches) and no test depends on another's
#: order or files. A later ``-n`` wins: ``nox -s tests -- -n 0`` runs them in this process.
#: (pyproject.toml's faulthandler_timeout says how a hung test shows its stacks under it.)
TEST_WORKERS = ["-n", "auto"]
#: The benchmarks' own unit tests (their metrics and vault generators), fast like the rest.
BENCH_TEST_DIR = "bench/tests"
UNIT_TEST_DIRS = [f"{package}/tests" for package in PACKAGES]
DIST_DIR = ROOT / "dist"


def build_requirements() -> list[str]:
    """Every package's [build-system] requires, each once."""
    import tomllib

    requires = (tomllib.loads((ROOT / package / "pyproject.toml").read_text(encoding="utf-8")) for package in PACKAGES)
    return sorted({requirement for pyproject in requires for requirement in pyproject["build-system"]["requires"]})


def install_editable(session: nox.Session, *requirements: str) -> None:
    """``requirements`` and the build backend, then every package, editable, in one pip
    call so local packages satisfy each other. The backend is used from this venv: pip's
    fresh build venv per package took about 30 s of every session."""
    # editables: what hatchling asks for to build an editable (get_requires_for_build_editable).
    session.install(*requirements, *build_requirements(), "editables")
    session.install("--no-build-isolation", *(arg for package in PACKAGES for arg in ("-e", package)))


@nox.session(python=SUPPORTED_PYTHONS)
def tests(session: nox.Session) -> None:
    """Unit tests of every package, on every supported Python, in parallel (pytest with
    pytest-xdist, a worker a CPU; pass pytest arguments after --, `-- -n 0` for one process;
    `nox -s tests-3.13` runs one Python)."""
    install_editable(session, *TEST_REQUIREMENTS)
    session.run("pytest", *UNIT_TEST_DIRS, BENCH_TEST_DIR, *TEST_WORKERS, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint rules and formatting (pass ruff paths after --)."""
    session.install("ruff>=0.6")
    paths = session.posargs or ["."]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over every package, its tests, the acceptance suite and this file."""
    install_editable(session, "mypy>=1.10", "types-PyYAML", "types-jsonschema", "nox", *TEST_REQUIREMENTS)
    if session.posargs:
        session.run("mypy", *session.posargs)
        return
    session.run("mypy", *(f"{package}/src" for package in PACKAGES), "noxfile.py")
    session.run("mypy", "bench", "fixtures/generate_vault.py", "fixtures/generate_known_item_vaults.py")
    # One run per test dir: each has its own conftest.py, which mypy would see as one module.
    for test_dir in [*UNIT_TEST_DIRS, "acceptance"]:
        session.run("mypy", test_dir)


def build_distributions(session: nox.Session) -> list[str]:
    """Wheels and sdists of every package into dist/ (emptied first; each wheel built from
    its sdist); returns the wheels."""
    # The build backend once in this venv, not in two fresh venvs per package (sdist, then
    # wheel): that took most of a minute. build still checks that each package's declared
    # build requirements are met here.
    session.install("build>=1.0", *build_requirements())
    shutil.rmtree(DIST_DIR, ignore_errors=True)
    for package in PACKAGES:
        session.run("python", "-m", "build", "--no-isolation", "--outdir", str(DIST_DIR), package, silent=True)
    wheels = sorted(glob.glob(str(DIST_DIR / "*.whl")))
    if len(wheels) != len(PACKAGES):
        session.error(f"expected {len(PACKAGES)} wheels in {DIST_DIR}, found {len(wheels)}")
    return wheels


@nox.session(default=False)
def build(session: nox.Session) -> None:
    """Build a wheel and an sdist of every package into dist/."""
    for wheel in build_distributions(session):
        session.log(f"built {Path(wheel).name}")


INGEST_REPORT_SOURCE = ROOT / "fixtures" / "sources" / "agent-ecosystem-report-2026-03.md"
INGEST_REPORT_VAULT = ROOT / "fixtures" / "vaults" / "aion"


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmark `mnemosyne wiki find` through the vault's index against `rg -l -i -F` (and a
    bare `python -c pass` on the fixture) with hyperfine: warm with no server, with `wiki
    serve`, the first call with no index, lint and recall, the index's build time and size,
    peak RSS; on the fixture vault and generated vaults (build/bench/). Writes
    docs/performance.md: each target, pass or miss, and what limits each one missed. Needs
    hyperfine and rg on PATH; Linux only. Run it on an idle machine: about fifteen minutes
    on two cores. Options go to bench/run_bench.py: `nox -s bench -- --quick` (small vaults,
    writes build/bench/performance-quick.md), `nox -s bench -- --profiles fixture rich-yaml`."""
    # Installed, not editable: the start-up being measured is a user's.
    session.install(*PACKAGES)
    mnemosyne = str(Path(session.bin) / "mnemosyne")
    session.run("python", "bench/run_bench.py", "--mnemosyne", mnemosyne, *session.posargs)


@nox.session(default=False)
def properties(session: nox.Session) -> None:
    """Every property test (hypothesis) with the thorough profile: ten times the examples of
    the default run, drawn anew on each run (CI's default run draws the same ones every time).
    Minutes, not seconds; pytest arguments after --: `nox -s properties -- -k fast_paths`."""
    install_editable(session, *TEST_REQUIREMENTS)
    session.run(
        "pytest",
        *UNIT_TEST_DIRS,
        BENCH_TEST_DIR,
        "-m",
        "hypothesis",
        "--hypothesis-profile=thorough",
        # Ten times the examples: pyproject's 120 s a test would cut the longest short.
        "--timeout=1800",
        *session.posargs,
    )


@nox.session(name="serve-soak", default=False)
def serve_soak(session: nox.Session) -> None:
    """The server's differential property tests with many more examples (default 500) than
    the default run's 15: `nox -s serve-soak -- 2000`; further options go to pytest."""
    install_editable(session, *TEST_REQUIREMENTS)
    examples, *pytest_options = session.posargs or ["500"]
    session.run(
        "pytest",
        "packages/mnemosyne-cli/tests/test_server_properties.py",
        "-q",
        # Hundreds of examples outlast the default run's per-test limit (pyproject.toml).
        "--timeout=3600",
        *pytest_options,
        env={"MNEMOSYNE_SERVE_EXAMPLES": examples},
    )


@nox.session(default=False)
def retrieval(session: nox.Session) -> None:
    """Known-item benchmark of find's order (docs/spec.md rule 8): does the page named by its
    title or file name come first? On the fixture vault, generated docs-site and command-reference
    vaults, and the vaults other tools write (translated help, Logseq, wide encodings, Dendron, look-alike
    dirs, versioned docs; build/retrieval/); writes docs/retrieval.md. Options go to bench/run_retrieval.py:
    `nox -s retrieval -- --vaults commands:40000 --queries 0`."""
    # Installed, not editable, like bench: a sample of queries runs through the console
    # script a user gets, and must print what the in-process library run printed.
    session.install(*PACKAGES)
    mnemosyne = str(Path(session.bin) / "mnemosyne")
    session.run("python", "bench/run_retrieval.py", "--mnemosyne", mnemosyne, *session.posargs)


@nox.session(name="readme-install", default=False)
def readme_install(session: nox.Session) -> None:
    """Run the README's pipx and uv install, upgrade and uninstall lines, as written, in a
    fresh clone of this repository's HEAD; the installed command must find a page before
    each uninstall and be gone after it. Tools and installs stay inside the session's tmp
    dir. Pass a tool to run only its lines: `nox -s readme-install -- uv`."""
    import re
    import subprocess

    session.install("pipx", "uv")
    tmp = Path(session.create_tmp()).resolve()
    clone = tmp / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    session.run("git", "clone", "-q", str(ROOT), str(clone), external=True)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Install for daily use") : readme.index("## Usage")]
    lines = [line for block in re.findall(r"```sh\n(.*?)```", section, re.DOTALL) for line in block.splitlines()]
    # The caller's environment (its index and certificate settings), with pipx and uv
    # from this session and every install below tmp.
    env = {
        **os.environ,
        "PATH": f"{session.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "PIPX_HOME": str(tmp / "pipx"),
        "PIPX_BIN_DIR": str(tmp / "bin"),
        "PIPX_MAN_DIR": str(tmp / "man"),
        "UV_TOOL_DIR": str(tmp / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(tmp / "bin"),
    }
    command = tmp / "bin" / "mnemosyne"
    tools = session.posargs or ["pipx", "uv"]
    for tool in tools:
        steps = [line for line in lines if re.search(rf"(^|&& ){tool} ", line)]
        if len(steps) != 3:
            session.error(f"README: expected install, upgrade and uninstall lines for {tool}, found {steps}")
        for step in steps:
            if " uninstall " in step:
                session.run(
                    str(command), "wiki", "find", "mastra", "--vault", "fixtures/vaults/aion", env=env, external=True
                )
            session.log(f"$ {step}")
            subprocess.run(["bash", "-ec", step], cwd=clone, env=env, check=True)
        if command.exists():
            session.error(f"{tool} uninstall left {command} behind")


@nox.session(name="ingest-report", default=False)
def ingest_report(session: nox.Session) -> None:
    """Land the agent-ecosystem report in a vault's analyses/, owned by atlas (acceptance criterion 8).

    Default vault: fixtures/vaults/aion. Arguments after -- go to `mnemosyne wiki ingest`:
    `nox -s ingest-report -- --vault PATH`, or add --dry-run, --force, --json. Running it
    again is safe: an unchanged page is reported as already ingested and not rewritten.
    """
    install_editable(session)
    extra = list(session.posargs)
    if not any(arg == "--vault" or arg.startswith("--vault=") for arg in extra):
        extra = ["--vault", str(INGEST_REPORT_VAULT), *extra]
    session.run(
        "mnemosyne",
        "wiki",
        "ingest",
        str(INGEST_REPORT_SOURCE),
        "--constellation",
        "atlas",
        "--dir",
        "analyses",
        *extra,
    )


@nox.session
def acceptance(session: nox.Session) -> None:
    """The release gate: the eight acceptance criteria (acceptance/README.md) against the built
    wheels, installed into this fresh venv; no editable install, no source tree on sys.path."""
    wheels = build_distributions(session)
    # One pip call, so the local wheels satisfy each other's dependencies.
    session.install(*wheels, *TEST_REQUIREMENTS)
    session.run("pytest", "acceptance", "-p", "no:cacheprovider", *session.posargs)
