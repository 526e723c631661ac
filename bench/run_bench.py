"""The benchmark behind ``nox -s bench``: ``mnemosyne wiki find`` through the vault's SQLite
index against ``rg -l -i -F`` (or, on the fixture vault, a bare ``python -c pass`` of the
same interpreter), each ratio from one hyperfine run, with ``wiki lint`` and ``wiki recall``
beside it, the first call on a vault with no index, the index's build time and size, and
the peak RSS of a warm find.

The targets (``TARGETS``; every ratio against rg, a bare ``python -c pass`` or find in the
same hyperfine run, every row warm: the index whole and fresh):

- fixture: ≤ 1.8× bare python;
- no server: rich-yaml 1k ≤ 2.5× rg, multilang 6k ≤ 1.8×, nested 10k ≤ 1.8×,
  plain 100k ≤ 1.2×;
- with a server at 100k: a rare keyword ≤ 0.08× rg, ``the`` ≤ 0.2×, a word on every page
  ≤ 0.7×, a word on no page ≤ 0.08×; served nested 10k ≤ 0.5×;
- ``wiki lint`` ≤ 1.5× find, ``wiki recall`` ≤ 1.2× find (the warm find of the same run);
- the first call with no index ≤ 1.2× the scan (``--no-cache``);
- the build of 100k pages ≤ 45 s; the index (names table included) ≤ 3× the markdown;
  the peak RSS of a warm find at 100k ≤ 100 MB.

Per vault (``PROFILES``: the fixture, then generated vaults of fixtures/generate_vault.py's
rich-yaml, multilang, nested and plain profiles), in this order:

1. the index is removed, then built in the foreground by the detached builder's own
   command (``python -m mnemosyne_core.build INDEX VAULT HOME``), timed;
2. every query, warm (the index complete and fresh), with no server (``--no-server``):
   find, the scan (``--no-cache``), rg and a bare interpreter in one hyperfine run; lint
   and recall (``--no-server``) in the run of the first query;
3. on the plain 100k vault, the peak RSS of each query's warm find;
4. with a ``wiki serve`` running for the vault (nested and plain): find as a user types it
   (it asks the server), against rg; every query, a miss too, must be answered by the
   server's word, not by listing the vault;
5. the first call on a vault with no index: find as a user types it, hyperfine's
   ``--prepare`` removing the index and killing any builder a run started
   (bench/reset_index.py), against the scan in the same run.

Before timing, every answer is checked: find's against the naive baseline's (or rg's files
on the nested vault), the warm, served and first calls' against the scan's, lint's and
recall's against their own ``--no-cache``, byte for byte (stdout, stderr, exit code). A
fast wrong answer does not count.

Every timed call runs with ``PYTHONDONTWRITEBYTECODE`` unset, and the packages under test
are compiled to bytecode before the first timing (``precompile``): some shells set it, and
then every call would compile each module it imports again, which times the compiler, not
the tool a user installed (pip compiles on install).

Writes docs/performance.md: the targets with pass or miss, and under each missed one what
limits it (``LIMITS``: wording to edit, filled from the measurements). Options
(``nox -s bench -- --help``) pick profiles; ``--quick`` is a smoke run on small vaults (at
most ``QUICK_PAGES`` pages) that writes build/bench/performance-quick.md.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import io
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
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))

import generate_vault  # noqa: E402 - fixtures/ is not a package; its path is set just above
import reset_index  # noqa: E402 - beside this script (bench/ is not a package either)
import serve_bench  # noqa: E402 - beside this script

FIXTURE_VAULT = ROOT / "fixtures" / "vaults" / "aion"
BUILD_DIR = ROOT / "build" / "bench"
#: The index dir of every timed call (XDG_CACHE_HOME): the bench's own, never the user's.
CACHE_HOME = BUILD_DIR / "cache"
NAIVE = ROOT / "bench" / "naive_find.py"
RESET_INDEX = ROOT / "bench" / "reset_index.py"
#: The index's schema and why it was chosen: shown in the report above the sizes it names.
INDEX_DESIGN = ROOT / "bench" / "index_design.md"
#: Measured by bench/server_threshold.py, by hand (it starts servers of its own).
SERVER_THRESHOLD = ROOT / "bench" / "server_threshold.md"
#: The pure find core, whose size the report measures against CORE_LINES_TARGET.
CORE_SOURCE = ROOT / "packages" / "mnemosyne-core" / "src" / "mnemosyne_core"
CORE_LINES_TARGET = 6000
#: --quick's vaults: the generated ones cut to this many pages.
QUICK_PAGES = 2000

#: A keyword on every page of the plain profile: each has a "More information:" line.
EVERY_PAGE_WORD = "information"

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
#: What the served rows of the plain vault ask (each has its own target).
EVERY_PAGE_QUERY = "every page matches"
NO_PAGE_QUERY = "no page matches"
SERVED_PLAIN_QUERIES: dict[str, list[str]] = {
    "rare keyword": [generate_vault.RARE_WORD],
    "`the`": ["the"],
    EVERY_PAGE_QUERY: [EVERY_PAGE_WORD],
    NO_PAGE_QUERY: ["zyzzyva"],
}
#: The served plain rows' targets, by the query each times.
SERVED_PLAIN_TARGETS = {
    "served-rare": "rare keyword",
    "served-the": "`the`",
    "served-every": EVERY_PAGE_QUERY,
    "served-none": NO_PAGE_QUERY,
}


class Profile:
    """One vault of the benchmark and what is timed on it."""

    def __init__(
        self,
        shape: str,
        pages: int,
        queries: dict[str, list[str]],
        runs: tuple[int, int],
        served: dict[str, list[str]] | None = None,
        cold_runs: int = 5,
    ):
        #: A generate_vault profile, or "fixture" for fixtures/vaults/aion.
        self.shape = shape
        #: Pages as generated (the fixture's are counted when it is prepared).
        self.pages = pages
        self.queries = queries
        #: (warmup, runs) of each hyperfine invocation on this vault.
        self.runs = runs
        #: The queries timed with a ``wiki serve`` running for the vault, or None.
        self.served = served
        #: Runs of the first-call row (no warm-up: each run starts with no index).
        self.cold_runs = cold_runs

    @property
    def label(self) -> str:
        """``fixture``, or the shape and the size in thousands (``plain 100k``)."""
        if self.shape == "fixture":
            return "fixture"
        size = f"{self.pages // 1000}k" if self.pages % 1000 == 0 else f"{self.pages}"
        return f"{self.shape} {size}"

    @property
    def path(self) -> Path:
        return FIXTURE_VAULT if self.shape == "fixture" else BUILD_DIR / f"{self.shape}-{self.pages}"

    @property
    def check(self) -> str:
        """How find's answers are checked before timing: against the naive baseline, which
        knows only the default dirs, or (a nested vault) against rg's files (``rg_check``)."""
        return "rg" if self.shape == "nested" else "naive"

    def quick(self) -> Profile:
        """This vault cut to at most QUICK_PAGES pages, timed with few runs."""
        pages = self.pages if self.shape == "fixture" else min(self.pages, QUICK_PAGES)
        return Profile(self.shape, pages, self.queries, (1, 2), self.served, 2)


#: Every vault of the benchmark, in the order they are timed; the targets name them by shape.
PROFILES: tuple[Profile, ...] = (
    Profile("fixture", 0, CLASSIC_QUERIES, (3, 20), cold_runs=10),
    Profile("rich-yaml", 1000, CLASSIC_QUERIES, (3, 15), cold_runs=10),
    Profile("multilang", 6000, MULTILANG_QUERIES, (2, 10)),
    Profile("nested", 10000, CLASSIC_QUERIES, (2, 10), served=CLASSIC_QUERIES),
    Profile("plain", 100000, CLASSIC_QUERIES, (1, 5), served=SERVED_PLAIN_QUERIES, cold_runs=3),
)
SHAPES = [profile.shape for profile in PROFILES]
#: The vault whose build time and warm peak RSS have targets.
LARGE = "plain"

