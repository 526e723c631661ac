"""``python -m mnemosyne_cli``: the same as the ``mnemosyne`` script."""

from mnemosyne_cli.app import run

run()
