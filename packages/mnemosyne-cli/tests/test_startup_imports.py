"""Start-up stays lean: what a find call imports, and the one-command parser.

No timing here (the benchmark measures speed); these tests hold the structure that keeps
start-up fast: heavy modules stay unimported, and building one command's parser parses a
call exactly as the whole tree does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from index_harness import build_index
from server_harness import start_subprocess_server

from mnemosyne_cli import app, arguments, client
from mnemosyne_cli.commands import WIKI_COMMANDS
from mnemosyne_cli.environment import Environment

FIXTURE_VAULT = Path(__file__).resolve().parents[3] / "fixtures" / "vaults" / "aion"
#: What the one frontmatter parser brings: PyYAML, and the modules it imports itself (re
#: for its resolvers, datetime for its timestamps). A scan parses every frontmatter it meets
#: with it (docs/spec.md, rule 4): no subset of YAML is read by hand any more, so a scan over
#: pages with frontmatter imports these, and only these of the heavy modules. A scan over
#: pages without frontmatter, and a call the index answers (it parsed each page's frontmatter
#: when the page changed), import none of them.
YAML_MODULES = ("yaml", "re", "enum", "datetime")
#: Each costs milliseconds to import and a find call needs none beyond YAML_MODULES.
HEAVY_MODULES = (
    "typing",
    *YAML_MODULES,  # enum too: re's, and the contract's ExitCode (the command returns exit_status's ints)
    # Only a walk that meets an ignore file (or an exclude) whose decisions the index does
    # not keep needs it, and only a config the index does not keep needs tomllib.
    "pathspec",
    "json",
    "datetime",
    "tomllib",
    "importlib.resources",
    "multiprocessing",
    "difflib",  # only a mistyped flag needs its guess
    # argparse (with gettext and locale) and the other commands' modules: the console
    # script parses a plain find call itself.
    "argparse",
    "gettext",
    "locale",
    "mnemosyne_cli.app",
    "mnemosyne_cli.commands.lint",
    "mnemosyne_cli.commands.recall",
    "mnemosyne_cli.commands.ingest",
    "mnemosyne_cli.color",  # only a terminal (or --color always) needs the palette
    "mnemosyne_cli.commands.info",
    "importlib.metadata",  # only --version and wiki info read the installed versions
    "shtab",  # only `mnemosyne completion SHELL` needs it
    "mnemosyne_cli.completion",  # nor does a find call register the completion command
    # Only a call that starts a server ([serve] auto) takes the spawn lock, and only one that
    # finds no whole index looks at its builder's lock.
    "fcntl",
    "subprocess",
)

#: What the mnemosyne command runs (packages/mnemosyne-cli/scripts/mnemosyne).
PROBE = """
import os, sys
if "PROBE_RACY_NS" in os.environ:  # a page written by the test a moment ago taken as old
    import mnemosyne_core.page
    mnemosyne_core.page.RACY_NS = int(os.environ["PROBE_RACY_NS"])
from mnemosyne_cli.console_script import main
code = main(sys.argv[1:])
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def run_probe(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``mnemosyne *argv`` through the console script's main, the names of the modules it
    imported on stderr's last line (bytecode not written: each call is a user's first)."""
    return subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env},
    )


FIND_CALLS = pytest.mark.parametrize(
    ("words", "vault_flag"),
    [
        (["mastra"], True),
        (["zyzzyva-absent"], True),
        (["mastra"], False),
        (["mastra", "--limit", "3"], True),
        (["kestrel", "--cat"], True),
        (["mastra", "slack"], True),
    ],
)


@FIND_CALLS
def test_a_scan_imports_no_heavy_module_but_yaml(words: list[str], vault_flag: bool) -> None:
    """With --vault or AION_VAULT, find reads no user config, so it needs no tomllib. The
    fixture's pages have frontmatter, which the scan parses with PyYAML (YAML_MODULES)."""
    flag = ["--vault", str(FIXTURE_VAULT)] if vault_flag else []
    env = {"AION_VAULT": "" if vault_flag else str(FIXTURE_VAULT)}
    completed = run_probe("wiki", "find", *words, *flag, "--no-cache", **env)
    modules = set(completed.stderr.splitlines()[-1].split())
    assert "mnemosyne_core.find" in modules  # the probe really searched
    assert "yaml" in modules  # the probe really parsed frontmatter
    assert sorted(modules & set(HEAVY_MODULES).difference(YAML_MODULES)) == []


