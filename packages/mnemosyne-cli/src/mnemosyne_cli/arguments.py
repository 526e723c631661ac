"""Arguments several commands share, defined once so they parse and read alike."""

from __future__ import annotations

import argparse

from mnemosyne_cli.output import COLOR_MODES


def dir_name(text: str) -> str:
    """--dir: one top-level dir name. A bad one is a usage error (64), not a vault error.
    Trailing slashes are dropped: shell completion adds one to a dir name (``atlas/``)."""
    from mnemosyne_core.config import check_dir_name  # only a --dir pays for the import

    name = text.rstrip("/") or text
    reason = check_dir_name(name)
    if reason:
        raise argparse.ArgumentTypeError(f"{text!r} {reason}; pass a top-level dir name")
    return name


def add_vault_argument(parser: argparse.ArgumentParser) -> None:
    """--vault PATH, for every command that works on a vault."""
    parser.add_argument(
        "--vault",
        metavar="PATH",
        help="the vault root (default: the dir of the nearest .mnemosyne.toml from the current dir up, "
        "else $AION_VAULT, else vault in ~/.config/mnemosyne/config.toml)",
    )


def add_vault_arguments(parser: argparse.ArgumentParser) -> None:
    """--vault, and --dir (repeatable) for the commands that read the scanned dirs."""
    add_vault_argument(parser)
    parser.add_argument(
        "--dir",
        metavar="NAME",
        action="append",
        type=dir_name,
        help="scan this top-level dir instead of the configured ones; repeatable",
    )


def add_color_argument(parser: argparse.ArgumentParser) -> None:
    """--color WHEN, for every command: it colours the error: and warning: prefixes, and
    find's lines and lint's codes on a terminal (docs/commands.md#colour)."""
    parser.add_argument(
        "--color",
        choices=COLOR_MODES,
        default="auto",
        metavar="WHEN",
        help="colour on a terminal: auto (default; NO_COLOR turns it off, FORCE_COLOR on), always or never",
    )


def add_no_server_argument(parser: argparse.ArgumentParser) -> None:
    """--no-server, for the commands a ``wiki serve`` answers (find, recall)."""
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="scan the vault even when a 'wiki serve' runs for it (the answer is the same)",
    )