#: The rows of each hyperfine run. WARM is find through a complete, fresh index with no
#: server; SCAN the plain scan; SERVED find as typed with a server running for the vault;
#: COLD find as typed on a vault with no index (it answers by the scan and starts a builder).
WARM = "find, warm, no server"
SCAN = "find --no-cache"
SERVED = "find, served"
COLD = "find, no index yet"
RG = "rg"
BARE = "python -c pass"
#: timed with each vault's first query, against WARM; each has its own target, named alike.
COMMANDS = ("lint", "recall")
#: Start-up references, timed with the fixture vault: what any argparse console script pays
#: before its first line of code, find's start-up without a search, and find with its
#: keywords after `--` (which sends it through argparse: PARSER_TEXT).
FLOOR = "python -c 'import re, argparse'"
VERSION = "mnemosyne --version"
FIND_ARGPARSE = "find, warm, no server (argparse)"
STARTUP_TOOLS = (FLOOR, VERSION, FIND_ARGPARSE)


class Context:
    """The programs under test: the console script and the interpreter it runs on."""

    def __init__(self, mnemosyne: str):
        self.mnemosyne = mnemosyne
        self.python = script_interpreter(mnemosyne)
        self.home = os.environ.get("HOME", "/")


def script_interpreter(script: str) -> str:
    """The interpreter a console script runs on (its ``#!`` line), so the bare
    ``python -c pass`` is the same interpreter, never a shim in front of it; this one when
    the script names none."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return sys.executable
    words = first[2:].decode(errors="replace").split() if first.startswith(b"#!") else []
    if len(words) == 1 and os.path.isabs(words[0]) and "python" in os.path.basename(words[0]):
        return words[0]
    return sys.executable


def and_pipeline(lister: list[str], null_flag: str, keywords: list[str], vault: Path) -> list[str]:
    """How a shell user ANDs keywords with a file lister: each stage keeps the files of the
    stage before that hold its keyword (``xargs -r``: no files, no run)."""
    stages = [shlex.join([*lister, null_flag, keywords[0], str(vault)])]
    for position, keyword in enumerate(keywords[1:], start=2):
        flags = [null_flag] if position < len(keywords) else []
        stages.append(shlex.join(["xargs", "-0", "-r", *lister, *flags, keyword]))
    return ["sh", "-c", " | ".join(stages)]


def rg_argv(vault: Path, keywords: list[str]) -> list[str]:
    lister = ["rg", "-l", "-i", "-F"]
    if len(keywords) == 1:
        return [*lister, keywords[0], str(vault)]
    return and_pipeline(lister, "-0", keywords, vault)


def find_argv(context: Context, vault: Path, keywords: list[str], *options: str) -> list[str]:
    return [context.mnemosyne, "wiki", "find", *options, "--vault", str(vault), *keywords]


#: How each row is called: (context, vault, keywords) -> argv. A new row is a name here.
TOOLS: dict[str, Callable[[Context, Path, list[str]], list[str]]] = {
    WARM: lambda context, vault, keywords: find_argv(context, vault, keywords, "--no-server"),
    SCAN: lambda context, vault, keywords: find_argv(context, vault, keywords, "--no-cache"),
    SERVED: lambda context, vault, keywords: find_argv(context, vault, keywords),
    # --no-server: on a vault of 5,000 pages a first call would start a server, which then
    # holds the vault's lock when the served rows start theirs by hand.
    COLD: lambda context, vault, keywords: find_argv(context, vault, keywords, "--no-server"),
    RG: lambda context, vault, keywords: rg_argv(vault, keywords),
    BARE: lambda context, vault, keywords: [context.python, "-c", "pass"],
    "naive": lambda context, vault, keywords: [context.python, str(NAIVE), "--vault", str(vault), *keywords],
    "lint": lambda context, vault, keywords: [context.mnemosyne, "wiki", "lint", "--vault", str(vault)],
    "recall": lambda context, vault, keywords: [
        context.mnemosyne,
        "wiki",
        "recall",
        "--no-server",
        "--vault",
        str(vault),
        *keywords,
    ],
    FLOOR: lambda context, vault, keywords: [context.python, "-c", "import re, argparse"],
    VERSION: lambda context, vault, keywords: [context.mnemosyne, "--version"],
    FIND_ARGPARSE: lambda context, vault, keywords: find_argv(context, vault, ["--", *keywords], "--no-server"),
}


# --- the targets ---------------------------------------------------------------------------


class Target:
    """One row of the targets table: a ratio (or seconds, MB) and its ceiling."""

    def __init__(self, key: str, row: str, limit: float, unit: str, against: str):
        #: Names the row's wording in LIMITS.
        self.key = key
        self.row = row
        self.limit = limit
        #: "x" for a ratio, else the unit of an absolute figure ("s", "MB").
        self.unit = unit
        #: What the ratio is taken against ("rg", "bare python", ...); empty for a figure.
        self.against = against

    @property
    def target(self) -> str:
        # :g, so that 0.08 is not shown rounded to 0.1 (nor 1.8 as 1.80).
        if self.unit == "x":
            return f"≤ {self.limit:g}× {self.against}"
        return f"≤ {self.limit:g} {self.unit}"


#: The targets, in the table's order. The rows of a vault are named by its profile's
#: shape; ``plain`` is the 100k vault (2k with --quick).
TARGETS: tuple[Target, ...] = (
    Target("fixture-warm", "fixture, warm", 1.8, "x", "bare python"),
    Target("warm-rich-yaml", "rich-yaml, warm, no server", 2.5, "x", "rg"),
    Target("warm-multilang", "multilang, warm, no server", 1.8, "x", "rg"),
    Target("warm-nested", "nested, warm, no server", 1.8, "x", "rg"),
    Target("warm-plain", "plain, warm, no server", 1.2, "x", "rg"),
    Target("served-rare", "with the server, plain: rare keyword", 0.08, "x", "rg"),
    Target("served-the", "with the server, plain: `the`", 0.2, "x", "rg"),
    Target("served-every", "with the server, plain: every page matches", 0.7, "x", "rg"),
    Target("served-none", "with the server, plain: no page matches", 0.08, "x", "rg"),
    Target("served-nested", "with the server, nested", 0.5, "x", "rg"),
    Target("lint", "lint, warm", 1.5, "x", "find"),
    Target("recall", "recall, warm", 1.2, "x", "find"),
    Target("cold", "first call, no index", 1.2, "x", "the scan (`--no-cache`)"),
    Target("build", "detached build of the plain vault", 45.0, "s", ""),
    Target("size", "index size (names table included)", 3.0, "x", "the markdown"),
    Target("rss", "peak RSS of a warm find, plain vault", 100.0, "MB", ""),
)

#: What limits a missed target, by its key: one line each, written for the lead to edit,
#: filled from the run with ``str.format`` (a placeholder the run did not measure is left
#: as written). Every row has: {ratio} or {value}, {vault}, {pages}. Timed rows add {query}
#: (the worst), {find_ms} (the row's find), {rg_ms}, {scan_ms}, {bare_ms} (the same run's
#: rg, --no-cache and python -c pass), {matches} (pages the query matches), {find_cpu_ms},
#: {rg_cpu_ms} (user + system CPU per run), {startup_share} (the bare interpreter's share of
#: find's time, %), {per_page_us} (find's time over the bare interpreter's, per page).
#: lint and recall add {command}, {command_ms}; cold adds {cold_ms}; build adds {build_s},
#: {pages_per_s}, {markdown_mb}; size adds {index_mb}, {markdown_mb}; rss adds {rss_mb},
#: {index_mb}; served rows add {server_mb} (the server's resident memory).
#:
#: What each says of the design, so a miss names the step that costs: find ranks wholly in
#: SQL (``NoteIndex.top``): the first group from a names table (title, file-name stem,
#: aliases, path; folded, with a copy marking each word start) through its own trigram
#: table, ranked by one packed integer; the second group by mention depth, in SQL from the
#: kept line ends on a page's first 8 lines, else a Python ``depth()`` called once per
#: matching row; the text's rows picked by the first of the
#: keywords' trigrams asked (a few of each) held by at most a quarter of the pages, or all
#: read when every one asked is in more; the total, for a single 3-letter keyword, the trigram's page count in FTS5's
#: vocabulary. A served call reads ``served_dirs`` and ``meta`` (no listing unpacked; the
#: page counts kept by triggers; a miss's note kept from the last listing). A call with no
#: server stats each dir, takes the names of one whose stat is as kept without listing it
#: (git's untracked cache), lstats every page, and compares each dir by one digest of its
#: names and stat keys (the ``dirs`` table) instead of reading its rows; what the config and
#: the ignore files decide it takes from ``meta``, kept by their stat. lint and recall
#: read the findings and fields the index keeps.
LIMITS: dict[str, str] = {
    "fixture-warm": (
        "find took {find_ms:.1f} ms ({query}) where the bare interpreter took {bare_ms:.1f} ms: on "
        "{pages} pages nearly all of a call is start-up: the modules a warm call imports (SQLite's "
        "C module, which imports functools for its statement cache, and some 25 of ours; no re, "
        "enum, argparse or typing), the cache dir and rights key, opening the SQLite index; then "
        "listing the vault and comparing its dirs by their digests. The ranking itself is a few "
        "SQL statements. (The interpreter's teardown is skipped: the process ends once its "
        "output is flushed.)"
    ),
    "warm-rich-yaml": (
        "find took {find_ms:.0f} ms ({query}, {matches} matches) to rg's {rg_ms:.0f} ms; "
        "{startup_share:.0f}% of it is the interpreter's start-up. With no server every call stats "
        "each dir (its names kept by that stat, not listed again) and lstats each of its "
        "{pages:,} pages in Python, then compares each dir by one digest of its names and stat "
        "keys ({per_page_us:.1f} µs a page over the start-up, the SQL ranking included)."
    ),
    "warm-multilang": (
        "find took {find_ms:.0f} ms ({query}, {matches} matches) to rg's {rg_ms:.0f} ms: with no "
        "server every call stats each dir (its names kept by that stat, not listed again) and "
        "lstats each of its {pages:,} pages in Python ({per_page_us:.1f} µs a page over the "
        "{bare_ms:.0f} ms start-up, each dir then compared by one digest), where rg reads the "
        "files with several threads ({rg_cpu_ms:.0f} ms of CPU to find's {find_cpu_ms:.0f})."
    ),
    "warm-nested": (
        "find took {find_ms:.0f} ms ({query}, {matches} matches) to rg's {rg_ms:.0f} ms: with no "
        "server every call stats each dir of the tree and each .gitignore file, and takes each "
        "dir's pages and sub-dirs as the index kept them by those stats (only the vault root "
        "listed again, no rule parsed), then lstats each of its {pages:,} pages in Python ({per_page_us:.1f} µs a "
        "page over the {bare_ms:.0f} ms start-up) and ranks in SQL; rg walks it with several "
        "threads in compiled code."
    ),
    "warm-plain": (
        "find took {find_ms:.0f} ms ({query}, {matches} matches) to rg's {rg_ms:.0f} ms: with no "
        "server every call stats each dir (its names kept by that stat, not listed again) and "
        "lstats each of its {pages:,} pages in Python ({per_page_us:.1f} µs a page, about 2.7 of "
        "them the `os.stat` call itself; each dir then compared by one digest, none of its rows "
        "read), while rg opens and reads them with several threads ({rg_cpu_ms:.0f} ms of CPU to "
        "find's {find_cpu_ms:.0f}). Two threads stating pages were twice as slow: the GIL."
    ),
    "served-rare": (
        "the served call took {find_ms:.0f} ms to rg's {rg_ms:.0f} ms ({matches} matches), of "
        "which {bare_ms:.0f} ms is the interpreter's start-up: what is left is opening the index, "
        "asking the server, reading `served_dirs` and `meta`, and the SQL ranking (the names "
        "through their own trigram table, the text through the rows of the keyword's first "
        "trigram that at most a quarter of the pages hold)."
    ),
    "served-the": (
        "the served call took {find_ms:.0f} ms to rg's {rg_ms:.0f} ms: `the` is in {matches} of "
        "{pages:,} pages, more than a quarter, so its trigram picks no rows and every row of the "
        "text is read and checked with `instr`; when the names do not fill the limit each "
        "matching row also gets its mention depth, in SQL on a page's first 8 lines (the total is "
        "the trigram's page count in FTS5's vocabulary only when the names fill it)."
    ),
    "served-every": (
        "the served call took {find_ms:.0f} ms to rg's {rg_ms:.0f} ms: every one of the {pages:,} "
        "pages ({matches} matches) holds the word, so each trigram is in more than a quarter of "
        "the pages and every row of `text_rows` is read (about 90 ms in process to read and "
        "check them all with `instr`), each given its mention depth in SQL from where the page's "
        "first lines end (about 70 ms more), then joined to its page and sorted: every page "
        "says the word at one place on its fourth line, so all tie on the depth and the path "
        "decides (about 40 ms), and the total is counted over them all."
    ),
    "served-none": (
        "the served call took {find_ms:.0f} ms to rg's {rg_ms:.0f} ms on a word no page holds, of "
        "which {bare_ms:.0f} ms is the interpreter's start-up: the trigram picks no row, so what "
        "is left is opening the index, asking the server, reading `served_dirs` and `meta`, the "
        "note on the files the layout leaves out, kept from the last listing, and the words near "
        'the keyword from the `words` table (a miss\'s "did you mean").'
    ),
    "served-nested": (
        "the served call took {find_ms:.0f} ms ({query}, {matches} matches) to rg's "
        "{rg_ms:.0f} ms, {bare_ms:.0f} ms of it the interpreter's start-up; the rest is opening "
        "the index, asking the server, reading `served_dirs` and `meta`, and the SQL ranking, "
        "most of it the total: the names fill the limit, but `agent` is in more than a quarter "
        "of the pages, so every row of `text_rows` (18.6 MB of text) is checked with `instr` "
        "to count them (44 ms in process)."
    ),
    "lint": (
        "`wiki lint` took {command_ms:.0f} ms to find's {find_ms:.0f} ms on {vault}: it lists "
        "the vault as find does, then reads the pages' findings from the index (on the generated "
        "vaults every page has one: no frontmatter), which SQLite gives back as text and lint "
        "makes, sorts and joins into lines in C; what is left is pysqlite's fetch of those rows "
        "(180 ms in process at 100,000 rows: about a microsecond a column), a second walk of "
        "the vault for the files find never searches (about 130 ms; it asks what the listing's "
        "ignore rules decided, not the rules)."
    ),
    "recall": (
        "`wiki recall` took {command_ms:.0f} ms to find's {find_ms:.0f} ms on {vault}: its "
        "candidates come from the index (each term looked up with `instr` in the kept titles, "
        "slugs and tags), but each candidate's kept fields are unpacked, judged and ranked in "
        "Python, and the entries it prints whole are read from disk; with no server it also "
        "lists the vault and lstats every page, as find does."
    ),
    "cold": (
        "with no index the first call took {cold_ms:.0f} ms to the scan's {scan_ms:.0f} ms on "
        "{vault}: it answers by the scan, then starts the detached builder (its own work: the "
        "cache dir, a look at the index, the spawn, a few milliseconds); hyperfine's prepare "
        "kills that builder before the next run, and the rest of the gap moves from run to run "
        "of this bench: not isolated."
    ),
    "build": (
        "the build read {pages:,} pages ({markdown_mb:.0f} MB) in {build_s:.0f} s, {pages_per_s:.0f} "
        "pages a second: one process reading, folding, linting and splitting into words each "
        "page, and inserting a batch at a time into the pages, names, recall and words tables "
        "(one statement a table and batch) and the three FTS5 trigram tables, at nice 10."
    ),
    "size": (
        "on {vault} the index is {index_mb:.2f} MB for {markdown_mb:.2f} MB of markdown. On the "
        'fixture (1 KiB pages) the words a miss\'s "did you mean" looks in take more room than the '
        "text itself: each word is in a table, in two B-tree indexes (by its start and by its end) "
        "and in a trigram table, some 70 bytes a word; then come the folded text, its FTS5 trigram "
        "index, and the pages' rows and names. Even at what we estimate as SQLite's floor, some 45 "
        "bytes a word, the fixture would be above 3×. At 100,000 pages the text, its trigrams and the names (each "
        "kept folded and marked at word starts, with a trigram table of its own) are most of it."
    ),
    "rss": (
        "a warm find at {pages:,} pages peaked at {rss_mb:.0f} MB ({query}), with an index of "
        "{index_mb:.0f} MB: SQLite's page cache and the listing of every page as Python objects."
    ),
}


class Filled(dict[str, Any]):
    """Leaves a placeholder the run did not measure as written."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill(template: str, facts: dict[str, Any]) -> str:
    """``template`` with ``facts`` filled in; a placeholder whose fact is missing, or whose
    format does not fit the fact, is left as written rather than failing the report."""
    try:
        return template.format_map(Filled(facts))
    except (ValueError, TypeError, IndexError):
        return template + " (" + ", ".join(f"{key}={value}" for key, value in sorted(facts.items())) + ")"


