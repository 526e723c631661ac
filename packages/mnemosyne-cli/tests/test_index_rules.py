"""What the config and the ignore files decide, kept in the index by their files' stat
(``vault.KeptRules``): a call whose files are as they were parses neither, and after any
edit to one of them (the same size, the mtime set back, within the same second as the call
before it) every answer is still the plain scan's, stdout, stderr and exit code alike.

Each edit is made twice over: with the racy rule as it is (``RACY_NS``: files written a
moment ago are never kept, so every call parses them again) and with it off (``RACY_NS``
0: kept from the first call on, so the stat alone must tell the edit)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from index_harness import build_index
from server_harness import run_cli
from test_startup_imports import rules_vault

from mnemosyne_core import config, page, vault

#: The answers held to the scan's: hits, a miss with its note on the files left out, --json.
QUERIES = (["kestrel", "--paths"], ["zyzzyva"], ["kestrel", "--json"], ["diary", "--paths"])


def _rewrite(path: Path, old: str, new: str) -> None:
    """``old`` replaced by ``new`` in the file, its size kept and its mtime set back to what
    it was: only the ctime (and the inode, for a new file) is left to tell the edit."""
    assert len(old) == len(new)
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _symlinked(path: Path) -> None:
    """The ignore file swapped for a symlink to other rules, which the walk refuses to follow."""
    target = path.parent / "elsewhere.txt"
    target.write_text("Notes/\n", encoding="utf-8")
    path.unlink()
    path.symlink_to(target)


EDITS: dict[str, Callable[[Path], object]] = {
    "config, the same size": lambda root: _rewrite(root / ".mnemosyne.toml", "*.draft.md", "Kestrel.md"),
    "config turns the index off": lambda root: (root / ".mnemosyne.toml").write_text(
        'depth = "tree"\n[cache]\nenabled = false\n', encoding="utf-8"
    ),
    "config removed": lambda root: (root / ".mnemosyne.toml").unlink(),
    ".gitignore, the same size": lambda root: _rewrite(root / ".gitignore", "*.tmp.md", "Archive/"),
    "nested .ignore, the same size": lambda root: _rewrite(root / "Notes" / ".ignore", "private/", "!drafts/"),
    "an ignore file added": lambda root: (root / "Archive" / ".gitignore").write_text("*\n", encoding="utf-8"),
    "an ignore file removed": lambda root: (root / "Notes" / ".ignore").unlink(),
    "an ignore file symlinked": lambda root: _symlinked(root / ".gitignore"),
    "a page the rules leave out added": lambda root: (root / "Archive" / "diary.tmp.md").write_text(
        "diary\n", encoding="utf-8"
    ),
    "a dir the rules leave out added": lambda root: (root / "Notes" / "private" / "more").mkdir(),
}


def _parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the calls from now on parse: the config file, and ignore rules compiled."""
    parsed: list[str] = []
    load, make = config.load_vault_config, vault._spec

    def load_spied(vault_path: str) -> config.VaultConfig:
        parsed.append("config")
        return load(vault_path)

    def make_spied(lines: list[str]) -> object:
        parsed.append("rules")
        return make(lines)

    monkeypatch.setattr(config, "load_vault_config", load_spied)
    monkeypatch.setattr(vault, "_spec", make_spied)
    return parsed


def _same_as_the_scan(capsysbinary: pytest.CaptureFixture[bytes], root: Path, parsed: list[str]) -> list[str]:
    """Each query's answer through the index held to the plain scan's; what the calls
    through the index parsed."""
    through_index: list[str] = []
    for words in QUERIES:
        argv = ["wiki", "find", *words, "--vault", str(root)]
        del parsed[:]
        cached = run_cli(capsysbinary, [*argv, "--no-server"])
        through_index += parsed
        assert cached == run_cli(capsysbinary, [*argv, "--no-cache"]), argv
    return through_index


