"""The contract: every schema ships, is a valid draft 2020-12 schema, and the exit codes
never change meaning."""

from __future__ import annotations

import subprocess
import sys

import jsonschema
import pytest

from mnemosyne_contract import SCHEMA_NAMES, ExitCode, exit_status, load_schema


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_ships_and_is_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_unknown_schema_name_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown schema 'nope'"):
        load_schema("nope")


def test_find_schema_accepts_find_output_and_rejects_drift() -> None:
    validator = jsonschema.Draft202012Validator(load_schema("find"))
    good = {"path": "atlas/a.md", "title": "A", "constellation": None, "type": None}
    assert validator.is_valid([])
    assert validator.is_valid([good])
    assert not validator.is_valid([{k: v for k, v in good.items() if k != "type"}])
    assert not validator.is_valid([{**good, "title": 3}])
    assert not validator.is_valid([{**good, "extra": 1}])
    # --matched adds where each page matched, from a fixed set.
    for where in ("title", "path", "text"):
        assert validator.is_valid([{**good, "matched": where}])
    assert not validator.is_valid([{**good, "matched": "alias"}])
    assert not validator.is_valid([{**good, "matched": None}])
    # --matched gives a page that only mentions the keywords the line that shows it.
    context = {"line": 3, "text": "Add a question mark operator"}
    assert validator.is_valid([{**good, "matched": "text", "context": context}])
    assert validator.is_valid([{**good, "matched": "text", "context": None}])
    assert not validator.is_valid([{**good, "matched": "title", "context": context}])
    assert not validator.is_valid([{**good, "context": context}])
    assert not validator.is_valid([{**good, "matched": "text", "context": {**context, "line": 0}}])
    assert not validator.is_valid([{**good, "matched": "text", "context": {"line": 3}}])
    assert not validator.is_valid([{**good, "matched": "text", "context": {**context, "marks": []}}])
    # Other layouts: nested pages, pages at the vault root, other suffixes.
    assert validator.is_valid([{**good, "path": "nested/dir/a.md"}])
    assert validator.is_valid([{**good, "path": "a.md"}])
    assert validator.is_valid([{**good, "path": "guides/images.mdx"}])
    assert not validator.is_valid([{**good, "path": "atlas/a"}])
    assert not validator.is_valid([{**good, "path": "atlas//a.md"}])
    # --absolute: the vault root, then the same path; the shape is unchanged.
    assert validator.is_valid([{**good, "path": "/home/me/aion/atlas/a.md"}])
    assert validator.is_valid([{**good, "path": "/atlas/a.md"}])
    assert not validator.is_valid([{**good, "path": "/home/me/aion/a.md/"}])
    assert not validator.is_valid([{**good, "path": "//atlas/a.md"}])


def test_every_shipped_schema_is_named() -> None:
    from importlib.resources import files

    shipped = sorted(
        entry.name.removesuffix(".schema.json")
        for entry in files("mnemosyne_contract.schemas").iterdir()
        if entry.name.endswith(".schema.json")
    )
    assert shipped == sorted(SCHEMA_NAMES)