class Row:
    """A target with what this run measured of it."""

    def __init__(self, target: Target, value: float | None, measured: str, facts: dict[str, Any]):
        self.target = target
        self.value = value
        self.measured = measured
        self.facts = facts

    @property
    def met(self) -> bool | None:
        return None if self.value is None else self.value <= self.target.limit


# --- results ---------------------------------------------------------------------------------

#: times[vault][query][tool] = (median wall seconds, mean user + system CPU seconds)
Times = dict[str, dict[str, dict[str, tuple[float, float]]]]


class Results:
    def __init__(self) -> None:
        self.warm: Times = {}
        self.served: Times = {}
        #: cold[vault] = {COLD: ..., SCAN: ...} of the first query
        self.cold: dict[str, dict[str, tuple[float, float]]] = {}
        #: matches[vault][query] = how many pages find's answer holds
        self.matches: dict[str, dict[str, int]] = {}
        #: builds[vault] = seconds of the foreground build
        self.builds: dict[str, float] = {}
        #: sizes[vault] = (index bytes after a checkpoint, markdown bytes of the listed pages)
        self.sizes: dict[str, tuple[int, int]] = {}
        #: rss[vault][query] = peak RSS of a warm find, MB
        self.rss: dict[str, dict[str, float]] = {}
        #: server_mb[vault] = the server's resident memory after the served runs
        self.server_mb: dict[str, float] = {}
        self.pages: dict[str, int] = {}
        #: seconds each phase of the run took, for the duration estimate
        self.phases: dict[str, float] = {}


