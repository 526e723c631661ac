"""The known-item benchmark behind ``nox -s retrieval``: does the page an agent names come
first, and how much does find say per query?

Each query is the title of one page typed as keywords, or its file name pasted. find runs
in-process through the library (``mnemosyne_core.search``, no limit, so the rank of every
page is known); its default output (stdout and stderr of ``mnemosyne wiki find`` with the
default limit) is made by the CLI's own ``main`` from that result, and a sample of the
queries runs through the installed console script to prove both give the same bytes.

Vaults: the fixture vault and the generated ones of fixtures/generate_known_item_vaults.py
(written to build/retrieval/). Writes docs/retrieval.md. Options: ``--help``.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import io
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))
# The order's plain reference (reference_order), shared with the core's property tests.
sys.path.insert(0, str(ROOT / "packages" / "mnemosyne-core" / "tests"))

import generate_known_item_vaults as generator  # noqa: E402 - fixtures/ is not a package; its path is set above
import known_item  # noqa: E402 - bench/ is on sys.path as this script's dir
from reference_order import plain_fold  # noqa: E402 - the core's tests dir is on sys.path above

import mnemosyne_core  # noqa: E402
import mnemosyne_core.find  # noqa: E402
from mnemosyne_cli.app import main as cli_main  # noqa: E402
from mnemosyne_core.context import context_of  # noqa: E402
from mnemosyne_core.fold import as_utf8, decode  # noqa: E402
from mnemosyne_core.frontmatter import loads_bytes, logseq_page_name, title_of  # noqa: E402
from mnemosyne_core.location import resolve_vault  # noqa: E402
from mnemosyne_core.page import read_page_bytes  # noqa: E402
from mnemosyne_core.pagefields import aliases_of, page_fields  # noqa: E402
from mnemosyne_core.recall import RecallResult, recall  # noqa: E402
from mnemosyne_core.results import DEFAULT_LIMIT, TEXT, FindResult  # noqa: E402
from mnemosyne_core.vault import scan  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mnemosyne_core.backend import FindRequest, RecallRequest

#: The fixture vaults, measured on every query: label -> (path, what it is).
FIXTURE_VAULTS = {
    "aion": (ROOT / "fixtures" / "vaults" / "aion", "fixtures/vaults/aion: the bundled Aion vault"),
    "known-item": (
        ROOT / "fixtures" / "vaults" / "known-item",
        "fixtures/vaults/known-item: the known-item examples of docs/spec.md (tar, shortcodes, strings.Contains)",
    ),
    "mentions": (
        ROOT / "fixtures" / "vaults" / "mentions",
        "fixtures/vaults/mentions: numbered proposals and docs in several languages, keywords often only mentioned",
    ),
}
BUILD_DIR = ROOT / "build" / "retrieval"
DEFAULT_OUT = ROOT / "docs" / "retrieval.md"
#: shape:pages of the generated vaults a plain ``nox -s retrieval`` measures.
DEFAULT_VAULTS = (
    "docs:1000",
    "docs:10000",
    "commands:5000",
    "commands:40000",
    *(f"{shape}:{topics}" for shape, topics in (("translated", 60), ("logseq", 200), ("wide", 200))),
    *(f"{shape}:{topics}" for shape, topics in (("dendron", 200), ("look-alike", 200), ("versioned", 150))),
)
#: What each generated shape is, for the table of vaults.
SHAPE_DESCRIPTIONS = {
    "docs": "a documentation site: sections flattened into file names, Go-style API titles",
    "commands": "a tldr-like command reference: no frontmatter, titles are file names",
    "translated": "Obsidian's help in 9 languages: each translation aliased with the English title",
    "logseq": "a Logseq graph: title:: and alias:: properties, A___B namespaces, %3F escapes, journals",
    "wide": "a site with every fourth page UTF-16 (LE or BE) or UTF-32, with its byte order mark",
    "dendron": "a Dendron vault: dotted hierarchy names, epoch-millisecond updated",
    "look-alike": "a docs repo with apollo/ and athena/ dirs, most pages beside them",
    "versioned": "a Docusaurus site: docs/ repeated in versioned_docs/version-1.0, 2.0 and 3.0",
}
DEFAULT_QUERIES = 100
DEFAULT_CLI_SAMPLE = 4
SAMPLE_SEED = 11
#: The row of file-name queries chosen for their rivals, not sampled.
MOST_RIVALLED = "file name, most rivals"
#: The query kind that never names its page: group 2's order decides it, and no bar holds it.
TOPIC = "topic words"
#: The case that asks whether word starts should outrank a title alone: (vault, keywords,
#: the page meant). In the Astro docs, "en" sits inside the French "dynamiquement".
EN_IMAGES = ("mentions", ["en", "images"], "docs/en__guides__images.md")
DEFAULT_MOST_RIVALLED = 20

# The bar the known-item order (docs/spec.md rule 8) is held to.
HIT_AT_1_BAR = 0.97
WITHIN_DEFAULT_BAR = 1.0


class Vault:
    def __init__(self, label: str, path: Path, description: str, every_query: bool = False, shape: str = ""):
        self.label = label
        self.path = path
        self.description = description
        #: Measure every distinct query, not a sample.
        self.every_query = every_query
        #: The generator's shape ("" for a fixture vault).
        self.shape = shape


class Outcome:
    """One query's answer: the rank of its page, what came first, the default output."""

    __slots__ = (
        "alias_path_rank",
        "first",
        "matched_bytes",
        "mention_ranks",
        "output_bytes",
        "query",
        "rank",
        "spec_agrees",
        "swapped_rank",
        "total",
    )

    def __init__(self, query: known_item.Query, rank: int | None, first: str, total: int, output_bytes: int):
        self.query = query
        self.rank = rank
        self.first = first
        self.total = total
        self.output_bytes = output_bytes
        #: The same call's bytes with --matched (its stderr line and context lines).
        self.matched_bytes = output_bytes
        self.spec_agrees = True
        #: The rank under each of known_item.MENTION_ORDERS (group 2 reordered).
        self.mention_ranks: dict[str, int | None] = {}
        #: The rank with a name alone before word starts (group 1 reordered).
        self.swapped_rank = rank
        #: The rank with an alias tying with a title of equal weight, the tie going by path.
        self.alias_path_rank = rank