def test_info_schema_accepts_info_output_and_rejects_drift() -> None:
    validator = jsonschema.Draft202012Validator(load_schema("info"))
    versions = {f"mnemosyne-wiki-{name}": "0.1.0" for name in ("cli", "contract", "core", "ingest")}
    good = {
        "vault": "/home/me/aion",
        "source": "AION_VAULT",
        "given": "~/aion",
        "source_file": None,
        "config_files": ["/home/me/aion/.mnemosyne.toml"],
        "layout": {
            "dirs": ["wiki", "ext"],
            "depth": "flat",
            "suffixes": [".md"],
            "exclude": [],
            "source": ".mnemosyne.toml",
        },
        "prefer": [],
        "dirs_source": ".mnemosyne.toml",
        "dirs": [
            {"name": "wiki", "state": "present", "pages": 3, "reason": None, "subdirs": []},
            {
                "name": "ext",
                "state": "skipped",
                "pages": 0,
                "reason": "a symlink to '/x', outside the vault",
                "subdirs": [],
            },
        ],
        "pages": 3,
        "unsearched": 1,
        "error": None,
        "cache": {
            "enabled": True,
            "path": None,
            "bytes": 0,
            "pages": 0,
            "fresh": 0,
            "complete": False,
            "outdated": False,
            "written": None,
            "building": None,
            "damaged": None,
            "failed": None,
            "unused": None,
        },
        "server": None,
        "auto_start": {
            "enabled": False,
            "reason": "the vault lists 0 pages, fewer than 5,000",
            "idle_minutes": 30,
            "log": None,
        },
        "version": "0.1.0",
        "packages": versions,
    }
    assert validator.is_valid(good)
    assert validator.is_valid({**good, "server": None})  # reserved for wiki serve
    assert validator.is_valid({**good, "prefer": ["reference/7.6/", "content/en/"]})
    assert not validator.is_valid({**good, "prefer": ["reference/7.6"]})  # a dir, written with its '/'
    assert not validator.is_valid({k: v for k, v in good.items() if k != "prefer"})
    assert validator.is_valid({**good, "packages": {**versions, "mnemosyne-wiki-core": None}})
    server = {"pid": 42, "watched_dirs": 10, "resident_bytes": 16 << 20, "auto_started": False}
    assert validator.is_valid({**good, "server": server})
    started = {"enabled": True, "reason": "[serve] auto = true", "idle_minutes": 0.5, "log": "/run/x.log"}
    assert validator.is_valid({**good, "server": {**server, "auto_started": True}, "auto_start": started})
    assert not validator.is_valid({**good, "auto_start": {**started, "idle_minutes": 0}})
    assert not validator.is_valid({**good, "auto_start": {k: v for k, v in started.items() if k != "reason"}})
    assert not validator.is_valid({**good, "server": {"pid": 42}})
    assert not validator.is_valid({**good, "server": {**server, "auto_started": "yes"}})
    assert not validator.is_valid({**good, "auto_start": {"enabled": True}})
    assert not validator.is_valid({k: v for k, v in good.items() if k != "auto_start"})
    assert not validator.is_valid({**good, "source": "env"})
    assert not validator.is_valid({**good, "vault": "relative/aion"})
    assert not validator.is_valid({**good, "extra": 1})
    assert not validator.is_valid({k: v for k, v in good.items() if k != "error"})
    wiki = {"name": "wiki", "state": "present", "pages": 3, "reason": None, "subdirs": []}
    assert not validator.is_valid({**good, "dirs": [{**wiki, "state": "gone"}]})
    # Searched dirs may be nested or the root; never hidden, '..' or absolute.
    assert validator.is_valid({**good, "dirs": [{**wiki, "name": "docs/en", "subdirs": [{"name": "a", "pages": 3}]}]})
    assert validator.is_valid({**good, "dirs": [{**wiki, "name": "."}]})
    for name in ("a/../b", "/a", ".git", "a/.b", "a//b"):
        assert not validator.is_valid({**good, "dirs": [{**wiki, "name": name}]})
    assert not validator.is_valid({**good, "layout": {**good["layout"], "depth": "deep"}})  # type: ignore[dict-item]
    assert not validator.is_valid({**good, "layout": {**good["layout"], "source": "guess"}})  # type: ignore[dict-item]
    assert not validator.is_valid({k: v for k, v in good.items() if k != "layout"})
    assert not validator.is_valid({**good, "pages": -1})
    assert not validator.is_valid({**good, "packages": {"mnemosyne-wiki-cli": "0.1.0"}})


def test_exit_codes_are_fixed() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "NO_MATCH": 1,
        "CAT_NEEDS_ONE_MATCH": 2,
        "VAULT_ERROR": 3,
        "TARGET_EXISTS": 4,
        "INGEST_UNVERIFIED": 5,
        "SERVER_RUNNING": 6,
        "USAGE": 64,
        "BAD_SOURCE": 65,
        "WRITE_FAILED": 74,
        "INTERRUPTED": 130,
    }


def test_the_plain_codes_the_command_returns_are_the_enums() -> None:
    """exit_status (the ints the command returns) and ExitCode (the IntEnum for Python
    callers) hold the same names and values, neither more."""
    plain = {name: value for name, value in vars(exit_status).items() if name.isupper()}
    assert plain == {code.name: int(code) for code in ExitCode}
    assert all(type(value) is int for value in plain.values())


def test_importing_the_contract_imports_no_enum() -> None:
    """The command imports the contract on every call; ExitCode, and enum with it, only
    when a caller asks for it."""
    probe = "import sys, mnemosyne_contract; print('enum' in sys.modules, mnemosyne_contract.ExitCode.OK.name)"
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert completed.stdout == "False OK\n"
