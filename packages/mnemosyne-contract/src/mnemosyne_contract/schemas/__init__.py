"""JSON Schemas (draft 2020-12) of each command's ``--json`` output, shipped as package data."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from typing import Any

SCHEMA_NAMES = ("find", "info", "ingest", "lint", "recall")


def load_schema(name: str) -> dict[str, Any]:
    """Return the schema of ``mnemosyne wiki <name> --json``; ``name`` is one of SCHEMA_NAMES."""
    # Imported here: every CLI call imports this package for its exit codes, few load a schema.
    import json
    from importlib.resources import files

    if name not in SCHEMA_NAMES:
        raise ValueError(f"unknown schema {name!r}; expected one of {', '.join(SCHEMA_NAMES)}")
    text = files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
