"""The gate tests what is released: the wheels built from ``packages/``, installed into the
gate's own venv. An editable install or the source tree on sys.path would hide packaging
mistakes (a module or schema file missing from a wheel, a wrong dependency)."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

import mnemosyne_cli
import mnemosyne_contract
import mnemosyne_core
import mnemosyne_ingest

if TYPE_CHECKING:
    from acceptance.conftest import Installed


def test_packages_are_imported_from_site_packages_not_from_the_source_tree(repo_root: Path) -> None:
    site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
    source_tree = (repo_root / "packages").resolve()
    for module in (mnemosyne_cli, mnemosyne_contract, mnemosyne_core, mnemosyne_ingest):
        assert module.__file__ is not None
        location = Path(module.__file__).resolve()
        assert location.is_relative_to(site_packages), f"{module.__name__} imported from {location}"
        assert not location.is_relative_to(source_tree), f"{module.__name__} imported from {location}"
    # The unit tests' helper dirs may be on sys.path (pytest's pythonpath); a package's source may not.
    shadowing = [
        entry
        for entry in sys.path
        if Path(entry or ".").resolve() != site_packages
        for module in (mnemosyne_cli, mnemosyne_contract, mnemosyne_core, mnemosyne_ingest)
        if (Path(entry or ".") / module.__name__).exists()
    ]
    assert shadowing == [], "the source tree is on sys.path"


def test_every_package_is_installed_from_its_built_wheel(repo_root: Path) -> None:
    dist_dir = (repo_root / "dist").resolve()
    pyprojects = sorted(repo_root.glob("packages/*/pyproject.toml"))
    assert len(pyprojects) >= 4
    for pyproject in pyprojects:
        name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
        direct_url_text = importlib.metadata.distribution(name).read_text("direct_url.json")
        assert direct_url_text is not None, f"{name} was not installed from a file (no direct_url.json)"
        direct_url = json.loads(direct_url_text)
        assert "dir_info" not in direct_url, f"{name} is installed from a source dir (editable?), not a wheel"
        wheel = Path(unquote(urlparse(direct_url["url"]).path))
        assert wheel.suffix == ".whl", f"{name} was installed from {wheel}, not a wheel"
        assert wheel.parent == dist_dir, f"{name} was installed from {wheel}, not from {dist_dir}"


def test_console_script_runs_this_venvs_python(mnemosyne: Installed) -> None:
    first_line = mnemosyne.executable.read_bytes().split(b"\n", 1)[0]
    assert first_line == b"#!" + sys.executable.encode()
    version = mnemosyne.run("--version")
    # Each of the four packages as installed from its wheel, then the Python running them.
    packages = ("mnemosyne-wiki-cli", "mnemosyne-wiki-contract", "mnemosyne-wiki-core", "mnemosyne-wiki-ingest")
    expected = [f"mnemosyne {mnemosyne_cli.__version__}"]
    expected += [f"  {name} {importlib.metadata.version(name)}" for name in packages]
    expected.append(f"  Python {sys.version.split()[0]} ({sys.executable})")
    assert (version.returncode, version.stdout.decode().splitlines(), version.stderr) == (0, expected, b"")