def timed_facts(results: Results, times: Times, vault: str, query: str, tool: str, other: str) -> dict[str, Any]:
    """What LIMITS may say of ``tool`` on one query: its time and the same run's others."""
    row = times[vault][query]
    find, find_cpu = row[tool]
    pages = results.pages[vault]
    facts: dict[str, Any] = {
        "vault": vault,
        "pages": pages,
        "query": query,
        "find_ms": find * 1000,
        "find_cpu_ms": find_cpu * 1000,
        "ratio": find / row[other][0],
    }
    if query in results.matches.get(vault, {}):
        facts["matches"] = results.matches[vault][query]
    for name, tool_name in (("rg", RG), ("scan", SCAN), ("bare", BARE)):
        if tool_name in row:
            facts[f"{name}_ms"] = row[tool_name][0] * 1000
            facts[f"{name}_cpu_ms"] = row[tool_name][1] * 1000
    if BARE in row:
        bare = row[BARE][0]
        facts["startup_share"] = 100 * bare / find
        facts["per_page_us"] = (find - bare) / max(pages, 1) * 1e6
    return facts


def worst(results: Results, times: Times, vault: str | None, tool: str, other: str) -> dict[str, Any] | None:
    """The facts of the query with the largest ratio of ``tool`` to ``other`` on ``vault``."""
    if vault is None or vault not in times:
        return None
    queries = [query for query, row in times[vault].items() if tool in row and other in row]
    if not queries:
        return None
    return max(
        (timed_facts(results, times, vault, query, tool, other) for query in queries),
        key=lambda facts: facts["ratio"],
    )


def ratio_row(target: Target, facts: dict[str, Any] | None, reference: str = "rg", where: str = "") -> Row:
    """A ratio target's row; ``reference``: the facts' name of what find is held to."""
    if facts is None:
        return Row(target, None, "not measured", {})
    where = where or f"worst: {facts['query']}; "
    detail = f"{facts['find_ms']:.1f} / {facts[reference + '_ms']:.1f} ms"
    return Row(target, facts["ratio"], f"{shown_ratio(facts['ratio'])}× ({where}{detail})", facts)


def shown_ratio(ratio: float) -> str:
    """Two decimals, three below 0.1: a served row's 0.084 is a miss of 0.08, not 0.08."""
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"


def targets(profiles: list[Profile], results: Results) -> list[Row]:
    """Each target of TARGETS with its figure from this run (not measured: value None)."""
    label = {profile.shape: profile.label for profile in profiles}
    rows: list[Row] = []
    by_key = {target.key: target for target in TARGETS}
    fixture = label.get("fixture")
    rows.append(ratio_row(by_key["fixture-warm"], worst(results, results.warm, fixture, WARM, BARE), "bare"))
    for shape in ("rich-yaml", "multilang", "nested", "plain"):
        rows.append(ratio_row(by_key[f"warm-{shape}"], worst(results, results.warm, label.get(shape), WARM, RG)))
    plain = label.get(LARGE)
    for key, query in SERVED_PLAIN_TARGETS.items():
        facts = None
        if plain in results.served and query in results.served[plain]:
            facts = timed_facts(results, results.served, plain, query, SERVED, RG)
            facts["server_mb"] = results.server_mb.get(plain, 0.0)
        rows.append(ratio_row(by_key[key], facts, where=f"`{' '.join(SERVED_PLAIN_QUERIES[query])}`; "))
    facts = worst(results, results.served, label.get("nested"), SERVED, RG)
    if facts is not None:
        facts["server_mb"] = results.server_mb.get(label["nested"], 0.0)
    rows.append(ratio_row(by_key["served-nested"], facts))
    for command in COMMANDS:
        rows.append(command_row(by_key[command], results, command))
    rows.append(cold_row(by_key["cold"], results))
    target = by_key["build"]
    if plain in results.builds:
        seconds, pages = results.builds[plain], results.pages[plain]
        markdown = results.sizes[plain][1] / 1e6 if plain in results.sizes else 0.0
        facts = {"vault": plain, "pages": pages, "value": seconds, "build_s": seconds}
        facts |= {"pages_per_s": pages / max(seconds, 1e-9), "markdown_mb": markdown}
        rows.append(Row(target, seconds, f"{seconds:.1f} s ({pages:,} pages)", facts))
    else:
        rows.append(Row(target, None, "not measured", {}))
    rows.append(size_row(by_key["size"], results))
    target = by_key["rss"]
    if results.rss.get(plain or ""):
        peaks = results.rss[plain or ""]
        query = max(peaks, key=lambda name: peaks[name])
        index_mb = results.sizes[plain or ""][0] / 1e6 if plain in results.sizes else 0.0
        facts = {"vault": plain, "pages": results.pages[plain or ""], "query": query, "rss_mb": peaks[query]}
        facts |= {"value": peaks[query], "index_mb": index_mb}
        rows.append(Row(target, peaks[query], f"{peaks[query]:.1f} MB (worst: {query})", facts))
    else:
        rows.append(Row(target, None, "not measured", {}))
    return rows


