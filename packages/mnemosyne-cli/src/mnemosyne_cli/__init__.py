"""The ``mnemosyne`` command line: argparse over the core library."""

__version__ = "0.1.0"
__all__ = ["__version__"]
