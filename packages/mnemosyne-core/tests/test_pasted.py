"""``pasted.page_keywords``: the forms a page's path is pasted in become the path find
prints; nothing is read for keywords that cannot be one."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemosyne_core import InvalidQueryError, PathOutsideVaultError, VaultError
from mnemosyne_core.pasted import page_keywords


def test_words_and_bare_paths_are_kept_without_reading_any_vault() -> None:
    # No vault is named anywhere: resolving one would raise VaultError.
    keywords = ["mastra", "duckdb/remote-parquet.md", "a b", "x.md"]
    assert page_keywords(keywords, None, None, environ={}, cwd="/", home="/nonexistent") == tuple(keywords)


def test_a_keyword_that_may_be_pasted_reads_the_vault(tmp_path: Path) -> None:
    with pytest.raises(VaultError):
        page_keywords(["./a.md"], None, None, environ={}, cwd="/", home=str(tmp_path))


def test_an_empty_keyword_is_the_searchs_usage_error_before_the_vault_is_read(tmp_path: Path) -> None:
    with pytest.raises(InvalidQueryError, match="empty"):
        page_keywords(["./a.md", ""], str(tmp_path / "missing"), None)


def test_each_form_becomes_the_vault_relative_path(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n", encoding="utf-8")
    root = str(tmp_path.resolve())
    forms = [
        "./docs/a.md",
        "docs\\a.md",
        f"{root}/docs/a.md",
        "docs/a.md — A",
        f"  {root}/docs/a.md — A",
        "x/../docs/a.md",
    ]
    assert page_keywords([*forms, "A"], root, None) == (*["docs/a.md"] * len(forms), "A")


def test_outside_the_vault_is_a_typed_usage_error(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    with pytest.raises(PathOutsideVaultError) as raised:
        page_keywords([f"{tmp_path}/other.md"], str(vault), None)
    assert isinstance(raised.value, InvalidQueryError)
