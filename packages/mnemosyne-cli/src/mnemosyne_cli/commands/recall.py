"""``mnemosyne wiki recall``: load what the wiki knows on a topic (the harness wiki-query)."""

from __future__ import annotations

from mnemosyne_cli.options import (
    COLOR,
    DIR,
    VAULT,
    Command,
    Option,
    PagesArguments,
    command_line,
    flag,
    vault_error_code,
)
from mnemosyne_cli.output import printable
from mnemosyne_contract import ExitCode
from mnemosyne_core import InvalidQueryError, VaultError
from mnemosyne_core.backend import RecallRequest

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend
    from mnemosyne_core.recall import RecallResult


class RecallArguments(PagesArguments):
    """``wiki recall``'s arguments."""

    topic: Option[list[str]] = Option(
        (), "topic words; an entry matches if ANY is in its title, slug or tags", [], metavar="TOPIC", nargs="+"
    )
    json = flag(
        "--json",
        help="print one JSON object: the matches (path, title, slug, tags, updated) and the read entries' content",
    )
    memory_dir: Option[str | None] = Option(
        ("--memory-dir",),
        "append a log entry to PATH/<UTC-date>/log.md "
        "(default: $MNEMOSYNE_MEMORY_DIR, else memory_dir in the vault's .mnemosyne.toml)",
        None,
        metavar="PATH",
        complete="dir",
    )
    vault = VAULT
    dir = DIR
    color = COLOR


COMMAND = Command(
    "recall",
    RecallArguments,
    summary="print the entries whose title, slug or tags mention any topic word, and read the top 3",
    description="Recall what the wiki knows on a TOPIC. An entry matches when ANY topic word is a\n"
    "case-insensitive substring of its frontmatter title, slug or tags (body, file name and\n"
    "other keys are not searched).\n\n"
    "Prints every matching path, newest `updated` first (entries without a valid one last,\n"
    "ties by path); then the full text of the top 3, each after a line '==> PATH <=='; then\n"
    "a summary line: '<N> matches; read <K>: <slugs>; <M> not read'. No match prints\n"
    "'No wiki entries matched TOPIC' and exits 0. Versions of a page (the same path under\n"
    "sibling release or language dirs) are read once: the preferred one ([order] prefer,\n"
    "else the highest release), the others listed after it and marked, never read.\n\n"
    "With a memory dir configured (--memory-dir, $MNEMOSYNE_MEMORY_DIR or memory_dir in the\n"
    "vault's .mnemosyne.toml), every call appends an entry to <memory-dir>/<UTC-date>/log.md.",
    examples=[
        "mnemosyne wiki recall github auth --vault fixtures/vaults/harness",
        "mnemosyne wiki recall sandbox --dir wiki --memory-dir ~/harness/memory",
        "mnemosyne wiki recall mastra --json",
    ],
    exit_codes=[
        (ExitCode.OK, "done: matches printed, or 'No wiki entries matched TOPIC' (not an error)"),
        (
            ExitCode.VAULT_ERROR,
            "no vault found, or it is missing or without scanned dirs, a bad config file, "
            "or a page could not be read and nothing matched",
        ),
        (ExitCode.USAGE, "usage error (unknown flag, no or blank TOPIC, --dir naming no dir of the vault)"),
        (ExitCode.WRITE_FAILED, "stdout could not take the results (closed, disk full)"),
        (ExitCode.INTERRUPTED, "interrupted (Ctrl-C)"),
    ],
)


def run(args: RecallArguments, console: Console, backend: Backend) -> int:
    from mnemosyne_core.recall import (
        MemoryLogError,
        append_log,
        failure_observation,
        format_log_entry,
        observation,
        resolve_memory_dir,
        utc_now,
    )

    query = " ".join(args.topic)
    when = utc_now()

    def log(ok: bool, match_count: int, read_slugs: list[str], sentence: str, result: RecallResult | None) -> None:
        memory_dir = resolve_memory_dir(args.memory_dir, args.vault, result=result, **console.env.vault_lookup())
        if memory_dir is None:
            return
        entry = format_log_entry(
            ok=ok, query=query, match_count=match_count, read_slugs=read_slugs, observation=sentence, when=when
        )
        try:
            append_log(memory_dir, entry, when)
        except MemoryLogError as error:
            console.warning(f"{error}; the recall itself is unaffected")

    try:
        result = backend.recall(RecallRequest(args.vault, args.topic, dirs=args.dir, **console.env.vault_lookup()))
    except (InvalidQueryError, VaultError) as error:
        console.error(str(error))
        log(False, 0, [], failure_observation(error), None)
        return ExitCode.USAGE if isinstance(error, InvalidQueryError) else vault_error_code(error)
    if not result.matches and result.incomplete:
        message = f"no wiki entry matched '{query}' among the pages that could be read"
        console.err(printable(message))
        console.error("the search was incomplete (see the warnings below): fix them and recall again")
        log(False, 0, [], f"recall was incomplete: {message}.", result)
        code: int = ExitCode.VAULT_ERROR
    else:
        log(True, len(result.matches), result.read_slugs, observation(result), result)
        code = _report(args, console, result, query)
    for warning in result.warnings:
        console.diagnostic(warning)
    return code


def _report(args: RecallArguments, console: Console, result: RecallResult, query: str) -> int:
    from mnemosyne_cli.commands.find import say_miss_note

    empty_message = printable(f"No wiki entries matched {query}")
    if args.json:
        _print_json(console, result)
        if not result.matches:
            console.err(empty_message)
            _hint_unseen(args, console, result, query)
            say_miss_note(console, result, args.dir)
        return ExitCode.OK
    if not result.matches:
        console.out(empty_message)
        _hint_unseen(args, console, result, query)
        say_miss_note(console, result, args.dir)
        return ExitCode.OK
    from mnemosyne_core.fold import as_utf8

    for entry in result.matches:
        other = f" (another version of {entry.version_of}: not read)" if entry.version_of is not None else ""
        console.out(printable(entry.path + other))
    for entry in result.read:
        console.out("")
        console.out(f"==> {printable(entry.path)} <==")
        # A UTF-16 or UTF-32 page is printed as UTF-8, as the rest of the output is.
        assert entry.content is not None, "a read entry holds its text (only the unread drop it)"
        content = as_utf8(entry.content)
        console.out_bytes(content if content.endswith(b"\n") or not content else content + b"\n")
    console.out("")
    console.out(printable(_summary(result)))
    return ExitCode.OK


def _hint_unseen(args: RecallArguments, console: Console, result: RecallResult, query: str) -> None:
    """After an empty recall: say how many pages recall could not see, so that "no match"
    is not read as "the wiki has nothing on this" (find searches those pages too)."""
    if result.unseen:
        pages, them = ("page has", "it") if result.unseen == 1 else ("pages have", "them")
        console.err(
            printable(
                f"hint: {result.unseen} {pages} no frontmatter title, slug or tags, so recall cannot see {them}; "
                f"find searches {them} too: {command_line('find', args.vault, args.dir, keywords=query.split())}"
            )
        )


def _summary(result: RecallResult) -> str:
    count = len(result.matches)
    slugs = ", ".join(result.read_slugs)
    noun = "match" if count == 1 else "matches"
    return f"{count} {noun}; read {len(result.read)}: {slugs}; {result.not_read} not read"


def _print_json(console: Console, result: RecallResult) -> None:
    document = {
        "query": result.topic,
        "terms": list(result.terms),
        "match_count": len(result.matches),
        "read_slugs": result.read_slugs,
        "not_read": result.not_read,
        "matches": [entry.to_dict() for entry in result.matches],
    }
    console.out_json(document)
