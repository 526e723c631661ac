"""``mnemosyne completion``: each script loads in its own shell, bash and fish
complete commands, flags and the vault's dirs for --dir when driven the way the shell
drives them, and the hidden ``--list-dirs`` helper is exact and silent on errors.

The shells run as subprocesses with this interpreter's bin dir first on PATH, so the
scripts' ``mnemosyne completion --list-dirs`` calls reach this checkout's command. A
missing shell skips its tests on a developer's machine and fails them under CI=true,
where .ci/run installs bash, zsh and fish.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mnemosyne_cli.app import main
from mnemosyne_cli.arguments import command_name
from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.completion import SHELLS

COMMANDS_DOC = Path(__file__).resolve().parents[3] / "docs" / "commands.md"
#: The vault's dirs as --dir completes them: sorted, hidden ones and files left out.
VAULT_DIRS = ["analyses", "atlas", "hermes", "notes"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def require(shell: str) -> str:
    path = shutil.which(shell)
    if path is None:
        message = f"{shell} is not installed (.ci/run installs it with apt-get)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "home" / "vault"
    for name in VAULT_DIRS:
        (root / name).mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".obsidian").mkdir()
    (root / "root-page.md").write_text("a file, not a dir\n")
    (root / "atlas" / "a.md").write_text("---\ntitle: A\n---\n")
    return root


@pytest.fixture
def scripts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    """Each shell's script, as `mnemosyne completion SHELL` prints it."""
    paths = {}
    for shell in SHELLS:
        code, out, err = run(capsys, "completion", shell)
        assert (code, err) == (0, "")
        paths[shell] = tmp_path / f"mnemosyne.{shell}"
        paths[shell].write_text(out, encoding="utf-8")
    return paths


def run_shell(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``argv`` in HOME (no .mnemosyne.toml above it), so only the test's vault is found."""
    return subprocess.run(argv, capture_output=True, text=True, check=False, env=env, cwd=env["HOME"], timeout=60)


def shell_env(vault: Path | None, no_vault_home: Path) -> dict[str, str]:
    """The environment of a shell: this interpreter's bin dir first on PATH, AION_VAULT at
    ``vault`` when given, HOME at its parent (so ``~/vault`` names it), else at
    ``no_vault_home``; no user config in either."""
    hidden = {"AION_VAULT", "MNEMOSYNE_MEMORY_DIR", "XDG_CONFIG_HOME"}
    env = {key: value for key, value in os.environ.items() if key not in hidden}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["HOME"] = str(vault.parent if vault else no_vault_home)
    if vault is not None:
        env["AION_VAULT"] = str(vault)
    return env


# --- the command ------------------------------------------------------------------------


@pytest.mark.parametrize("shell", SHELLS)
def test_prints_a_script_for_each_shell(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "completion", shell)
    assert (code, err) == (0, "")
    assert out.endswith("\n")
    assert not out.endswith("\n\n")
    # Generated from the parser: every wiki command and a flag of each is in it.
    for word in (
        "wiki",
        "find",
        "recall",
        "ingest",
        "lint",
        "guide",
        "completion",
        "--select",
        "--memory-dir",
        "--slug",
        "skill",  # fish spells a flag without a value "-l skill"
    ):
        assert word in out, word
    assert "_mnemosyne_vault_dirs" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "no shell given: pass bash, zsh or fish (see 'mnemosyne completion --help')"),
        (
            ["tcsh"],
            "argument SHELL: invalid choice: 'tcsh' (choose from 'bash', 'zsh', 'fish') "
            "(see 'mnemosyne completion --help')",
        ),
        (["bash", "zsh"], "unrecognized arguments: zsh (see 'mnemosyne completion --help')"),
    ],
)
def test_usage_errors_exit_64(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "completion", *argv) == (64, "", f"mnemosyne: error: {message}\n")


def test_help_ends_with_examples_and_exit_codes_and_hides_the_helper(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "completion", "--help")
    assert code == 0
    assert "\nexamples:\n  mnemosyne completion bash > " in out
    assert out.rstrip().endswith("74  stdout could not take the script (closed, disk full)")
    assert "--list-dirs" not in out
    assert "completion" in run(capsys, "--help")[1]