def command_row(target: Target, results: Results, command: str) -> Row:
    """``wiki lint`` or ``wiki recall`` against the warm find of the same run, worst over
    vaults."""
    candidates = []
    for vault, by_query in results.warm.items():
        for query, row in by_query.items():
            if command in row and WARM in row:
                facts = timed_facts(results, results.warm, vault, query, WARM, WARM)
                facts |= {"command": command, "command_ms": row[command][0] * 1000}
                facts["ratio"] = row[command][0] / row[WARM][0]
                candidates.append(facts)
    if not candidates:
        return Row(target, None, "not measured", {})
    facts = max(candidates, key=lambda facts: facts["ratio"])
    measured = (
        f"{shown_ratio(facts['ratio'])}× (worst: {facts['vault']}; "
        f"{facts['command_ms']:.1f} / {facts['find_ms']:.1f} ms)"
    )
    return Row(target, facts["ratio"], measured, facts)


def cold_row(target: Target, results: Results) -> Row:
    """The first call with no index against the scan of the same run, worst over vaults."""
    candidates: list[dict[str, Any]] = []
    for vault, row in results.cold.items():
        if COLD in row and SCAN in row:
            cold, scan = row[COLD][0], row[SCAN][0]
            facts: dict[str, Any] = {"vault": vault, "pages": results.pages[vault], "ratio": cold / scan}
            facts |= {"cold_ms": cold * 1000, "scan_ms": scan * 1000}
            candidates.append(facts)
    if not candidates:
        return Row(target, None, "not measured", {})
    facts = max(candidates, key=lambda facts: facts["ratio"])
    measured = (
        f"{shown_ratio(facts['ratio'])}× (worst: {facts['vault']}; {facts['cold_ms']:.0f} / {facts['scan_ms']:.0f} ms)"
    )
    return Row(target, facts["ratio"], measured, facts)


def size_row(target: Target, results: Results) -> Row:
    """The index against the markdown of its pages, worst over vaults."""
    if not results.sizes:
        return Row(target, None, "not measured", {})
    vault = max(results.sizes, key=lambda name: results.sizes[name][0] / max(results.sizes[name][1], 1))
    index_bytes, markdown = results.sizes[vault]
    ratio = index_bytes / max(markdown, 1)
    facts = {"vault": vault, "pages": results.pages[vault], "ratio": ratio}
    facts |= {"index_mb": index_bytes / 1e6, "markdown_mb": markdown / 1e6}
    measured = f"{ratio:.2f}× (worst: {vault}; {index_bytes / 1e6:.2f} / {markdown / 1e6:.2f} MB)"
    return Row(target, ratio, measured, facts)


# --- measuring -------------------------------------------------------------------------------


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
            # A page changed within RACY_NS of the build would be read again by every call.
            time.sleep(3.1)


def index_file(vault: Path) -> str:
    """The index find uses for ``vault`` (under CACHE_HOME, with this process's rights, which
    are the timed calls')."""
    from mnemosyne_core.cache import index_path, usable_cache_dir

    cache_dir, why_not = usable_cache_dir(os.environ, create=True)
    if cache_dir is None:
        sys.exit(f"the bench's index dir cannot be used: {why_not}")
    return index_path(cache_dir, os.path.realpath(vault))


def index_usable(index: str) -> bool:
    """Whether a whole build by this code is in the index: only then do calls read it."""
    from mnemosyne_core.index import IndexUnusable, NoteIndex, code_key

    try:
        with NoteIndex.open(index, read_only=True) as opened:
            return opened.usable(code_key())
    except IndexUnusable:
        return False


def index_bytes(index: str) -> int:
    """The index's size on disk after a checkpoint: the database plus its write-ahead log."""
    import sqlite3

    connection = sqlite3.connect(index)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    return sum(os.path.getsize(index + suffix) for suffix in ("", "-wal") if os.path.exists(index + suffix))