def catalogue(vault: Path, *, conventions: bool = True) -> dict[str, known_item.Page]:
    """Every page of the vault with its title and aliases as find determines them (the
    frontmatter's, or Logseq's properties; else the page name the file name stands for),
    by path, read by find's own functions. ``conventions=False``: as find read pages before
    it took other tools' conventions (wide encodings, Logseq's properties and names): UTF-8
    only, frontmatter only, the stem as it is; for the rows that measure those rules."""
    pages = {}
    for ref in scan(resolve_vault(vault)).pages:
        data = read_page_bytes(ref)
        if conventions:
            fields = page_fields(as_utf8(data))
            title, text = title_of(fields, logseq_page_name(ref.stem)), decode(data)
        else:
            fields = loads_bytes(data).metadata
            title, text = title_of(fields, ref.stem), data.decode("utf-8", "replace")
        pages[ref.rel_path] = known_item.Page(ref.rel_path, title, text, aliases_of(fields))
    return pages


def cli_argv(vault: Path, keywords: list[str], options: Sequence[str] = ()) -> list[str]:
    separator = ["--"] if any(keyword.startswith("-") for keyword in keywords) else []
    return ["wiki", "find", *options, "--vault", str(vault), *separator, *keywords]


def default_output(
    vault: Path, keywords: list[str], full: FindResult, options: Sequence[str] = ()
) -> tuple[bytes, bytes]:
    """(stdout, stderr) of ``mnemosyne wiki find`` (with ``options``; the default limit),
    written by the CLI's own ``main`` from ``full`` (a search without limit) instead of a
    second search."""

    searched: list[int] = []

    class Cut:
        """The CLI's backend: ``full`` cut to the limit the CLI asks for, not a second search."""

        def search(self, request: FindRequest) -> FindResult:
            limit = request.limit
            searched.append(limit)
            if list(request.keywords) != keywords:
                raise AssertionError(f"the CLI searched {request.keywords!r}, not {keywords!r}")
            result = copy.copy(full)
            result.matches = full.matches[:limit] if limit else list(full.matches)
            return result

        def recall(self, request: RecallRequest) -> RecallResult:
            raise AssertionError("find's output does not recall")

    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    stderr = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        cli_main(cli_argv(vault, keywords, options), backend=Cut())
    if searched != [DEFAULT_LIMIT]:
        # Else the figures would be of a second, real search, or of none.
        raise AssertionError(f"the CLI searched {len(searched)} times through its backend, not once")
    stdout.flush()
    return stdout.buffer.getvalue(), stderr.getvalue().encode("utf-8", "surrogateescape")


def measure(
    vault: Vault, pages: dict[str, known_item.Page], chosen: list[known_item.Query], cli: str | None, cli_sample: int
) -> list[Outcome]:
    outcomes = []
    for number, query in enumerate(chosen):
        full = mnemosyne_core.search(vault.path, query.keywords, limit=0)
        ranking = [match.path for match in full.matches]
        stdout, stderr = default_output(vault.path, query.keywords, full)
        rank = known_item.rank_of(ranking, query.relevant)
        outcome = Outcome(query, rank, ranking[0] if ranking else "", full.total, len(stdout) + len(stderr))
        outcome.matched_bytes = sum(map(len, default_output(vault.path, query.keywords, full, ["--matched"])))
        outcome.spec_agrees = ranking == known_item.spec_order(ranking, pages, query.keywords)
        for order in known_item.MENTION_ORDERS:
            reordered = known_item.reorder_mentions(ranking, full.named, pages, query.keywords, order)
            outcome.mention_ranks[order] = known_item.rank_of(reordered, query.relevant)
        swapped = known_item.title_alone_first(ranking, full.named, pages, query.keywords)
        outcome.swapped_rank = known_item.rank_of(swapped, query.relevant)
        by_path = known_item.alias_ties_by_path(ranking, full.named, pages, query.keywords)
        outcome.alias_path_rank = known_item.rank_of(by_path, query.relevant)
        if cli is not None and number < cli_sample:
            check_cli(cli, cli_argv(vault.path, query.keywords), stdout, stderr)
        outcomes.append(outcome)
    return outcomes


def check_cli(cli: str, argv: list[str], stdout: bytes, stderr: bytes) -> None:
    """The installed console script must print exactly what the in-process run made."""
    run = subprocess.run([cli, *argv], capture_output=True, check=False)
    if (run.stdout, run.stderr) != (stdout, stderr):
        sys.exit(
            f"the console script and the library disagree on {argv}: a bug, not a benchmark\n"
            f"console script:\n{run.stdout.decode()}{run.stderr.decode()}\nlibrary:\n{stdout.decode()}{stderr.decode()}"
        )


def prepare(specs: list[str], fixture: bool) -> list[Vault]:
    vaults = []
    if fixture:
        vaults += [
            Vault(label, path, description, every_query=True) for label, (path, description) in FIXTURE_VAULTS.items()
        ]
    for spec in specs:
        shape, _, count_text = spec.partition(":")
        count = int(count_text)
        target = BUILD_DIR / f"{shape}-{count}"
        started = time.monotonic()
        if generator.ensure(shape, count, str(target)):
            print(f"generated {target} in {time.monotonic() - started:.1f} s", flush=True)
        label = f"{shape} {count // 1000}k" if count >= 1000 else f"{shape} {count}"
        vaults.append(Vault(label, target, SHAPE_DESCRIPTIONS[shape], shape=shape))
    return vaults


class Row:
    def __init__(self, vault: Vault, pages: dict[str, known_item.Page], kind: str, outcomes: list[Outcome]):
        self.vault = vault
        self.pages = len(pages)
        self.pages_by_path = pages
        self.kind = kind
        self.outcomes = outcomes
        ranks = [outcome.rank for outcome in outcomes]
        self.hit1 = known_item.hit_at(ranks, 1)
        self.hit3 = known_item.hit_at(ranks, 3)
        self.within = known_item.hit_at(ranks, DEFAULT_LIMIT)
        self.mrr = known_item.mean_reciprocal_rank(ranks)
        self.mean_bytes = sum(outcome.output_bytes for outcome in outcomes) / len(outcomes)
        self.max_bytes = max(outcome.output_bytes for outcome in outcomes)
        self.mean_matched_bytes = sum(outcome.matched_bytes for outcome in outcomes) / len(outcomes)
        self.mean_matches = sum(outcome.total for outcome in outcomes) / len(outcomes)
        self.ambiguous = sum(outcome.query.ambiguous for outcome in outcomes)
        self.misses = [outcome for outcome in outcomes if outcome.rank != 1]
        self.swapped_hit1 = known_item.hit_at([outcome.swapped_rank for outcome in outcomes], 1)
        self.alias_path_hit1 = known_item.hit_at([outcome.alias_path_rank for outcome in outcomes], 1)

    def mention_metrics(self, order: str) -> tuple[float, float, float]:
        """hit@1, hit@3 and "in default 20" with group 2 in one of known_item.MENTION_ORDERS."""
        ranks = [outcome.mention_ranks[order] for outcome in self.outcomes]
        return known_item.hit_at(ranks, 1), known_item.hit_at(ranks, 3), known_item.hit_at(ranks, DEFAULT_LIMIT)

    @property
    def held(self) -> bool:
        """Whether the bar applies: topic queries never name their page, so it does not."""
        return self.kind != TOPIC

    @property
    def met(self) -> bool:
        # The most-rivalled queries are chosen to lose: only "always in the default 20" holds them.
        hit1_met = self.kind == MOST_RIVALLED or self.hit1 >= HIT_AT_1_BAR
        return not self.held or (hit1_met and self.within >= WITHIN_DEFAULT_BAR)


