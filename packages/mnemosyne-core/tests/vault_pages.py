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
