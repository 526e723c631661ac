"""Shared fixtures for CLI tests: a pyfakefs vault, AION_VAULT cleared so no test reads
the developer's real vault by accident, and a private runtime dir for server tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem


@pytest.fixture(autouse=True)
def _no_ambient_vault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AION_VAULT", raising=False)
    monkeypatch.delenv("MNEMOSYNE_MEMORY_DIR", raising=False)
    # No test asks a developer's running 'wiki serve': server tests set their own dir.
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent/mnemosyne-tests-runtime")


@pytest.fixture(autouse=True)
def _no_ambient_color(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's FORCE_COLOR or NO_COLOR must not change what the tests see."""
    for name in ("FORCE_COLOR", "NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_vault(fs: FakeFilesystem) -> Callable[[dict[str, str | bytes]], str]:
    """Build a vault at /vault from {relative path: text or bytes}; returns its root."""

    def build(pages: dict[str, str | bytes]) -> str:
        fs.create_dir("/vault")
        for rel_path, content in pages.items():
            data = content if isinstance(content, bytes) else content.encode("utf-8")
            fs.create_file(f"/vault/{rel_path}", contents=data)
        return "/vault"

    return build


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private XDG_RUNTIME_DIR for this test's servers (``server_harness.short_runtime_dir``:
    short enough for a socket path, whatever pytest's temp dir); server test modules use it
    for every test."""
    from server_harness import short_runtime_dir

    with short_runtime_dir(monkeypatch) as run:
        yield run