def shown(keywords: list[str]) -> str:
    return "`" + " ".join(keywords).replace("`", "'") + "`"


def report(rows: list[Row], args: argparse.Namespace, seconds: float) -> str:
    lines = [
        "# Retrieval: does the page an agent names come first?",
        "",
        "<!-- Generated by `nox -s retrieval` (bench/run_retrieval.py); edit that script, not this file. -->",
        "",
        "A known-item benchmark of `mnemosyne wiki find`'s order (docs/spec.md, rule 8). Each query",
        "names one page the way an agent would, and the question is where that page lands:",
        "",
        "- **title words**: the page's title, lower-cased, split at whitespace, without brackets,",
        "  quotes and closing punctuation around a word, and without words of punctuation alone",
        "  (`Shortcode templates` → `shortcode templates`, `strings.ContainsAny` →",
        "  `strings.containsany`, `ADR-0004: Ollama — notes` → `adr-0004 ollama notes`, `-v` → `-v`).",
        "- **file name**: the file name as find prints it, pasted as one keyword (`tar-split.md`).",
        "- **topic words**: two words of the page's opening paragraph (its first line of body",
        "  text, after the frontmatter and headings) that its title and path do not hold, of four",
        f"  letters or more, drawn with seed {known_item.TOPIC_SEED} and the page's path. The page",
        "  only mentions them, so the order of the mentions decides its rank; no bar holds it.",
        "- **file name, most rivals**: not a sample but the file-name queries of the pages most",
        "  likely to lose: those whose file name ends the most other file names at a word start",
        "  (`images.md` in `caching__images.md`). A sample rarely holds them, and the bar says the",
        f"  page is *always* in the default {DEFAULT_LIMIT}. (A title-words query can only lose to a title",
        "  no longer than its own that holds every word at a word start: far fewer rivals.)",
        "",
        "Metrics, per vault and kind: **hit@1** and **hit@3** (share of queries whose page is",
        "first, or in the first three), **MRR** (mean of 1/rank), **in default 20** (share whose page",
        "is among the lines find prints without `--limit`), the mean number of pages that match",
        "(**mean matches**: how broad the query is), and the mean and largest **bytes** of find's",
        "default output (stdout and stderr together, what lands in an agent's context), and the mean",
        "bytes of the same call with `--matched` (its stderr line, and a line of context under each",
        "page that only mentions the keywords).",
        "",
        "## Ambiguous queries",
        "",
        "Some queries stand for several pages: two pages titled `Introduction`, `rand.Int` in",
        "math and in crypto, `date.md` in two platform dirs. find matches literal substrings",
        "with AND, so it cannot tell apart queries with the same set of folded keywords. Such a",
        "query is scored as a hit at the rank of the first page it stands for: every page whose",
        "query (of the same kind) has the same folded keyword set counts as the intended page.",
        "Each distinct keyword set is one query, counted once; the *ambiguous* column says how",
        "many of the measured queries stand for more than one page.",
        "",
        "## Method",
        "",
        "- find runs in-process through `mnemosyne_core.search` with no limit, so every rank is",
        "  known. The default output is what the CLI's own `main` prints from that result (its",
        f"  search replaced by the result cut to the limit); for the first {args.cli_sample} queries of each",
        "  vault and kind the installed `mnemosyne` console script ran too and printed the same",
        "  bytes, or the benchmark would have stopped.",
        "- Each order was also compared with a plain sort by the keys of docs/spec.md rule 8 (bench/known_item.py,",
        "  `order_key`); the *spec order* column counts the queries where find's whole order equals it.",
        f"- Queries: all distinct ones of the fixture vaults; a seeded sample of {args.queries} per kind",
        "  of each generated vault (`--queries 0` measures them all). Generated vaults come from",
        f"  fixtures/generate_known_item_vaults.py, seed {generator.DEFAULT_SEED}, into build/retrieval/.",
        f"- Machine: {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores; "
        f"run took {seconds:.0f} s ({args.generating:.0f} s of it generating or checking the vaults) on "
        f"{datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}.",
        "",
        "## Vaults",
        "",
        "| vault | pages | what |",
        "|---|---|---|",
    ]
    seen = []
    for row in rows:
        if row.vault not in seen:
            seen.append(row.vault)
            lines.append(f"| {row.vault.label} | {row.pages:,} | {row.vault.description} |")
    lines += [
        "",
        "## Results",
        "",
        f"The bar: hit@1 at least {HIT_AT_1_BAR}, and the page always in the default {DEFAULT_LIMIT}.",
        "The *most rivals* rows are chosen to lose, so only the second part holds them; their",
        "hit@1 is shown, not held to the bar.",
        "",
        "| vault | query kind | queries | ambiguous | hit@1 | hit@3 | MRR | in default 20 | "
        "mean matches | mean bytes | max bytes | mean bytes, --matched | spec order | bar |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        agrees = sum(outcome.spec_agrees for outcome in row.outcomes)
        lines.append(
            f"| {row.vault.label} | {row.kind} | {len(row.outcomes)} | {row.ambiguous} | {row.hit1:.3f} | "
            f"{row.hit3:.3f} | {row.mrr:.3f} | {row.within:.3f} | {row.mean_matches:,.0f} | "
            f"{row.mean_bytes:,.0f} | {row.max_bytes:,} | {row.mean_matched_bytes:,.0f} | "
            f"{agrees}/{len(row.outcomes)} | {('met' if row.met else '**missed**') if row.held else 'not held'} |"
        )
    lines += [
        "",
        *agent_section(args.agent_outcomes),
        *mention_section(rows),
        *word_starts_section(rows, args.en_images),
        "",
        *alias_section(rows),
        *kinds_section(args.kind_rows),
    ]
    missed = [row for row in rows if not row.met]
    lines += ["", "## Where the bar is missed", ""]
    if missed:
        for row in missed:
            lines.append(f"- **{row.vault.label}, {row.kind}**: hit@1 {row.hit1:.3f}, in default 20 {row.within:.3f}.")
            for outcome in row.misses:
                if outcome.rank is None or outcome.rank > DEFAULT_LIMIT:
                    intended = outcome.query.intended
                    lines.append(
                        f"  - {shown(outcome.query.keywords)}: {intended.path} is "
                        f"{'absent' if outcome.rank is None else f'number {outcome.rank}'}; "
                        f"{why(outcome, row)}. `{intended.path}` names it alone."
                    )
        lines += ["", "The queries below say which shapes miss and why."]
    else:
        lines += ["Nowhere on these queries: every vault and query kind meets it."]
    lines += [
        "",
        "## Queries whose page is not first",
        "",
        "Every measured query whose page is not on line 1, by vault and kind. Each is explained",
        "by the first key of the order (docs/spec.md, rule 8) on which the page that came first",
        "beats the intended one (the spec's keys computed plainly, as the core's property tests",
        "do).",
        "",
    ]
    if not any(row.misses for row in rows):
        lines += ["None.", ""]
    for row in rows:
        if not row.misses:
            continue
        lines += [f"### {row.vault.label}, {row.kind}: {len(row.misses)} of {len(row.outcomes)}", ""]
        reasons: dict[str, int] = {}
        for outcome in row.misses:
            reason = why(outcome, row)
            reasons[reason] = reasons.get(reason, 0) + 1
        lines += [f"- {count} × {reason}" for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1])]
        lines += ["", "| query | intended page | rank | first page |", "|---|---|---|---|"]
        for outcome in sorted(row.misses, key=lambda outcome: -(outcome.rank or 10**9))[: args.examples]:
            intended = outcome.query.intended
            first = row.pages_by_path.get(outcome.first)
            lines.append(
                f"| {shown(outcome.query.keywords)} | {intended.path} — {intended.title} | "
                f"{outcome.rank or 'absent'} | {f'{first.path} — {first.title}' if first else 'no match'} |"
            )
        lines.append("")
    lines += [
        "## Shapes the order puts second by design",
        "",
        "These follow from the rules themselves (docs/spec.md rule 8 fixes them; this benchmark does not",
        "change them), so any vault with such pages shows them:",
        "",
        '- **A small word of the title starts a word elsewhere.** `add a deployment` names "Add a',
        '  deployment", but `a` also starts the word "Add" in "Add deployments": both titles',
        "  hold every keyword at a word start, and the shorter one wins (key 3).",
        "- **A pasted file name is the tail of a longer flattened one.** `templates__troubleshooting.md`",
        "  is also in `security__templates__troubleshooting.md`; `_` is not a letter or digit, so the",
        "  keyword starts a word in both paths. With equal titles the path decides (key 4). Pasting",
        "  the path (`docs/templates__troubleshooting.md`) names the page alone. The worst case is a",
        '  section\'s index page (`troubleshooting.md`, "Troubleshooting") on a site where many',
        "  sections have a page of that name: all of them hold the keyword at a word start with",
        f"  the same title, so the index page can fall past the default {DEFAULT_LIMIT} by path alone.",
        "- **A keyword inside another keyword.** In `function functions`, every title with",
        '  "functions" holds both, and the shortest wins.',
        "",
        "## Run it",
        "",
        "`nox -s retrieval` (the vaults above; a few minutes on two cores, generating the vaults",
        "the first time). Options go to bench/run_retrieval.py:",
        "`nox -s retrieval -- --vaults docs:40000 commands:40000 --queries 0` measures every query",
        "of bigger vaults; `--most-rivalled N`, `--no-fixture`, `--cli-sample N`, `--out PATH`.",
        "",
    ]
    return "\n".join(lines)


