"""Shared fixture: vaults built on pyfakefs, one file per page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.helpers import reset_ids, set_uid
from vault_pages import VAULT, MakeVault


@pytest.fixture
def make_vault(fs: FakeFilesystem) -> MakeVault:
    """Build a vault at /vault from {relative path: text or bytes}; returns its root."""

    def build(pages: dict[str, str | bytes]) -> str:
        fs.create_dir(VAULT)
        for rel_path, content in pages.items():
            data = content if isinstance(content, bytes) else content.encode("utf-8")
            fs.create_file(f"{VAULT}/{rel_path}", contents=data)
        return VAULT

    return build


@pytest.fixture
def as_non_root() -> Iterator[None]:
    """pyfakefs enforces permissions only for a non-root user."""
    set_uid(1000)
    yield
    reset_ids()
