"""Shared fixtures of the ingest tests: a small vault, sources, and a snapshot of every
file (hidden ones included) to prove that a refusal wrote nothing. Fixtures only: test
modules cannot import each other under --import-mode=importlib."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

VAULT_PAGES: dict[str, str] = {
    "atlas/caddy.md": "---\ntitle: Caddy Reverse Proxy Setup\nconstellation: atlas\ntype: howto\n---\n\n# Caddy\n",
    "analyses/vector-stores.md": "---\ntitle: Vector Store Comparison\ntype: analysis\n---\n\nQdrant and pgvector.\n",
}

REPORT = (
    "---\n"
    "title: Agent Ecosystem Report — March 2026\n"
    "author: mimir-agent research\n"
    "date: 2026-03-18\n"
    "tags: [agents, frameworks, mastra]\n"
    "---\n"
    "\n"
    "# Agent Ecosystem Report — March 2026\n"
    "\n"
    "Mastra is weighed against LangGraph.\n"
)


@pytest.fixture(autouse=True)
def _no_ambient_vault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AION_VAULT", raising=False)
    # FORCE_COLOR would colour the error: prefixes the tests compare exactly.
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and dir under ``root`` (dirs map to None), hidden ones included."""
    found: dict[str, bytes | None] = {}
    for dir_path, dir_names, file_names in os.walk(root):
        for name in dir_names:
            found[os.path.relpath(os.path.join(dir_path, name), root)] = None
        for name in file_names:
            path = os.path.join(dir_path, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, bytes | None]]:
    """Every file and dir under a root (dirs map to None), hidden ones included."""
    return _snapshot


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A two-page vault at tmp_path/vault (atlas/ and analyses/)."""
    root = tmp_path / "vault"
    for rel_path, text in VAULT_PAGES.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


@pytest.fixture
def report() -> str:
    """The default source's text."""
    return REPORT


@pytest.fixture
def write_source(tmp_path: Path) -> Callable[..., Path]:
    """Write a source file under tmp_path/sources and return its path."""

    def write(name: str = "report.md", content: str | bytes = REPORT) -> Path:
        path = tmp_path / "sources" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    return write