def en_images_case(vaults: list[Vault]) -> tuple[int | None, int | None] | None:
    """Where ``find en images`` puts the English "Images" page in the mentions vault: (now,
    with a title alone first); None when that vault was not measured."""
    label, keywords, intended = EN_IMAGES
    vault = next((vault for vault in vaults if vault.label == label), None)
    if vault is None:
        return None
    pages = catalogue(vault.path)
    full = mnemosyne_core.search(vault.path, keywords, limit=0)
    ranking = [match.path for match in full.matches]
    swapped = known_item.title_alone_first(ranking, full.named, pages, keywords)
    return known_item.rank_of(ranking, {intended}), known_item.rank_of(swapped, {intended})


#: The calls each agent task is measured with: what the guide's first example makes, and
#: the call that saves bytes when line 1 is the answer.
AGENT_CALLS: dict[str, list[str]] = {
    "default": [],
    "--matched": ["--matched"],
    "--matched --limit 5": ["--matched", "--limit", "5"],
}


class TaskOutcome:
    """One agent task: per call, the path on line 1 and the bytes of stdout and stderr;
    whether the answer only mentions the keywords; and, per candidate context line
    (known_item.CONTEXT_CHOICES), how many of the shown pages that only mention them get a
    line holding every keyword their text holds (and whether the answer's does)."""

    def __init__(self, task: known_item.AgentTask):
        self.task = task
        self.first: dict[str, str] = {}
        self.bytes: dict[str, int] = {}
        self.text_only = False
        self.found = False
        self.mentions_shown = 0
        self.context_holds_all: dict[str, int] = {}
        self.answer_context_holds_all: dict[str, bool] = {}


def run_cli(argv: list[str]) -> tuple[bytes, bytes]:
    """(stdout, stderr) of ``mnemosyne`` with ``argv``, run in-process by the CLI's own main."""
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    stderr = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        cli_main(argv, ask_server=False)
    stdout.flush()
    return stdout.buffer.getvalue(), stderr.getvalue().encode("utf-8", "surrogateescape")


