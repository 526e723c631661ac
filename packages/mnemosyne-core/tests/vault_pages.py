"""Helpers for core tests (importable: the pytest config puts this dir on sys.path)."""

from __future__ import annotations

from collections.abc import Callable

VAULT = "/vault"

MakeVault = Callable[[dict[str, str | bytes]], str]


def page(title: str | None = None, body: str = "", **fields: str) -> str:
    """A page with a frontmatter built from ``title`` and ``fields`` (plain YAML values)."""
    lines = ["---"]
    if title is not None:
        lines.append(f"title: {title}")
    lines += [f"{key}: {value}" for key, value in fields.items()]
    lines += ["---", body]
    return "\n".join(lines) + "\n"


def no_vault_message() -> str:
    """The error when none of the four ways names a vault, under the test session's
    XDG_CONFIG_HOME (the root conftest points it at an empty dir)."""
    import os

    user_config = os.path.join(os.environ["XDG_CONFIG_HOME"], "mnemosyne", "config.toml")
    return (
        "no vault found: pass --vault PATH, run inside a vault that has a .mnemosyne.toml, "
        f'set AION_VAULT, or set vault = "PATH" in {user_config}'
    )