def build_index(profile: Profile, context: Context, index: str) -> float:
    """Build the index in the foreground with the detached builder's own command, from no
    index at all; returns its wall time in seconds."""
    reset_index.reset(index)
    argv = [context.python, "-m", "mnemosyne_core.build", index, os.path.realpath(profile.path), context.home]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or not index_usable(index):
        sys.exit(f"the index of {profile.label} was not built ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed


def naive_check(profile: Profile, keywords: list[str], context: Context) -> None:
    """find and the naive baseline must print the same lines (both cap at 20)."""
    find = subprocess.run(TOOLS[SCAN](context, profile.path, keywords), capture_output=True, check=False)
    naive = subprocess.run(TOOLS["naive"](context, profile.path, keywords), capture_output=True, check=False)
    if find.stdout != naive.stdout:
        sys.exit(f"find and the naive baseline disagree on {profile.label} for {keywords}: a bug, not a benchmark")


def rg_check(profile: Profile, keywords: list[str], context: Context) -> None:
    """For a vault the naive baseline cannot read (a tree with a .gitignore): find's pages
    must be rg's files (which hold every keyword in their text, rg honouring the same ignore
    files) plus pages whose path holds a keyword rg's files lack. Folded as ASCII: the nested
    vault's queries are ASCII."""
    find = subprocess.run(
        [*TOOLS[SCAN](context, profile.path, keywords), "--json", "--limit", "0"], capture_output=True, check=False
    )
    found = {page["path"] for page in json.loads(find.stdout or b"[]")}
    listing = subprocess.run(TOOLS[RG](context, profile.path, keywords), capture_output=True, check=False)
    vault_prefix = f"{profile.path}/"
    by_rg = {line.removeprefix(vault_prefix) for line in listing.stdout.decode().splitlines()}
    by_path = {path for path in found - by_rg if any(keyword.lower() in path.lower() for keyword in keywords)}
    if found - by_path != by_rg:
        sys.exit(f"find and rg disagree on {profile.label} for {keywords}: a bug, not a benchmark")


def same_as_scan(
    tool: str, profile: Profile, keywords: list[str], context: Context, env: dict[str, str] | None = None
) -> int:
    """``tool``'s stdout, stderr and exit code must be the scan's; returns how many pages
    match (from the scan's --json)."""
    scan = subprocess.run(TOOLS[SCAN](context, profile.path, keywords), capture_output=True, check=False, env=env)
    run = subprocess.run(TOOLS[tool](context, profile.path, keywords), capture_output=True, check=False, env=env)
    if (run.returncode, run.stdout, run.stderr) != (scan.returncode, scan.stdout, scan.stderr):
        sys.exit(f"`{tool}` and the scan disagree on {profile.label} for {keywords}: a bug, not a benchmark")
    listed = subprocess.run(
        [*TOOLS[SCAN](context, profile.path, keywords), "--json", "--limit", "0"], capture_output=True, check=False
    )
    return len(json.loads(listed.stdout or b"[]"))


def same_as_its_scan(command: str, profile: Profile, keywords: list[str], context: Context) -> None:
    """``wiki lint`` or ``wiki recall`` through the index must print what its own
    ``--no-cache`` prints (stdout, stderr, exit code)."""
    argv = TOOLS[command](context, profile.path, keywords)
    run = subprocess.run(argv, capture_output=True, check=False)
    scan = subprocess.run([*argv[:3], "--no-cache", *argv[3:]], capture_output=True, check=False)
    if (run.returncode, run.stdout, run.stderr) != (scan.returncode, scan.stdout, scan.stderr):
        sys.exit(f"`wiki {command}` and its --no-cache disagree on {profile.label}: a bug, not a benchmark")


#: Run by the interpreter under test: compile the packages a call imports (and, in a venv,
#: its site-packages) to bytecode, as pip does on install, so no timed call compiles them.
PRECOMPILE = """
import compileall, importlib.util, sys, sysconfig
dirs = []
for name in ("mnemosyne_cli", "mnemosyne_core", "mnemosyne_contract", "mnemosyne_ingest"):
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(spec.submodule_search_locations)
if sys.prefix != sys.base_prefix:
    dirs.append(sysconfig.get_path("purelib"))
for found in dirs:
    compileall.compile_dir(found, quiet=2)
"""


def precompile(context: Context) -> None:
    """Every timed call runs with bytecode writes allowed and finds it already written: a
    shell's PYTHONDONTWRITEBYTECODE=1 would make each call compile every module it imports
    (tens of milliseconds), and a first run that writes it would time the compiler."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([context.python, "-c", PRECOMPILE], check=False, stdout=subprocess.DEVNULL)


def hyperfine(
    named: dict[str, list[str]],
    warmup: int,
    runs: int,
    prepare: dict[str, list[str]] | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, tuple[float, float]]:
    """Run hyperfine over ``named`` commands, all in one invocation: each one's median wall
    time and mean user + system CPU time, in seconds, by name. ``prepare``: what runs before
    each run of the commands it names."""
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
        # -i: find and rg exit 1 on no match, lint on findings; answers are checked elsewhere.
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        results = json.loads(export.read_text(encoding="utf-8"))["results"]
    return {
        result["command"]: (statistics.median(result["times"]), result["user"] + result["system"]) for result in results
    }


def peak_rss_mb(argv: list[str]) -> float:
    """The peak RSS of one run of ``argv`` (its largest process), in MB."""
    script = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    # A fresh wrapper per measure: RUSAGE_CHILDREN is a maximum over every child so far.
    output = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, check=True)
    return int(output.stdout) / 1024  # ru_maxrss is in KiB on Linux


def markdown_bytes(vault: Path) -> int:
    """The bytes of every page a find lists in ``vault`` (what the index holds)."""
    from mnemosyne_core.vault import scan

    listing = scan(os.path.realpath(vault)).listing
    return sum(os.path.getsize(os.path.join(dir_path, name)) for _, dir_path, names in listing for name in names)


def report_line(label: str, query: str, times: dict[str, tuple[float, float]]) -> None:
    print(f"  {label}, {query}: " + ", ".join(f"{tool} {value[0] * 1000:.1f} ms" for tool, value in times.items()))


def measure(profile: Profile, context: Context, results: Results, naive_up_to: int) -> None:
    """Every row of ``profile``: build, warm, peak RSS, served, first call (module docstring)."""
    label, vault = profile.label, profile.path
    index = index_file(vault)
    results.pages[label] = profile.pages
    phase = time.monotonic()
    results.builds[label] = build_index(profile, context, index)
    results.sizes[label] = (index_bytes(index), markdown_bytes(vault))
    print(f"{label} ({profile.pages:,} pages): index built in {results.builds[label]:.1f} s", flush=True)
    results.phases[f"{label}: build"] = time.monotonic() - phase

    phase = time.monotonic()
    warmup, runs = profile.runs
    results.warm[label], results.matches[label] = {}, {}
    for position, (query, keywords) in enumerate(profile.queries.items()):
        if profile.check == "rg":
            rg_check(profile, keywords, context)
        elif profile.pages <= naive_up_to:
            naive_check(profile, keywords, context)
        results.matches[label][query] = same_as_scan(WARM, profile, keywords, context)
        tools = [WARM, SCAN, RG, BARE]
        if profile.shape == "fixture":
            tools += STARTUP_TOOLS
        if position == 0:
            for command in COMMANDS:
                same_as_its_scan(command, profile, keywords, context)
            tools += COMMANDS
        found = hyperfine({tool: TOOLS[tool](context, vault, keywords) for tool in tools}, warmup, runs)
        results.warm[label][query] = found
        report_line(label, query, found)
    if not index_usable(index):
        sys.exit(f"the index of {label} was no longer whole after the warm rows: they timed the scan")
    results.phases[f"{label}: warm"] = time.monotonic() - phase

    if profile.shape == LARGE:
        results.rss[label] = {
            query: peak_rss_mb(TOOLS[WARM](context, vault, keywords)) for query, keywords in profile.queries.items()
        }
        print(f"  peak RSS, MB: {results.rss[label]}", flush=True)

    if profile.served is not None:
        phase = time.monotonic()
        measure_served(profile, context, results)
        results.phases[f"{label}: served"] = time.monotonic() - phase

    phase = time.monotonic()
    keywords = next(iter(profile.queries.values()))
    reset = [sys.executable, str(RESET_INDEX), index]
    reset_index.reset(index)
    same_as_scan(COLD, profile, keywords, context)
    if not builder_started(index):
        sys.exit(f"the first call on {label} started no builder: the row would not time a user's first call")
    reset_index.reset(index)  # the builder that check started
    found = hyperfine(
        # The scan first: the builder of COLD's last run is still at work when hyperfine ends.
        {SCAN: TOOLS[SCAN](context, vault, keywords), COLD: TOOLS[COLD](context, vault, keywords)},
        0,
        profile.cold_runs,
        prepare={COLD: reset},
    )
    # The last run's builder: none is left running into the next vault's rows.
    reset_index.reset(index)
    results.cold[label] = found
    report_line(label, "first call, no index", found)
    results.phases[f"{label}: first call"] = time.monotonic() - phase


def builder_started(index: str, wait_seconds: float = 5.0) -> bool:
    """Whether a builder of ``index`` is at work or has been (its lock file is made by the
    builder alone), waiting a little for one just spawned."""
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if os.path.exists(index + reset_index.LOCK_SUFFIX) or reset_index.builders(index):
            return True
        time.sleep(0.05)
    return False


def served_in_process(vault: Path, keywords: list[str], env: dict[str, str]) -> bool:
    """Whether find, asking the vault's server as the console script does, took the pages
    the server said were unchanged without listing the vault (a miss as well: its note on
    the files the layout leaves out is the one the last listing kept)."""
    from mnemosyne_cli.client import ServerChanges
    from mnemosyne_cli.environment import Environment
    from mnemosyne_core.backend import FindRequest
    from mnemosyne_core.cache import IndexedScan

    backend = IndexedScan(env, ServerChanges(Environment(env)))
    backend.search(FindRequest(str(vault), keywords, environ=env))
    return backend.served


def measure_served(profile: Profile, context: Context, results: Results) -> None:
    """find as typed, with a ``wiki serve`` running for the vault, against rg."""
    assert profile.served is not None
    label, vault = profile.label, profile.path
    runtime = tempfile.mkdtemp(prefix="mnemosyne-bench-run-")  # mode 0700, as the server wants
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime}
    server, watching = serve_bench.start_server(context.mnemosyne, vault, env)
    print(f"  wiki serve watched {label} in {watching:.2f} s", flush=True)
    results.served[label] = {}
    warmup, runs = profile.runs
    try:
        for query, keywords in profile.served.items():
            # The first call keeps the server's token and the listing; the next ones are served.
            subprocess.run(TOOLS[SERVED](context, vault, keywords), capture_output=True, check=False, env=env)
            results.matches[label][query] = same_as_scan(SERVED, profile, keywords, context, env)
            if query == EVERY_PAGE_QUERY and results.matches[label][query] != profile.pages:
                sys.exit(f"{keywords} matches {results.matches[label][query]} of {profile.pages} pages on {label}")
            # A miss too: its note on the files the layout leaves out is kept from the last listing.
            if not served_in_process(vault, keywords, env):
                sys.exit(f"the server did not answer find on {label} for {keywords}: the row would time the listing")
            timed = {tool: TOOLS[tool](context, vault, keywords) for tool in (SERVED, RG, BARE)}
            found = hyperfine(timed, max(warmup, 2), runs, env=env)
            results.served[label][query] = found
            report_line(f"{label} served", query, found)
        results.server_mb[label] = serve_bench.resident_bytes(server.pid) / 2**20
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(runtime, ignore_errors=True)


# --- the report ------------------------------------------------------------------------------


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

    import sqlite3

    return {
        "CPU": cpu,
        "cores (nproc)": str(os.cpu_count()),
        "OS": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "SQLite": sqlite3.sqlite_version,
        "hyperfine": version(["hyperfine", "--version"]),
        "ripgrep": version(["rg", "--version"]),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|---" * len(header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def row_name(target: Target, profiles: list[Profile]) -> str:
    """The row as the table shows it: each shape named with its vault's size (as timed, else
    as a whole run times it)."""
    name = target.row
    for profile in (*profiles, *PROFILES):
        if profile.shape != "fixture" and profile.shape in name:
            return name.replace(profile.shape, profile.label, 1)
    return name


#: Why the console script parses a plain find itself, from what the fixture's columns show.
PARSER_TEXT = [
    "### The console script's own parser",
    "",
    "A plain find, recall or lint (its words and the options packages/mnemosyne-cli/src/mnemosyne_cli/options.py",
    "lets it take) is parsed by the console script itself; argparse parses everything else and",
    "stays the reference (a property test holds the two to the same arguments, and both read",
    f"that one table of each command's options). The fixture's `{FIND_ARGPARSE}` column times the same",
    "find with its keywords after `--`, which sends it through argparse: importing argparse",
    "(with gettext) and building find's parser. When the parser was last weighed (CPU time from",
    "the first import to the parsed arguments, median of 40 fresh interpreters per install, on a",
    "loaded 2-core machine), the console script's parser took 16 ms under a pip install and",
    "13 ms under uv's, argparse 38 and 25 ms: argparse added 12-22 ms, more than half of what a",
    "bare `python -c pass` cost there (19-23 ms). That still matters, so the parser stays.",
]


def source_lines(source: str) -> tuple[int, int]:
    """(lines, code lines) of a Python module's ``source``: a code line holds a token that
    is no comment, no docstring and no line break."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and ast.get_docstring(node, clean=False) is not None
        ):
            first = node.body[0]
            docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    code = {
        line
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type not in skipped
        for line in range(token.start[0], token.end[0] + 1)
    }
    return len(source.splitlines()), len(code - docstrings)