def measure_agent_tasks(cli: str | None) -> list[TaskOutcome]:
    """Every known_item.AGENT_TASKS task, each call of AGENT_CALLS run as an agent runs it
    (a real search through the CLI's main; through the console script too, when given, which
    must print the same bytes)."""
    outcomes = []
    catalogues: dict[str, dict[str, known_item.Page]] = {}
    for task in known_item.AGENT_TASKS:
        path = FIXTURE_VAULTS[task.vault][0]
        pages = catalogues.setdefault(task.vault, catalogue(path))
        outcome = TaskOutcome(task)
        for call, options in AGENT_CALLS.items():
            argv = cli_argv(path, task.keywords, options)
            stdout, stderr = run_cli(argv)
            if cli is not None:
                check_cli(cli, argv, stdout, stderr)
            outcome.first[call] = stdout.decode("utf-8", "surrogateescape").partition("\n")[0].partition(" — ")[0]
            outcome.bytes[call] = len(stdout) + len(stderr)
        full = mnemosyne_core.search(path, task.keywords, limit=0)
        answer = next((match for match in full.matches if match.path == task.answer), None)
        outcome.found = answer is not None
        outcome.text_only = answer is not None and answer.matched == TEXT
        folded = list(dict.fromkeys(plain_fold(keyword) for keyword in task.keywords))
        shown = [match for match in full.matches[:5] if match.matched == TEXT]
        outcome.mentions_shown = len(shown)
        for name, choose in known_item.CONTEXT_CHOICES.items():
            holds = {
                match.path: known_item.line_holds_all(pages[match.path], choose(pages[match.path], folded), folded)
                for match in shown
            }
            outcome.context_holds_all[name] = sum(holds.values())
            outcome.answer_context_holds_all[name] = holds.get(task.answer, False)
        # find's own context line is the plain rule's (the first choice), or this is a bug.
        rule = next(iter(known_item.CONTEXT_CHOICES.values()))
        for match in shown:
            context = context_of(full.vault, match.path, folded)
            if (context.line if context else None) != rule(pages[match.path], folded):
                sys.exit(f"find's context line of {match.path} for {task.keywords} is not the plain rule's: a bug")
        outcomes.append(outcome)
    return outcomes


def agent_section(outcomes: list[TaskOutcome]) -> list[str]:
    """The agents' locate-a-page tasks: hit@1, bytes and text-only answers per call, and
    the candidate context lines."""
    lines = [
        "## The agents' tasks",
        "",
        "Locate-a-page tasks written as an agent is given them: a description of the page, not",
        "its title (bench/known_item.py, `AGENT_TASKS`), on the vaults this repository ships.",
        "The keywords are the description's content words, as an agent picks them, stop words",
        "left out as docs/agents.md says. Each task runs through the CLI three times: the default",
        "call, `--matched` (what its stderr line and context lines cost) and `--matched --limit 5`",
        "(the call that saves bytes). **hit@1**: line 1 of stdout is the answer. **bytes**: stdout",
        "and stderr together, per task. **text-only**: the answer only mentions the keywords",
        "(no title or path names it), so line 1 is the page that mentions them soonest.",
        "",
        "| call | tasks | hit@1 | mean bytes | max bytes | text-only answers |",
        "|---|---|---|---|---|---|",
    ]
    count = len(outcomes)
    text_only = sum(outcome.text_only for outcome in outcomes)
    for call in AGENT_CALLS:
        hits = sum(outcome.first[call] == outcome.task.answer for outcome in outcomes)
        sizes = [outcome.bytes[call] for outcome in outcomes]
        lines.append(
            f"| `find KEYWORDS{' ' + call if call != 'default' else ''}` | {count} | {hits / count:.3f} | "
            f"{sum(sizes) / count:,.0f} | {max(sizes):,} | {text_only} of {count} |"
        )
    missed = [outcome for outcome in outcomes if outcome.first["default"] != outcome.task.answer]
    lines += ["", "Tasks whose answer is not on line 1:", ""]
    lines += [
        f"- {outcome.task.description}: {shown(outcome.task.keywords)} gives "
        f"{outcome.first['default'] or 'no match'}; the answer is {outcome.task.answer}"
        + ("" if outcome.found else " (it does not hold every keyword)")
        for outcome in missed
    ] or ["- none"]
    shown_total = sum(outcome.mentions_shown for outcome in outcomes)
    answers = [outcome for outcome in outcomes if outcome.text_only]
    lines += [
        "",
        "### Which line of context",
        "",
        "With `--matched`, each page that only mentions the keywords gets one line of its text",
        "(docs/spec.md, rule 11). The candidates below are computed plainly from each page's",
        "folded text (bench/known_item.py, `CONTEXT_CHOICES`), over the pages that only mention",
        f"the keywords among the first 5 of each task ({shown_total} pages) and over the",
        f"text-only answers ({len(answers)}): how often the line holds every keyword the page's",
        "text holds, the line that shows why the page matched. find's own context line was",
        "checked to be the first candidate's on every page.",
        "",
        "| line shown | holds every keyword, shown mentions | holds every keyword, text-only answers |",
        "|---|---|---|",
    ]
    for name in known_item.CONTEXT_CHOICES:
        held = sum(outcome.context_holds_all[name] for outcome in outcomes)
        answered = sum(outcome.answer_context_holds_all[name] for outcome in answers)
        lines.append(f"| {name} | {held} of {shown_total} | {answered} of {len(answers)} |")
    return [*lines, ""]


def mention_section(rows: list[Row]) -> list[str]:
    """The order of the pages that only mention the keywords, measured on topic queries."""
    lines = [
        "## The order of the mentions",
        "",
        "A *topic words* query never names its page: its words come from the page's opening",
        "paragraph and neither its title nor its path holds them, so the page is in group 2",
        "(docs/spec.md, rule 8), among the pages that only mention the keywords. The rows below",
        "rank the same queries with group 2 in each candidate order (group 1 as find puts it);",
        "each candidate is computed plainly from the page's folded text (bench/known_item.py,",
        "`MENTION_ORDERS`). *Mention depth* is find's order: where (line, then column) the",
        "shortest start of the text that holds every keyword ends.",
        "",
        "| vault | queries | group 2 order | hit@1 | hit@3 | in default 20 |",
        "|---|---|---|---|---|---|",
    ]
    topic_rows = [row for row in rows if row.kind == TOPIC]
    for row in topic_rows:
        for order in known_item.MENTION_ORDERS:
            hit1, hit3, within = row.mention_metrics(order)
            lines.append(
                f"| {row.vault.label} | {len(row.outcomes)} | {order} | {hit1:.3f} | {hit3:.3f} | {within:.3f} |"
            )
    if topic_rows:
        best = {
            row.vault.label: max(known_item.MENTION_ORDERS, key=lambda order: row.mention_metrics(order)[0])
            for row in topic_rows
        }
        lines += [
            "",
            "Best hit@1 per vault: "
            + "; ".join(f"{label}: {order}" for label, order in best.items())
            + ". Mention depth is what find uses: a page is about what it says first (its",
            "frontmatter and opening lines), it needs no read beyond what the match read, and",
            "two pages' order is one sentence (\"this one holds every keyword by line 3, that",
            'one only by line 40"). The topic queries favour it by construction',
            "(their words come from the opening paragraph), as do the cases it was made for:",
            "`find non-lexical` and `find question mark operator` on the Rust RFCs, whose pages",
            "state their subject in their first lines while the pages that sorted before them by",
            "path mention it in passing.",
        ]
    return [*lines, ""]