@FIND_CALLS
def test_a_find_through_the_index_imports_no_heavy_module(
    words: list[str], vault_flag: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the vault's index a find parses no frontmatter: no yaml, no datetime, no re."""
    monkeypatch.setattr("mnemosyne_core.page.RACY_NS", 0)  # a fresh checkout's pages are minutes old
    build_index(FIXTURE_VAULT)
    flag = ["--vault", str(FIXTURE_VAULT)] if vault_flag else []
    env = {"AION_VAULT": "" if vault_flag else str(FIXTURE_VAULT), "PROBE_RACY_NS": "0"}
    completed = run_probe("wiki", "find", *words, *flag, **env)
    modules = set(completed.stderr.splitlines()[-1].split())
    assert "mnemosyne_core.index" in modules  # the probe really read the index
    assert sorted(modules & set(HEAVY_MODULES)) == []
    # Nor the scan or the builder: a call the index answers builds its rows from results.
    assert sorted(modules & {"mnemosyne_core.find", "mnemosyne_core.pagefields", "mnemosyne_core.build"}) == []


def test_the_installed_command_is_our_script_and_a_warm_find_through_it_imports_no_re(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ``mnemosyne`` beside this interpreter is scripts/mnemosyne as written (but for
    the interpreter its first line names), not an entry point's wrapper, which imports re;
    a warm find through it imports none of the heavy modules and answers as main() does."""
    script = Path(sys.executable).parent / "mnemosyne"
    source = Path(__file__).resolve().parents[1] / "scripts" / "mnemosyne"
    installed, written = script.read_text(encoding="utf-8"), source.read_text(encoding="utf-8")
    assert installed.partition("\n")[2] == written.partition("\n")[2]
    assert installed.startswith("#!")
    assert os.access(script, os.X_OK)
    monkeypatch.setattr("mnemosyne_core.page.RACY_NS", 0)  # a fresh checkout's pages are minutes old
    build_index(FIXTURE_VAULT)
    argv = ["wiki", "find", "mastra", "--vault", str(FIXTURE_VAULT), "--no-server"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    timed = subprocess.run(
        [sys.executable, "-X", "importtime", str(script), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=env,
    )
    probed = run_probe(*argv)
    assert (timed.returncode, timed.stdout) == (probed.returncode, probed.stdout)
    imported = {
        line.rpartition("|")[2].strip() for line in timed.stderr.splitlines() if line.startswith("import time:")
    }
    assert "mnemosyne_core.index" in imported  # the call really read the index
    assert sorted(imported & set(HEAVY_MODULES)) == []


@pytest.mark.parametrize("words", [["mastra"], ["mastra", "slack", "--max-bytes", "300"], ["zyzzyva-absent"]])
def test_a_recall_through_the_index_is_parsed_without_argparse(
    words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain recall is parsed by the console script, as a plain find is, and answers as
    app.main's argparse path does; through the index it imports no argparse, yaml, re or
    enum (the fixture's dirs are named as no release or language). It needs datetime: its
    entries are ordered by their dates."""
    monkeypatch.setattr("mnemosyne_core.page.RACY_NS", 0)  # a fresh checkout's pages are minutes old
    build_index(FIXTURE_VAULT)
    argv = ["wiki", "recall", *words, "--vault", str(FIXTURE_VAULT), "--no-server"]
    warm = run_probe(*argv, MNEMOSYNE_MEMORY_DIR="", PROBE_RACY_NS="0")
    reference = subprocess.run(
        [sys.executable, "-c", PROBE.replace("console_script import main", "app import main"), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "MNEMOSYNE_MEMORY_DIR": "", "PROBE_RACY_NS": "0"},
    )
    assert (warm.returncode, warm.stdout) == (reference.returncode, reference.stdout)
    assert warm.stderr.splitlines()[:-1] == reference.stderr.splitlines()[:-1]
    assert warm.stdout  # the probe really recalled
    modules = set(warm.stderr.splitlines()[-1].split())
    assert "mnemosyne_core.index" in modules  # the probe really read the index
    assert "argparse" in reference.stderr.splitlines()[-1].split()
    assert sorted(modules & (set(HEAVY_MODULES) - {"datetime", "mnemosyne_cli.commands.recall"})) == []


def test_a_page_with_aliases_and_dates_is_shown_through_the_index_without_yaml_or_datetime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Obsidian's other names, several words each, are read from the index, which parsed
    them when the page changed: no PyYAML, and no dates built (datetime)."""
    (tmp_path / "atlas").mkdir()
    (tmp_path / "atlas" / "kestrel.md").write_text(
        "---\ntitle: Kestrel notes\naliases: [Falcon field guide, Old name]\ncreated: 2026-03-05\n---\nbody\n",
        encoding="ascii",
    )
    monkeypatch.setattr("mnemosyne_core.page.RACY_NS", 0)  # built as if long after the write
    build_index(tmp_path)
    completed = run_probe("wiki", "find", "falcon", "--vault", str(tmp_path), PROBE_RACY_NS="0")
    assert (completed.returncode, completed.stdout) == (0, "atlas/kestrel.md \u2014 Kestrel notes\n")
    modules = set(completed.stderr.splitlines()[-1].split())
    assert sorted(modules & {"yaml", "datetime"}) == []


def test_a_miss_on_pages_without_frontmatter_imports_no_yaml(tmp_path: Path) -> None:
    """PyYAML (and re, datetime) is imported only when a page has a frontmatter block to
    parse: plain markdown pages are searched without it."""
    for dir_name, text in (("atlas", "plain ascii text\n"), ("hermes", "# Relay\n\nrelay \u00e9t\u00e9\n")):
        (tmp_path / dir_name).mkdir()
        (tmp_path / dir_name / "page.md").write_text(text, encoding="utf-8")
    completed = run_probe("wiki", "find", "zyzzyva", "--vault", str(tmp_path), "--no-cache")
    assert completed.stderr.splitlines()[0] == "no wiki page matches 'zyzzyva'"
    modules = set(completed.stderr.splitlines()[-1].split())
    assert "mnemosyne_core.find" in modules
    assert sorted(modules & set(HEAVY_MODULES)) == []


#: An Obsidian vault's .gitignore: every rule names a hidden path, which the walk skips.
OBSIDIAN_GITIGNORE = "# obsidian\n.obsidian/workspace.json\n.obsidian/plugins\n\n.DS_Store\n**/.trash/\n"


@pytest.mark.parametrize(
    ("gitignore", "imports_pathspec"),
    [(OBSIDIAN_GITIGNORE, False), (OBSIDIAN_GITIGNORE + "drafts/\n", True), ("!.keep\n", False)],
)
def test_a_tree_imports_pathspec_only_for_a_rule_that_can_match_what_it_walks(
    tmp_path: Path, gitignore: str, imports_pathspec: bool
) -> None:
    (tmp_path / "Notes" / "drafts").mkdir(parents=True)
    (tmp_path / "Notes" / "Kestrel.md").write_text("kestrel\n", encoding="ascii")
    (tmp_path / "Notes" / "drafts" / "Kestrel draft.md").write_text("kestrel\n", encoding="ascii")
    (tmp_path / ".gitignore").write_text(gitignore, encoding="ascii")
    completed = run_probe("wiki", "find", "kestrel", "--paths", "--vault", str(tmp_path))
    pages = ["Notes/Kestrel.md"] if imports_pathspec else ["Notes/Kestrel.md", "Notes/drafts/Kestrel draft.md"]
    assert (completed.returncode, completed.stdout.splitlines()) == (0, pages)
    assert ("pathspec" in completed.stderr.splitlines()[-1].split()) is imports_pathspec


def rules_vault(vault: Path) -> Path:
    """A tree with a config (an exclude, a preferred dir) and ignore files at two depths,
    each with rules that leave pages out: every call parses them, but for what the index
    keeps of them. Pages without frontmatter: nothing for PyYAML (and its re) to parse."""
    for dir_name in ("Notes/drafts", "Notes/private", "Archive"):
        (vault / dir_name).mkdir(parents=True)
    (vault / ".mnemosyne.toml").write_text(
        'depth = "tree"\nexclude = ["*.draft.md"]\n\n[order]\nprefer = ["Notes/"]\n', encoding="ascii"
    )
    (vault / ".gitignore").write_text("drafts/\n*.tmp.md\n", encoding="ascii")
    (vault / "Notes" / ".ignore").write_text("private/\n!keep.tmp.md\n", encoding="ascii")
    for rel_path in (
        "Notes/Kestrel.md",
        "Notes/keep.tmp.md",
        "Notes/Kestrel.draft.md",
        "Notes/drafts/Kestrel draft.md",
        "Notes/private/Kestrel diary.md",
        "Archive/Kestrel.md",
        "Archive/old.tmp.md",
    ):
        (vault / rel_path).write_text("kestrel notes\n", encoding="ascii")
    return vault


@pytest.mark.parametrize("words", [["kestrel"], ["zyzzyva"], ["kestrel", "--limit", "1"]])
def test_a_warm_find_on_a_vault_with_a_config_and_ignore_files_parses_neither(
    words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the config and the ignore files decide is kept in the index by their files'
    stat: a warm call, a hit or a miss with its note on the files they leave out, imports
    neither tomllib nor pathspec, compiles no regex (no re), and answers as the scan."""
    vault = rules_vault(tmp_path)
    monkeypatch.setattr("mnemosyne_core.page.RACY_NS", 0)  # built as if long after the writes
    build_index(vault)
    argv = ["wiki", "find", *words, "--vault", str(vault)]
    warm = run_probe(*argv, PROBE_RACY_NS="0")
    scanned = run_probe(*argv, "--no-cache")
    assert (warm.returncode, warm.stdout) == (scanned.returncode, scanned.stdout)
    assert warm.stderr.splitlines()[:-1] == scanned.stderr.splitlines()[:-1]
    modules = set(warm.stderr.splitlines()[-1].split())
    assert "mnemosyne_core.index" in modules  # the probe really read the index
    assert sorted(modules & {"tomllib", "pathspec", "re"}) == []
    assert "pathspec" in scanned.stderr.splitlines()[-1].split()  # the rules were there to parse


def test_a_find_a_server_answers_lists_nothing_and_imports_nothing_heavy(runtime_dir: Path) -> None:
    """A call that ``wiki serve`` tells what changed takes its pages from the page cache: it
    prints the plain scan's answer, lists no dir of the vault (os.scandir is never called)
    and imports no heavy module."""
    argv = ["wiki", "find", "mastra", "--vault", str(FIXTURE_VAULT)]
    scanned = subprocess.run(
        [sys.executable, "-c", PROBE, *argv, "--no-cache"], capture_output=True, text=True, check=False, timeout=60
    )
    listing_probe = "import os, sys\n_scandir = os.scandir\n" + (
        "def scandir(path='.'):\n    sys.stderr.write('LISTED\\n')\n    return _scandir(path)\nos.scandir = scandir\n"
    )
    build_index(FIXTURE_VAULT)
    process = start_subprocess_server(FIXTURE_VAULT)
    try:
        primed = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60)
        before = client.status(str(FIXTURE_VAULT), Environment())
        served = subprocess.run(
            [sys.executable, "-c", listing_probe + PROBE, *argv],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        after = client.status(str(FIXTURE_VAULT), Environment())
    finally:
        process.terminate()
        assert process.wait(10) == 0
    assert before is not None
    assert after is not None
    assert after.requests - before.requests == 2  # the find's question, then this status request
    assert (primed.returncode, primed.stdout) == (scanned.returncode, scanned.stdout)
    assert (served.returncode, served.stdout) == (scanned.returncode, scanned.stdout)
    assert "LISTED" not in served.stderr
    modules = set(served.stderr.splitlines()[-1].split())
    assert sorted(modules & set(HEAVY_MODULES)) == []


def test_every_command_module_is_named_after_its_command(capsys: pytest.CaptureFixture[str]) -> None:
    """build_parser(only=...) finds a command by its module name."""
    for command in WIKI_COMMANDS:
        name = arguments.command_name(command)
        with pytest.raises(arguments.ParserExit):
            app.build_parser(Environment(), only=name).parse_args(["wiki", name, "--help"])
        assert capsys.readouterr().out.startswith(f"usage: mnemosyne wiki {name} ")


@pytest.mark.parametrize(
    "argv",
    [
        ["wiki", "find", "mastra", "slack", "--limit", "3", "--json", "--vault", "/v", "--dir", "atlas"],
        ["wiki", "find", "--cat", "kestrel"],
    ],
)
def test_one_command_parser_parses_as_the_whole_tree(argv: list[str]) -> None:
    whole = vars(app.build_parser(Environment()).parse_args(argv))
    alone = vars(app.build_parser(Environment(), only=argv[1]).parse_args(argv))
    assert alone == whole
