"""The benchmark behind ``nox -s bench``: ``mnemosyne wiki find`` against ripgrep, grep and
the naive baseline, with ``wiki lint`` and ``wiki recall`` beside it, on the fixture vault
and generated vaults of several shapes (fixtures/generate_vault.py profiles).

What is timed is a table (``PROFILES``: vaults and their queries; ``TOOLS``: how each tool
is called). hyperfine times every tool of a (vault, query) pair in one invocation, so their
ratios come from the same run; lint and recall are timed in the invocation of each vault's
first query. The fixture's invocations also time start-up: a bare ``python -c pass`` of
each install's interpreter, and find under pip's console-script wrapper and uv's. Peak RSS
comes from one run per query on each vault of 100,000 pages. find is timed with a warm page
cache (as a user types it), without it (``--no-cache``: the scan) and, with each vault's
first query, on a vault with no cache file yet; the cache file's size is weighed against
the pages'. Before timing, find's stdout is checked against the naive baseline's, and its
answer through a cold and a warm cache against the scan's: a fast wrong answer does not
count.

Writes docs/performance.md and docs/performance.svg. Options (``nox -s bench -- --help``)
pick profiles and run counts.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))

import generate_vault  # noqa: E402 - fixtures/ is not a package; its path is set just above
import serve_bench  # noqa: E402 - beside this script (bench/ is not a package either)

FIXTURE_VAULT = ROOT / "fixtures" / "vaults" / "aion"
BUILD_DIR = ROOT / "build" / "bench"
#: The page cache of every timed call (XDG_CACHE_HOME): the bench's own, never the user's.
CACHE_HOME = BUILD_DIR / "cache"
NAIVE = ROOT / "bench" / "naive_find.py"

#: The queries of the first benchmark, kept so results compare over time.
CLASSIC_QUERIES: dict[str, list[str]] = {
    "rare": [generate_vault.RARE_WORD],
    "common": ["agent"],
    "AND of 3": list(generate_vault.AND_WORDS),
    "no match": ["zyzzyva"],
}
MULTILANG_QUERIES: dict[str, list[str]] = {
    "rare": [generate_vault.RARE_WORD],
    "common": ["agent"],
    "CJK": ["設定"],
    "Cyrillic, capitalised": ["СЕРВЕР"],
    "AND of 3, CJK and ASCII": ["設定", "データベース", "deploy"],
    "no match": ["zyzzyva"],
}


class Profile:
    """One vault of the benchmark and what is timed on it."""

    def __init__(
        self,
        label: str,
        shape: str,
        pages: int,
        queries: dict[str, list[str]],
        runs: tuple[int, int],
        tools: tuple[str, ...],
    ):
        self.label = label
        #: A generate_vault profile, or "fixture" for fixtures/vaults/aion.
        self.shape = shape
        #: Pages as generated (the fixture's are counted when it is prepared).
        self.pages = pages
        self.queries = queries
        #: (warmup, runs) of each hyperfine invocation on this vault.
        self.runs = runs
        #: The tools timed per query (names in TOOLS), in column order; the first is find.
        self.tools = tools
        self.path = FIXTURE_VAULT if shape == "fixture" else BUILD_DIR / f"{shape}-{pages}"
        #: How find's answers are checked before timing: against the naive baseline, which
        #: knows only the default dirs, or (a nested vault) against rg's files (``rg_check``).
        self.check = "rg" if shape == "nested" else "naive"


#: Tools timed per query on every vault; FIRST_QUERY_TOOLS only with a vault's first query.
#: "mnemosyne" is find as a user types it, with no server running for the vault (then it
#: scans, as ``--no-cache`` does). CACHED is find through the page cache without a server
#: (``--no-server``), warm from hyperfine's warm-up runs. NO_CACHE is the plain scan.
CACHED = "mnemosyne (page cache, no server)"
NO_CACHE = "mnemosyne (no cache)"
QUERY_TOOLS = ("mnemosyne", CACHED, NO_CACHE, "rg", "grep")
#: find on a vault with no cache file yet: hyperfine's --prepare removes it before each run.
COLD = "mnemosyne (no cache yet)"
#: find answered by a `wiki serve` running for the vault while its profile is timed.
SERVED = "mnemosyne (served)"
FIRST_QUERY_TOOLS = ("lint", "recall", COLD)
#: The first query's tools that are whole commands of their own, held to find's time.
COMMANDS = ("lint", "recall")
BARE = "python -c pass"
BARE_UV = "python -c pass (uv venv)"
FIND_UV = "mnemosyne (uv)"
#: Start-up references, timed with the fixture vault: what any argparse console script
#: pays before its first line of code, and find's start-up without a search.
FLOOR = "python -c 'import re, argparse'"
VERSION = "mnemosyne --version"
#: The same find with its keywords after `--`, which the console script's own parser leaves
#: to argparse: what that parser saves (PARSER_TEXT).
FIND_ARGPARSE = "mnemosyne (argparse)"
FIND_UV_ARGPARSE = "mnemosyne (uv, argparse)"
STARTUP_TOOLS = (FIND_UV, BARE, BARE_UV, FLOOR, VERSION, FIND_ARGPARSE, FIND_UV_ARGPARSE)

#: Every vault of the benchmark, in the order they are timed. The classic ones (fixture,
#: 1k, 10k, 100k) are those of the first benchmark, with the same seed and queries.
PROFILES: tuple[Profile, ...] = (
    Profile("fixture", "fixture", 0, CLASSIC_QUERIES, (3, 20), QUERY_TOOLS + STARTUP_TOOLS),
    Profile("1k", "classic", 1000, CLASSIC_QUERIES, (3, 15), QUERY_TOOLS),
    Profile("10k", "classic", 10000, CLASSIC_QUERIES, (2, 10), QUERY_TOOLS),
    Profile("100k", "classic", 100000, CLASSIC_QUERIES, (1, 3), QUERY_TOOLS),
    Profile("rich-yaml 1k", "rich-yaml", 1000, CLASSIC_QUERIES, (3, 15), QUERY_TOOLS),
    Profile("multilang 6k", "multilang", 6000, MULTILANG_QUERIES, (2, 10), QUERY_TOOLS),
    Profile("plain 40k", "plain", 40000, CLASSIC_QUERIES, (1, 5), QUERY_TOOLS),
    Profile("plain 100k", "plain", 100000, CLASSIC_QUERIES, (1, 3), QUERY_TOOLS),
    Profile("nested 10k", "nested", 10000, CLASSIC_QUERIES, (2, 10), (*QUERY_TOOLS, SERVED)),
)
PROFILE_LABELS = [profile.label for profile in PROFILES]


class Context:
    """The programs under test: the console scripts of each install and the interpreters."""

    def __init__(self, mnemosyne: str, mnemosyne_uv: str | None):
        self.mnemosyne = mnemosyne
        self.mnemosyne_uv = mnemosyne_uv
        self.python = sys.executable
        self.python_uv = str(Path(mnemosyne_uv).parent / "python") if mnemosyne_uv else None
        #: The runtime dir of the server running for the vault being timed, else None.
        self.served_runtime: str | None = None


def and_pipeline(lister: list[str], null_flag: str, keywords: list[str], vault: Path) -> list[str]:
    """How a shell user ANDs keywords with a file lister: each stage keeps the files of the
    stage before that hold its keyword (``xargs -r``: no files, no run)."""
    stages = [shlex.join([*lister, null_flag, keywords[0], str(vault)])]
    for position, keyword in enumerate(keywords[1:], start=2):
        flags = [null_flag] if position < len(keywords) else []
        stages.append(shlex.join(["xargs", "-0", "-r", *lister, *flags, keyword]))
    return ["sh", "-c", " | ".join(stages)]


def _lister(lister: list[str], null_flag: str) -> Callable[[Context, Path, list[str]], list[str]]:
    def argv(context: Context, vault: Path, keywords: list[str]) -> list[str]:
        if len(keywords) == 1:
            return [*lister, keywords[0], str(vault)]
        return and_pipeline(lister, null_flag, keywords, vault)

    return argv


def _uv_only(argv: Callable[[Context], list[str] | None]) -> Callable[[Context, Path, list[str]], list[str] | None]:
    return lambda context, vault, keywords: argv(context) if context.mnemosyne_uv else None


#: How each tool is called: (context, vault, keywords) -> argv, or None when the tool is
#: not available in this run. A new row is a name here and in a profile's tools.
TOOLS: dict[str, Callable[[Context, Path, list[str]], list[str] | None]] = {
    "mnemosyne": lambda context, vault, keywords: [context.mnemosyne, "wiki", "find", "--vault", str(vault), *keywords],
    CACHED: lambda context, vault, keywords: [
        context.mnemosyne,
        "wiki",
        "find",
        "--no-server",
        "--vault",
        str(vault),
        *keywords,
    ],
    NO_CACHE: lambda context, vault, keywords: [
        context.mnemosyne,
        "wiki",
        "find",
        "--no-cache",
        "--vault",
        str(vault),
        *keywords,
    ],
    COLD: lambda context, vault, keywords: [
        context.mnemosyne,
        "wiki",
        "find",
        "--no-server",
        "--vault",
        str(vault),
        *keywords,
    ],
    "rg": _lister(["rg", "-l", "-i", "-F"], "-0"),
    "grep": _lister(["grep", "-rli"], "-Z"),
    # Only the served row sees the server's runtime dir (through env, a few hundred µs of
    # its own): the plain row stays the scan.
    SERVED: lambda context, vault, keywords: (
        [
            "env",
            f"XDG_RUNTIME_DIR={context.served_runtime}",
            context.mnemosyne,
            "wiki",
            "find",
            "--vault",
            str(vault),
            *keywords,
        ]
        if context.served_runtime
        else None
    ),
    "naive": lambda context, vault, keywords: [context.python, str(NAIVE), "--vault", str(vault), *keywords],
    "lint": lambda context, vault, keywords: [context.mnemosyne, "wiki", "lint", "--vault", str(vault)],
    "recall": lambda context, vault, keywords: [context.mnemosyne, "wiki", "recall", "--vault", str(vault), *keywords],
    FIND_UV: lambda context, vault, keywords: (
        [context.mnemosyne_uv, "wiki", "find", "--vault", str(vault), *keywords] if context.mnemosyne_uv else None
    ),
    BARE: lambda context, vault, keywords: [context.python, "-c", "pass"],
    BARE_UV: _uv_only(lambda context: [str(context.python_uv), "-c", "pass"]),
    FLOOR: lambda context, vault, keywords: [context.python, "-c", "import re, argparse"],
    VERSION: lambda context, vault, keywords: [context.mnemosyne, "--version"],
    FIND_ARGPARSE: lambda context, vault, keywords: [
        context.mnemosyne,
        "wiki",
        "find",
        "--vault",
        str(vault),
        "--",
        *keywords,
    ],
    FIND_UV_ARGPARSE: lambda context, vault, keywords: (
        [context.mnemosyne_uv, "wiki", "find", "--vault", str(vault), "--", *keywords] if context.mnemosyne_uv else None
    ),
}

# The targets (ratios in the same hyperfine run).
STARTUP_RATIO_TARGET = 2.2
#: The fixture with a warm page cache against a bare interpreter.
WARM_STARTUP_RATIO_TARGET = 2.0
#: find with a warm page cache and no server against rg on the same vault.
WARM_RG_RATIO_TARGETS = {"nested 10k": 1.5, "multilang 6k": 1.5, "rich-yaml 1k": 3.0, "plain 100k": 1.0}
#: The first call on a vault with no cache file against today's scan (``--no-cache``).
COLD_RATIO_TARGET = 1.5
#: The cache file against the markdown bytes of the pages it holds.
CACHE_SIZE_RATIO_TARGET = 1.5
#: The scan (``--no-cache``) against rg: the targets set before the page cache existed.
RG_RATIO_TARGETS = {
    "rich-yaml 1k": 3.0,
    "multilang 6k": 3.0,
    "nested 10k": 3.0,
    "plain 40k": 2.0,
    "plain 100k": 2.0,
}
#: find answered by the server against rg on the same vault (SERVED's profiles).
SERVED_RG_RATIO_TARGETS = {"nested 10k": 0.5}
#: Which part of LIMITS says what limits each vault's target against rg.
RG_LIMIT_KEYS = {"rich-yaml 1k": "rg-rich-yaml", "multilang 6k": "rg-multilang", "nested 10k": "rg-nested"}
COMMAND_RATIO_TARGET = 1.5  # lint and recall against find on the same vault
RSS_TARGET_MB = 50.0  # the scan's (--no-cache)
CACHE_RSS_TARGET_MB = 100.0  # with the page cache, which reads its whole file
RSS_PAGES = 100000
# The first benchmark's targets, still shown so results compare over time.
FIRST_BENCH_STARTUP_RATIO = 2.5
FIRST_BENCH_RG_RATIO_10K = 2.0
FIRST_BENCH_MEDIAN_100K = 0.5

#: Why a target is missed, by target key; shown under the targets table for each one missed.
LIMITS: dict[str, list[str]] = {
    "startup": [
        "- **Start-up (fixture vault).** A find call is a whole Python process; searching the",
        "  fixture's 94 pages takes a few milliseconds of it. Over a bare interpreter, find imports",
        "  its own modules and enum (with functools and collections: the contract's exit codes are",
        "  an IntEnum), and reads the frontmatter of the pages it shows. `re` and its compiler stay",
        "  off the fixture's path: the frontmatter reader and the search for characters that fold",
        "  into ASCII (ſ, K) make their first 128 checks without a regex, and take one only when",
        "  more pages make it pay. argparse is off the path: the console script parses a plain",
        "  find call itself (packages/mnemosyne-cli/tests/test_startup_imports.py holds what a call",
        "  imports).",
        "  pip's console script imports `re` before our code and a pip venv loads setuptools'",
        "  `distutils-precedence.pth`: the uv install is the faster one (see below).",
    ],
    "rg": [
        "- **Against ripgrep.** rg is compiled and multi-threaded; its time is mostly the",
        "  kernel's (open, read, close per file). find makes the same three system calls per",
        "  page, then pays the interpreter for each: a Python call per page around the bytes",
        "  search, and the frontmatter of the pages it shows. Two processes share the pages",
        "  from `PARALLEL_MIN_PAGES` (500) on. At 1,000 pages the interpreter's start-up alone",
        "  (fixture table) is about twice rg's whole run.",
        "  A miss costs about what it did before its note existed, within noise: the note that",
        "  names markdown files the layout leaves out takes them from what the search's own",
        "  listing passed over, so no searched dir is listed twice; only a flat layout's",
        "  sub-dirs, which a search never enters, are listed for it. On plain 40k, `zyzzyva`",
        "  took 499 ms before that note existed, 610 ms while it listed every searched dir",
        "  again, and 530 ms now (hyperfine means with σ 30-50 ms, the three installs timed in",
        "  one hyperfine run).",
    ],
    "rg-rich-yaml": [
        "- **Rich YAML against ripgrep.** Whether a page matches is decided without YAML, even",
        "  where its frontmatter has escapes (the block is also read with them decoded). But",
        "  the pages find shows need their title, constellation and type, and so does every",
        "  matching page whose frontmatter holds a keyword the title may hold: a rich-YAML block",
        "  (nested maps, anchors, block scalars) is outside the YAML-free subset, so those pages",
        "  need PyYAML, whose import alone (about 25 ms of CPU here) is two or three times rg's",
        "  whole run at 1,000 pages. Queries that match no page, or few, stay closest to rg.",
    ],
    "rg-multilang": [
        "- **Many languages against ripgrep.** On a page outside ASCII, an ASCII keyword costs",
        "  one `bytes.translate` that lowers the bytes and marks the first byte of every",
        "  character folding into ASCII (ſ, K, ß, ligatures), then a memchr for the mark and a",
        "  search for the characters whose fold can make part of the keyword (ß for `mass`,",
        "  never for `kestrel`: German and Turkish pages were folded whole for any s); a",
        "  keyword outside ASCII first looks for the bytes of the characters whose fold can",
        "  hold its own (`fold_sources.py`), and only the pages holding them are decoded and",
        "  folded in full. For a Cyrillic keyword that is every Russian and Ukrainian page,",
        "  whose text holds its letters: casefolding has no bytes shortcut there.",
    ],
    "rg-nested": [
        "- **A nested vault against ripgrep.** Before any page is read, the walk lists every",
        "  folder of the tree and checks each name against the `.gitignore` rules (pathspec,",
        "  imported when a rule can match a name that is not hidden), in one process; rg walks",
        "  the tree with several threads in compiled code. pathspec's import (pathlib,",
        "  dataclasses, typing) costs tens of milliseconds of each call on the nested vault;",
        "  the rules stay with that well-kept library rather than with globbing of our own.",
        "  Pages are then searched as in a flat vault; their `aliases: [Other name, Old name]`",
        "  lists are read without PyYAML.",
    ],
    "rg-served": [
        "- **The served nested vault against ripgrep.** A served call lists nothing and stats",
        "  only the pages the server names, but still starts the interpreter, reads and",
        "  unmarshals its whole cache file (its CRC checked), asks the server over its socket,",
        "  and judges every page holding all the keywords in Python (thousands for a common",
        "  word). A miss lists the vault as a call without a server does: its note counts files",
        "  in dirs no watch sees.",
    ],
    "commands": [
        "- **lint and recall against find.** lint validates and recall ranks every page's",
        "  frontmatter; find reads a frontmatter only for pages it shows and pages whose title",
        "  may hold a keyword. Blocks of simple `key: value` lines, dates and lists are read",
        "  without YAML, but the rich-YAML vault's (nested maps, anchors, block scalars) each need",
        "  a YAML parse, a few hundred microseconds per page where find's whole page costs tens",
        "  (PyYAML's C parser takes about 0.1 ms to compose a block's nodes, its Python",
        "  constructors as much again): on that vault lint and recall stay several times find.",
        "  Both build only the entries of the keys they read, but run in one process where find",
        "  shares a vault of `PARALLEL_MIN_PAGES` or more between two. lint also reads every page",
        "  whole to check its UTF-8 and walks the vault for markdown files find never searches.",
    ],
    "rss": [
        "- **Peak RSS.** The scan keeps one name list per dir and find keeps only the best",
        "  `--limit` matches; what remains is the interpreter and the listing.",
    ],
    "rss-cache": [
        "- **Peak RSS with the page cache.** A call reads the whole cache file and unmarshals it:",
        "  every page's record (folded title, path, aliases and text) in one buffer, with its stat",
        "  key, its offsets and the fields find prints, as Python objects per page. The buffer alone",
        "  is about the folded text of the vault; the per-page tuples and strings come on top.",
    ],
    "startup-cache": [
        "- **Start-up with the page cache (fixture vault).** On a vault this small the cache saves",
        "  little reading and adds its own start-up: the cache module itself, reading",
        "  /proc/self/status for the caller's rights (part of the cache file's name), stat-ing the",
        "  modules that read pages for its code key, reading and unmarshalling the whole file, and",
        "  still one `lstat` per page. What is left of the interpreter's own start-up (`site`, the",
        "  console script's wrapper) is most of the ratio.",
    ],
    "warm": [
        "- **A warm page cache against ripgrep.** With no server the call still lists the vault",
        "  (`vault.scan`) and stats every listed page in Python (half of them in a second process",
        "  from 4,000 pages), before the keyword loop over the cache's one buffer (a `bytes.find`",
        "  per page that holds the keyword, none for the others). rg lists and reads with several",
        "  threads in compiled code. Reading, CRC-checking and unmarshalling the whole cache file",
        "  (all of the vault's folded text: 320 MB on the classic 100k vault) and the",
        "  interpreter's start-up come on top, and the matching pages are judged in Python. That",
        "  is about what the scan's own reads of each page's head cost, or more: so a call with",
        "  no server scans, and the cache is read when a `wiki serve` says what changed (the",
        "  served rows). A records file mapped with mmap, checked and loaded only where a query",
        "  looks, is what would make the cache pay without a server; it is not built.",
    ],
    "cold": [
        "- **The first call against the scan.** A call with no cache file reads every page and",
        "  keeps what any later query needs of it: the whole folded text (the scan folds a page",
        "  only as far as a keyword needs), and the title, aliases and fields find prints, so",
        "  every page's frontmatter is parsed, where the scan parses only those of the pages it",
        "  shows or whose title may hold a keyword. A rich-YAML block is a PyYAML parse per page:",
        "  on the rich-yaml vault a `--quick` run took about four times the scan. Marshalling the",
        "  records and writing the file (a temporary, renamed over the old one) come on top.",
    ],
    "cache-size": [
        "- **The cache file's size.** It holds every page's folded text (as large as the page",
        "  for ASCII, more where folding lengthens it), its folded title, path and aliases, the",
        "  bytes of its frontmatter (recall parses them), the fields find prints and its stat:",
        "  more than the markdown itself on vaults of short pages.",
    ],
    "first-bench-median": [
        "- **100k pages in 500 ms (first benchmark).** The system time alone, the same for rg as for",
        "  find (CPU tables), is close to the budget of two cores before any matching is done.",
    ],
}


def prepare(profiles: list[Profile]) -> None:
    """Generate every vault not already built (the stamp next to it says which it is)."""
    for profile in profiles:
        if profile.shape == "fixture":
            from mnemosyne_core.vault import scan

            profile.pages = len(scan(str(FIXTURE_VAULT)))
            continue
        started = time.monotonic()
        if generate_vault.ensure(profile.pages, str(profile.path), profile=profile.shape):
            print(f"generated {profile.path} in {time.monotonic() - started:.1f} s", flush=True)


def naive_check(profile: Profile, keywords: list[str], context: Context) -> float:
    """Run find and the naive baseline once each: they must print the same lines (both cap
    at 20). Returns the naive run's wall time, in seconds."""
    find = subprocess.run(TOOLS["mnemosyne"](context, profile.path, keywords) or [], capture_output=True, check=False)
    started = time.perf_counter()
    naive = subprocess.run(TOOLS["naive"](context, profile.path, keywords) or [], capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if find.stdout != naive.stdout:
        sys.exit(f"find and the naive baseline disagree on {profile.label} for {keywords}: a bug, not a benchmark")
    return elapsed


def rg_check(profile: Profile, keywords: list[str], context: Context) -> None:
    """For a vault the naive baseline cannot read (a tree with a .gitignore): find's pages
    must be rg's files (which hold every keyword in their text, rg honouring the same ignore
    files) plus pages whose path holds a keyword rg's files lack. Folded as ASCII: the nested
    vault's queries are ASCII."""
    argv = TOOLS["mnemosyne"](context, profile.path, keywords) or []
    find = subprocess.run([*argv, "--json", "--limit", "0"], capture_output=True, check=False)
    found = {page["path"] for page in json.loads(find.stdout or b"[]")}
    listing = subprocess.run(TOOLS["rg"](context, profile.path, keywords) or [], capture_output=True, check=False)
    vault_prefix = f"{profile.path}/"
    by_rg = {line.removeprefix(vault_prefix) for line in listing.stdout.decode().splitlines()}
    by_path = {path for path in found - by_rg if any(keyword.lower() in path.lower() for keyword in keywords)}
    if found - by_path != by_rg:
        sys.exit(f"find and rg disagree on {profile.label} for {keywords}: a bug, not a benchmark")


def hyperfine(
    named: dict[str, list[str]], warmup: int, runs: int, prepare: dict[str, list[str]] | None = None
) -> dict[str, dict[str, Any]]:
    """Run hyperfine over ``named`` commands: each one's run times and mean user and system
    CPU time, by name. ``prepare``: what runs before each run of the commands it names."""
    with tempfile.TemporaryDirectory() as scratch:
        export = Path(scratch) / "times.json"
        argv = ["hyperfine", "-N", "-i", "--style", "basic", "-w", str(warmup), "-r", str(runs)]
        argv += ["--export-json", str(export)]
        if prepare:
            # One --prepare per command, in their order; `true` for those with none.
            for name in named:
                argv += ["--prepare", shlex.join(prepare.get(name, ["true"]))]
        for name, command in named.items():
            argv += ["-n", name, shlex.join(command)]
        # -i: find, rg and grep exit 1 on no match, lint on findings; answers are checked elsewhere.
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        results = json.loads(export.read_text(encoding="utf-8"))["results"]
    return {result["command"]: result for result in results}


def cache_file(vault: Path) -> Path:
    """The page cache file find writes for ``vault`` (under CACHE_HOME, with this process's
    rights, which are the timed calls')."""
    from mnemosyne_core.cache import cache_dir_path, index_path

    cache_dir = cache_dir_path(os.environ)
    assert cache_dir is not None, "main() sets XDG_CACHE_HOME"
    return Path(index_path(cache_dir, os.path.realpath(vault)))


def cache_check(profile: Profile, keywords: list[str], context: Context) -> None:
    """find through the page cache must print the scan's bytes, cold and warm, and write
    the cache file the cold row removes (else that row would time a warm cache)."""
    path = cache_file(profile.path)
    path.unlink(missing_ok=True)
    plain = subprocess.run(TOOLS[NO_CACHE](context, profile.path, keywords) or [], capture_output=True, check=False)
    for state in ("cold", "warm"):
        cached = subprocess.run(TOOLS[COLD](context, profile.path, keywords) or [], capture_output=True, check=False)
        if (cached.returncode, cached.stdout) != (plain.returncode, plain.stdout):
            sys.exit(f"find with a {state} page cache and the scan disagree on {profile.label} for {keywords}: a bug")
    if not path.is_file():
        sys.exit(f"find wrote no page cache at {path}: the cold row would time a warm cache")


def markdown_bytes(vault: Path) -> int:
    """The bytes of every page a find lists in ``vault`` (what the cache file holds)."""
    from mnemosyne_core.vault import scan

    listing = scan(os.path.realpath(vault)).listing
    return sum(os.path.getsize(os.path.join(dir_path, name)) for _, dir_path, names in listing for name in names)


def peak_rss_mb(argv: list[str]) -> float:
    """The peak RSS of one run of ``argv`` (its largest process), in MB."""
    script = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    # A fresh wrapper per measure: RUSAGE_CHILDREN is a maximum over every child so far.
    output = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, check=True)
    return int(output.stdout) / 1024  # ru_maxrss is in KiB on Linux