def word_starts_section(rows: list[Row], en_images: tuple[int | None, int | None] | None) -> list[str]:
    """Whether every keyword starting a word should rank before a name alone holding every
    keyword, measured on every query kind."""
    lines = [
        "## Word starts before a title alone",
        "",
        "Key 1 of the order puts a page where every keyword starts a word before one whose",
        "title (or an alias) alone holds every keyword (key 2); it used to be the other way",
        "round. With a title alone first, `find en images` on the Astro docs put the French",
        '"Charger dynamiquement des images" first (its title holds `en` inside "dynamiquement")',
        'and the English "Images" page, whose path holds `en` as a word, later. The rule for',
        "the change: no vault's hit@1 may drop. Each measured query, ranked both ways (group 1",
        "re-sorted plainly with the keys swapped back, bench/known_item.py `title_alone_first_key`):",
        "",
        "| vault | query kind | queries | hit@1, word starts first (find's order) | hit@1, title alone first |",
        "|---|---|---|---|---|",
    ]
    drops = []
    for row in rows:
        lines.append(
            f"| {row.vault.label} | {row.kind} | {len(row.outcomes)} | {row.hit1:.3f} | {row.swapped_hit1:.3f} |"
        )
        if row.hit1 < row.swapped_hit1:
            drops.append(f"{row.vault.label} ({row.kind}: {row.swapped_hit1:.3f} → {row.hit1:.3f})")
    lines.append("")
    if en_images is not None:
        now, before = en_images
        lines += [
            f"`find en images` on fixtures/vaults/mentions: the English page is number {now}; with a "
            f"title alone first it was number {before}.",
            "",
        ]
    if drops:
        lines.append(
            f"**hit@1 is lower with word starts first on {', '.join(drops)}**: the measurement no longer "
            "supports the order, which must go back to a title alone first."
        )
    else:
        lines += [
            "No vault's hit@1 is lower with word starts first. It cannot be on the title-word and",
            "file-name queries: a title-words query's page holds every word at a word start in its",
            "title, the best of both keys in either order; a file-name query's page holds the name",
            "at a word start in its path, so only pages whose title holds it inside a word move,",
            "and they move behind it. Topic queries are decided in group 2, which the swap leaves alone.",
        ]
    return lines


def alias_section(rows: list[Row]) -> list[str]:
    """Key 4, a title before an alias of equal weight, against the tie going by path, on
    every vault with aliased pages."""
    lines = [
        "## A title before an alias",
        "",
        "Key 4 of the order puts a page whose own title holds every keyword before a page where",
        "only an alias of equal weight does (docs/spec.md, rule 8). Without it the tie goes by",
        "path: in Obsidian's help vault every translation carries the English name as an alias,",
        "and `ar/`, `bn/`, `de/` sort before `en/`. Each measured query of the vaults with aliased",
        "pages, ranked both ways (group 1 re-sorted plainly without key 4,",
        "bench/known_item.py `alias_ties_by_path_key`):",
        "",
        "| vault | query kind | queries | hit@1, title before an alias (find's order) | hit@1, alias ties go by path |",
        "|---|---|---|---|---|",
    ]
    aliased = [row for row in rows if any(page.aliases for page in row.pages_by_path.values())]
    for row in aliased:
        lines.append(
            f"| {row.vault.label} | {row.kind} | {len(row.outcomes)} | {row.hit1:.3f} | {row.alias_path_hit1:.3f} |"
        )
    drops = [row for row in aliased if row.hit1 < row.alias_path_hit1]
    lines += [
        "",
        "**hit@1 is lower with key 4 on "
        + ", ".join(f"{row.vault.label} ({row.kind})" for row in drops)
        + "**: the measurement no longer supports it."
        if drops
        else "No row's hit@1 is lower with key 4. The rows of the translated vault hold every page's title "
        "words, the translations' own included, which no alias ties with; the question of the English page, "
        "whose title every translation's alias ties with, is its own row in \"Other tools' vaults\" below. "
        "A shorter alias still beats a longer title (key 3 comes first).",
        "",
    ]
    return lines


class KindRow:
    """One row of "Other vaults": a measure of one rule on one vault."""

    def __init__(self, vault: str, measure: str, queries: int, value: str, alternative: str, what: str):
        self.vault, self.measure, self.queries = vault, measure, queries
        self.value, self.alternative, self.what = value, alternative, what


def convention_rows(vault: Vault, rows: list[Row]) -> list[KindRow]:
    """hit@1 of the vault's title-words and file-name queries as find reads it, and plainly
    over its pages read without other tools' conventions (UTF-8 only, no Logseq names)."""
    without = catalogue(vault.path, conventions=False)
    out = []
    for row in rows:
        if row.vault is not vault or row.kind not in ("title words", "file name", TOPIC):
            continue
        ranks = [
            known_item.rank_of(known_item.plain_ranking(without, outcome.query.keywords), outcome.query.relevant)
            for outcome in row.outcomes
        ]
        rule = "wide encodings read by their mark" if vault.shape == "wide" else "Logseq's properties and names"
        out.append(
            KindRow(
                vault.label,
                f"{row.kind}: hit@1",
                len(ranks),
                f"{row.hit1:.3f}",
                f"{known_item.hit_at(ranks, 1):.3f}",
                f"with {rule} / without",
            )
        )
    return out


