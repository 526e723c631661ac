"""A call reads its environment (variables, current dir, home, streams) only from the
``Environment`` it is given, never from the process around it."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from mnemosyne_cli import app, console_script
from mnemosyne_cli.environment import Environment

ALPHA = "---\ntitle: Alpha\nupdated: 2026-01-02\ntags: [alpha]\n---\nAlpha body.\n"
#: Both ways a call starts: the console script's own parse of a plain find, and argparse's.
MAINS = [console_script.main, app.main]


def make_vault(root: Path) -> Path:
    (root / "wiki").mkdir(parents=True)
    (root / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    (root / "wiki" / "alpha.md").write_text(ALPHA, encoding="utf-8")
    return root


def environment(home: Path, environ: Mapping[str, str], cwd: Path | None = None) -> Environment:
    """An Environment of its own: no variable, dir or stream of the process's."""
    return Environment(
        {"XDG_RUNTIME_DIR": "/nonexistent/mnemosyne-tests-runtime", **environ},
        cwd=str(cwd or home),
        home=str(home),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )


def answer(main: Callable[..., int], env: Environment, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), env)
    assert isinstance(env.stdout, io.StringIO)
    assert isinstance(env.stderr, io.StringIO)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


#: What the call may still read of the process's environment: gettext's locale names (the
#: standard library's, for argparse's messages).
PROCESS_READS = frozenset({"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"})


class _Sealed(dict[str, str]):
    """An os.environ of which only PROCESS_READS can be read (as unset)."""

    def _refuse(self, name: object) -> None:
        if name not in PROCESS_READS:
            raise AssertionError(f"read the process's {name}")

    def __getitem__(self, name: str) -> str:
        self._refuse(name)
        raise KeyError(name)

    def get(self, name: str, default: object = None) -> object:  # type: ignore[override]
        self._refuse(name)
        return default

    def __contains__(self, name: object) -> bool:
        self._refuse(name)
        return False


def _no_cwd() -> str:
    raise AssertionError("read the process's current dir")


def sealed_answer(main: Callable[..., int], env: Environment, *argv: str) -> tuple[int, str, str]:
    """``answer``, with the process's environment and current dir unreadable for the call
    (and only for it: pytest reads them around a test)."""
    real_read = type(os.environ).__getitem__

    def sealed_read(environ: object, name: str) -> str:
        _Sealed()._refuse(name)
        return real_read(environ, name)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", _Sealed())
        # The process's own mapping too: a default argument (environ=os.environ) holds it.
        patch.setattr(type(os.environ), "__getitem__", sealed_read)
        patch.setattr(os, "getcwd", _no_cwd)
        return answer(main, env, *argv)