#: What the core is made of, and why it is over CORE_LINES_TARGET.
CORE_SIZE_TEXT = [
    "The core is over the target. What holds its size is what the rows above and the spec ask of",
    "it: the index and the state it keeps so that a warm call reads no page, config or ignore",
    "file whose stat has not changed (`index`, `freshness`, `cache`, `build`: a dir's sort and the",
    "rules' decisions kept by stat, a digest per dir, the listing a served call reuses), the",
    "listing of every layout with its ignore files and exclude (`vault`, `config`, `layout`),",
    "lint's codes and the fix each names, and the server's watch of the vault (`changes`,",
    "`inotify`). The plain scan that `--no-cache` is adds little of its own (`find`'s search,",
    "lint's and recall's page loops): it shares the listing and the page rules with the index",
    "path. Reaching the target means dropping a feature, or kept state a speed row above",
    "depends on.",
]


def core_size() -> list[str]:
    """The section on the core's size: each module's lines and code lines, the biggest first."""
    sizes = sorted(
        ((path.name, *source_lines(path.read_text(encoding="utf-8"))) for path in CORE_SOURCE.glob("*.py")),
        key=lambda row: (-row[2], row[0]),
    )
    lines, code = sum(row[1] for row in sizes), sum(row[2] for row in sizes)
    verdict = "pass" if lines <= CORE_LINES_TARGET else "**miss**"
    lines_out = [
        "## The core's size",
        "",
        f"packages/mnemosyne-core: {len(sizes)} modules, {lines:,} lines, {code:,} of them code (no blank",
        f"line, comment or docstring), against a target of at most {CORE_LINES_TARGET:,} lines: {verdict}.",
        "",
    ]
    if lines > CORE_LINES_TARGET:
        lines_out += [*CORE_SIZE_TEXT, ""]
    lines_out += markdown_table(
        ["module", "lines", "code lines"], [[name, f"{total:,}", f"{count:,}"] for name, total, count in sizes[:10]]
    )
    smaller = len(sizes) - 10
    return [*lines_out, "", f"And {smaller} smaller modules.", ""] if smaller > 0 else [*lines_out, ""]


