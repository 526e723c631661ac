"""Golden files: an output compared byte for byte with the file that holds it.

A missing golden file fails. To regenerate after a deliberate change, run the tests with
``MNEMOSYNE_REGENERATE_GOLDEN=1``: each writes its file and fails once, so that every new
golden is read by hand before it is trusted.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REGENERATE = os.environ.get("MNEMOSYNE_REGENERATE_GOLDEN") == "1"


def check_golden(path: Path, actual: bytes) -> None:
    """``actual`` equals the golden file at ``path`` (or, when regenerating, is written there)."""
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual)
        pytest.fail(f"regenerated {path.name}: review it, then rerun without the env var")
    if not path.exists():
        pytest.fail(f"golden file {path} is missing: regenerate with MNEMOSYNE_REGENERATE_GOLDEN=1 and review it")
    expected = path.read_bytes()
    if actual != expected:
        # Text diffs read better than bytes reprs; backslashreplace keeps invalid bytes visible.
        assert actual.decode("utf-8", "backslashreplace") == expected.decode("utf-8", "backslashreplace")
        assert actual == expected