def machine() -> dict[str, str]:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def version(argv: list[str]) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.splitlines()[0]
        except (OSError, subprocess.CalledProcessError, IndexError):
            return "unknown"

    return {
        "CPU": cpu,
        "cores (nproc)": str(os.cpu_count()),
        "OS": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "hyperfine": version(["hyperfine", "--version"]),
        "ripgrep": version(["rg", "--version"]),
        "grep": version(["grep", "--version"]),
        "uv": version(["uv", "--version"]),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


#: medians[vault label][query][tool], seconds
Medians = dict[str, dict[str, dict[str, float]]]
#: cpu[vault label][query][tool] = (mean user, mean system) CPU seconds
Cpu = dict[str, dict[str, dict[str, tuple[float, float]]]]


class Results:
    def __init__(self) -> None:
        self.medians: Medians = {}
        self.cpu: Cpu = {}
        #: rss[vault label][row] = MB, for the vaults of RSS_PAGES pages
        self.rss: dict[str, dict[str, float]] = {}
        #: cache_sizes[vault label] = (the cache file's bytes, its pages' markdown bytes)
        self.cache_sizes: dict[str, tuple[int, int]] = {}

    def cache_size_ratio(self, label: str) -> float:
        file_bytes, markdown_bytes = self.cache_sizes[label]
        return file_bytes / max(markdown_bytes, 1)

    def worst(self, label: str, of: str, to: str) -> tuple[float, str] | None:
        """The largest ratio of tool ``of`` to tool ``to`` over the queries of a vault."""
        ratios = {
            query: times[of] / times[to]
            for query, times in self.medians.get(label, {}).items()
            if of in times and to in times
        }
        if not ratios:
            return None
        query = max(ratios, key=lambda name: ratios[name])
        return ratios[query], query


Target = tuple[str, str, str, bool | None]  # (key for LIMITS, target, measured, met)


def rg_rows(results: Results, labels: set[str], limits: dict[str, float], column: str, how: str) -> list[Target]:
    """The target rows of find's ``column`` against rg, one per vault of ``limits`` timed."""
    rows: list[Target] = []
    for label, limit in limits.items():
        worst = results.worst(label, column, "rg") if label in labels else None
        if worst is not None:
            key = {CACHED: "warm", SERVED: "rg-served"}.get(column) or RG_LIMIT_KEYS.get(label, "rg")
            rows.append(
                (
                    key,
                    f"{label}, {how}: at most {limit}x `rg -l -i -F`",
                    f"{worst[0]:.2f}x (worst query: {worst[1]})",
                    worst[0] <= limit,
                )
            )
    return rows


def targets(profiles: list[Profile], results: Results) -> list[Target]:
    """Each of today's targets, then the first benchmark's, with its measured figure; met is
    None when the run did not measure it."""
    rows: list[Target] = []
    labels = {profile.label for profile in profiles}
    medians = results.medians
    if "fixture" in labels:
        pages = next(profile.pages for profile in profiles if profile.label == "fixture")
        for install, find, bare in (("uv", FIND_UV, BARE_UV), ("pip", "mnemosyne", BARE)):
            worst = results.worst("fixture", find, bare)
            if worst is None:
                continue
            ratio, query = worst
            rows.append(
                (
                    "startup",
                    f"{pages} pages, {install} install: find at most {STARTUP_RATIO_TARGET}x a bare `{BARE}`",
                    f"{ratio:.2f}x (worst query: {query}; find {medians['fixture'][query][find] * 1000:.1f} ms, "
                    f"bare {medians['fixture'][query][bare] * 1000:.1f} ms)",
                    ratio <= STARTUP_RATIO_TARGET,
                )
            )
    worst = results.worst("fixture", CACHED, BARE) if "fixture" in labels else None
    if worst is not None:
        rows.append(
            (
                "startup-cache",
                f"fixture, warm page cache, no server: find at most {WARM_STARTUP_RATIO_TARGET}x a bare `{BARE}`",
                f"{worst[0]:.2f}x (worst query: {worst[1]})",
                worst[0] <= WARM_STARTUP_RATIO_TARGET,
            )
        )
    rows += rg_rows(results, labels, WARM_RG_RATIO_TARGETS, CACHED, "warm page cache, no server")
    cold = [
        (times[COLD] / times[NO_CACHE], label)
        for label, by_query in medians.items()
        for times in by_query.values()
        if COLD in times and NO_CACHE in times
    ]
    if cold:
        ratio, label = max(cold)
        rows.append(
            (
                "cold",
                f"first call on a vault with no cache file at most {COLD_RATIO_TARGET}x today's scan (`--no-cache`)",
                f"{ratio:.2f}x (worst vault: {label}; first query)",
                ratio <= COLD_RATIO_TARGET,
            )
        )
    if results.cache_sizes:
        label = max(results.cache_sizes, key=lambda name: results.cache_size_ratio(name))
        ratio = results.cache_size_ratio(label)
        rows.append(
            (
                "cache-size",
                f"page cache file at most {CACHE_SIZE_RATIO_TARGET}x the markdown bytes of its pages",
                f"{ratio:.2f}x (worst vault: {label})",
                ratio <= CACHE_SIZE_RATIO_TARGET,
            )
        )
    rows += rg_rows(results, labels, RG_RATIO_TARGETS, NO_CACHE, "the scan (`--no-cache`)")
    rows += rg_rows(results, labels, SERVED_RG_RATIO_TARGETS, SERVED, "with `wiki serve`")
    for command in COMMANDS:
        ratios = [
            (times[command] / times["mnemosyne"], label)
            for label, by_query in medians.items()
            for times in by_query.values()
            if command in times
        ]
        if ratios:
            ratio, label = max(ratios)
            rows.append(
                (
                    "commands",
                    f"`wiki {command}` at most {COMMAND_RATIO_TARGET}x find on the same vault",
                    f"{ratio:.2f}x (worst vault: {label}; against find's first query)",
                    ratio <= COMMAND_RATIO_TARGET,
                )
            )
    for key, rss_of, limit, what in (
        ("rss-cache", lambda row: row in CLASSIC_QUERIES, CACHE_RSS_TARGET_MB, "find's, warm page cache,"),
        ("rss", lambda row: row.startswith(NO_CACHE), RSS_TARGET_MB, "the scan's (`--no-cache`)"),
    ):
        peaks = [
            (value, label) for label, by_row in results.rss.items() for row, value in by_row.items() if rss_of(row)
        ]
        if peaks:
            peak, label = max(peaks)
            rows.append(
                (
                    key,
                    f"{what} peak RSS at most {limit:.0f} MB at {RSS_PAGES:,} pages",
                    f"{peak:.1f} MB ({label})",
                    peak <= limit,
                )
            )
    # The first benchmark's targets, for comparison over time.
    worst = results.worst("fixture", "mnemosyne", BARE)
    if worst is not None:
        rows.append(
            (
                "startup",
                f"first benchmark: fixture, pip install, at most {FIRST_BENCH_STARTUP_RATIO}x bare",
                f"{worst[0]:.2f}x",
                worst[0] <= FIRST_BENCH_STARTUP_RATIO,
            )
        )
    worst = results.worst("10k", NO_CACHE, "rg")
    if worst is not None:
        rows.append(
            (
                "rg",
                f"first benchmark: 10k at most {FIRST_BENCH_RG_RATIO_10K}x rg",
                f"{worst[0]:.2f}x (worst query: {worst[1]})",
                worst[0] <= FIRST_BENCH_RG_RATIO_10K,
            )
        )
    if "100k" in medians:
        slowest = max(medians["100k"], key=lambda query: medians["100k"][query][NO_CACHE])
        median = medians["100k"][slowest][NO_CACHE]
        rows.append(
            (
                "first-bench-median",
                f"first benchmark: 100k median at most {FIRST_BENCH_MEDIAN_100K * 1000:.0f} ms",
                f"{median * 1000:.0f} ms (slowest query: {slowest})",
                median <= FIRST_BENCH_MEDIAN_100K,
            )
        )
    naive = [
        (times["mnemosyne"] / times["naive"], f"{label}, {query}")
        for label, by_query in medians.items()
        for query, times in by_query.items()
        if "naive" in times
    ]
    if naive:
        ratio, where = max(naive)
        rows.append(
            (
                "naive",
                "faster than the naive baseline wherever it ran",
                f"at most {ratio:.3f}x naive ({where})",
                ratio < 1,
            )
        )
    return rows


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|---" * len(header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def report(profiles: list[Profile], results: Results, plot_name: str, context: Context) -> str:
    medians = results.medians
    lines = [
        "# Performance",
        "",
        "<!-- Generated by `nox -s bench` (bench/run_bench.py); edit that script, not this file. -->",
        "",
        "`mnemosyne wiki find` against `rg -l -i -F` (ripgrep), `grep -rli` and the naive baseline",
        "(bench/naive_find.py: find's rules done plainly, reading every file and parsing every frontmatter",
        "with `yaml.safe_load`), with `wiki lint` and `wiki recall` beside it. Times are hyperfine",
        "medians of wall-clock time with a warm page cache; every tool of a row was timed in the same",
        "hyperfine invocation (the naive baseline apart: 3 runs up to 1,000 pages, 1 run above, not",
        "run above 10,000). The fixture vault is fixtures/vaults/aion; the others come from",
        f"fixtures/generate_vault.py (seed {generate_vault.DEFAULT_SEED}; the profile is in each",
        "vault's name, see that script), written to build/bench/.",
        "",
        "rg and grep AND several keywords the shell way, one filtering stage per keyword",
        "(`rg -l -i -F -0 k1 VAULT | xargs -0 -r rg -l -i -F -0 k2 | ...`). find's answers were",
        "checked against the naive baseline's before timing, wherever the baseline ran; on the",
        "nested vault, a tree it cannot read, against rg's files (rg honours the same .gitignore:",
        "the vault is a git repository; `grep -rli` reads the ignored files and `.git` too). lint",
        "and recall (with the query's keywords as its topic) are timed with each vault's first",
        "query.",
        "",
        *CACHE_TEXT,
        "",
        "The nested vault's `mnemosyne (served)` column is the same find told by a `wiki serve`",
        "running for that vault what changed (so it neither lists the vault nor stats its pages),",
        "timed in the same hyperfine run (its answers checked against the scan's first). The",
        "server's rows at 100k pages have their own table in [server.md](server.md#what-it-costs),",
        "written by `nox -s bench-serve`.",
        "",
        "## Machine",
        "",
        *markdown_table(["", ""], [[key, value] for key, value in machine().items()]),
        "",
        "## Targets",
        "",
    ]
    rows = targets(profiles, results)
    lines += markdown_table(
        ["target", "measured", "met"],
        [
            [target, measured, "not measured" if met is None else "met" if met else "**not met**"]
            for _, target, measured, met in rows
        ],
    )
    missed = list(dict.fromkeys(key for key, _, _, met in rows if met is False and key in LIMITS))
    if missed:
        lines += ["", "### What limits it", ""]
        for key in missed:
            lines += LIMITS[key]
    lines += ["", *INSTALL_TEXT, "", *PARSER_TEXT, ""]
    for profile in profiles:
        by_query = medians[profile.label]
        lines += [f"## {profile.label}: {profile.pages:,} pages", ""]
        if profile.label != "fixture":
            lines += [f"Generated by profile `{profile.shape}`.", ""]
        lines += [
            "Queries: " + "; ".join(f"{name} `{' '.join(words)}`" for name, words in profile.queries.items()) + ".",
            "",
        ]
        if profile.label in results.cache_sizes:
            file_bytes, page_bytes = results.cache_sizes[profile.label]
            lines += [
                f"Page cache file: {file_bytes / 1e6:.2f} MB for {page_bytes / 1e6:.2f} MB of markdown "
                f"({results.cache_size_ratio(profile.label):.2f}x).",
                "",
            ]
        tools = [
            tool
            for tool in (*profile.tools, "naive", *FIRST_QUERY_TOOLS)
            if any(tool in times for times in by_query.values())
        ]
        lines += ["Median, ms:", ""]
        lines += markdown_table(
            ["query", *tools],
            [
                [query, *(f"{times[tool] * 1000:.1f}" if tool in times else "-" for tool in tools)]
                for query, times in by_query.items()
            ],
        )
        others = [tool for tool in tools if tool != "mnemosyne"]
        lines += ["", "find's time as a multiple of each tool's (below 1: find is faster):", ""]
        lines += markdown_table(
            ["query", *(f"÷ {tool}" for tool in others)],
            [
                [query, *(f"{times['mnemosyne'] / times[tool]:.2f}" if tool in times else "-" for tool in others)]
                for query, times in by_query.items()
            ],
        )
        lines.append("")
    for label, cpu_by_query in results.cpu.items():
        pages = next(profile.pages for profile in profiles if profile.label == label)
        if pages < RSS_PAGES:
            continue
        lines += [
            f"## CPU time, {label}",
            "",
            "Mean CPU seconds per run (user + system, summed over processes and threads): where the",
            "time goes. System time is the kernel opening, reading and closing every file.",
            "",
        ]
        cpu_rows = []
        for query, by_tool in cpu_by_query.items():
            for tool in ("mnemosyne", "rg", *FIRST_QUERY_TOOLS):
                if tool in by_tool:
                    user, system = by_tool[tool]
                    cpu_rows.append(
                        [query, tool, f"{user:.2f}", f"{system:.2f}", f"{(user + system) / pages * 1e6:.1f}"]
                    )
        lines += markdown_table(["query", "tool", "user, s", "system, s", "per page, µs"], cpu_rows)
        lines.append("")
    if results.rss:
        lines += [
            f"## Peak RSS at {RSS_PAGES:,} pages",
            "",
            "One run each; find per query, lint and recall with the first.",
            "",
        ]
        lines += markdown_table(
            ["vault", "run", "peak RSS, MB"],
            [[label, row, f"{value:.1f}"] for label, by_row in results.rss.items() for row, value in by_row.items()],
        )
        lines.append("")
    lines += [
        f"![time against pages, one line per tool]({plot_name})",
        "",
        "Run it: `nox -s bench` (every profile; about ten minutes on two cores from a fresh clone,",
        "a third of it generating the vaults once), `nox -s bench -- --quick` for a smoke run, or",
        "`nox -s bench -- --profiles fixture 'rich-yaml 1k'` for some vaults only.",
        "",
    ]
    return "\n".join(lines)


#: What the columns of find mean now that find keeps a page cache.
CACHE_TEXT = [
    "The `mnemosyne` column is find as a user types it, with no server running for the vault:",
    "then it scans, as `--no-cache` does, since the page cache's own check of every page costs",
    "about what the scan's reads do (the next column). `mnemosyne (page cache, no server)`",
    "(`--no-server`) lists the vault, stats every page and takes the unchanged ones from its",
    "[page cache](commands.md#the-page-cache), warm from hyperfine's warm-up runs (the bench's",
    "own cache dir, build/bench/cache, emptied at its start): what a call does when a server",
    "is asked for nothing. `mnemosyne (no cache)` is the plain scan (`--no-cache`: every page",
    "read and folded as far as the query needs);",
    "`mnemosyne (no cache yet)`, timed with each vault's first query, is the first call on a vault",
    "whose cache file hyperfine's `--prepare` removes before each run (`rm -f` of that one",
    "file): the scan plus writing the file. Before timing, each query's answer through a cold and",
    "a warm cache was checked against the scan's, byte for byte. The cache file's size is given",
    "under each vault, against the bytes of the pages it lists.",
    "",
    "### The cache's format, and why",
    "",
    "One file per vault (and user and rights): a header with the payload's length and CRC-32,",
    "then one `marshal` payload holding the pages' paths, stat keys and display fields, and",
    "every page's record (folded title, path, aliases, then the folded text) in one buffer with",
    "a NUL after each. A query runs `bytes.find` over that buffer and steps to the next record",
    "after each hit, so it costs one C-level search plus one Python step per page that holds",
    "the keyword: no Python runs for a page that does not. The alternatives were probed on this",
    "machine: `mmap.find` over one file of every page's folded text (55 MB at 115k pages) took",
    "about 60 ms, SQLite `instr()` over a 23 MB table about 100 ms, and an FTS5 trigram index was",
    "40 MB for 15 MB of markdown (and a second matcher to hold equal to find's). The one buffer",
    "is the first of these without a database's query layer or a second matcher, and reads",
    "with the cache file in one `read`; the CRC (about 10 ms at 24 MB) is what lets a truncated",
    "or damaged file be ignored rather than trusted. What is left per call is Python's own: the",
    "listing and one `lstat` per page without a server, and unmarshalling the file.",
]

#: Which install a user should pick, from what the fixture's start-up columns show.
INSTALL_TEXT = [
    "### Which install",
    "",
    "For the fastest start-up, install with uv, bytecode compiled (the README's uv line plus",
    "`--compile-bytecode`):",
    "",
    "```sh",
    "uv tool install --compile-bytecode ./packages/mnemosyne-cli --with ./packages/mnemosyne-contract \\",
    "  --with ./packages/mnemosyne-core --with ./packages/mnemosyne-ingest",
    "```",
    "",
    "The `mnemosyne (uv)` column is such an install (uv's venv and console script, bytecode",
    "compiled; build/bench/uv-venv). uv's console script imports only `sys` where pip's",
    "also imports `re`, and a venv made by uv has no setuptools `distutils-precedence.pth` to",
    "load at every start (compare the two `python -c pass` columns). `--compile-bytecode` (or",
    "`UV_COMPILE_BYTECODE=1`) matters: uv otherwise leaves the bytecode to the first runs, and",
    "where `PYTHONDONTWRITEBYTECODE` is set every run compiles the package again (tens of",
    "milliseconds). The README's pip install works as well, a few milliseconds slower per call.",
]


#: Why the console script parses a plain find itself, from what the fixture's columns show.
PARSER_TEXT = [
    "### The console script's own parser",
    "",
    "A plain find (keywords and the options packages/mnemosyne-cli/src/mnemosyne_cli/options.py",
    "lets it take) is parsed by the console script itself; argparse parses everything else and",
    "stays the reference (a property test holds the two to the same arguments, and both read",
    "that one table of find's options). The `mnemosyne (argparse)` columns time the same find",
    "with its keywords after `--`, which sends it through argparse: importing argparse (with",
    "gettext) and building find's parser. When the parser was last weighed (CPU time from the",
    "first import to the parsed arguments, median of 40 fresh interpreters per install, on a",
    "loaded 2-core machine), the console script's parser took 16 ms under the pip install and",
    "13 ms under uv's, argparse 38 and 25 ms: argparse added 12-22 ms, more than half of what a",
    "bare `python -c pass` cost there (19-23 ms). That still matters, so the parser stays.",
]


def plot(path: Path, profiles: list[Profile], results: Results) -> None:
    """Time against pages: one panel per classic query (one line per tool), then find and
    rg on every profile, then lint and recall against find."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "mnemosyne-bench"
    medians = results.medians
    figure, axes = plt.subplots(2, 3, figsize=(15, 8))
    classic = sorted(
        (profile for profile in profiles if profile.shape in ("fixture", "classic")), key=lambda p: p.pages
    )
    for axis, query in zip(axes.flat[:4], CLASSIC_QUERIES, strict=True):
        for tool in ("mnemosyne", "rg", "grep", "naive"):
            points = [
                (p.pages, medians[p.label][query][tool]) for p in classic if tool in medians[p.label].get(query, {})
            ]
            if points:
                axis.plot(*zip(*points, strict=True), marker="o", label=tool)
        axis.set_title(f"classic vaults, {query}: {' '.join(CLASSIC_QUERIES[query])}")
    others = sorted(
        (profile for profile in profiles if profile.shape not in ("fixture", "classic")), key=lambda p: p.pages
    )
    axis = axes.flat[4]
    for tool, marker in (("mnemosyne", "o"), ("rg", "s"), ("grep", "^")):
        points = [(p.pages, medians[p.label]["rare"][tool]) for p in others if tool in medians[p.label].get("rare", {})]
        if points:
            axis.scatter(*zip(*points, strict=True), marker=marker, label=tool)
    for profile in others:
        if "mnemosyne" in medians[profile.label].get("rare", {}):
            axis.annotate(profile.label, (profile.pages, medians[profile.label]["rare"]["mnemosyne"]), fontsize=7)
    axis.set_title("other profiles, rare: kestrel")
    axis = axes.flat[5]
    labels = [p.label for p in profiles if any("lint" in times for times in medians[p.label].values())]
    for offset, tool in enumerate(("mnemosyne", "lint", "recall")):
        values = [next(times[tool] for times in medians[label].values() if "lint" in times) for label in labels]
        axis.bar(
            [index + offset * 0.27 for index in range(len(labels))],
            values,
            width=0.27,
            label="find" if tool == "mnemosyne" else tool,
        )
    axis.set_xticks([index + 0.27 for index in range(len(labels))], labels, rotation=30, ha="right", fontsize=7)
    axis.set_yscale("log")
    axis.set_title("find (first query), lint and recall")
    for axis in axes.flat[:5]:
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("pages")
        axis.grid(True, which="both", linewidth=0.3)
    for axis in axes.flat:
        axis.set_ylabel("median wall time, s")
        axis.legend(fontsize=7)
    figure.suptitle("mnemosyne wiki find vs rg, grep and the naive baseline")
    figure.tight_layout()
    figure.savefig(path, metadata={"Date": None})
    plt.close(figure)


def measure(profile: Profile, context: Context, results: Results, quick: bool, naive_up_to: int) -> None:
    """Time every query of ``profile`` (and lint, recall with the first); with a server
    for the vault while it is timed when the profile has the SERVED row."""
    if SERVED not in profile.tools:
        _measure(profile, context, results, quick, naive_up_to)
        return
    runtime = tempfile.mkdtemp(prefix="mnemosyne-bench-run-")  # mode 0700, as the server wants
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime}
    server, indexing = serve_bench.start_server(context.mnemosyne, profile.path, env)
    print(f"{profile.label}: wiki serve watched it in {indexing:.2f} s", flush=True)
    context.served_runtime = runtime
    try:
        for keywords in profile.queries.values():
            serve_bench.check_same(context.mnemosyne, ["wiki", "find", "--vault", str(profile.path), *keywords], env)
        _measure(profile, context, results, quick, naive_up_to)
    finally:
        context.served_runtime = None
        server.terminate()
        server.wait(30)
        shutil.rmtree(runtime, ignore_errors=True)


def _measure(profile: Profile, context: Context, results: Results, quick: bool, naive_up_to: int) -> None:
    results.medians[profile.label] = {}
    results.cpu[profile.label] = {}
    warmup, runs = (1, 3) if quick else profile.runs
    for index, (query, keywords) in enumerate(profile.queries.items()):
        naive_time = None
        if profile.check == "rg":
            rg_check(profile, keywords, context)
        elif profile.pages <= naive_up_to:
            naive_time = naive_check(profile, keywords, context)
        cache_check(profile, keywords, context)
        tools = [*profile.tools, *(FIRST_QUERY_TOOLS if index == 0 else ())]
        timed = {tool: argv for tool in tools if (argv := TOOLS[tool](context, profile.path, keywords)) is not None}
        print(f"{profile.label} ({profile.pages} pages), {query}: {' '.join(keywords)}", flush=True)
        # COLD runs last: the rows after it would otherwise start with no cache file.
        timed = {tool: timed[tool] for tool in sorted(timed, key=lambda tool: tool == COLD)}
        found = hyperfine(timed, warmup, runs, {COLD: ["rm", "-f", str(cache_file(profile.path))]})
        if naive_time is not None and profile.pages <= 1000 and not quick:
            found.update(hyperfine({"naive": TOOLS["naive"](context, profile.path, keywords) or []}, 0, 3))
        medians = {tool: statistics.median(result["times"]) for tool, result in found.items()}
        if naive_time is not None and "naive" not in medians:
            medians["naive"] = naive_time
        results.medians[profile.label][query] = medians
        results.cpu[profile.label][query] = {tool: (result["user"], result["system"]) for tool, result in found.items()}
        print("  " + ", ".join(f"{tool} {value * 1000:.1f} ms" for tool, value in medians.items()), flush=True)
    # The cold row ran last and left a whole cache file of every listed page.
    first = next(iter(profile.queries.values()))
    subprocess.run(TOOLS["mnemosyne"](context, profile.path, first) or [], capture_output=True, check=False)
    results.cache_sizes[profile.label] = (cache_file(profile.path).stat().st_size, markdown_bytes(profile.path))
    if profile.pages >= RSS_PAGES:
        rss = {
            query: peak_rss_mb(TOOLS["mnemosyne"](context, profile.path, words) or [])
            for query, words in profile.queries.items()
        }
        rss[f"{NO_CACHE}: {next(iter(profile.queries))}"] = peak_rss_mb(
            TOOLS[NO_CACHE](context, profile.path, first) or []
        )
        for command in COMMANDS:
            rss[command] = peak_rss_mb(TOOLS[command](context, profile.path, first) or [])
        results.rss[profile.label] = rss


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--profiles",
        nargs="+",
        choices=PROFILE_LABELS,
        default=PROFILE_LABELS,
        metavar="LABEL",
        help=f"the vaults to time (default: all of {', '.join(PROFILE_LABELS)})",
    )
    parser.add_argument("--quick", action="store_true", help="few runs: a smoke test, not a measurement")
    parser.add_argument(
        "--naive-up-to",
        type=int,
        default=10000,
        metavar="PAGES",
        help="run the naive baseline (it checks the answers; over a minute a run at 100k) on vaults up to "
        "this size (default 10000)",
    )
    parser.add_argument(
        "--mnemosyne", default=shutil.which("mnemosyne"), help="the mnemosyne console script of a pip install"
    )
    parser.add_argument(
        "--mnemosyne-uv", help="the mnemosyne console script of a uv install (its start-up is timed too)"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "performance.svg")
    args = parser.parse_args(argv)
    for tool in ("hyperfine", "rg", "grep"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not on PATH: install it (Debian: apt-get install {tool.replace('rg', 'ripgrep')})")
    if not args.mnemosyne:
        parser.error("no mnemosyne console script on PATH: install the packages or pass --mnemosyne")
    # recall appends to a memory log when one is configured: the benchmark writes nothing.
    os.environ.pop("MNEMOSYNE_MEMORY_DIR", None)
    # The timed calls' page cache is the bench's own, emptied first: the user's is left alone
    # and every vault starts cold.
    shutil.rmtree(CACHE_HOME, ignore_errors=True)
    CACHE_HOME.mkdir(parents=True)
    os.environ["XDG_CACHE_HOME"] = str(CACHE_HOME)
    context = Context(args.mnemosyne, args.mnemosyne_uv)
    profiles = [profile for profile in PROFILES if profile.label in args.profiles]
    started = time.monotonic()
    prepare(profiles)
    results = Results()
    for profile in profiles:
        measure(profile, context, results, args.quick, args.naive_up_to)
    args.output.write_text(report(profiles, results, args.plot.name, context), encoding="utf-8")
    plot(args.plot, profiles, results)
    print(f"wrote {args.output} and {args.plot} in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
