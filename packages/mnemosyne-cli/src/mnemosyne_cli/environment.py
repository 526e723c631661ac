"""What a call reads from the process it runs in: ``Environment``.

``console_script.main`` (or ``app.main``, called directly) makes one and hands it down;
no code below it reads ``os.environ``, ``~`` or ``sys.std*`` itself, and the current dir
only as the operating system does: a relative path on the command line (``--vault
notes``, ``init PATH``, a SOURCE) is opened from the process's own current dir, while
``cwd`` is where the ``.mnemosyne.toml`` of a call that names no vault is looked for. So a
call answers from the environment it is given, whatever the process around it holds: a
test or a Python caller runs one as if from another shell, and no function holds on to a
module-level ``os`` that a test's fake file system swapped out.
"""

from __future__ import annotations

import os
import sys

from mnemosyne_core.config import home_dir
from mnemosyne_core.record import Record  # a dataclass would import inspect and re: start-up time

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO, TypedDict

    class VaultLookup(TypedDict):
        """The keywords the core's vault lookups take (``location.locate_vault``)."""

        environ: Mapping[str, str]
        cwd: str | None
        home: str


class Environment(Record):
    """The environment variables, the current dir, the home dir (``~``) and the three
    standard streams (None for one the process started closed) of a call. A field not
    given is the process's own, read once, here (the current dir is None when the
    process's was removed: there is nothing to walk up from); the home dir not given is
    the one ``environ`` names (``config.home_dir``)."""

    __slots__ = ("cwd", "environ", "home", "stderr", "stdin", "stdout")

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        cwd: str | None = None,
        home: str | None = None,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ):
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.cwd = _current_dir() if cwd is None else cwd
        self.home = home_dir(self.environ) if home is None else home
        self.stdin = sys.stdin if stdin is None else stdin
        self.stdout = sys.stdout if stdout is None else stdout
        self.stderr = sys.stderr if stderr is None else stderr

    def vault_lookup(self) -> VaultLookup:
        """Where the core looks for the vault of a call that names none: AION_VAULT and the
        user config in ``environ``, the ``.mnemosyne.toml`` above ``cwd``, ``~`` as ``home``."""
        return {"environ": self.environ, "cwd": self.cwd, "home": self.home}


def _current_dir() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # removed under the process: there is nothing to walk up from
        return None
