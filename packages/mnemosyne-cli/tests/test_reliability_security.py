"""Security: reads stay inside the vault, titles cannot drive the terminal, YAML
is only safe-loaded and bombs stay bounded, and no package shells out or evaluates code."""

from __future__ import annotations

import builtins
import os
import re
from pathlib import Path
from typing import Any

import pytest
from index_harness import build_index
from reliability_vault import REPO_ROOT, build_edge_vault

import mnemosyne_core.cache
import mnemosyne_core.find
import mnemosyne_core.page
import mnemosyne_core.vault
from mnemosyne_cli.app import main
from mnemosyne_core.frontmatter import STATUS_INVALID, parse_block


@pytest.fixture(scope="module")
def edge_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_edge_vault(tmp_path_factory.mktemp("edge"), big_page=False)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- reads stay inside the vault ----------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["wiki", "find", "secret", "--cat"],
        ["wiki", "find", "secret", "--limit", "0"],
        ["wiki", "find", "unreachable", "--json"],
        ["wiki", "find", "windows line ends", "--dir", "apollo", "--cat"],
        ["wiki", "lint"],
        ["wiki", "recall", "secret", "unreachable", "title"],
    ],
    ids=["find-cat", "find", "find-json", "cat-inside-link", "lint", "recall"],
)
def test_every_file_opened_lies_inside_the_vault(
    argv: list[str], edge_vault: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every path any command opens resolves inside the vault; the files behind escaping
    symlinks (which hold "secret") are never opened."""
    opened: list[str] = []
    real_os_open, real_open = os.open, builtins.open

    def recording_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fsdecode(os.path.realpath(path)))
        return real_os_open(path, *args, **kwargs)

    def recording_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, bytes, os.PathLike)):
            opened.append(os.fsdecode(os.path.realpath(file)))
        return real_open(file, *args, **kwargs)

    import json  # noqa: F401 - imported here so that the command's lazy import opens nothing

    monkeypatch.setattr(os, "open", recording_os_open)
    monkeypatch.setattr(builtins, "open", recording_open)
    code = main([*argv, "--vault", str(edge_vault)])
    monkeypatch.undo()
    out = capsysbinary.readouterr().out  # bytes: recall prints pages verbatim, Latin-1 too
    assert code in {0, 1, 2}
    assert b"secret" not in out.lower()
    vault = os.path.realpath(edge_vault)
    assert opened, "the command opened nothing: the recorder is not in its path"
    # Besides the vault: the user's own page cache, and this process's capabilities (which
    # name the cache file, so that other rights never share it).
    cache_dir = mnemosyne_core.cache.cache_dir_path(os.environ)
    assert cache_dir is not None
    ours = (vault + os.sep, os.path.realpath(cache_dir) + os.sep)
    assert [
        path
        for path in opened
        if not path.startswith(ours) and path not in (vault, os.path.realpath("/proc/self/status"))
    ] == []


@pytest.mark.parametrize(
    ("reader", "flags"), [(mnemosyne_core.find, ["--no-cache"]), (mnemosyne_core.page, ["--no-server"])]
)
def test_page_swapped_for_an_escaping_symlink_after_the_scan_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, reader: Any, flags: list[str]
) -> None:
    vault = tmp_path / "vault"
    (vault / "atlas").mkdir(parents=True)
    page = vault / "atlas" / "page.md"
    page.write_text("kestrel\n", encoding="utf-8")
    secret = tmp_path / "secret.md"
    secret.write_text("kestrel SECRET-CONTENT\n", encoding="utf-8")
    if reader is mnemosyne_core.page:
        build_index(vault)  # the page was just written: racy, so the call reads it again
    real_open_page = mnemosyne_core.page.open_page

    def swap_then_open(read_path: str) -> int:
        os.remove(read_path)
        os.symlink(secret, read_path)
        return real_open_page(read_path)

    monkeypatch.setattr(reader, "open_page", swap_then_open)
    code, out, err = run_cli(capsys, "wiki", "find", "kestrel", "--cat", "--vault", str(vault), *flags)
    assert (code, out) == (3, "")
    assert "SECRET" not in err
    assert err.endswith("mnemosyne: warning: atlas/page.md: cannot read (Too many levels of symbolic links); skipped\n")


@pytest.mark.parametrize("dir_name", ["..", "../..", "atlas/..", "/etc", "./atlas", "a\\b"])
def test_dir_option_cannot_reach_outside_the_vault(dir_name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "wiki", "find", "x", "--dir", dir_name, "--vault", "/nonexistent")
    assert (code, out) == (64, "")
    assert err.startswith(f"mnemosyne: error: argument --dir: {dir_name!r} ")


# --- titles cannot drive the terminal -----------------------------------------------------------

# C0 controls except newline, DEL and C1 controls: none may reach a terminal from plain output.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def test_ansi_title_is_escaped_exactly(edge_vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "wiki", "find", "alert", "--dir", "metis", "--vault", str(edge_vault)) == (
        0,
        "metis/ansi-title.md — \\x1b[31mRed Alert\\x1b[0m\n",
        "",
    )


def test_json_carries_the_true_title(edge_vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "wiki", "find", "alert", "--dir", "metis", "--json", "--vault", str(edge_vault))
    assert code == 0
    assert (
        out == '[{"path": "metis/ansi-title.md", "title": "\\u001b[31mRed Alert\\u001b[0m", '
        '"constellation": "metis", "type": null}]\n'
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["wiki", "find", "title", "--limit", "0"],
        ["wiki", "find", "hostile file name"],
        ["wiki", "find", "title", "--dir", "metis", "--cat"],
        ["wiki", "find", "\x1b[31m"],
        ["wiki", "lint"],
    ],
    ids=["titles", "file-names", "cat-candidates", "keyword-with-escape", "lint"],
)
def test_plain_output_holds_no_raw_control_character(
    argv: list[str], edge_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, *argv, "--vault", str(edge_vault))
    assert code in {0, 1, 2}
    if argv[1] == "lint":
        out = out.replace("\t", " ")  # lint's field separator, by design
    assert RAW_CONTROL.findall(out) == []
    assert RAW_CONTROL.findall(err) == []


# --- YAML: safe loading only, bombs bounded -----------------------------------------------------


def test_python_tag_in_frontmatter_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    (vault / "atlas").mkdir(parents=True)
    marker = tmp_path / "pwned"
    for name, tag in [("apply", "!!python/object/apply:os.system"), ("new", "!!python/object/new:os.system")]:
        (vault / "atlas" / f"{name}.md").write_text(
            f'---\ntitle: {tag} ["touch {marker}"]\n---\nkestrel\n', encoding="utf-8"
        )
    monkeypatch.chdir(tmp_path)
    # Both mention "kestrel" in their text only, at the start of the same line: the path decides.
    assert run_cli(capsys, "wiki", "find", "kestrel", "--vault", str(vault)) == (
        0,
        "atlas/apply.md — apply\natlas/new.md — new\n",
        "",
    )
    assert run_cli(capsys, "wiki", "lint", "--vault", str(vault))[0] == 1
    assert not marker.exists()


def test_yaml_bombs_parse_bounded() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert parse_block(f"title: {deep}\n") == (None, STATUS_INVALID)
    laughs = "".join(
        f"{name}: &{name} [{', '.join([f'*{previous}'] * 9 if previous else ['lol'] * 9)}]\n"
        for previous, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
    )
    metadata, _ = parse_block(laughs + "title: *i\n")
    assert metadata is not None
    assert isinstance(metadata["title"], list)  # shared, never expanded
    laughing, _ = parse_block(laughs + "title: Laughs\n")
    assert laughing is not None
    assert laughing["title"] == "Laughs"


def test_a_title_full_of_brackets_is_still_a_title() -> None:
    """The nesting guard counts brackets; a quoted title holding many is valid YAML (this
    was a bug: it fell back to the file name stem)."""
    title = "[" * 100 + " Brackets\\t2"
    assert parse_block(f'title: "{title}"\n') == ({"title": "[" * 100 + " Brackets\t2"}, "ok")


# --- no shell, no eval, safe YAML only ----------------------------------------------------------

FORBIDDEN = {
    "shell=True": re.compile(r"shell\s*=\s*True"),
    "eval(": re.compile(r"(?<![\w.])eval\("),
    "exec(": re.compile(r"(?<![\w.])exec\("),
    "os.system": re.compile(r"os\.system|os\.popen"),
    "unsafe yaml": re.compile(
        r"yaml\.(?:load|load_all|unsafe_load|full_load)\((?![^)]*Loader=loader)(?![^)]*SafeLoader)"
    ),
    "yaml Loader": re.compile(r"yaml\.(?:Unsafe|Full)?Loader\b|yaml\.CLoader\b|yaml\.CFullLoader\b"),
    "pickle/marshal of input": re.compile(r"pickle\.loads?\("),
}


def test_no_package_shells_out_evaluates_or_loads_yaml_unsafely() -> None:
    sources = sorted((REPO_ROOT / "packages").glob("*/src/**/*.py"))
    assert len(sources) > 10
    offences = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {name}: {line.strip()}"
        for path in sources
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for name, pattern in FORBIDDEN.items()
        if pattern.search(line)
    ]
    assert offences == []


def test_alias_bombs_in_every_field_stay_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each command touches title, constellation, type, tags and updated; none may spell out
    the 387-million-item alias graph (lint did, to show the value: fixed with reprlib)."""
    laughs = "".join(
        f"{name}: &{name} [{', '.join([f'*{previous}'] * 9 if previous else ['lol'] * 9)}]\n"
        for previous, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
    )
    fields = "".join(f"{key}: *i\n" for key in ("title", "constellation", "type", "tags", "updated"))
    (tmp_path / "atlas").mkdir()
    (tmp_path / "atlas" / "bomb.md").write_text(f"---\n{laughs}{fields}---\nkestrel\n", encoding="utf-8")
    vault = str(tmp_path)
    assert run_cli(capsys, "wiki", "find", "kestrel", "--json", "--vault", vault) == (
        0,
        '[{"path": "atlas/bomb.md", "title": "bomb", "constellation": "atlas", "type": null}]\n',
        "",
    )
    code, out, err = run_cli(capsys, "wiki", "lint", "--vault", vault)
    assert (code, err.endswith("in 1 path\n")) == (1, True)
    assert all(len(line) < 300 for line in out.splitlines())
    assert run_cli(capsys, "wiki", "recall", "bomb", "--vault", vault)[0] == 0