@pytest.mark.parametrize("main", MAINS)
def test_find_takes_aion_vault_from_the_environment_given_not_the_process(
    main: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = make_vault(tmp_path / "v")
    env = environment(tmp_path, {"AION_VAULT": str(vault)})
    assert sealed_answer(main, env, "wiki", "find", "alpha") == (0, "wiki/alpha.md — Alpha\n", "")
    assert capsys.readouterr() == ("", "")  # nothing went to the process's own streams


@pytest.mark.parametrize("main", MAINS)
def test_the_processs_aion_vault_is_not_the_calls(
    main: Callable[..., int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AION_VAULT", str(make_vault(tmp_path / "v")))
    env = environment(tmp_path / "home", {})
    assert answer(main, env, "wiki", "find", "alpha") == (
        3,
        "",
        "mnemosyne: error: no vault found: pass --vault PATH, run inside a vault that has a .mnemosyne.toml, "
        f'set AION_VAULT, or set vault = "PATH" in {tmp_path}/home/.config/mnemosyne/config.toml\n',
    )


def test_recall_and_info_find_the_vault_above_the_given_cwd_and_under_the_given_home(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "home" / "v")
    inside = environment(tmp_path / "home", {}, cwd=vault / "wiki")
    code, out, err = sealed_answer(app.main, inside, "wiki", "recall", "alpha")
    assert (code, out.splitlines()[0], err) == (0, "wiki/alpha.md", "")
    code, out, _ = sealed_answer(app.main, environment(tmp_path / "home", {}), "wiki", "info", "--vault", "~/v")
    assert code == 0
    assert out.splitlines()[:2] == [f"vault: {vault}", "found by: --vault ~/v"]


def test_colour_follows_the_environment_given(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v")
    plain = environment(tmp_path, {"AION_VAULT": str(vault)})
    forced = environment(tmp_path, {"AION_VAULT": str(vault), "FORCE_COLOR": "1"})
    assert sealed_answer(app.main, plain, "wiki", "find", "alpha")[1] == "wiki/alpha.md — Alpha\n"
    assert "\x1b[" in sealed_answer(app.main, forced, "wiki", "find", "alpha")[1]


@pytest.mark.parametrize("argv", [["wiki", "find", "--help"], ["--help"]])
def test_help_goes_to_the_given_stdout_at_the_given_width(tmp_path: Path, argv: list[str]) -> None:
    golden = Path(__file__).parent / "golden" / "help" / f"{'-'.join(['mnemosyne', *argv[:-1]])}-40.txt"
    narrow = environment(tmp_path, {"COLUMNS": "40"})
    assert sealed_answer(app.main, narrow, *argv) == (0, golden.read_text(encoding="utf-8"), "")


def test_a_call_made_with_no_environment_is_the_processs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AION_VAULT", str(make_vault(tmp_path / "v")))
    assert console_script.main(["wiki", "find", "alpha"]) == 0
    assert capsys.readouterr() == ("wiki/alpha.md — Alpha\n", "")


def test_an_environment_reads_the_process_only_for_what_it_is_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "process-home"))
    monkeypatch.chdir(tmp_path)
    process = Environment()
    assert (process.environ, process.cwd, process.home) == (os.environ, str(tmp_path), str(tmp_path / "process-home"))
    given = Environment({"HOME": "/elsewhere/"})
    assert (given.home, given.cwd) == ("/elsewhere", str(tmp_path))


@pytest.mark.parametrize("command", ["find", "recall", "lint", "info", "ingest"])
def test_the_home_dir_a_call_refuses_to_search_whole_is_the_given_home(tmp_path: Path, command: str) -> None:
    """A folder without config or default dir is searched as a whole tree, unless it is
    the home dir: the call's, not the process's (which it cannot even read here). Ingest
    lists the vault, and finds the page it wrote, as the call would."""
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "alpha.md").write_text(ALPHA, encoding="utf-8")
    source = tmp_path / "beta-report.md"
    source.write_text("# Beta Report\n\nbody\n", encoding="utf-8")
    arguments = {
        "find": ["alpha"],
        "recall": ["alpha"],
        "ingest": [str(source), "--constellation", "atlas", "--dir", "sub", "--type", "report"],
    }
    words = ["wiki", command, *arguments.get(command, []), "--vault", str(notes)]
    at_home = sealed_answer(app.main, environment(notes, {}), *words)
    assert at_home[0] == 3
    assert f"vault {str(notes)!r} is your home dir, not a notes folder" in at_home[2]
    elsewhere = sealed_answer(app.main, environment(tmp_path / "home", {}), *words)
    assert elsewhere[0] in (0, 1)  # lint: findings (exit 1) about the pages it did search
    assert "your home dir" not in elsewhere[2]


class _FullStream(io.StringIO):
    """A stdout that takes nothing, as /dev/full does."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("argv", [["wiki", "find", "--help"], ["--version"]])
def test_help_and_version_print_as_argparse_does_when_stdout_cannot_take_them(tmp_path: Path, argv: list[str]) -> None:
    """A full stdout loses the text quietly (exit 0); a stdout the process started
    without gets it on stderr instead."""
    full = Environment({}, cwd=str(tmp_path), home=str(tmp_path), stdout=_FullStream(), stderr=io.StringIO())
    assert app.main(argv, full) == 0
    assert isinstance(full.stderr, io.StringIO)
    assert full.stderr.getvalue() == ""
    closed = environment(tmp_path, {})
    closed.stdout = None
    assert app.main(argv, closed) == 0
    assert isinstance(closed.stderr, io.StringIO)
    assert closed.stderr.getvalue().startswith(("usage: mnemosyne wiki find", "mnemosyne 0.1.0"))
