"""Differential property test of the vault's index: a random vault, random changes between
queries (the server's differential test's, and those an index validated by stat could
miss), and every answer through the index equal to the plain scan's (stdout bytes, stderr,
exit code), each call made with main([...]) with --no-server and with --no-cache. Each
example builds the index first, as ``wiki init`` does: a call that finds none answers by
the scan and leaves the build to a detached builder."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from property_examples import examples
from server_harness import ensure_index, run_cli
from test_server_properties import OPERATIONS, TREE_OPERATIONS, TreeWorld, World, page_text

#: What an index validated by stat could take for unchanged, besides the server test's own.
CACHE_OPERATIONS = [
    "same_tick_rewrite",  # the same size, within the same mtime tick, no utime
    "touch_back",  # touch -r: the mtime set back to an older one
    "rename_over",  # another page renamed over this one
    "inode_reuse",  # deleted and written anew at once: the inode may come back
    "dir_to_symlink",  # a dir replaced by a symlink to another dir
    "chmod_cycle",  # chmod 000, a query, chmod back
]


class CacheWorld(World):
    """The server test's flat vault, with the changes an index validated by stat must see."""

    def apply(self, operation: str) -> None:
        rng = self.rng
        target = self.existing_file()
        if operation == "same_tick_rewrite" and target is not None:
            data = bytearray(target.read_bytes())
            if data:
                data[rng.randrange(len(data))] = ord(rng.choice("abcxyz"))
                target.write_bytes(bytes(data))
        elif operation == "touch_back" and target is not None:
            target.write_bytes(page_text(rng))
            os.utime(target, ns=(1_000_000_000, 1_000_000_000))
        elif operation == "rename_over" and target is not None:
            other = self.existing_file()
            if other is not None and other != target:
                os.replace(other, target)
        elif operation == "inode_reuse" and target is not None:
            size = target.stat().st_size
            target.unlink()
            target.write_bytes(page_text(rng)[:size].ljust(size, b"x"))
        elif operation == "dir_to_symlink":
            dir_path = self.vault / rng.choice(["a", "b"])
            _remove_tree(dir_path)
            os.symlink(self.vault / "store" / rng.choice(["s1", "s2"]), dir_path)
        elif operation == "chmod_cycle" and target is not None:
            target.chmod(0o000)
        else:
            super().apply(operation)


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


#: A few seconds in the default run; ``nox -s properties`` runs ten times as many.
EXAMPLES = examples(15)


def _same_through_the_index(capsysbinary: pytest.CaptureFixture[bytes], argv: list[str]) -> None:
    cached = run_cli(capsysbinary, [*argv, "--no-server"])
    plain = run_cli(capsysbinary, [*argv, "--no-cache"])
    assert cached == plain, argv


def _restore_modes(root: Path) -> None:
    for path in root.rglob("*"):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.slow
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    operations=st.lists(st.sampled_from(OPERATIONS + CACHE_OPERATIONS), min_size=5, max_size=30),
    seed=st.integers(0, 2**32 - 1),
)
@example(operations=["query", "same_tick_rewrite", "touch_back", "rename_over", "inode_reuse"], seed=7)
@example(operations=["query", "dir_to_symlink", "chmod_cycle", "query", "chmod", "write"], seed=11)
def test_every_answer_through_the_index_equals_the_plain_scan(
    operations: list[str], seed: int, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(tempfile.mkdtemp(prefix="mnemosyne-cache-"))
    try:
        # Per example: hypothesis shares function fixtures, and each example starts cold.
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        world = CacheWorld(root, random.Random(seed))
        (world.vault / ".mnemosyne.toml").write_text('dirs = ["a", "b", "c"]\n', encoding="utf-8")
        ensure_index(world.vault)
        for operation in operations:
            world.apply(operation)
            for argv in world.queries():
                _same_through_the_index(capsysbinary, argv)
            if operation == "chmod_cycle":
                _restore_modes(world.vault)
                for argv in world.queries():
                    _same_through_the_index(capsysbinary, argv)
    finally:
        _restore_modes(root)
        shutil.rmtree(root)


@pytest.mark.slow
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(operations=st.lists(st.sampled_from(TREE_OPERATIONS), min_size=5, max_size=25), seed=st.integers(0, 2**32 - 1))
@example(operations=["delete", "write", "rename", "tree_config", "rename", "ignore_file"], seed=1_000_000_000)
def test_every_answer_on_a_tree_through_the_index_equals_the_plain_scan(
    operations: list[str], seed: int, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(tempfile.mkdtemp(prefix="mnemosyne-cache-tree-"))
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        world = TreeWorld(root, random.Random(seed))
        ensure_index(world.vault)
        for operation in operations:
            world.apply(operation)
            for argv in world.queries():
                _same_through_the_index(capsysbinary, argv)
    finally:
        _restore_modes(root)
        shutil.rmtree(root)
