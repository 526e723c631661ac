"""The benchmark's nested vault: what it holds, and what its .gitignore and hidden dirs
leave out (by git's own answer); and that a profile's bytes depend only on its seed."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import generate_vault


def digest(root: Path) -> str:
    """One hash of every file's path and bytes under ``root``."""
    hashed = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            hashed.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return hashed.hexdigest()


def test_the_nested_vault_searches_exactly_its_page_count_of_notes(tmp_path: Path) -> None:
    vault = tmp_path / "nested"
    generate_vault.generate(300, str(vault), profile="nested")
    listed = subprocess.run(
        ["git", "-C", str(vault), "ls-files", "-co", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    # git does not hide dot dirs as rg and fd do: the walk leaves .trash/ and .obsidian/ out too.
    searched = [path for path in listed if not any(part.startswith(".") for part in path.split("/"))]
    assert len(searched) == 300
    assert all(path.endswith(".md") for path in searched)
    assert max(path.count("/") for path in searched) == 4  # notes four folders deep
    assert all(" " in path.rpartition("/")[2] for path in searched)
    on_disk = [
        os.path.relpath(os.path.join(dir_path, name), vault)
        for dir_path, _, names in os.walk(vault)
        if "/.git" not in f"/{os.path.relpath(dir_path, vault)}"
        for name in names
        if name.endswith(".md")
    ]
    left_out = set(on_disk) - set(searched)
    assert any(path.startswith("Archive/") for path in left_out)
    assert any("/drafts/" in path for path in left_out)
    assert any(path.endswith(".excalidraw.md") for path in left_out)
    assert any(path.startswith(".trash/") for path in left_out)
    assert not any(name in {"atlas", "analyses"} for name in os.listdir(vault))  # no default dir: a whole tree


def test_a_profile_gives_the_same_bytes_for_the_same_seed(tmp_path: Path) -> None:
    for profile in ("classic", "nested"):
        generate_vault.generate(60, str(tmp_path / f"{profile}-a"), profile=profile)
        generate_vault.generate(60, str(tmp_path / f"{profile}-b"), profile=profile)
        first, second = tmp_path / f"{profile}-a", tmp_path / f"{profile}-b"
        if profile == "nested":  # git's own files hold times and ids; the vault is the rest
            for root in (first, second):
                shutil.rmtree(root / ".git")
        assert digest(first) == digest(second)
