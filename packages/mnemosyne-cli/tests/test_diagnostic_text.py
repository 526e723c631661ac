"""The one wording of the search's warnings: every diagnostic code the core emits has its
line, and the lines are the ones agents and the goldens have always seen."""

from __future__ import annotations

import pytest

from mnemosyne_cli.environment import Environment
from mnemosyne_cli.output import Console, diagnostic_text
from mnemosyne_core import diagnostics
from mnemosyne_core.diagnostics import Diagnostic


@pytest.mark.parametrize(
    ("diagnostic", "text"),
    [
        (Diagnostic("atlas/a.md", diagnostics.BROKEN_SYMLINK), "atlas/a.md: broken symlink; skipped"),
        (Diagnostic("hades", diagnostics.BROKEN_SYMLINK, is_dir=True), "hades/: broken symlink; skipped"),
        (Diagnostic("atlas/a.md", diagnostics.SYMLINK_ESCAPES), "atlas/a.md: symlink leaves the vault; skipped"),
        (Diagnostic("hades", diagnostics.SYMLINK_ESCAPES, is_dir=True), "hades/: symlink leaves the vault; skipped"),
        (
            Diagnostic("atlas", diagnostics.CANNOT_LIST, "Permission denied", is_dir=True),
            "atlas/: cannot list (Permission denied); its pages were not searched",
        ),
        (
            Diagnostic("atlas/a.md", diagnostics.CANNOT_READ, diagnostics.VANISHED),
            "atlas/a.md: cannot read (vanished during the search); skipped",
        ),
        (
            Diagnostic("atlsa", diagnostics.UNKNOWN_DIR, "its dirs are atlas, hades"),
            "--dir 'atlsa' names no dir of the vault; its dirs are atlas, hades",
        ),
        (
            Diagnostic("notes/.gitignore", diagnostics.IGNORE_FILE_UNUSED, "Permission denied"),
            "notes/.gitignore: cannot use this ignore file (Permission denied); its rules are not applied",
        ),
        (Diagnostic("atlas/a.md", "a-later-code", "why"), "atlas/a.md: a-later-code (why)"),
    ],
)
def test_each_code_has_its_line(diagnostic: Diagnostic, text: str) -> None:
    assert diagnostic_text(diagnostic) == text


def test_every_code_the_core_names_has_its_own_wording() -> None:
    codes = [value for name, value in vars(diagnostics).items() if name.isupper() and name != "VANISHED"]
    assert sorted(codes) == sorted(
        [
            diagnostics.BROKEN_SYMLINK,
            diagnostics.SYMLINK_ESCAPES,
            diagnostics.CANNOT_LIST,
            diagnostics.CANNOT_READ,
            diagnostics.IGNORE_FILE_UNUSED,
            diagnostics.UNKNOWN_DIR,
        ]
    )
    for code in codes:
        assert ": " + code not in diagnostic_text(Diagnostic("p", code, "d"))  # not the fallback


def test_the_console_says_it_as_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    Console(Environment()).diagnostic(Diagnostic("atlas/a.md", diagnostics.CANNOT_READ, "Permission denied"))
    assert capsys.readouterr().err == "mnemosyne: warning: atlas/a.md: cannot read (Permission denied); skipped\n"
