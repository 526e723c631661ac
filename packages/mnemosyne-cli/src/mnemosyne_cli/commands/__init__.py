"""The ``mnemosyne wiki`` commands. Each module defines ``register(subparsers)``, which adds
its parser with ``handler=run``, where ``run(args, console) -> int``. Command modules
import their libraries inside ``run``, so building the parser stays cheap."""

from mnemosyne_cli.commands import find, ingest, lint, recall

WIKI_COMMANDS = (find, recall, ingest, lint)
