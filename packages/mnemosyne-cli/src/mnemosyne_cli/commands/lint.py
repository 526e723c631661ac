"""``mnemosyne wiki lint``: show what find cannot see, and the pages it sees only in part."""

from __future__ import annotations

from operator import itemgetter

from mnemosyne_cli.options import (
    COLOR,
    DIR,
    NO_CACHE,
    VAULT,
    Arguments,
    BadValue,
    Command,
    Option,
    flag,
    vault_error_code,
)
from mnemosyne_cli.output import counted, printable
from mnemosyne_contract import exit_status
from mnemosyne_core import VaultError

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend
    from mnemosyne_core.page_lint import Finding

#: Between the fields of a plain output line. Paths and messages go through printable(),
#: which escapes a tab as \x09, so a line always splits into exactly three fields.
SEPARATOR = "\t"


def lint_codes(text: str) -> list[str]:
    """--select/--ignore: one code or a comma-separated list; an unknown code is a usage
    error that lists the known ones."""
    from mnemosyne_core.errors import UnknownLintCodeError
    from mnemosyne_core.lint import check_codes

    codes = [code.strip() for code in text.split(",") if code.strip()]  # "a,b," is a,b
    if not codes:
        raise BadValue("expected a lint code, e.g. missing-updated")
    try:
        check_codes(codes, "")
    except UnknownLintCodeError as error:
        raise BadValue(str(error).removeprefix(": ")) from None
    return codes


class LintArguments(Arguments):
    """``wiki lint``'s arguments."""

    json = flag("--json", help="print a JSON array of {path, code, message}")
    select: Option[list[list[str]] | None] = Option(
        ("--select",),
        "report only these codes (default: all); repeatable; overrides [lint] ignore for the codes it names",
        None,
        metavar="CODE[,CODE]",
        read=lint_codes,
        repeatable=True,
        complete="lint-codes",
    )
    ignore: Option[list[list[str]] | None] = Option(
        ("--ignore",),
        "never report these codes; repeatable; adds to [lint] ignore in .mnemosyne.toml",
        None,
        metavar="CODE[,CODE]",
        read=lint_codes,
        repeatable=True,
        complete="lint-codes",
    )
    vault = VAULT
    dir = DIR
    no_cache = NO_CACHE
    color = COLOR


COMMAND = Command(
    "lint",
    LintArguments,
    summary="list the files find never searches and the pages it searches degraded",
    description="Check the vault with find's own scan rules. Report .md files find never "
    "searches (nested, in unscanned dirs or at the vault root, .MD-style suffix, hidden, "
    "behind an escaping or broken symlink) and searched pages that are degraded (no, "
    "unclosed or invalid frontmatter; missing title or updated date; bytes that are not "
    "UTF-8; a duplicate title; an unknown constellation), and temp files a killed ingest left "
    "over an hour ago (remove them). One finding per line, sorted by "
    "path then code: <path><TAB><code><TAB><message>. Hidden dirs (.git, .obsidian, ...) "
    "are not walked.",
    examples=[
        "mnemosyne wiki lint --vault ~/aion",
        "mnemosyne wiki lint --json",
        "mnemosyne wiki lint --dir wiki | cut -f2 | sort | uniq -c",
        "mnemosyne wiki lint --ignore missing-updated,missing-title",
        "mnemosyne wiki lint --select unscanned-dir --select nested-file",
    ],
    exit_codes=[
        (exit_status.OK, "no finding is reported: stdout empty ([] with --json)"),
        (exit_status.NO_MATCH, "findings are reported; they are on stdout"),
        (
            exit_status.VAULT_ERROR,
            "no vault found, or it is missing, not a directory, without scanned dirs, or a bad config file",
        ),
        (
            exit_status.USAGE,
            "usage error (unknown flag or argument, a flag without its value, an unknown code, "
            "--dir naming no dir of the vault)",
        ),
        (exit_status.WRITE_FAILED, "stdout could not take the results (closed, disk full)"),
        (exit_status.INTERRUPTED, "interrupted (Ctrl-C)"),
    ],
)


def _joined(lists: list[list[str]] | None) -> list[str]:
    return [code for codes in lists or [] for code in codes]


def _lines(findings: list[Finding], paint_code: Callable[[str], str] | None) -> Iterable[str]:
    """Each finding's line: path, code and message, tab-separated, the path and message
    escaped (``printable``) and the code painted when ``paint_code`` is given."""
    if paint_code is None and all(map(str.isprintable, map("".join, findings))):
        # Nothing to escape or paint (most vaults): each line is the finding joined, in C.
        return map(SEPARATOR.join, findings)
    paint = paint_code or str
    return (
        SEPARATOR.join((printable(finding.path), paint(finding.code), printable(finding.message)))
        for finding in findings
    )


def run(args: LintArguments, console: Console, backend: Backend | None) -> int:
    from mnemosyne_core.lint import lint_report

    try:
        report = lint_report(
            args.vault,
            dirs=args.dir,
            select=_joined(args.select),
            ignore=_joined(args.ignore),
            cached=not args.no_cache,
            **console.env.vault_lookup(),
        )
    except VaultError as error:
        console.error(str(error))
        return vault_error_code(error)
    findings = report.findings
    if args.json:
        console.out_json([finding.to_dict() for finding in findings])
    else:
        console.out_lines(_lines(findings, _code_painter() if console.color_stdout() else None))
    why = "--select, --ignore, [lint] ignore"
    if report.zero_config:
        why += ", and zero config leaves out no-frontmatter, missing-title, missing-updated"
    # Counted per code, so "ignored" says which findings it counts and which --select shows.
    codes = ", ".join(f"{count} {code}" for code, count in report.ignored_by_code)
    ignored = f"; findings left out: {codes} ({why})" if report.ignored else ""
    for warning in report.warnings:
        console.diagnostic(warning)
    if not findings:
        if report.ignored:
            console.err(f"no findings reported{ignored}")
        else:
            console.err("no findings: every markdown file is searched and every page is well-formed")
        return exit_status.OK
    paths = len(set(map(itemgetter(0), findings)))
    console.err(f"{counted(len(findings), 'finding')} in {counted(paths, 'path')}{ignored}")
    return exit_status.NO_MATCH


def _code_painter() -> Callable[[str], str]:
    from mnemosyne_cli.color import CODE, paint

    return lambda code: paint(code, CODE)
