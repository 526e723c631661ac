"""Running Python as the user nobody, wherever the checkout lies.

A clone under a dir only root may enter (``mktemp -d`` makes it 0700) holds the packages
and the venv they are installed in, and nobody can read neither: a test that ran
``sys.executable`` with ``sys.path`` as nobody would fail with "No module named
'mnemosyne_cli'". So what nobody imports is installed once per test run into a dir of its
own that anyone may read: the files of the CLI's distribution and of every distribution it
requires (for an editable install, the source dirs its ``.pth`` file names). With it goes
an interpreter nobody can run: this one, or, when nobody cannot reach it, the base
installation's own.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: Drops root to nobody (uid and gid 65534) with no supplementary group.
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
#: The same, but in the supplementary group 4242, which a test gives a file that nobody
#: does not own.
NOBODY_WITH_GROUP = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--groups=4242"]
#: The distribution whose code nobody runs: it requires the other three.
CLI_DISTRIBUTION = "mnemosyne-wiki-cli"
#: The import packages of the four distributions.
PACKAGES = ("mnemosyne_cli", "mnemosyne_contract", "mnemosyne_core", "mnemosyne_ingest")


def required_distributions(name: str) -> list[importlib.metadata.Distribution]:
    """The distribution ``name`` and every one it requires, transitively (extras left out)."""
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [name]
    while pending:
        wanted = pending.pop()
        distribution = importlib.metadata.distribution(wanted)
        key = re.sub(r"[-_.]+", "-", distribution.metadata["Name"]).lower()
        if key in found:
            continue
        found[key] = distribution
        for requirement in distribution.requires or []:
            if "extra ==" in requirement.partition(";")[2]:
                continue
            match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
            assert match is not None, requirement
            pending.append(match.group(0))
    return list(found.values())


def install(distributions: list[importlib.metadata.Distribution], target: Path) -> None:
    """Copy each distribution's installed files into ``target``, as a site dir holds them."""
    for distribution in distributions:
        for file in distribution.files or []:
            if file.parts[0] == "..":
                continue  # a console script or data outside the site dir
            source = Path(str(distribution.locate_file(file)))
            if file.suffix == ".pth":
                # An editable install: the file names the dirs the packages are imported from.
                for line in source.read_text().splitlines():
                    if line and not line.startswith(("#", "import ")) and os.path.isdir(line):
                        shutil.copytree(line, target, dirs_exist_ok=True)
                continue
            if file.suffix == ".pyc":
                continue
            destination = target / file
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)


@functools.cache
def import_path() -> str:
    """A dir anyone may read that holds everything the CLI imports (see the module's
    docstring); removed when the test run ends."""
    target = Path(tempfile.mkdtemp(prefix="mnemosyne-for-nobody-"))
    atexit.register(shutil.rmtree, target, True)
    install(required_distributions(CLI_DISTRIBUTION), target)
    # The packages this process imports win over the installed ones: a checkout run with
    # its own sources on PYTHONPATH (a git worktree beside an editable install of another)
    # must have nobody run the code under test.
    for package in PACKAGES:
        source = Path(importlib.import_module(package).__file__ or "").parent
        shutil.copytree(source, target / package, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return str(target)


def can_run(python: str) -> bool:
    completed = subprocess.run(
        [*NOBODY, python, "-c", "import mnemosyne_cli"],
        env={**os.environ, "PYTHONPATH": import_path()},
        capture_output=True,
        check=False,
        timeout=60,
    )
    return completed.returncode == 0


@functools.cache
def python() -> str | None:
    """An interpreter nobody can run and import the CLI with (on ``PYTHONPATH=import_path()``):
    this one, else the base installation's own (this one's venv may lie where nobody cannot
    enter), else None."""
    base = os.path.join(sys.base_prefix, "bin", f"python{sys.version_info.major}.{sys.version_info.minor}")
    for candidate in dict.fromkeys((sys.executable, base)):
        if os.path.exists(candidate) and can_run(candidate):
            return candidate
    return None
