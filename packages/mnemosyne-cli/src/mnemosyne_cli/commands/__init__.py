"""The ``mnemosyne wiki`` commands. Each module declares ``COMMAND`` (options.Command: its
help and its ``Arguments`` class) and ``run(args, console, backend) -> int``, which gets
those arguments parsed: ``backend`` (``mnemosyne_core.backend``) is where find and recall
get their pages; the other commands get None. Command modules import their libraries
inside ``run``, so building the parser stays cheap; arguments.py builds every parser from
the declarations.

WIKI_COMMANDS is built on first use, not on import: a plain ``wiki find`` or ``wiki recall``
call (console_script.py) imports its command's module alone, without argparse (start-up time)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from types import ModuleType


def __getattr__(name: str) -> tuple[ModuleType, ...]:
    if name != "WIKI_COMMANDS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from mnemosyne_cli.commands import find, guide, info, ingest, init, lint, recall, serve

    commands = (find, recall, ingest, lint, info, init, serve, guide)
    globals()["WIKI_COMMANDS"] = commands
    return commands
