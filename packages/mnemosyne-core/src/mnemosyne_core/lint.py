"""``wiki lint``: what find cannot see, and the pages it sees only in part.

Two kinds of finding, each a path relative to the vault ('/'-separated), a stable reason
code and a short human reason:

* pages find searches, but degraded: their frontmatter, title, ``updated``, encoding,
  title uniqueness or constellation is off. These come from ``vault.scan`` (the very list
  find searches) read through ``frontmatter``, so lint and find cannot disagree.
* files find never searches: markdown files (``.md``, ``.markdown``, ``.mdx``, any case)
  nested below a dir of a flat layout, in dirs that are not scanned or at the vault root,
  with a suffix the layout does not search (``.MD``, or ``.mdx`` under a ``.md`` layout),
  hidden, or behind a symlink that leaves the vault or is broken. Inside a tree layout's
  dirs the walk skips what the tree walk skips (hidden entries, ignore files, exclude).
* leftovers: a temp file that a killed ingest left behind over an hour ago
  (``vault.is_stale_ingest_temp``, the rule ingest removes them by).

The walk for the second kind never follows a symlinked dir (except a scanned dir that
``scan`` itself follows, walked under its scanned name) and skips hidden dirs (``.git``,
``.obsidian``, ``.mnemosyne``, ...) and the configured memory dir entirely: they hold
tool state, not notes. Hidden *files* are reported.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from itertools import filterfalse, repeat
from operator import itemgetter

from mnemosyne_core.config import (
    DEPTH_TREE,
    FLAT_SUFFIXES,
    LAYOUT_FROM_ZERO_CONFIG,
    MARKDOWN_SUFFIXES,
    VAULT_CONFIG_FILE,
    VAULT_ROOT_DIR,
    home_dir,
    is_markdown_like,
    load_vault_config,
    markdown_like_endings,
    toml_array,
    vault_layout,
)
from mnemosyne_core.diagnostics import BROKEN_SYMLINK, CANNOT_LIST, IGNORE_FILE_UNUSED, SYMLINK_ESCAPES
from mnemosyne_core.errors import UnknownLintCodeError, VaultError
from mnemosyne_core.fold import fold
from mnemosyne_core.location import is_inside, resolve_vault
from mnemosyne_core.page import read_page_bytes
from mnemosyne_core.page_lint import (
    FRONTMATTER_NOT_MAPPING,
    INVALID_FRONTMATTER,
    INVALID_UPDATED,
    MISSING_TITLE,
    MISSING_UPDATED,
    NO_FRONTMATTER,
    NOT_TEXT,
    NOT_UTF8,
    UNCLOSED_FRONTMATTER,
    UNKNOWN_CONSTELLATION,
    Finding,
    as_finding,
    check_page,
)
from mnemosyne_core.pagefields import content_digests
from mnemosyne_core.recall import resolve_memory_dir
from mnemosyne_core.record import Record
from mnemosyne_core.vault import IgnoreRules, TreeWalk, dir_covers, ignore_names, is_stale_ingest_temp, scan
from mnemosyne_core.versions import (
    CopyDir,
    chosen_version,
    find_copies,
    holds_versions,
    is_docusaurus,
    page_key,
    page_keys,
    version_dirs,
)

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from mnemosyne_core.diagnostics import Diagnostic
    from mnemosyne_core.freshness import Fresh
    from mnemosyne_core.index import NoteIndex
    from mnemosyne_core.vault import Scan

# --- reason codes: stable, agents branch on them -------------------------------------------
# Pages find searches, but degraded: the codes of one page alone (``page_lint``), and
DUPLICATE_TITLE = "duplicate-title"
# Files find never searches.
NESTED_FILE = "nested-file"
UNSCANNED_DIR = "unscanned-dir"
VAULT_ROOT_FILE = "vault-root-file"
SUFFIX_CASE = "suffix-case"
UNSEARCHED_SUFFIX = "unsearched-suffix"
HIDDEN_FILE = "hidden-file"
# SYMLINK_ESCAPES and BROKEN_SYMLINK: the scan's own diagnostic codes, imported above.
NOT_REGULAR_FILE = "not-regular-file"
UNREADABLE = "unreadable"
SKIPPED_BY_FIND = "skipped-by-find"
# Neither: clutter a killed ingest left behind.
LEFTOVER_TEMP_FILE = "leftover-temp-file"

#: Every reason code and what it means, in the order the docs list them. The contract's
#: lint.schema.json enumerates exactly these (a test holds them equal).
REASON_CODES: dict[str, str] = {
    NO_FRONTMATTER: (
        "searched, but the page has no frontmatter: find shows the file name stem as its title (outside the"
        " default layout and Obsidian, its opening # heading when it has one)"
    ),
    UNCLOSED_FRONTMATTER: (
        "searched, but the opening --- line has no closing --- or ... line: the frontmatter is ignored"
    ),
    INVALID_FRONTMATTER: "searched, but the frontmatter is not valid YAML: it is ignored",
    FRONTMATTER_NOT_MAPPING: "searched, but the frontmatter is YAML that is not a key: value mapping: it is ignored",
    MISSING_TITLE: (
        "searched, but the title is missing, blank or not a string: find shows the file name stem (outside the"
        " default layout and Obsidian, its opening # heading when it has one)"
    ),
    MISSING_UPDATED: "searched, but there is no updated, lastmod or date: recall ranks the page last",
    INVALID_UPDATED: (
        "searched, but updated (or, without it, lastmod or date) is not a YYYY-MM-DD date (a time may follow)"
        " nor epoch milliseconds: recall ranks the page by the next valid one, else last"
    ),
    NOT_UTF8: "searched, but some bytes are not UTF-8: find reads them as U+FFFD",
    NOT_TEXT: (
        "searched, but not text: a NUL byte in its first 16 KiB (a binary file, or UTF-16 or UTF-32 without"
        " a byte order mark); find cannot match its words, and a miss counts it"
    ),
    DUPLICATE_TITLE: "searched, but another page has the same title (compared case- and space-insensitively)",
    UNKNOWN_CONSTELLATION: "searched, but constellation is not one of the known constellations",
    NESTED_FILE: 'never searched: a page-named file in a sub-dir of a dir of a flat layout (depth = "tree" reads it)',
    UNSCANNED_DIR: "never searched: a .md file in a top-level dir that is not scanned",
    VAULT_ROOT_FILE: "never searched: a .md file at the vault root (find reads only the scanned dirs)",
    SUFFIX_CASE: "never searched: the name ends in .MD or another case of a searched suffix; find reads exact case",
    UNSEARCHED_SUFFIX: "never searched: a markdown file (.md, .markdown, .mdx) whose suffix the layout does not search",
    HIDDEN_FILE: "never searched: the name starts with '.'",
    SYMLINK_ESCAPES: "never searched: a symlink whose target is outside the vault",
    BROKEN_SYMLINK: "never searched: a symlink whose target does not exist",
    NOT_REGULAR_FILE: "never searched: a page name on something that is not a regular file (a FIFO, a link to a dir)",
    UNREADABLE: "not searched: the page or dir could not be read (permissions, or it vanished)",
    SKIPPED_BY_FIND: "not searched: find skipped it with a warning lint has no code for; the message quotes it",
    LEFTOVER_TEMP_FILE: "leftover: a temp file a killed ingest left behind over an hour ago; remove it",
}

#: The degraded-page codes that hold a page to the Aion conventions (a frontmatter with a
#: title and an updated date). Under zero config (``config.LAYOUT_FROM_ZERO_CONFIG``) lint
#: leaves them out unless --select names them: such a folder never chose them.
AION_CONVENTION_CODES = (NO_FRONTMATTER, MISSING_TITLE, MISSING_UPDATED)

#: The codes of the files find never lists or cannot read: what ``wiki info`` counts as
#: skipped. The rest are degraded pages (searched) and leftovers.
UNSEARCHED_CODES = frozenset(
    {
        NESTED_FILE,
        UNSCANNED_DIR,
        VAULT_ROOT_FILE,
        SUFFIX_CASE,
        UNSEARCHED_SUFFIX,
        HIDDEN_FILE,
        SYMLINK_ESCAPES,
        BROKEN_SYMLINK,
        NOT_REGULAR_FILE,
        UNREADABLE,
        SKIPPED_BY_FIND,
    }
)

#: How deep lint walks below the vault root; far more than any vault nests.
MAX_WALK_DEPTH = 200


class LintReport(Record):
    """What lint reports (``findings``, sorted by path, then code), how many findings
    the selection left out (``ignored``: --select, --ignore, ``[lint] ignore``), and the
    warnings about the command line rather than the vault (``warnings``: a --dir that
    names no dir of it), which are said, never reported or ignored as findings."""

    __slots__ = ("findings", "ignored", "ignored_by_code", "warnings", "zero_config")

    def __init__(self, findings: list[Finding], ignored: int, warnings: list[Diagnostic] | None = None):
        self.findings = findings
        self.ignored = ignored
        self.warnings: list[Diagnostic] = [] if warnings is None else warnings
        #: Whether the vault's layout is zero config, whose ignored codes include
        #: AION_CONVENTION_CODES (unless --select named them).
        self.zero_config = False
        #: How many findings of each code the selection left out (they sum to ``ignored``), the
        #: most first, then by code: what "ignored" counts, so a reader can --select one back.
        self.ignored_by_code: list[tuple[str, int]] = []


def check_codes(codes: Iterable[str], option: str) -> None:
    """Raise UnknownLintCodeError, listing the known codes, unless every code is one of
    REASON_CODES. ``option`` names where they came from (``--select``)."""
    unknown = [code for code in dict.fromkeys(codes) if code not in REASON_CODES]
    if unknown:
        raise UnknownLintCodeError(f"{option}: {_unknown_codes(unknown)}")


def _unknown_codes(unknown: Sequence[str]) -> str:
    what = "unknown lint code" + ("s " if len(unknown) > 1 else " ")
    return f"{what}{', '.join(map(repr, unknown))}; known codes: {', '.join(REASON_CODES)}"


def lint_report(
    vault: str | os.PathLike[str] | None,
    *,
    dirs: Sequence[str] | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    environ: Mapping[str, str] = os.environ,
    cwd: str | None = None,
    home: str | None = None,
    cached: bool = False,
) -> LintReport:
    """Lint ``vault`` (None: found as ``location.locate_vault`` says) and report the findings whose code is selected.

    ``dirs`` overrides the scanned dirs (--dir), exactly as for find. A finding is
    reported when its code is in ``select`` (None or empty: every code) and is neither in
    ``ignore`` nor in the vault config's ``[lint] ignore``; a code named in ``select``
    overrides the config's ignore (the command line is the more specific wish), but not
    ``ignore``. Raises UnknownLintCodeError for a code of ``select`` or ``ignore`` that
    does not exist, and VaultError when find would (no vault, none of the scanned dirs, a
    bad config file, an unknown code in ``[lint] ignore``). ``environ``, ``cwd`` and
    ``home`` are where the vault is looked for (``location.locate_vault``, whose defaults,
    this process's, are for a Python caller) and what names the memory dir the walk skips.
    ``cached``: the vault's index (the one find reads, found by ``environ``) answers for the
    pages it holds fresh, as it does for find; the findings are the same.
    """
    selected = tuple(select or ())
    ignored = tuple(ignore or ())
    check_codes(selected, "--select")
    check_codes(ignored, "--ignore")
    home = home_dir(environ) if home is None else home
    vault_real = resolve_vault(vault, environ, cwd, home)
    config = load_vault_config(vault_real)
    config_ignore = config.lint_ignore or ()
    unknown = [code for code in config_ignore if code not in REASON_CODES]
    if unknown:
        raise VaultError(f"{config.path}: lint.ignore has {_unknown_codes(unknown)}")
    hidden = set(REASON_CODES).difference(selected) if selected else set()
    hidden.update(ignored)
    hidden.update(set(config_ignore).difference(selected))
    config_dirs = vault_layout(vault_real, config=config).dirs
    findings: list[Finding] | None = None
    if cached:
        from mnemosyne_core.cache import IndexedScan

        pages, findings = IndexedScan(environ).listed_through_index(
            vault_real,
            dirs,
            home,
            lambda pages, index, fresh: _indexed_findings(pages, config_dirs, environ, index, fresh),
        )
    else:
        pages = scan(vault_real, dirs, home=home)
    if findings is None:
        findings = _all_findings(pages, config_dirs, environ)
    zero_config = pages.layout is not None and pages.layout.source == LAYOUT_FROM_ZERO_CONFIG
    if zero_config:
        # A folder that never chose the Aion conventions: its notes are named by their
        # file names and carry no dates, as Obsidian and docs sites have it.
        hidden.update(set(AION_CONVENTION_CODES).difference(selected))
    reported = [finding for finding in findings if finding[1] not in hidden]
    report = LintReport(reported, len(findings) - len(reported), list(pages.dir_warnings))
    report.zero_config = zero_config
    by_code = Counter(code for code in map(itemgetter(1), findings) if code in hidden) if report.ignored else {}
    report.ignored_by_code = sorted(by_code.items(), key=lambda item: (-item[1], item[0]))
    return report


def _all_findings(pages: Scan, config_dirs: tuple[str, ...], environ: Mapping[str, str]) -> list[Finding]:
    findings = set(_listing_findings(pages, config_dirs, environ))
    titled: list[tuple[str, str]] = []
    digests = {}
    for page in pages.pages:
        try:
            data = read_page_bytes(page)
        except OSError as error:
            findings.add(_unreadable(page.rel_path, error))
            continue
        title, page_findings = check_page(page.rel_path, data, pages.heading_titles)
        findings.update(page_findings)
        digests[page.rel_path] = content_digests(data)
        if title is not None:
            titled.append((page.rel_path, title))
    copies = _copies_of(pages, digests)
    findings.update(copies.findings())
    # A copy and its original, or two versions of one page, are one page: their shared
    # title is no duplicate.
    same_page = page_keys(rel_path for rel_path, _ in titled)
    for copy_path, original in copies.copy_paths().items():
        if copy_path in same_page and original in same_page:
            same_page[copy_path] = same_page[original]
    findings.update(_duplicate_titles(titled, same_page))
    prefer = pages.config.prefer if pages.config is not None else ()
    return sorted(collapse_versions(findings, prefer))


def _unreadable(rel_path: str, error: OSError) -> Finding:
    reason = "it vanished" if isinstance(error, FileNotFoundError) else error.strerror
    return Finding(rel_path, UNREADABLE, f"cannot read the page ({reason}); find skips it")


def _indexed_findings(
    pages: Scan, config_dirs: tuple[str, ...], environ: Mapping[str, str], index: NoteIndex, fresh: Fresh
) -> list[Finding]:
    """``_all_findings`` from what the index keeps of each page fresh in it (``fresh``):
    its own findings, its title, its digests, made when it was read (``page.read_page``).
    The findings between pages ask the index for the few pages they concern: the titles
    another page has too, and every page's digests only when two pages share one."""
    findings = set(_listing_findings(pages, config_dirs, environ))
    findings.update(_unreadable(rel_path, error) for rel_path, error in fresh.unreadable)
    # Each page's own findings, each once, made in C and kept out of the set: a vault of
    # 100,000 pages without frontmatter has a finding a page.
    own = list(map(as_finding, index.lint_findings(fresh.ids)))
    digests = {}
    if index.digests_shared():
        digests = {rel_path: pair for page_id, rel_path, pair in index.digests() if fresh.holds(page_id)}
    copies = _copies_of(pages, digests)
    findings.update(copies.findings())
    titled = [(rel_path, title) for page_id, rel_path, title in index.shared_titles() if fresh.holds(page_id)]
    # page_keys' word on the vault's pages that give themselves a title: whether a
    # Docusaurus site's versioned_docs/ is among them.
    docusaurus = is_docusaurus(
        path for page_id, path in index.titled_paths_holding("versioned_docs/") if fresh.holds(page_id)
    )
    same_page = {rel_path: page_key(rel_path, docusaurus) for rel_path, _ in titled}
    originals = {copy_path: original for copy_path, original in copies.copy_paths().items() if copy_path in same_page}
    titled_originals = index.titled(originals.values())
    for copy_path, original in originals.items():
        if original in titled_originals and fresh.holds(titled_originals[original]):
            same_page[copy_path] = page_key(original, docusaurus)
    findings.update(_duplicate_titles(titled, same_page))
    prefer = pages.config.prefer if pages.config is not None else ()
    if findings:
        own = list(filterfalse(findings.__contains__, own))
    return sorted(collapse_versions([*own, *findings], prefer))


def collapse_versions(findings: Iterable[Finding], prefer: Sequence[str] = ()) -> list[Finding]:
    """``findings`` with each finding that repeats, code and message alike, across versions
    of one page (``versions.page_keys``) said once: at the version ``versions.chosen_version``
    picks among them in path order (the preferred one, else the highest release, else the
    first by path), naming the dirs of the others. A docs site in 16 languages must not say
    one thing 16 times."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    kept = []
    findings = list(findings)
    paths = list(map(itemgetter(0), findings))
    # Most vaults keep no versions: their dirs, taken in C, say so without a key a page.
    if not holds_versions(set(map(itemgetter(0), map(str.rpartition, paths, repeat("/"))))):
        return findings
    keys = page_keys(paths)
    for finding in findings:
        key = keys[finding.path]
        if key == finding.path:
            kept.append(finding)
        else:
            groups.setdefault((finding.code, finding.message, key), []).append(finding)
    for (code, message, _), group in groups.items():
        if len(group) == 1:
            kept += group
            continue
        versions = sorted(finding.path for finding in group)
        chosen = chosen_version(versions, prefer)
        dirs = version_dirs(versions)
        others = ", ".join(place for index, place in enumerate(dirs) if index != chosen)
        kept.append(Finding(versions[chosen], code, f"{message}; the same in its versions in {others}"))
    return kept


def unsearched_findings(pages: Scan, environ: Mapping[str, str]) -> list[Finding]:
    """The findings, sorted, for the files the scan ``pages`` skips (UNSEARCHED_CODES),
    found without reading a page: scan's warnings, then lint's walk of the vault (which
    skips the memory dir ``environ`` names)."""
    config_dirs = vault_layout(pages.vault).dirs
    found = {finding for finding in _listing_findings(pages, config_dirs, environ) if finding.code in UNSEARCHED_CODES}
    return sorted(found)


def _listing_findings(pages: Scan, config_dirs: tuple[str, ...], environ: Mapping[str, str]) -> list[Finding]:
    """The findings that need no page read: scan's warnings about files, and the walk."""
    file_warnings = [warning for warning in pages.warnings if warning not in pages.dir_warnings]
    findings = _scan_warning_findings(file_warnings)
    findings += _unsearched_files(pages, _memory_dir(pages.vault, environ), config_dirs)
    return findings


def _duplicate_titles(titled: Iterable[tuple[str, str]], same_page: Mapping[str, str]) -> list[Finding]:
    """One finding per page (path, title) whose title another page has too; pages of one
    ``same_page`` key (a copy and its original, versions of one page) are not such other pages."""
    by_title: dict[str, list[tuple[str, str]]] = {}
    for rel_path, title in titled:
        by_title.setdefault(fold(title), []).append((rel_path, title))
    findings = []
    for group in by_title.values():
        if len(group) < 2:
            continue
        paths = sorted(rel_path for rel_path, _ in group)
        for rel_path, title in group:
            own = same_page[rel_path]
            others = ", ".join(path for path in paths if same_page[path] != own)
            if others:
                findings.append(Finding(rel_path, DUPLICATE_TITLE, f"title {title!r} is also the title of {others}"))
    return findings


class Copies:
    """The dirs of a vault some of whose pages are copies (``versions.find_copies``), and the
    ``exclude`` line of ``.mnemosyne.toml`` that leaves out the dirs whose every page is one
    (None when no dir is all copies)."""

    __slots__ = ("dirs", "line", "zero_config")

    def __init__(self, dirs: list[CopyDir], line: str | None):
        self.dirs = dirs
        self.line = line
        #: Whether the vault has no layout key yet: an exclude alone would end zero config
        #: and bring back the checks it leaves out, which wiki init writes down first.
        self.zero_config = False

    def way_out(self) -> str:
        """What to do to leave the whole copies out: the line to set, and where."""
        first = "run 'mnemosyne wiki init', then " if self.zero_config else ""
        return f"{first}set {self.line} in {VAULT_CONFIG_FILE}"

    def copy_paths(self) -> dict[str, str]:
        """Each copy's vault-relative path, and the path of the page it copies."""
        return {
            f"{copy.dir}/{tail}": f"{copy.of}/{tail}" if copy.of else tail for copy in self.dirs for tail in copy.copies
        }

    def findings(self) -> list[Finding]:
        """One duplicate-title finding per dir holding copies, in place of one per page in it."""
        return [Finding(copy.dir, DUPLICATE_TITLE, self.message(copy)) for copy in self.dirs]

    def message(self, copy: CopyDir) -> str:
        """What lint says of the dir ``copy``: how many of its pages are copies of which dir's,
        and either the exclude that drops them or, when some are no copy, how many such an
        exclude would drop as well."""
        where = f"the same path in {copy.of or '.'}/ (the same bytes, or the same text after the frontmatter)"
        if copy.whole:
            what = (
                f"the one page here is a copy of the page at {where}"
                if copy.pages == 1
                else f"all {copy.pages} pages here are copies of the pages at {where}"
            )
            return f"{what}; find lists every copy: to leave them out, {self.way_out()}"
        count = len(copy.copies)
        are = "is a copy of the page" if count == 1 else "are copies of the pages"
        return (
            f"{count} of the {copy.pages} pages here {are} at {where}: {shown_copies(copy)}; an exclude of "
            f"{copy.dir}/ would also drop the {copy.pages - count} that {'is' if copy.pages - count == 1 else 'are'} "
            "no copy, so none is suggested: to leave out the copies alone, exclude them by name"
        )


#: How many copies of a dir that holds other pages too its finding names; the rest are counted.
SHOWN_COPIES = 5


def shown_copies(copy: CopyDir) -> str:
    """The copies of the dir ``copy``, relative to it: the first SHOWN_COPIES, and how many more."""
    names = ", ".join(copy.copies[:SHOWN_COPIES])
    more = len(copy.copies) - SHOWN_COPIES
    return f"{names} and {more} more" if more > 0 else names


def vault_copies(pages: Scan) -> Copies:
    """The copies among the pages of the scan ``pages`` (``versions.find_copies``), each page
    read as lint reads it (a page that cannot be read counts for none)."""
    digests = {}
    for page in pages.pages:
        try:
            data = read_page_bytes(page)
        except OSError:
            continue
        digests[page.rel_path] = content_digests(data)
    return _copies_of(pages, digests)


def _copies_of(pages: Scan, digests: Mapping[str, tuple[bytes | None, bytes | None]]) -> Copies:
    config = pages.config if pages.config is not None else load_vault_config(pages.vault)
    found = find_copies(digests, config.prefer)
    whole = [tuple(copy.dir.split("/")) for copy in found if copy.whole]
    patterns = _copy_patterns(whole, [tuple(rel_path.split("/")) for rel_path in digests])
    line = "exclude = " + toml_array((*(config.exclude or ()), *patterns)) if patterns else None
    copies = Copies(found, line)
    copies.zero_config = pages.layout is not None and pages.layout.source == LAYOUT_FROM_ZERO_CONFIG
    return copies


def _copy_patterns(copy_roots: Sequence[tuple[str, ...]], paths: Sequence[tuple[str, ...]]) -> list[str]:
    """The exclude patterns that leave out exactly the dirs ``copy_roots``, each one. A
    one-part pattern matches that name at any depth in gitignore's rules, so it is anchored
    (``/name/``) when another page lies below a dir of that name."""
    patterns = []
    for root in sorted(copy_roots):
        elsewhere = len(root) == 1 and any(root[0] in path[1:-1] for path in paths)
        patterns.append(("/" if elsewhere else "") + "/".join(root) + "/")
    return patterns


def _scan_warning_findings(warnings: Iterable[Diagnostic]) -> list[Finding]:
    findings = []
    for warning in warnings:
        path = warning.path
        if warning.code == CANNOT_LIST:
            message = f"cannot list this scanned dir ({warning.detail}); its pages were not searched"
            findings.append(Finding(path, UNREADABLE, message))
        elif warning.code == IGNORE_FILE_UNUSED:
            message = f"cannot use this ignore file ({warning.detail}); find does not apply its rules"
            findings.append(Finding(path, UNREADABLE, message))
        elif warning.code == BROKEN_SYMLINK:
            findings.append(Finding(path, BROKEN_SYMLINK, "broken symlink; find skips it"))
        elif warning.code == SYMLINK_ESCAPES:
            what = "this scanned dir is a symlink that" if warning.is_dir else "symlink"
            findings.append(Finding(path, SYMLINK_ESCAPES, f"{what} leaves the vault; find skips it"))
        else:
            # A kind of warning newer than this module: still reported, never a crash.
            detail = f" ({warning.detail})" if warning.detail else ""
            findings.append(Finding(path or ".", SKIPPED_BY_FIND, f"find skipped it: {warning.code}{detail}"))
    return findings


def _memory_dir(vault_real: str, environ: Mapping[str, str]) -> str | None:
    """Recall's memory dir (MNEMOSYNE_MEMORY_DIR, else the vault config's memory_dir),
    resolved, when it lies inside the vault: logs, not notes, so the walk skips it."""
    memory_dir = resolve_memory_dir(None, vault_real, environ)
    if not memory_dir:
        return None
    real = os.path.realpath(memory_dir)
    return real if is_inside(real, vault_real) else None


def _unsearched_files(pages: Scan, memory_dir: str | None, config_dirs: tuple[str, ...]) -> list[Finding]:
    """Walk the vault (no symlinked dirs, no hidden dirs) for markdown files find does not
    search: each searched dir as its layout says, then the rest of the vault.
    ``config_dirs``: what the vault scans without --dir, for the hint."""
    vault = pages.vault
    layout = pages.layout
    # From the listing itself, by dir: most entries the walk meets are its pages.
    listed: dict[str, set[str]] = {}
    for dir_name, _dir_path, names in pages.listing:
        listed.setdefault(dir_name, set()).update(names)
    walker = _Walker(pages, listed, memory_dir, config_dirs, time.time())
    scanned: list[tuple[str, str]] = []
    for dir_name in pages.dirs:
        path = vault if dir_name == VAULT_ROOT_DIR else os.path.join(vault, dir_name)
        if os.path.islink(path):
            path = os.path.realpath(path)
            # scan follows a scanned dir's symlink only when it stays inside the vault.
            if not is_inside(path, vault):
                continue
        if os.path.isdir(path):
            scanned.append(("" if dir_name == VAULT_ROOT_DIR else dir_name, path))
    tree = layout is not None and layout.depth == DEPTH_TREE
    # A searched dir inside another of a tree is walked as part of the dir above it, as
    # scan lists it: only the others are walked on their own, and passed over below.
    scanned = [
        (dir_name, path)
        for dir_name, path in scanned
        if not (tree and any(dir_covers(other, dir_name or VAULT_ROOT_DIR) for other in pages.dirs))
    ]
    walker.skip_real = {os.path.realpath(path) for _, path in scanned}
    for dir_name, path in scanned:
        rules = walker.tree_walk.ancestor_rules(dir_name) if tree and walker.tree_walk is not None else ()
        walker.walk(path, dir_name, depth=1, scanned=dir_name or VAULT_ROOT_DIR, rules=rules)
    if "" not in {name for name, _ in scanned}:
        walker.walk(vault, "", depth=0, scanned=None, skip_names=set(pages.dirs))
    return walker.findings


def unscanned_dir_message(rel_path: str, config_dirs: Sequence[str], *, tree: bool = False) -> str:
    """The unscanned-dir message for the file ``rel_path``: the line of .mnemosyne.toml
    that scans its top-level dir as well as ``config_dirs`` (what the vault searches
    without --dir), or, when only --dir left it out, the --dir to add (``tree``: the
    layout searches whole subtrees)."""
    top = rel_path.split("/", 1)[0]
    parent = rel_path.rpartition("/")[0]
    if tree and any(name == VAULT_ROOT_DIR or parent == name or parent.startswith(name + "/") for name in config_dirs):
        return f"in {top}/, which this run's --dir leaves out; add --dir {top}"
    if parent in config_dirs:
        return f"in {parent}/, which this run's --dir leaves out; add --dir {parent}"
    line = "dirs = " + toml_array((*config_dirs, top))
    return f"in {top}/, which is not scanned; to scan it, set {line} in {VAULT_CONFIG_FILE}, or move it"


class _Walker:
    __slots__ = (
        "config_dirs",
        "decided",
        "findings",
        "layout_suffixes",
        "listed",
        "lower_suffixes",
        "markdown_like",
        "memory_dir",
        "memory_rel",
        "now",
        "skip_real",
        "tree",
        "tree_walk",
        "vault",
    )

    def __init__(
        self, pages: Scan, listed: dict[str, set[str]], memory_dir: str | None, config_dirs: tuple[str, ...], now: float
    ):
        self.vault = pages.vault
        #: The names the listing took as pages, by their dir's vault-relative path.
        self.listed = listed
        self.memory_dir = memory_dir
        self.config_dirs = config_dirs
        layout = pages.layout
        self.layout_suffixes = layout.suffixes if layout is not None else FLAT_SUFFIXES
        self.lower_suffixes = tuple(suffix.lower() for suffix in self.layout_suffixes)
        self.markdown_like = markdown_like_endings(self.layout_suffixes)
        self.tree = layout is not None and layout.depth == DEPTH_TREE
        #: The scan's own rules for what a tree leaves out (ignore files, exclude).
        self.tree_walk = TreeWalk(pages, layout, None) if layout is not None else None
        #: What the rules decided in each dir the listing sorted, by dir: the names they
        #: leave out (``KeptRules.walk``; none in a dir no rule holds), kept or just
        #: decided. Asked of them instead
        #: of the rules, for the names the listing asked about, it spares lint the ignore
        #: files' parse and pathspec's import (a sixth of a warm lint of a 10,000-page tree).
        self.decided = pages.keep.walk
        #: The one dir of a tree the listing never asks the rules about (the config's
        #: memory dir, vault-relative), when another memory dir leaves it for lint to walk.
        self.memory_rel = pages.walk.memory_rel if pages.walk is not None else None
        #: Seconds since the epoch, for the age of ingest temp files.
        self.now = now
        #: Real paths of the searched dirs walked on their own: walked under their own names.
        self.skip_real: set[str] = set()
        self.findings: list[Finding] = []

    def walk(
        self,
        path: str,
        rel: str,
        *,
        depth: int,
        scanned: str | None,
        skip_names: set[str] | None = None,
        rules: tuple[IgnoreRules, ...] = (),
        real: str | None = None,
    ) -> None:
        """Walk the dir at ``path`` (vault-relative ``rel``, "" for the root) at ``depth``
        below the vault root, or below ``scanned``, the searched dir it is in (None: none).
        ``real``: the dir's real path, when the walk knows it."""
        if depth > MAX_WALK_DEPTH:  # the walk recurses; Python's stack is the limit otherwise
            self.findings.append(
                Finding(rel, UNREADABLE, f"nested more than {MAX_WALK_DEPTH} dirs deep; lint did not look inside")
            )
            return
        try:
            with os.scandir(path) as iterator:
                entries = list(iterator)  # unsorted: the findings are sorted once, at the end
        except OSError as error:
            if not scanned or (depth > 1 and not self.tree):  # scan reports a searched dir it cannot list
                self.findings.append(
                    Finding(rel or ".", UNREADABLE, f"cannot list this dir ({error.strerror}); lint could not check it")
                )
            return
        in_tree = scanned is not None and self.tree
        # A tree's ignore files and the exclude hold outside its dirs too: what they leave
        # out (node_modules/, drafts) is no note find misses.
        filtering = self.tree_walk is not None and (self.tree or self.tree_walk.exclude is not None)
        if self.tree and self.tree_walk is not None:
            rules = self.tree_walk.with_rules(rules, f"{rel}/" if rel else "", path, ignore_names(entries))
        searched_here = scanned is not None and (depth == 1 or self.tree)
        pages_here = self.listed.get(rel, ()) if searched_here else ()
        suffixes = self.layout_suffixes
        kept = self.decided.get(rel) if searched_here else None
        decided = {name for name, _rule in kept[1]} if kept is not None else None
        # The walk enters no symlinked dir, so a dir's real path is its parent's and its
        # name: one realpath a walk, not one for each dir (each lstats every component).
        real = os.path.realpath(path) if real is None else real
        for entry in entries:
            name = entry.name
            is_page = name in pages_here and name.endswith(suffixes) and name[0] != "."
            if is_page and not entry.is_dir(follow_symlinks=False):
                continue  # a page find lists, where it looks: most entries, and nothing to say
            child_rel = f"{rel}/{name}" if rel else name
            if entry.is_dir(follow_symlinks=False):
                if name.startswith(".") or (skip_names and name in skip_names):
                    continue
                child_real = os.path.join(real, name)
                if child_real in self.skip_real or child_real == self.memory_dir:
                    continue
                asked = self.tree and child_rel != self.memory_rel
                if filtering and self._left_out(child_rel + "/", rules, decided if asked else None, name + "/"):
                    continue
                self.walk(entry.path, child_rel, depth=depth + 1, scanned=scanned, rules=rules, real=child_real)
            elif is_markdown_like(name, self.markdown_like):
                if depth == 0 and skip_names and name in skip_names:
                    continue  # a scanned dir that is a symlink or a file: scan's to judge
                if name.startswith("."):
                    if in_tree:
                        continue  # left out on purpose: hidden in a tree
                    asked_here = None
                else:
                    asked_here = decided if name.endswith(suffixes) else None
                if filtering and self._left_out(child_rel, rules, asked_here, name):
                    continue  # left out on purpose: ignored or excluded
                self.findings.extend(self._file_findings(entry, child_rel, depth, scanned))
            elif is_stale_ingest_temp(entry, self.now):
                self.findings.append(
                    Finding(
                        child_rel,
                        LEFTOVER_TEMP_FILE,
                        "a temp file a killed ingest left behind over an hour ago; no page needs it: "
                        "remove it (the next ingest into this dir also does)",
                    )
                )

    def _left_out(
        self, rel_path: str, rules: tuple[IgnoreRules, ...], decided: set[str] | None = None, name: str = ""
    ) -> bool:
        """Whether the rules leave ``rel_path`` out: ``decided``, when given, holds the names
        (``name``) they leave out of its dir, as the listing asked them."""
        if decided is not None:
            return name in decided
        return self.tree_walk is not None and self.tree_walk.deciding_rule(rel_path, rules) is not None

    def _file_findings(self, entry: os.DirEntry[str], rel: str, depth: int, scanned: str | None) -> list[Finding]:
        name = entry.name
        # (A page find lists, where it looks, never comes here: ``walk`` passes it over.)
        listed = name in self.listed.get(rel.rpartition("/")[0], ())
        findings = []
        if depth == 0:
            findings.append(Finding(rel, VAULT_ROOT_FILE, "at the vault root; find reads only the scanned dirs"))
        elif scanned is None:
            findings.append(Finding(rel, UNSCANNED_DIR, unscanned_dir_message(rel, self.config_dirs, tree=self.tree)))
        elif depth > 1 and not self.tree:
            where = "the vault root" if scanned == VAULT_ROOT_DIR else f"{scanned}/"
            findings.append(
                Finding(
                    rel,
                    NESTED_FILE,
                    f'in a sub-dir; find reads only files directly in {where}: set depth = "tree" in '
                    f"{VAULT_CONFIG_FILE} to search sub-dirs too",
                )
            )
        if name.startswith("."):
            findings.append(Finding(rel, HIDDEN_FILE, "hidden (name starts with '.'); find skips it"))
        suffix_finding = self._suffix_finding(rel, name)
        if suffix_finding is not None:
            findings.append(suffix_finding)
        if findings or listed or name.startswith("."):
            return findings
        # A page name in a searched place that scan did not list: a broken or escaping
        # symlink (scan warned; that finding comes from its warning) or not a regular file.
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if not os.path.exists(real) or not is_inside(real, self.vault):
                return findings
            return [Finding(rel, NOT_REGULAR_FILE, "a symlink to something that is not a file; find skips it")]
        return [Finding(rel, NOT_REGULAR_FILE, "not a regular file; find skips it")]

    def _suffix_finding(self, rel: str, name: str) -> Finding | None:
        """SUFFIX_CASE or UNSEARCHED_SUFFIX for a markdown-like name the layout's suffixes miss."""
        if name.endswith(self.layout_suffixes):
            return None
        lower = name.lower()
        for suffix, lowered in zip(self.layout_suffixes, self.lower_suffixes, strict=True):
            if lower.endswith(lowered):
                return Finding(
                    rel, SUFFIX_CASE, f"ends in {name[-len(suffix) :]!r}; find reads only names ending in {suffix!r}"
                )
        suffix = next(suffix for suffix in MARKDOWN_SUFFIXES if lower.endswith(suffix))
        actual = name[-len(suffix) :]
        wanted = "suffixes = " + toml_array((*self.layout_suffixes, actual))
        return Finding(
            rel,
            UNSEARCHED_SUFFIX,
            f"ends in {actual!r}, which the layout does not search; set {wanted} in {VAULT_CONFIG_FILE} to search it",
        )
