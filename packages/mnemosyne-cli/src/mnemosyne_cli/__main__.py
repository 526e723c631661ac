"""``python -m mnemosyne_cli``: the same as the ``mnemosyne`` script."""

from mnemosyne_cli.console_script import run

run()