@pytest.mark.parametrize("racy_ns", [page.RACY_NS, 0], ids=["racy rule", "no racy window"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_config_or_ignore_file_answers_as_the_scan(
    edit: str,
    racy_ns: int,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = rules_vault(tmp_path / "vault")
    (root / "Archive" / "diary.md").write_text("diary\n", encoding="utf-8")
    monkeypatch.setattr(page, "RACY_NS", racy_ns)
    build_index(root)
    parsed = _parsed(monkeypatch)
    before = _same_as_the_scan(capsysbinary, root, parsed)
    # Kept from the build on; or, all written a moment ago, parsed again by every call.
    assert (before == []) is (racy_ns == 0), before
    EDITS[edit](root)
    _same_as_the_scan(capsysbinary, root, parsed)
    _same_as_the_scan(capsysbinary, root, parsed)  # and once the edit is kept in turn


def _lint_as_the_scan(capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """lint through the index answers as --no-cache does with nothing kept to take: every
    dir changed a moment ago (the racy window wider than time), so its walk asks the rules
    about every name."""
    argv = ["wiki", "lint", "--vault", str(root)]
    cached = run_cli(capsysbinary, argv)
    with monkeypatch.context() as racy:
        racy.setattr(page, "RACY_NS", 10**19)
        assert cached == run_cli(capsysbinary, [*argv, "--no-cache"])


@pytest.mark.parametrize("edit", [None, *EDITS])
def test_lint_through_the_index_takes_what_the_listing_decided_and_answers_as_the_scan(
    edit: str | None, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """lint's walk for the files find never searches asks the listing's decisions (kept or
    just made) about the names the listing asked the rules about, so a warm lint compiles
    no ignore rule; and after any edit its findings are still those of a walk that asks the
    rules about every name."""
    root = rules_vault(tmp_path / "vault")
    (root / "Notes" / "drafts" / "sub").mkdir()
    (root / "Notes" / "drafts" / "sub" / "deep.md").write_text("deep\n", encoding="ascii")
    monkeypatch.setattr(page, "RACY_NS", 0)
    build_index(root)
    parsed = _parsed(monkeypatch)
    run_cli(capsysbinary, ["wiki", "lint", "--vault", str(root)])
    assert "rules" not in parsed, parsed
    _lint_as_the_scan(capsysbinary, monkeypatch, root)
    if edit is not None:
        EDITS[edit](root)
        _lint_as_the_scan(capsysbinary, monkeypatch, root)
        _lint_as_the_scan(capsysbinary, monkeypatch, root)


#: Names lint asks about that the listing does not ask the rules about, each left out by a
#: rule and a finding were it not: the config's memory dir when another memory dir is
#: lint's (inside, a name in the wrong case that a rule re-includes, as nothing inside an
#: ignored dir is), and a hidden page of a flat layout; and a dir named like a page.
LINT_ONLY_NAMES = {
    "memory dir": (
        'depth = "tree"\nmemory_dir = "Notes/memory"\n',
        {"Notes/.ignore": "memory/\n!memory/LOG.MD\n", "Notes/memory/LOG.MD": "log\n", "Notes/a.md": "a\n"},
    ),
    "flat, hidden page": (
        'dirs = ["Notes"]\nexclude = ["*.draft.md", ".hidden.md"]\n',
        {"Notes/.hidden.md": "h\n", "Notes/.shown.md": "s\n", "Notes/a.md": "a\n"},
    ),
    "a dir named like a page": (
        'depth = "tree"\n',
        {".gitignore": "x.md/\n", "Notes/x.md/in.md": "in\n", "Notes/y.md/in.md": "in\n", "Notes/a.md": "a\n"},
    ),
}


@pytest.mark.parametrize("case", list(LINT_ONLY_NAMES))
def test_lint_asks_the_rules_about_a_name_the_listing_never_asked_about(
    case: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    config_text, files = LINT_ONLY_NAMES[case]
    root = tmp_path / "vault"
    for rel_path, text in {".mnemosyne.toml": config_text, **files}.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="ascii")
    monkeypatch.setenv("MNEMOSYNE_MEMORY_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(page, "RACY_NS", 0)
    build_index(root)
    _lint_as_the_scan(capsysbinary, monkeypatch, root)