def translated_rows(vault: Vault, pages: dict[str, known_item.Page]) -> list[KindRow]:
    """The English pages' title words on the translated vault, whose every translation
    carries the English title as an alias: is the English page first, with key 4 (a title
    before an alias of equal weight) and with alias ties going by path?"""
    english = [page for page in pages.values() if page.path.startswith("en/")]
    chosen = known_item.sample(known_item.queries(english, "title words"), DEFAULT_QUERIES, SAMPLE_SEED)
    outcomes = measure(vault, pages, chosen, None, 0)
    ranks = [outcome.rank for outcome in outcomes]
    by_path = [outcome.alias_path_rank for outcome in outcomes]
    what = "a title before an alias (key 4) / alias ties go by path"
    return [
        KindRow(
            vault.label,
            "English title words: the English page first",
            len(chosen),
            f"{known_item.hit_at(ranks, 1):.3f}",
            f"{known_item.hit_at(by_path, 1):.3f}",
            what,
        ),
        KindRow(
            vault.label,
            "English title words: in the default 20",
            len(chosen),
            f"{known_item.hit_at(ranks, DEFAULT_LIMIT):.3f}",
            f"{known_item.hit_at(by_path, DEFAULT_LIMIT):.3f}",
            what,
        ),
    ]


def dendron_rows(vault: Vault, pages: dict[str, known_item.Page]) -> list[KindRow]:
    """recall's order on a Dendron vault: is the newest page (by its epoch-millisecond
    updated) first, and among the 3 recall reads? Against the pages as undated (epoch
    milliseconds not read), ranked by path."""
    import re

    updated = {
        path: int(match.group(1))
        for path, page in pages.items()
        if (match := re.search(r"^updated: (\d+)$", page.text, re.M))
    }
    terms = sorted({page.title.split()[0].lower() for page in pages.values() if page.title.split()})
    first = read = old_first = old_read = 0
    for term in terms:
        found = [entry.path for entry in recall(vault.path, term).matches]
        newest = max(found, key=lambda path: (updated.get(path, 0), path))
        first += found[0] == newest
        read += newest in found[:3]
        by_path = sorted(found)
        old_first += by_path[0] == newest
        old_read += newest in by_path[:3]
    count = len(terms)
    what = "epoch-millisecond updated read / not read (pages undated, by path)"
    return [
        KindRow(
            vault.label,
            "recall: the newest page first",
            count,
            f"{first / count:.3f}",
            f"{old_first / count:.3f}",
            what,
        ),
        KindRow(
            vault.label,
            "recall: the newest page read (top 3)",
            count,
            f"{read / count:.3f}",
            f"{old_read / count:.3f}",
            what,
        ),
    ]


def with_config(vault: Vault, config: str) -> Path:
    """A copy of the vault beside it with ``config`` as its .mnemosyne.toml."""
    import shutil

    target = vault.path.with_name(vault.path.name + "-configured")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(vault.path, target)
    (target / ".mnemosyne.toml").write_text(config, encoding="utf-8")
    return target


def look_alike_rows(vault: Vault) -> list[KindRow]:
    """The pages beside the look-alike dirs: does a miss say how many files it left out
    and the setting that includes them, and does that setting find the page first?"""
    whole = with_config(vault, 'dirs = ["."]\ndepth = "tree"\n')
    pages = catalogue(whole)  # the default (Aion) layout lists none of them
    beside = [page for page in pages.values() if not page.path.startswith(("apollo/", "athena/"))]
    chosen = known_item.sample(known_item.queries(beside, "title words"), DEFAULT_QUERIES, SAMPLE_SEED)
    misses = noted = elsewhere = 0
    ranks = []
    for query in chosen:
        stdout, stderr = run_cli(cli_argv(vault.path, query.keywords))
        if not stdout:
            misses += 1
            noted += b"not searched: " in stderr and b'set dirs = ["."] and depth = "tree"' in stderr
        else:
            elsewhere += 1
        ranking = [match.path for match in mnemosyne_core.search(whole, query.keywords, limit=0).matches]
        ranks.append(known_item.rank_of(ranking, query.relevant))
    count = len(chosen)
    return [
        KindRow(
            vault.label,
            "misses whose note names the count and the setting",
            misses,
            f"{noted} of {misses}",
            "",
            "the page lies beside apollo/ and athena/",
        ),
        KindRow(
            vault.label,
            "answered by other pages (no note: not a miss)",
            count,
            f"{elsewhere} of {count}",
            "",
            "line 1 is a page in apollo/ or athena/",
        ),
        KindRow(
            vault.label,
            "hit@1 with the note's setting",
            count,
            f"{known_item.hit_at(ranks, 1):.3f}",
            "",
            'dirs = ["."], depth = "tree" set as the note says',
        ),
    ]


def versioned_rows(vault: Vault, pages: dict[str, known_item.Page]) -> list[KindRow]:
    """A versioned docs site: the current page's title words, as the vault lies and with
    lint's exclude line set (hit@1 of the docs/ page, the lines and distinct pages shown,
    bytes), and a version's copy named by its version dir as well."""
    current = [page for page in pages.values() if page.path.startswith("docs/")]
    chosen = known_item.sample(known_item.queries(current, "title words"), DEFAULT_QUERIES, SAMPLE_SEED)
    excluded = with_config(vault, 'dirs = ["."]\ndepth = "tree"\nexclude = ["versioned_docs/"]\n')
    figures: dict[Path, list[tuple[int | None, int, int, int]]] = {vault.path: [], excluded: []}
    for target, outcomes in figures.items():
        for query in chosen:
            full = mnemosyne_core.search(target, query.keywords, limit=0)
            shown = full.matches[:DEFAULT_LIMIT]
            stdout, stderr = default_output(target, query.keywords, full)
            rank = known_item.rank_of([match.path for match in full.matches], query.relevant)
            outcomes.append((rank, len(shown), len({match.title for match in shown}), len(stdout) + len(stderr)))
    versions = [
        (page, [*known_item.title_words(page), page.path.split("/")[1]])
        for page in pages.values()
        if page.path.startswith("versioned_docs/")
    ]
    version_ranks = [
        known_item.rank_of(
            [match.path for match in mnemosyne_core.search(vault.path, keywords, limit=0).matches], {page.path}
        )
        for page, keywords in known_item.sample_items(versions, DEFAULT_QUERIES, SAMPLE_SEED)
    ]
    as_is, dropped = figures[vault.path], figures[excluded]
    count = len(chosen)

    def mean(outcomes: list[tuple[int | None, int, int, int]], index: int) -> str:
        return f"{sum(outcome[index] for outcome in outcomes) / count:,.1f}"  # type: ignore[misc]

    what = 'as it lies / with exclude = ["versioned_docs/"]'
    return [
        KindRow(
            vault.label,
            "current page's title words: hit@1",
            count,
            f"{known_item.hit_at([o[0] for o in as_is], 1):.3f}",
            f"{known_item.hit_at([o[0] for o in dropped], 1):.3f}",
            what,
        ),
        KindRow(vault.label, "lines shown (default 20)", count, mean(as_is, 1), mean(dropped, 1), what),
        KindRow(vault.label, "distinct titles among them", count, mean(as_is, 2), mean(dropped, 2), what),
        KindRow(vault.label, "bytes", count, mean(as_is, 3), mean(dropped, 3), what),
        KindRow(
            vault.label,
            "a copy's title words and its version dir: hit@1",
            len(version_ranks),
            f"{known_item.hit_at(version_ranks, 1):.3f}",
            "",
            "e.g. `installation version-1.0`",
        ),
    ]