def test_docs_give_an_install_line_per_shell() -> None:
    text = COMMANDS_DOC.read_text(encoding="utf-8")
    section = text[text.index("## completion") :]
    for shell in SHELLS:
        assert f"mnemosyne completion {shell}" in section, shell
    assert "--list-dirs" in section


# --- --list-dirs: what --dir completes with ---------------------------------------------


def test_list_dirs_prints_the_vaults_dirs(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = (0, "".join(f"{name}\n" for name in VAULT_DIRS), "")
    assert run(capsys, "completion", "--list-dirs", "--vault", str(vault)) == expected
    monkeypatch.setenv("AION_VAULT", str(vault))
    assert run(capsys, "completion", "--list-dirs") == expected


def test_list_dirs_follows_a_symlinked_dir_and_skips_unprintable_names(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (vault / "linked").symlink_to(vault / "atlas")
    (vault / "bad\nname").mkdir()
    (vault / "tab\there").mkdir()
    code, out, err = run(capsys, "completion", "--list-dirs", "--vault", str(vault))
    assert (code, out.splitlines(), err) == (0, sorted([*VAULT_DIRS, "linked"]), "")


def test_list_dirs_lists_the_nested_dirs_of_a_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for rel_path in ("docs/en/guides/images.mdx", "docs/en/guides/deep/fonts.md", "node_modules/x/a.md", ".git/a.md"):
        (tmp_path / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel_path).write_text("x", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("node_modules/\n", encoding="utf-8")
    assert run(capsys, "completion", "--list-dirs", "--vault", str(tmp_path)) == (
        0,
        "docs\ndocs/en\ndocs/en/guides\ndocs/en/guides/deep\nnode_modules\n",
        "",
    )


@pytest.mark.parametrize("where", ["missing", "file", "unset"])
def test_list_dirs_is_silent_on_a_vault_error(where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    argv = [] if where == "unset" else ["--vault", str(tmp_path / where)]
    assert run(capsys, "completion", "--list-dirs", *argv) == (3, "", "")


def list_dirs_calls(vault: Path) -> list[list[str]]:
    return [
        ["completion", "--list-dirs"],
        ["completion", "--list-dirs", "--vault", str(vault)],
        ["completion", "--list-dirs", f"--vault={vault}"],
        ["completion", "--list-dirs", "--vault", str(vault / "missing")],
        ["completion", "--list-dirs", "--vault"],
        ["completion", "--list-dirs", "--vault", str(vault), "extra"],
        ["completion", "--vault", str(vault), "--list-dirs"],
        ["completion", "--list-dirs", "--vault", "-x"],
    ]


def test_list_dirs_without_argparse_answers_as_argparse(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console script's fast path for --list-dirs, against app.main, the reference."""
    monkeypatch.setenv("AION_VAULT", str(vault))
    for argv in list_dirs_calls(vault):
        assert run_console_script(capsys, argv) == run(capsys, *argv), argv
    assert run_console_script(capsys, list_dirs_calls(vault)[1])[1] == "".join(f"{name}\n" for name in VAULT_DIRS)


def run_console_script(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    from mnemosyne_cli import console_script

    code = console_script.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_dirs_fast_path_takes_every_well_formed_list_dirs_call(vault: Path) -> None:
    """The scripts' calls, and the same words in another order; not a --vault without its
    value, a word over, or a value that looks like a flag (argparse words those errors)."""
    from mnemosyne_cli.completion import list_dirs_call

    calls = list_dirs_calls(vault)
    taken = [argv for argv in calls if list_dirs_call(argv) is not None]
    assert taken == [*calls[:4], calls[6]]


def test_a_list_dirs_call_imports_no_argparse(vault: Path) -> None:
    probe = (
        "import sys\nfrom mnemosyne_cli.console_script import main\nmain(sys.argv[1:])\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe, "completion", "--list-dirs", "--vault", str(vault)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    modules = set(completed.stderr.split())
    assert completed.stdout.splitlines() == VAULT_DIRS
    assert sorted(modules & {"argparse", "shtab", "mnemosyne_cli.app"}) == []


# --- bash: drive the completion function as bash does ----------------------------------

BASH_DRIVER = r"""
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
COMPREPLY=()
_shtab_mnemosyne
printf '%s\n' "${COMPREPLY[@]}"
"""


def bash_complete(script: Path, vault: Path | None, *words: str) -> list[str]:
    completed = run_shell(
        [require("bash"), "--norc", "--noprofile", "-c", BASH_DRIVER, "bash", str(script), *words],
        shell_env(vault, script.parent),
    )
    assert (completed.returncode, completed.stderr) == (0, "")
    return [line for line in completed.stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["mnemosyne", ""], ["wiki", "completion"]),
        (["mnemosyne", "wiki", "f"], ["find"]),
        (["mnemosyne", "wiki", "g"], ["guide"]),
        (["mnemosyne", "wiki", "guide", "--s"], ["--skill"]),
        (["mnemosyne", "wiki", ""], [command_name(command) for command in WIKI_COMMANDS]),
        (["mnemosyne", "wiki", "lint", "--s"], ["--select"]),
        (["mnemosyne", "wiki", "ingest", "-", "--constellation", "he"], ["hermes", "hephaistos"]),
        (["mnemosyne", "wiki", "lint", "--ignore", "missing-"], ["missing-title", "missing-updated"]),
        (
            ["mnemosyne", "wiki", "lint", "--select", "un"],
            ["unclosed-frontmatter", "unknown-constellation", "unscanned-dir", "unsearched-suffix", "unreadable"],
        ),
        (["mnemosyne", "completion", ""], ["bash", "zsh", "fish"]),
        (["mnemosyne", "completion", "--"], ["--help"]),  # the --list-dirs helper stays hidden
        (["mnemosyne", "wiki", "find", "mastra", "--dir", ""], VAULT_DIRS),
        (["mnemosyne", "wiki", "find", "mastra", "--dir", "a"], ["analyses", "atlas"]),
        (["mnemosyne", "wiki", "lint", "--dir", "notes", "--dir", "h"], ["hermes"]),
        (["mnemosyne", "wiki", "recall", "x", "--dir", ""], VAULT_DIRS),
    ],
)
def test_bash_completes(scripts: dict[str, Path], vault: Path, words: list[str], expected: list[str]) -> None:
    assert bash_complete(scripts["bash"], vault, *words) == expected


@pytest.mark.parametrize(
    "vault_words",
    [["--vault", "VAULT"], ["--vault", "=", "VAULT"], ["--vault", "~/vault"]],
    ids=["flag", "flag=value", "tilde"],
)
def test_bash_dir_completion_uses_the_vault_on_the_line(
    scripts: dict[str, Path], vault: Path, vault_words: list[str]
) -> None:
    words = [word.replace("VAULT", str(vault)) for word in vault_words]
    other = vault.parent / "other"
    (other / "zeta").mkdir(parents=True)
    # AION_VAULT names another vault: the --vault on the line wins, as it does for find.
    env_vault = other
    line = ["mnemosyne", "wiki", "find", "x", *words, "--dir", ""]
    assert bash_complete(scripts["bash"], env_vault, *line) == VAULT_DIRS
    assert bash_complete(scripts["bash"], env_vault, "mnemosyne", "wiki", "find", "x", "--dir", "") == ["zeta"]


def test_bash_dir_completion_offers_nothing_without_a_vault(scripts: dict[str, Path]) -> None:
    assert bash_complete(scripts["bash"], None, "mnemosyne", "wiki", "find", "x", "--dir", "") == []


# --- zsh: the script loads both ways, and completes in a real interactive zsh -----------


def zsh(script: str, vault: Path | None, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = shell_env(vault, tmp_path)
    env["ZDOTDIR"] = str(tmp_path)  # no user startup files
    return run_shell([require("zsh"), "-f", "-c", script, "zsh", *args], env)


@pytest.mark.slow
def test_zsh_script_loads_with_eval(scripts: dict[str, Path], vault: Path, tmp_path: Path) -> None:
    completed = zsh(
        f'autoload -Uz compinit && compinit -u -D && eval "$(<{scripts["zsh"]})" && print -r -- $_comps[mnemosyne]',
        vault,
        tmp_path,
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "_shtab_mnemosyne\n", "")


def test_zsh_script_loads_from_fpath(scripts: dict[str, Path], vault: Path, tmp_path: Path) -> None:
    functions = tmp_path / "zfunc"
    functions.mkdir()
    shutil.copy(scripts["zsh"], functions / "_mnemosyne")
    completed = zsh(
        f"fpath=({functions} $fpath); autoload -Uz compinit && compinit -u -D && print -r -- $_comps[mnemosyne]",
        vault,
        tmp_path,
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "_mnemosyne\n", "")


#: Types LINE and a Tab into an interactive zsh on a pseudo-terminal (zpty), with compadd
#: wrapped to append every match it is given to OUT: zsh's own completion, end to end.
#: comppostfuncs runs once the completion is over; nothing more is typed before it, since
#: zsh drops a completion that typeahead interrupts.
ZSH_DRIVER = r"""
zmodload zsh/zpty zsh/zselect
script=$1 out=$2 line=$3
wait_for() { local i; for i in {1..1500}; do [[ -e $1 ]] && return 0; zselect -t 2; done; return 1 }
zpty z zsh -f -i
zpty -w z "PS1=''; autoload -Uz compinit && compinit -u -D; eval \"\$(<$script)\""
zpty -w z "compadd() { local -a m; builtin compadd -O m \"\$@\"; print -rl -- \$m >> $out; builtin compadd \"\$@\" }"
zpty -w z "_done() { print done > $out.done }; comppostfuncs=(_done); print ready > $out.ready"
wait_for $out.ready || exit 2
zpty -w -n z "$line"$'\t'
wait_for $out.done || exit 3
zpty -d z
"""


def zsh_complete(script: Path, vault: Path, tmp_path: Path, line: str) -> list[str]:
    out = tmp_path / "matches"
    completed = zsh(ZSH_DRIVER, vault, tmp_path, str(script), str(out), line)
    assert (completed.returncode, completed.stderr) == (0, "")
    matches = out.read_text(encoding="utf-8").splitlines() if out.exists() else []  # no compadd: none
    return sorted({match for match in matches if match})


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mnemosyne wiki f", ["find"]),
        ("mnemosyne wiki g", ["guide"]),
        ("mnemosyne wiki guide --sk", ["--skill"]),
        ("mnemosyne wiki lint --sel", ["--select"]),
        ("mnemosyne wiki ingest - --constellation he", ["hephaistos", "hermes"]),
        ("mnemosyne wiki find x --dir ", VAULT_DIRS),
        ("mnemosyne wiki find x --dir a", ["analyses", "atlas"]),
        ("mnemosyne wiki find x --vault ~/other --dir ", ["zeta"]),
        ("mnemosyne wiki find x --vault=~/other --dir ", ["zeta"]),
    ],
)
def test_zsh_completes(scripts: dict[str, Path], vault: Path, tmp_path: Path, line: str, expected: list[str]) -> None:
    (vault.parent / "other" / "zeta").mkdir(parents=True)
    assert zsh_complete(scripts["zsh"], vault, tmp_path, line) == expected


# --- fish: complete -C is fish's own completion of a command line -----------------------


def fish_complete(script: Path, vault: Path | None, line: str) -> list[str]:
    completed = run_shell(
        [require("fish"), "--no-config", "-c", f"source {script}; and complete -C {line!r}"],
        shell_env(vault, script.parent),
    )
    assert (completed.returncode, completed.stderr) == (0, "")
    return [entry.split("\t")[0] for entry in completed.stdout.splitlines()]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mnemosyne ", ["completion", "wiki"]),
        ("mnemosyne wiki f", ["find"]),
        ("mnemosyne wiki g", ["guide"]),
        ("mnemosyne wiki guide --sk", ["--skill"]),
        ("mnemosyne wiki lint --sel", ["--select"]),
        ("mnemosyne wiki ingest - --constellation he", ["hermes", "hephaistos"]),
        ("mnemosyne wiki lint --ignore missing-", ["missing-title", "missing-updated"]),
        ("mnemosyne wiki find x --dir ", VAULT_DIRS),
        ("mnemosyne wiki find x --dir a", ["analyses", "atlas"]),
        ("mnemosyne wiki find x --vault ~/vault --dir h", ["hermes"]),
        ("mnemosyne wiki find x --vault=~/vault --dir n", ["notes"]),
    ],
)
def test_fish_completes(scripts: dict[str, Path], vault: Path, line: str, expected: list[str]) -> None:
    assert fish_complete(scripts["fish"], vault, line) == expected
