"""``mnemosyne wiki ingest``: land a source document in the vault as a page."""

from __future__ import annotations

from mnemosyne_cli.options import COLOR, VAULT, Arguments, Command, Option, flag, read_dir_name
from mnemosyne_cli.output import page_line, printable
from mnemosyne_contract import exit_status
from mnemosyne_core import VaultError

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from typing import TextIO

    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend

# Kept in step with mnemosyne_core.config.CONSTELLATIONS and mnemosyne_ingest.DEFAULT_DIR
# (tests compare them); importing those here would slow down every --help.
_CONSTELLATIONS = "atlas, hades, mnemosyne, proteus, metis, apollo, hermes, hephaistos, athena"
DEFAULT_DIR = "analyses"


class IngestArguments(Arguments):
    """``wiki ingest``'s arguments."""

    source: Option[str] = Option(
        (),
        "the markdown file to ingest (UTF-8, not empty), or - to read it from standard input "
        "(then --slug or --title names the page)",
        "",
        metavar="SOURCE",
        complete="file",
    )
    constellation: Option[str] = Option(
        ("--constellation",),
        f"the constellation that owns the page; one of {_CONSTELLATIONS}",
        "",
        metavar="NAME",
        required=True,
        complete="constellations",
    )
    dir: Option[str] = Option(
        ("--dir",),
        f"the scanned top-level dir to write into (default {DEFAULT_DIR})",
        DEFAULT_DIR,
        metavar="NAME",
        read=read_dir_name,
        complete="vault-dirs",
    )
    title: Option[str | None] = Option(
        ("--title",),
        "the page title (default: the source's frontmatter title, else its first '# ' heading, else its stem)",
        None,
        metavar="T",
    )
    type: Option[str | None] = Option(
        ("--type",),
        "the page type (default: the source's frontmatter type, else 'analysis' in analyses/)",
        None,
        metavar="T",
    )
    slug: Option[str | None] = Option(
        ("--slug",), "the page's file name without .md (default: the source's stem)", None, metavar="S"
    )
    force = flag("--force", help="replace a page that exists with different content")
    dry_run = flag("--dry-run", help="print the page that would be written; write nothing")
    vault = VAULT
    color = COLOR
    json = flag(
        "--json",
        help="print a JSON object {path, title, constellation, type, status} (with --dry-run also would, page)",
    )


COMMAND = Command(
    "ingest",
    IngestArguments,
    summary="land a source document in the vault as a page",
    description="Write SOURCE to <vault>/<dir>/<slug>.md: its frontmatter keys kept in order, "
    "then title, constellation, type, source and ingested (today's UTC date) set, and updated "
    "(today too) unless the source has its own; its body copied byte for byte. The write is "
    "atomic and never replaces other content without --force; the same page again (dates "
    "aside) is 'already ingested' and writes nothing. Temp files that killed ingests left in "
    "the dir over an hour ago are removed. Afterwards find "
    "must locate the page by a word of its title. Prints the page as find does: "
    "<dir>/<file>.md — <title>.",
    examples=[
        "mnemosyne wiki ingest report.md --constellation atlas --vault ~/aion",
        "mnemosyne wiki ingest fixtures/sources/agent-ecosystem-report-2026-03.md "
        "--constellation atlas --dir analyses --vault fixtures/vaults/aion",
        "mnemosyne wiki ingest notes.md --constellation hermes --dir hermes --type howto --slug relay-setup",
        "mnemosyne wiki ingest report.md --constellation atlas --dry-run",
        "mnemosyne wiki ingest report.md --constellation atlas --force --json",
        "generate-report | mnemosyne wiki ingest - --constellation atlas --slug weekly-report",
    ],
    exit_codes=[
        (exit_status.OK, "the page landed, or was already there (stderr says 'already ingested')"),
        (exit_status.VAULT_ERROR, "no vault found, or it is missing, not a directory or without scanned dirs"),
        (exit_status.TARGET_EXISTS, "the target exists with other content; nothing written (--force replaces it)"),
        (exit_status.INGEST_UNVERIFIED, "the page was written but find cannot locate it by its title"),
        (
            exit_status.USAGE,
            "usage error: unknown constellation, dir not scanned, unsafe slug, blank flag; "
            "- without --slug or --title, or on a terminal",
        ),
        (
            exit_status.BAD_SOURCE,
            "the source is missing, not a regular file, empty, not UTF-8 or has broken frontmatter; "
            "stdin larger than 32 MiB",
        ),
        (exit_status.WRITE_FAILED, "the page could not be written (disk full, permissions); nothing left behind"),
        (exit_status.INTERRUPTED, "interrupted (Ctrl-C); nothing half-written"),
    ],
)


#: SOURCE that means standard input, as for cat and most Unix tools.
STDIN = "-"


def run(args: IngestArguments, console: Console, backend: Backend | None) -> int:
    from mnemosyne_ingest import IngestError, ingest

    try:
        source, source_data, slug = args.source, None, args.slug
        if source == STDIN:
            source, source_data, slug = _read_stdin_source(args, console.env.stdin)
        result = ingest(
            source,
            constellation=args.constellation,
            vault=args.vault,
            dir=args.dir,
            title=args.title,
            type=args.type,
            slug=slug,
            force=args.force,
            dry_run=args.dry_run,
            source_data=source_data,
            **console.env.vault_lookup(),
        )
    except IngestError as error:
        console.error(str(error))
        return error.exit_code
    except VaultError as error:
        console.error(str(error))
        return exit_status.VAULT_ERROR
    for temp in result.removed_temp_files:
        console.err(f"removed {printable(temp)}: a temp file an interrupted ingest left behind")
    if args.json:
        console.out_json(result.to_dict())
        return exit_status.OK
    line = page_line(result.path, result.title)
    if result.status == "dry-run":
        console.out_bytes(result.page.content)
        console.err(f"dry run: {_WOULD[result.would or '']} {line}; nothing was written")
    else:
        console.out(line)
        if result.status == "already-ingested":
            console.err(f"already ingested: {printable(result.path)} has this content; nothing was written")
        elif result.status == "replaced":
            console.err(f"replaced {printable(result.path)}: its previous content differed (--force)")
    return exit_status.OK


def _read_stdin_source(args: IngestArguments, stream: TextIO | None) -> tuple[str, bytes, str]:
    """SOURCE is '-': the name the page gets, and the source read from standard input
    (``stream``). The page's name is checked first, so a usage error never swallows the
    input; a terminal is refused rather than waited on."""
    from mnemosyne_ingest import STDIN_SOURCE_NAME, IngestArgumentError, read_stdin, stdin_slug

    slug = stdin_slug(args.slug, args.title)
    if stream is None:  # started with stdin closed (<&-): nothing to read, as an empty pipe
        return STDIN_SOURCE_NAME, b"", slug
    if stream.isatty():
        raise IngestArgumentError(
            "SOURCE is '-' but stdin is a terminal: pipe the source in (cat notes.md | mnemosyne wiki ingest - ...)"
            " or pass a file"
        )
    return STDIN_SOURCE_NAME, read_stdin(stream.buffer), slug


_WOULD = {
    "ingested": "would write",
    "replaced": "would replace (--force)",
    "already-ingested": "already ingested, a real run would write nothing:",
}
