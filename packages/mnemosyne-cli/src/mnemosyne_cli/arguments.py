"""Arguments several commands share, defined once so they parse and read alike: each is
a row of the option table (options.py), registered with argparse here."""

from __future__ import annotations

import argparse

from mnemosyne_cli.options import COLOR, DIR, NO_CACHE, NO_SERVER, VAULT, Option

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def dir_name(text: str) -> str:
    """--dir: a vault-relative dir (``atlas``, ``docs/en``, ``.`` for the root). A bad one is a
    usage error (64), not a vault error.
    Trailing slashes are dropped: shell completion adds one to a dir name (``atlas/``)."""
    from mnemosyne_core.config import check_dir_name  # only a --dir pays for the import

    name = text.rstrip("/") or text
    reason = check_dir_name(name)
    if reason:
        raise argparse.ArgumentTypeError(
            f"{text!r} {reason}; pass a vault-relative dir (docs/en; '.' is the vault root)"
        )
    return name


def add_option(parser: argparse.ArgumentParser, option: Option) -> None:
    """``option``, a row of the option table, as argparse takes it."""
    if not option.takes_value:
        parser.add_argument(*option.names, dest=option.dest, action="store_true", help=option.help)
        return
    # str, argparse's own default, for a value taken as written.
    value_type: Callable[[str], Any] = dir_name if option is DIR else _value_type(option) or str
    parser.add_argument(
        *option.names,
        dest=option.dest,
        action="append" if option.repeatable else "store",
        metavar=option.metavar,
        default=option.default,
        choices=option.choices,
        type=value_type,
        help=option.help,
    )


def _value_type(option: Option) -> Callable[[str], Any] | None:
    """argparse's reader of ``option``'s value: the table's ``parse``, with its rule as the
    error."""
    parse = option.parse
    if parse is None:
        return None

    def value(text: str) -> object:
        parsed = parse(text)
        if parsed is None:
            raise argparse.ArgumentTypeError(f"must be {option.rule}, not {text!r}")
        return parsed

    return value


def add_vault_argument(parser: argparse.ArgumentParser) -> None:
    """--vault PATH, for every command that works on a vault."""
    add_option(parser, VAULT)


def add_vault_arguments(parser: argparse.ArgumentParser) -> None:
    """--vault, and --dir (repeatable) for the commands that read the scanned dirs."""
    add_vault_argument(parser)
    add_option(parser, DIR)


def add_color_argument(parser: argparse.ArgumentParser) -> None:
    """--color WHEN, for every command: it colours the error: and warning: prefixes, and
    find's lines and lint's codes on a terminal (docs/commands.md#colour)."""
    add_option(parser, COLOR)


def add_no_server_argument(parser: argparse.ArgumentParser) -> None:
    """--no-server and --no-cache, for the commands the page cache and a ``wiki serve``
    answer (find, recall)."""
    add_option(parser, NO_SERVER)
    add_option(parser, NO_CACHE)
