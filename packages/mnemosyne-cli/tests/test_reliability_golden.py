"""Golden outputs of ``mnemosyne wiki find`` over the edge-case vault and the
known-item vault (the order of docs/spec.md rule 8).

Each query runs through ``main`` twice, plain and with --json, and must reproduce
fixtures/golden/<vault>/<query>.txt (exit code, stdout and stderr, byte for byte) and
<query>.json (exit code, parsed stdout, stderr). A missing golden file fails.

To regenerate after a deliberate change: ``MNEMOSYNE_REGENERATE_GOLDEN=1 pytest <this file>``
writes the files and fails each test once, so that every new golden is read by hand
against the rules of docs/spec.md before it is accepted.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from golden import check_golden
from reliability_vault import (
    BIG_PAGE_NEEDLE,
    GOLDEN_ROOT,
    KNOWN_ITEM_VAULT,
    MENTIONS_VAULT,
    UNREACHABLE,
    build_edge_vault,
)

from mnemosyne_cli.app import main
from mnemosyne_contract import load_schema

if TYPE_CHECKING:
    from collections.abc import Sequence

VAULT_PLACEHOLDER = "<VAULT>"


class Query:
    """One golden case: the arguments after ``wiki find``; ``--vault <VAULT>`` is added
    unless they name a vault themselves."""

    def __init__(
        self, name: str, args: Sequence[str], *, big: bool = False, json_variant: bool = True, vault: str = "edge"
    ):
        self.name = name
        self.args = list(args)
        #: Which vault it runs on, and so which dir of fixtures/golden holds its files.
        self.vault = vault
        #: Run against the vault that also holds the 50 MB page (slow to search, so only here).
        self.big = big
        #: --cat cannot be combined with --json (exit 64, tested elsewhere).
        self.json_variant = json_variant and "--cat" not in args


QUERIES = [
    # Reading: BOM, CRLF, bytes that are not UTF-8, empty files (rule 3).
    Query("encoding-bom-crlf-latin1", ["encoding", "--dir", "atlas"]),
    Query("empty-pages-titled-by-stem", ["empty"]),
    Query("bom-only-page", ["only-bom"]),
    Query("invalid-bytes-become-replacement-char", ["\ufffd"]),
    # Titles (rule 5): empty, null, list, mapping, number, blank, block scalars, escapes.
    Query("titles-fallback-and-collapse", ["title-", "--limit", "0"]),
    Query("title-quoted-escapes-matched-after-collapse", ['Tab and "quotes"']),
    Query("title-block-scalar-matched-as-title", ["literal block scalar title"]),
    # Frontmatter (rule 4): unclosed, invalid, not a mapping, empty, not first, bad closers.
    Query("frontmatter-structure", ["frontmatter", "--dir", "mnemosyne", "--limit", "0"]),
    Query("unterminated-frontmatter-is-body-text", ["never closed"]),
    Query("yaml-bombs-stay-bounded", ["bomb"]),
    Query("python-tag-not-constructed", ["python"]),
    # Matching in full Unicode (rule 6) and names as on disk (rule 9).
    Query("nfc-keyword-finds-nfd-name", ["caf\u00e9"]),
    Query("nfd-keyword-finds-nfc-title", ["cafe\u0301"]),
    Query("sharp-s-folds-to-ss", ["STRASSE"]),
    Query("kelvin-sign-folds-to-k", ["kelvin"]),
    Query("long-s-folds-to-s", ["constitution"]),
    Query("ligature-in-name", ["FINANCE"]),
    Query("ligature-in-body", ["office"]),
    Query("greek-final-sigma", ["\u03bf\u03b4\u03bf\u03c2"]),
    Query("cjk-title", ["\u6771\u4eac"]),
    Query("cyrillic-upper-case", ["\u0417\u0410\u041c\u0415\u0422\u041a\u0418"]),
    Query("arabic-title", ["\u0645\u0644\u0627\u062d\u0638\u0627\u062a"]),
    Query("spaces-in-name", ["with spaces"]),
    Query("hostile-file-names-escaped", ["hostile file name"]),
    # Scope (rule 2): hidden, .MD, nested, x.md dir, other dirs, root; symlinks.
    Query("skipped-files-never-read", [UNREACHABLE]),
    Query("dir-outside-default-scope", [UNREACHABLE, "--dir", "outside"]),
    Query("symlink-inside-vault-followed", ["windows line ends"]),
    # Control characters in titles (rule 9).
    Query("ansi-title-escaped", ["red alert"]),
    Query("control-character-titles", ["title", "--dir", "metis"]),
    # constellation and type (rule 11).
    Query("constellation-and-type-fields", ["fields"]),
    Query("analyses-constellation", ["analysis", "--dir", "analyses"]),
    # --cat (rule 12), --limit (rule 10), no match (rule 13).
    Query("cat-crlf-page-verbatim", ["windows line ends", "--dir", "atlas", "--cat"]),
    Query("cat-bom-page-verbatim", ["byte order mark", "--cat"]),
    Query("cat-latin1-page-verbatim", ["legacy encoding", "--cat"]),
    Query("cat-two-matches-refused", ["windows line ends", "--cat"]),
    Query("cat-candidates-escaped", ["title", "--dir", "metis", "--cat"]),
    Query("cat-escaping-symlink-never-read", ["secret", "--cat"]),
    Query("limit-caps-and-says-so", ["title", "--limit", "3"]),
    Query("and-emptied-by-one-keyword", ["encoding", UNREACHABLE]),
    # The 50 MB page: found by its last line, and by its title.
    Query("big-page-needle-at-the-end", [BIG_PAGE_NEEDLE], big=True),
    Query("big-page-title", ["fifty megabytes"], big=True),
    # Vault errors (rule 1).
    Query("vault-missing", ["x", "--vault", f"{VAULT_PLACEHOLDER}/missing"]),
    Query("vault-is-a-file", ["x", "--vault", f"{VAULT_PLACEHOLDER}/root-page.md"]),
    Query("vault-without-default-dirs-is-a-tree", [UNREACHABLE, "--vault", f"{VAULT_PLACEHOLDER}/outside"]),
    Query("vault-without-the-named-dirs", ["x", "--dir", "nowhere", "--dir", "root-page.md"]),
    # The known-item order (docs/spec.md rule 8), one query per key and per example of the spec.
    Query("command-name-first", ["tar"], vault="known-item"),
    Query("title-alone-before-path-only", ["shortcode"], vault="known-item"),
    Query("section-page-among-flattened-names", ["content", "management"], vault="known-item"),
    Query("shortest-near-duplicate-title-first", ["strings.contains"], vault="known-item"),
    Query("file-name-pasted-from-output", ["strings.contains.md"], vault="known-item"),
    Query("path-pasted-from-output", ["hugo/content-management__shortcodes"], vault="known-item"),
    # Every other form of a pasted path answers as the bare path (rule 6); outside: 64.
    Query("whole-output-line-pasted", ["hugo/content-management__shortcodes.md — Shortcodes"], vault="known-item"),
    Query(
        "absolute-path-pasted",
        [f"{VAULT_PLACEHOLDER}/hugo/content-management__shortcodes.md"],
        vault="known-item",
    ),
    Query("dot-slash-and-backslashes-pasted", [".\\hugo\\content-management__shortcodes.md"], vault="known-item"),
    Query("pasted-path-outside-the-vault", ["../elsewhere.md"], vault="known-item"),
    Query("text-only-matches-last-by-path", ["archive"], vault="known-item"),
    Query("cat-candidates-capped-at-limit", ["tar", "--cat", "--limit", "3"], vault="known-item"),
    Query("keyword-starting-with-dash-after-double-dash", ["--", "-v"], vault="known-item"),
    # Where each page matched (--matched), the order of pages that only mention the
    # keywords (rule 8), aliases, and --cat's way out (rule 12).
    Query("mentions-only-soonest-first", ["non-lexical", "--matched"], vault="mentions"),
    Query("mentions-past-the-old-default-20", ["question", "mark", "operator", "--matched"], vault="mentions"),
    Query("cat-names-the-one-page-named", ["0243-trait-based", "--cat"], vault="mentions"),
    Query("word-starts-in-path-and-title", ["en", "images", "--matched"], vault="mentions"),
    Query("alias-counts-as-title", ["cli", "--matched"], vault="mentions"),
    Query("alias-as-one-string", ["editors", "--matched"], vault="mentions"),
    Query("without-matched-json-keeps-four-keys", ["cli"], vault="mentions"),
    # Where the named pages end, and each mention's line of context (--matched).
    Query("named-pages-end-then-mentions-with-context", ["images", "--matched"], vault="mentions"),
    Query("named-pages-end-past-the-limit", ["trait", "--matched", "--limit", "8"], vault="mentions"),
    # Nested vaults as they lie on disk (docs/commands.md, Layouts). An Obsidian vault with no
    # config: a whole tree, hidden dirs and what .gitignore excludes left out, names with
    # spaces and outside ASCII.
    Query("tree-nested-notes-by-title-and-text", ["kestrel"], vault="obsidian"),
    Query("tree-names-with-spaces", ["daily notes"], vault="obsidian"),
    Query("tree-non-ascii-names", ["café"], vault="obsidian"),
    Query("tree-non-ascii-dir-and-title", ["über", "ordnung"], vault="obsidian"),
    Query("tree-gitignored-and-hidden-never-read", ["password"], vault="obsidian"),
    Query("tree-cat-a-nested-note", ["atomic notes", "--cat"], vault="obsidian"),
    # A harness wiki with sub-articles: wiki/<parent>/<child>.md, the memory dir left out.
    Query("sub-articles-found-with-their-parent", ["auth"], vault="harness-tree"),
    Query("sub-article-two-levels-down", ["docker"], vault="harness-tree"),
    Query("sub-articles-of-one-parent-by-dir", ["token", "--dir", "wiki/auth"], vault="harness-tree"),
    Query("dir-named-by-its-last-part-is-a-usage-error", ["token", "--dir", "auth"], vault="harness-tree"),
    Query("memory-dir-never-searched", ["wiki-query"], vault="harness-tree"),
    Query("other-suffix-named-on-a-miss", ["mdx page"], vault="harness-tree"),
    # A docs repo of .mdx pages in language dirs, node_modules/ and dist/ ignored.
    Query("docs-every-language", ["images"], vault="docs-tree"),
    Query(
        "docs-language-dir-as-vault-and-nested-dir",
        ["images", "--vault", f"{VAULT_PLACEHOLDER}/src/content/docs/en", "--dir", "guides"],
        vault="docs-tree",
    ),
    Query("docs-dir-below-a-language", ["deploy", "--dir", "src/content/docs/en/guides"], vault="docs-tree"),
    Query("docs-ignored-dirs-never-read", ["dependencies"], vault="docs-tree"),
    Query("docs-non-ascii-title", ["画像"], vault="docs-tree"),
    # Other tools' vaults (docs/spec.md rules 3 to 5 and 8). Obsidian's help in several
    # languages: each translation carries the English name as an alias.
    Query("english-title-before-translations-alias", ["embed", "files", "--matched"], vault="obsidian-help"),
    Query("shorter-alias-before-longer-title", ["embed", "--matched"], vault="obsidian-help"),
    # A book with its original at the root and translations beside it (zh-CN/book/...):
    # the page a user names by its path, its file name or a part of its path comes first.
    Query("pasted-path-names-its-page-first", ["book/coming_from_bash.md", "--matched"], vault="translated-book"),
    Query("pasted-path-cat-prints-its-page", ["book/coming_from_bash.md", "--cat"], vault="translated-book"),
    Query("path-only-match-shortest-path-first", ["book/coming", "--matched"], vault="translated-book"),
    Query("file-name-before-anothers-alias", ["home", "--matched"], vault="translated-book"),
    # A Logseq graph: properties in the first block, namespaced and escaped file names.
    Query("logseq-namespace-name-found", ["Whiteboard/Tool/Shape/Rectangle"], vault="logseq"),
    Query("logseq-alias-property", ["rectangle", "tool", "--matched"], vault="logseq"),
    Query("logseq-escaped-file-name", ["logseq?"], vault="logseq"),
    Query("logseq-escape-decoded-without-a-title", ["indentation?"], vault="logseq"),
    Query("logseq-bulleted-first-block", ["learning", "sprint", "--matched"], vault="logseq"),
    # A Jekyll site: YAML's document end closes frontmatter; UTF-16 with and without its mark.
    Query("jekyll-document-end-closes-frontmatter", ["welcome"], vault="jekyll"),
    Query("jekyll-utf16-page-with-mark", ["herons"], vault="jekyll"),
    Query("jekyll-page-without-mark-counted-on-a-miss", ["without", "its", "mark"], vault="jekyll"),
    # A Dendron vault: dotted hierarchy names, epoch-millisecond dates.
    Query("dendron-dotted-names", ["dendron.topic"], vault="dendron"),
    Query("dendron-title-and-text", ["preview"], vault="dendron"),
    # A Docusaurus site: docs/ repeated in versioned_docs/version-*/. Every copy is listed
    # (distinct files), the current docs/ first by path; a version in the keywords names its copy.
    Query("versioned-copies-listed-current-first", ["installation", "--matched"], vault="docusaurus"),
    Query("versioned-copy-named-by-its-version", ["version-1.0", "installation"], vault="docusaurus"),
    Query("versioned-file-name-pasted", ["intro.md"], vault="docusaurus"),
    # A plain folder of notes (zero config, no .obsidian/): a page without a frontmatter
    # title is titled by its opening # heading, its markup reduced (docs/spec.md rule 5).
    Query("headings-every-title-rule", ["osprey", "--limit", "0"], vault="headings"),
    Query("headings-dotted-capitals-find-the-title", ["DEĞİŞTİRİLEMEZ"], vault="headings"),
    Query("headings-dotless-i-typed-as-i", ["ALTYAPI"], vault="headings"),
    Query("headings-markup-reduced-to-its-text", ["bold", "find", "guide", "--matched"], vault="headings"),
    # Releases and translations with [order] prefer: of the versions of a page, tied on every
    # other key, the one under a preferred dir comes first; a release named in the keywords
    # still names its own page.
    Query("preferred-release-first", ["install"], vault="versioned"),
    Query("preferred-language-first", ["getting", "started", "--matched"], vault="versioned"),
    Query("named-release-before-the-preferred", ["7.9", "install"], vault="versioned"),
]


@pytest.fixture(scope="module")
def edge_vaults(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """The edge vault without (False) and with (True) its 50 MB page."""
    small = build_edge_vault(tmp_path_factory.mktemp("edge"), big_page=False)
    big = build_edge_vault(tmp_path_factory.mktemp("edge-big"), big_page=True)
    return {False: small, True: big}


def _with_vault(args: list[str], vault: str, *, as_json: bool) -> list[str]:
    """``args`` with --vault (unless named) and --json added before a ``--``, if any."""
    options = [*([] if "--vault" in args else ["--vault", vault]), *(["--json"] if as_json else [])]
    split = args.index("--") if "--" in args else len(args)
    return [*args[:split], *options, *args[split:]]


def _argv(query: Query, vault: Path, *, as_json: bool) -> list[str]:
    args = [arg.replace(VAULT_PLACEHOLDER, str(vault)) for arg in query.args]
    return ["wiki", "find", *_with_vault(args, str(vault), as_json=as_json)]


def _shown_argv(query: Query, *, as_json: bool) -> str:
    return shlex.join(["mnemosyne", "wiki", "find", *_with_vault(query.args, VAULT_PLACEHOLDER, as_json=as_json)])


def _vault_of(query: Query, edge_vaults: dict[bool, Path]) -> Path:
    fixed = {"known-item": KNOWN_ITEM_VAULT, "mentions": MENTIONS_VAULT}
    if query.vault in fixed:
        return fixed[query.vault]
    if query.vault == "edge":
        return edge_vaults[query.big]
    return KNOWN_ITEM_VAULT.parent / query.vault  # the nested vaults, by their dir name


def _run(
    capsysbinary: pytest.CaptureFixture[bytes], query: Query, vault: Path, *, as_json: bool
) -> tuple[int, bytes, bytes]:
    code = main(_argv(query, vault, as_json=as_json))
    captured = capsysbinary.readouterr()
    real = os.path.realpath(vault)
    outputs = []
    for stream in (captured.out, captured.err):
        for path in {real, str(vault)}:
            stream = stream.replace(os.fsencode(path), VAULT_PLACEHOLDER.encode())
        outputs.append(stream)
    return code, outputs[0], outputs[1]


@pytest.mark.parametrize("query", QUERIES, ids=[query.name for query in QUERIES])
def test_plain_output_matches_golden(
    query: Query, edge_vaults: dict[bool, Path], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, err = _run(capsysbinary, query, _vault_of(query, edge_vaults), as_json=False)
    text = f"$ {_shown_argv(query, as_json=False)}\nexit: {code}\n--- stdout\n".encode() + out + b"--- stderr\n" + err
    check_golden(GOLDEN_ROOT / query.vault / f"{query.name}.txt", text)


JSON_QUERIES = [query for query in QUERIES if query.json_variant]


@pytest.mark.parametrize("query", JSON_QUERIES, ids=[query.name for query in JSON_QUERIES])
def test_json_output_matches_golden(
    query: Query, edge_vaults: dict[bool, Path], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, err = _run(capsysbinary, query, _vault_of(query, edge_vaults), as_json=True)
    stdout: Any = json.loads(out) if out else None
    if stdout is not None:
        jsonschema.validate(stdout, load_schema("find"))
    record = {"argv": _shown_argv(query, as_json=True), "exit_code": code, "stdout": stdout, "stderr": err.decode()}
    try:
        text = json.dumps(record, indent=2, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a file name with undecodable bytes: keep its \udcXX escape
        text = json.dumps(record, indent=2).encode()
    check_golden(GOLDEN_ROOT / query.vault / f"{query.name}.json", text + b"\n")


def test_every_golden_file_belongs_to_a_query() -> None:
    expected = {f"{query.vault}/{query.name}.txt" for query in QUERIES}
    expected |= {f"{query.vault}/{query.name}.json" for query in JSON_QUERIES}
    present = {f"{path.parent.name}/{path.name}" for path in GOLDEN_ROOT.glob("*/*") if not path.name.startswith(".")}
    assert sorted(present - expected) == [], "stale golden files: delete them or add their queries"
    assert sorted(expected - present) == [], "missing golden files: regenerate and review them"