def report(profiles: list[Profile], results: Results, quick: bool, seconds: float) -> str:
    lines = [
        "# Performance",
        "",
        "<!-- Generated by `nox -s bench` (bench/run_bench.py); edit that script, not this file. -->",
        "",
    ]
    if quick:
        lines += [
            f"**A `--quick` smoke run: vaults cut to at most {QUICK_PAGES:,} pages, two runs each. Not a",
            "measurement.**",
            "",
        ]
    lines += [
        "`mnemosyne wiki find` reads the vault's SQLite index (docs/commands.md). Each ratio below",
        "is of hyperfine medians of wall-clock time taken in one hyperfine run: find against",
        "`rg -l -i -F` on the same vault (rg ANDs several keywords the shell way,",
        "`rg -l -i -F -0 k1 VAULT | xargs -0 -r rg -l -i -F k2`), or on the fixture vault",
        "(fixtures/vaults/aion) against a bare `python -c pass` of the interpreter the console",
        "script runs on. The other vaults come from fixtures/generate_vault.py",
        f"(seed {generate_vault.DEFAULT_SEED}; the profile is in each vault's name), written to build/bench/.",
        "",
        "- **warm**: the index built first, in the foreground, by the detached builder's own",
        "  command (`python -m mnemosyne_core.build INDEX VAULT HOME`), so it is complete and",
        "  fresh; **no server**: `--no-server` (the call stats each dir of the vault, lists again",
        "  only those whose stat changed, lstats every page and compares each dir by one digest",
        "  of its names and stat keys).",
        "- **with the server**: a `wiki serve` running for the vault, find called as a user types",
        "  it (it asks the server what changed, and neither lists the vault nor stats its pages;",
        "  a miss too, its note on left-out files kept from the last listing).",
        "- **lint, recall**: `wiki lint` and `wiki recall --no-server` on the first query's",
        "  keywords, against the warm find of the same hyperfine run.",
        "- **first call, no index**: find as a user types it, hyperfine's `--prepare` removing",
        "  the index's files (`.sqlite`, `-wal`, `-shm`, `.build`) and killing the builder the",
        "  run before started (bench/reset_index.py), against `--no-cache` in the same run.",
        "- **index size**: the `.sqlite` plus its `-wal` after a checkpoint, against the bytes of",
        "  the pages find lists; **peak RSS**: `ru_maxrss` of one warm find per query.",
        "",
        "Before timing, every answer was checked: find's against the naive baseline's",
        "(bench/naive_find.py, on vaults of up to 10,000 pages) or, on the nested vault, rg's files",
        "(the vault is a git repository: rg honours its .gitignore as find does); the warm, served",
        "and first calls' stdout, stderr and exit code against the scan's (`--no-cache`), lint's and",
        "recall's against their own `--no-cache`. Every timed call ran with `PYTHONDONTWRITEBYTECODE`",
        "unset and the packages compiled to bytecode first, as an install leaves them.",
        "",
    ]
    if results.pages:
        lines += ["## Machine", "", *markdown_table(["", ""], [[key, value] for key, value in machine().items()]), ""]
    else:
        lines += [
            "**Not measured yet since the index landed**: `nox -s bench` on an idle machine fills in",
            "every row below.",
            "",
        ]
    lines += [
        "## Targets",
        "",
    ]
    rows = targets(profiles, results)
    lines += markdown_table(
        ["row", "target", "measured", ""],
        [
            [
                row_name(row.target, profiles),
                row.target.target,
                row.measured,
                "not measured" if row.met is None else "pass" if row.met else "**miss**",
            ]
            for row in rows
        ],
    )
    missed = [row for row in rows if row.met is False]
    if missed:
        lines += ["", "### What limits it", ""]
        for row in missed:
            line = fill(LIMITS.get(row.target.key, "not said yet (LIMITS in bench/run_bench.py)."), row.facts)
            lines.append(f"- **{row_name(row.target, profiles)}**: {line}")
    lines.append("")
    lines += core_size()
    for hand_written in (INDEX_DESIGN, SERVER_THRESHOLD):
        if hand_written.is_file():
            lines += [hand_written.read_text(encoding="utf-8").strip(), ""]
    if results.builds:
        lines += ["## The index per vault", ""]
        lines += markdown_table(
            ["vault", "pages", "build, s", "index, MB", "markdown, MB", "index ÷ markdown"],
            [
                [
                    profile.label,
                    f"{profile.pages:,}",
                    f"{results.builds[profile.label]:.1f}",
                    f"{results.sizes[profile.label][0] / 1e6:.2f}",
                    f"{results.sizes[profile.label][1] / 1e6:.2f}",
                    f"{results.sizes[profile.label][0] / max(results.sizes[profile.label][1], 1):.2f}",
                ]
                for profile in profiles
                if profile.label in results.builds
            ],
        )
        lines.append("")
    for profile in profiles:
        lines += vault_section(profile, results)
    if results.rss:
        lines += ["## Peak RSS of a warm find", ""]
        lines += markdown_table(
            ["vault", "query", "peak RSS, MB"],
            [
                [label, query, f"{value:.1f}"]
                for label, by_query in results.rss.items()
                for query, value in by_query.items()
            ],
        )
        lines.append("")
    lines += [*PARSER_TEXT, ""]
    lines += [
        "## Running it",
        "",
        "`nox -s bench` (every vault; needs hyperfine and rg on PATH; about fifteen minutes on an",
        "idle 2-core machine, a minute more the first time, when it generates the vaults), `nox -s",
        "bench -- --quick` for a smoke run on small vaults (it writes build/bench/performance-quick.md),",
        "or `nox -s bench -- --profiles fixture rich-yaml` for some vaults only. The rows a run did",
        "not time say `not measured`.",
        "",
    ]
    if results.pages:
        lines += [f"This run took {seconds / 60:.1f} minutes.", ""]
    return "\n".join(lines)


def vault_section(profile: Profile, results: Results) -> list[str]:
    """The vault's medians, query by query, with each row's ratio to rg (or bare python)."""
    label = profile.label
    if label not in results.warm:
        return []
    lines = [f"## {label}: {profile.pages:,} pages", ""]
    if profile.shape != "fixture":
        lines += [f"Generated by profile `{profile.shape}`.", ""]
    for title, times in (("Warm, no server", results.warm), ("With the server", results.served)):
        by_query = times.get(label)
        if not by_query:
            continue
        tools = list(dict.fromkeys(tool for row in by_query.values() for tool in row))
        reference = BARE if profile.shape == "fixture" and times is results.warm else RG
        lines += [f"{title}: median ms (and ÷ {reference} of the same run)", ""]
        lines += markdown_table(
            ["query", "matches", *tools],
            [
                [
                    f"{query}: `{' '.join((profile.served or {}).get(query) or profile.queries[query])}`",
                    str(results.matches.get(label, {}).get(query, "-")),
                    *(
                        f"{row[tool][0] * 1000:.1f} ({row[tool][0] / row[reference][0]:.2f})"
                        if tool in row and reference in row
                        else "-"
                        for tool in tools
                    ),
                ]
                for query, row in by_query.items()
            ],
        )
        lines.append("")
    if label in results.cold:
        row = results.cold[label]
        lines += [
            f"First call, no index (first query): {row[COLD][0] * 1000:.1f} ms, the scan "
            f"{row[SCAN][0] * 1000:.1f} ms ({row[COLD][0] / row[SCAN][0]:.2f}×).",
            "",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--profiles",
        nargs="+",
        choices=SHAPES,
        default=SHAPES,
        metavar="SHAPE",
        help=f"the vaults to time (default: all of {', '.join(SHAPES)})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"vaults of at most {QUICK_PAGES} pages, few runs: a smoke test, not a measurement "
        "(writes build/bench/performance-quick.md unless --output is given)",
    )
    parser.add_argument(
        "--naive-up-to",
        type=int,
        default=10000,
        metavar="PAGES",
        help="check find's answers against the naive baseline (over a minute a query at 100k) on "
        "vaults up to this size (default 10000)",
    )
    parser.add_argument("--mnemosyne", default=shutil.which("mnemosyne"), help="the mnemosyne console script")
    parser.add_argument("--output", type=Path, help="the report (default: docs/performance.md)")
    args = parser.parse_args(argv)
    for tool in ("hyperfine", "rg"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not on PATH: install it (Debian: apt-get install {tool.replace('rg', 'ripgrep')})")
    if not args.mnemosyne:
        parser.error("no mnemosyne console script on PATH: install the packages or pass --mnemosyne")
    output = args.output or (BUILD_DIR / "performance-quick.md" if args.quick else ROOT / "docs" / "performance.md")
    # recall appends to a memory log when one is configured: the benchmark writes nothing.
    os.environ.pop("MNEMOSYNE_MEMORY_DIR", None)
    # The timed calls' index dir is the bench's own, emptied first: the user's is left alone.
    shutil.rmtree(CACHE_HOME, ignore_errors=True)
    CACHE_HOME.mkdir(parents=True)
    os.environ["XDG_CACHE_HOME"] = str(CACHE_HOME)
    context = Context(args.mnemosyne)
    precompile(context)
    profiles = [profile for profile in PROFILES if profile.shape in args.profiles]
    if args.quick:
        profiles = [profile.quick() for profile in profiles]
    started = time.monotonic()
    results = Results()
    prepare(profiles)
    results.phases["generating the vaults"] = time.monotonic() - started
    for profile in profiles:
        measure(profile, context, results, args.naive_up_to)
    seconds = time.monotonic() - started
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report(profiles, results, args.quick, seconds), encoding="utf-8")
    print("\n".join(f"{phase}: {took:.1f} s" for phase, took in results.phases.items()))
    print(f"wrote {output} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
