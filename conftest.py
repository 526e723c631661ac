"""Loaded for every test run from this repository: module imports, hypothesis settings, and
a session with no user config and no vault around the current directory.

The core imports PyYAML, datetime and tomllib lazily (start-up time). pyfakefs unloads the
modules first imported during a test; PyYAML's C extension then keeps references to the
unloaded module's classes and every later load fails ("could not determine a constructor
for the tag None"). Importing them here, before any fake filesystem, keeps them loaded.
"""

import datetime  # noqa: F401
import os
import tomllib  # noqa: F401
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml  # noqa: F401
from hypothesis import settings

# main() imports the server client on its first call; when that call runs on a fake
# filesystem, the client keeps pyfakefs's os after the test and the next call fails.
import mnemosyne_cli.client  # noqa: F401

# The same for the core's modules, which the CLI imports on first use: pyfakefs's cleanup
# drops a module first imported during a test from sys.modules but leaves it on its
# package, which the CLI's options load at start-up (the default limit), so a later
# ``from mnemosyne_core import find`` would get the dropped module while monkeypatch
# patches the new one.
import mnemosyne_core.build
import mnemosyne_core.cache
import mnemosyne_core.context
import mnemosyne_core.find
import mnemosyne_core.info
import mnemosyne_core.layout
import mnemosyne_core.lint
import mnemosyne_core.recall

# No per-example deadline: a loaded CI machine must not turn a slow example into a failure.
# In CI (CI=true, as .ci/run is run), the same examples every time: a red run is
# reproducible, never a new random draw.
settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
# `nox -s properties` (--hypothesis-profile=thorough): every property test tries ten times
# the examples of the default run (property_examples.py scales the counts the tests state).
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session", autouse=True)
def _no_user_config_nor_enclosing_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME point at empty dirs, and the tests run from an empty dir: no
    test reads the developer's ~/.config/mnemosyne/config.toml, nor finds a .mnemosyne.toml
    above the checkout. A test that needs either sets it up itself (monkeypatch)."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        patch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME, also the current dir, with XDG_CONFIG_HOME and AION_VAULT unset: a
    test of how the vault is found starts from nothing (the user config, if the test writes
    one, is HOME/.config/mnemosyne/config.toml)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("AION_VAULT", raising=False)
    monkeypatch.chdir(home)
    return home


@pytest.fixture(autouse=True)
def _no_detached_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call in this process that finds no whole index answers by the scan and would start
    a detached builder: one still at work when the next test calls on the same vault (the
    fixture vaults are shared) would change what that test reads, at a moment it cannot
    know. The builder is tested where it is the subject (test_index.py, test_index_faults.py,
    and every test that runs the CLI as a subprocess); a test that wants an index builds it
    in the foreground (index_harness.build_index)."""
    monkeypatch.setattr(mnemosyne_core.build, "start_detached", lambda *args: None)


#: The detached builder itself, which ``_no_detached_builder`` stands in for.
_START_DETACHED = mnemosyne_core.build.start_detached


@pytest.fixture
def start_detached() -> Callable[..., None]:
    """The real ``build.start_detached``, for the tests whose subject the builder is."""
    return _START_DETACHED