def kinds_section(kind_rows: list[KindRow]) -> list[str]:
    lines = [
        "## Other tools' vaults",
        "",
        "The vaults other tools write, generated as they lie on disk (no .mnemosyne.toml;",
        "fixtures/generate_known_item_vaults.py), each measured on the rule made for it, against",
        "the alternative the rule replaced (the rows above give the usual query kinds on them):",
        "",
        "- **translated**: the title words of the English pages, each aliased by its 8 translations:",
        '  is the English page first, with key 4 ("A title before an alias" above) and without it?',
        "- **wide, logseq**: the title-words, file-name and topic queries, hit@1 as find reads the pages,",
        "  and plainly over the same pages read without the convention (UTF-8 only; frontmatter",
        "  only, the file name's stem as it is), bench/known_item.py `plain_ranking`.",
        "- **dendron**: recall of each title's first word; the page with the newest epoch-millisecond",
        "  `updated` should come first, and be among the 3 recall reads; the alternative reads no",
        "  such date (the pages undated, by path), as recall did before.",
        "- **look-alike**: title-words queries of the pages beside `apollo/` and `athena/`, which the",
        "  default (Aion) layout does not search: does each miss say how many files it left out and",
        '  the setting that includes them, and does that setting (`dirs = ["."]`, `depth = "tree"`)',
        "  find the page first?",
        "- **versioned**: title-words queries of the current `docs/` pages (the copies are not the",
        "  page meant), as the site lies and with the `exclude` line lint names; and a copy named by",
        "  its version dir too.",
        "",
        "| vault | measure | queries | find | alternative | find / alternative |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {row.vault} | {row.measure} | {row.queries} | {row.value} | {row.alternative or '—'} | {row.what} |"
        for row in kind_rows
    ]
    return [*lines, ""]


def measure_kinds(vaults: list[Vault], rows: list[Row]) -> list[KindRow]:
    kind_rows: list[KindRow] = []
    for vault in vaults:
        if vault.shape in ("wide", "logseq"):
            kind_rows += convention_rows(vault, rows)
        elif vault.shape == "translated":
            kind_rows += translated_rows(vault, catalogue(vault.path))
        elif vault.shape == "dendron":
            kind_rows += dendron_rows(vault, catalogue(vault.path))
        elif vault.shape == "look-alike":
            kind_rows += look_alike_rows(vault)
        elif vault.shape == "versioned":
            kind_rows += versioned_rows(vault, catalogue(vault.path))
    return kind_rows


def why(outcome: Outcome, row: Row) -> str:
    if outcome.rank is None:
        return "find does not return the intended page" + ("" if outcome.first else " (no match at all)")
    first = row.pages_by_path[outcome.first]
    return known_item.why_behind(outcome.query.intended, first, outcome.query.keywords)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Known-item benchmark of find's order; writes docs/retrieval.md.")
    parser.add_argument(
        "--vaults",
        nargs="*",
        default=list(DEFAULT_VAULTS),
        metavar="SHAPE:PAGES",
        help=f"generated vaults (shapes: {', '.join(generator.SHAPES)}; default {' '.join(DEFAULT_VAULTS)})",
    )
    parser.add_argument("--no-fixture", action="store_true", help="leave out the fixture vaults")
    parser.add_argument(
        "--queries", type=int, default=DEFAULT_QUERIES, help="queries per kind per generated vault (0: all)"
    )
    parser.add_argument(
        "--most-rivalled",
        type=int,
        default=DEFAULT_MOST_RIVALLED,
        help="file-name queries per vault chosen for the most rivals (0: none)",
    )
    parser.add_argument("--mnemosyne", help="the installed console script to check a sample with")
    parser.add_argument("--cli-sample", type=int, default=DEFAULT_CLI_SAMPLE, help="queries per row run through it")
    parser.add_argument("--examples", type=int, default=12, help="misses listed per row")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the report")
    args = parser.parse_args(argv)
    for spec in args.vaults:
        shape, _, count = spec.partition(":")
        if shape not in generator.SHAPES or not count.isdigit() or int(count) < 1:
            parser.error(f"--vaults {spec!r}: write SHAPE:PAGES, SHAPE one of {', '.join(generator.SHAPES)}")
    started = time.monotonic()
    vaults = prepare(args.vaults, not args.no_fixture)
    args.generating = time.monotonic() - started
    rows = []
    for vault in vaults:
        pages = catalogue(vault.path)
        for kind in ["title words", "file name", MOST_RIVALLED, TOPIC]:
            began = time.monotonic()
            if kind == MOST_RIVALLED:
                chosen = known_item.most_rivalled_file_names(
                    known_item.queries(list(pages.values()), "file name"), args.most_rivalled
                )
                if not chosen:
                    continue
            else:
                everything = known_item.queries(list(pages.values()), kind)
                size = 0 if vault.every_query else args.queries
                chosen = known_item.sample(everything, size, SAMPLE_SEED)
            row = Row(vault, pages, kind, measure(vault, pages, chosen, args.mnemosyne, args.cli_sample))
            rows.append(row)
            print(
                f"{vault.label}, {kind}: {len(row.outcomes)} queries, hit@1 {row.hit1:.3f}, "
                f"in 20 {row.within:.3f}, hit@1 with a title alone first {row.swapped_hit1:.3f} "
                f"({time.monotonic() - began:.0f} s)",
                flush=True,
            )
    args.en_images = en_images_case(vaults)
    began = time.monotonic()
    args.kind_rows = measure_kinds(vaults, rows)
    print(f"other tools' vaults: {len(args.kind_rows)} rows ({time.monotonic() - began:.0f} s)", flush=True)
    began = time.monotonic()
    args.agent_outcomes = measure_agent_tasks(args.mnemosyne)
    print(f"agent tasks: {len(args.agent_outcomes)} ({time.monotonic() - began:.0f} s)", flush=True)
    args.out.write_text(report(rows, args, time.monotonic() - started), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
