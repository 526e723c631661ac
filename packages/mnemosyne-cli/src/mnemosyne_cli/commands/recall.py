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
    read_limit,
    vault_error_code,
)
from mnemosyne_cli.output import printable
from mnemosyne_contract import exit_status
from mnemosyne_core import InvalidQueryError, VaultError
from mnemosyne_core.backend import RecallRequest
from mnemosyne_core.recall import DEFAULT_MAX_BYTES

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
    max_bytes: Option[int] = Option(
        ("--max-bytes",),
        "write at most about N bytes: each page read is cut to its first lines within its share "
        f"(default {DEFAULT_MAX_BYTES}; 0: no cap)",
        DEFAULT_MAX_BYTES,
        metavar="N",
        read=read_limit,
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
    "ties by path); then the text of the top 3, each after a line '==> PATH <=='; then\n"
    "a summary line: '<N> matches; read <K>: <slugs>; <M> not read'. The output stays within\n"
    "--max-bytes (32768): a page too long for its share shows its first lines, then a line\n"
    "with how many were left out and the find --cat call that prints it whole. No match prints\n"
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
        (exit_status.OK, "done: matches printed, or 'No wiki entries matched TOPIC' (not an error)"),
        (
            exit_status.VAULT_ERROR,
            "no vault found, or it is missing or without scanned dirs, a bad config file, "
            "or a page could not be read and nothing matched",
        ),
        (exit_status.USAGE, "usage error (unknown flag, no or blank TOPIC, --dir naming no dir of the vault)"),
        (exit_status.WRITE_FAILED, "stdout could not take the results (closed, disk full)"),
        (exit_status.INTERRUPTED, "interrupted (Ctrl-C)"),
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
        return exit_status.USAGE if isinstance(error, InvalidQueryError) else vault_error_code(error)
    if not result.matches and result.incomplete:
        message = f"no wiki entry matched '{query}' among the pages that could be read"
        console.err(printable(message))
        console.error("the search was incomplete (see the warnings below): fix them and recall again")
        log(False, 0, [], f"recall was incomplete: {message}.", result)
        code: int = exit_status.VAULT_ERROR
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
        _print_json(args, console, result)
        if not result.matches:
            console.err(empty_message)
            _hint_unseen(args, console, result, query)
            say_miss_note(console, result, args.dir)
        return exit_status.OK
    if not result.matches:
        console.out(empty_message)
        _hint_unseen(args, console, result, query)
        say_miss_note(console, result, args.dir)
        return exit_status.OK
    listed, texts = _fit(args, result)
    for line in listed:
        console.out(line)
    for entry, (text, left, command) in zip(result.read, texts, strict=True):
        console.out("")
        console.out(f"==> {printable(entry.path)} <==")
        console.out_bytes(text)
        if left:
            console.out(_cut_line(left, command))
    console.out("")
    console.out(printable(_summary(result)))
    return exit_status.OK


def _fit(args: RecallArguments, result: RecallResult) -> tuple[list[str], list[tuple[bytes, int, str]]]:
    """The lines listing the matches and, per page read, its text, how many of its lines
    were cut (0: it is whole) and the call that prints it whole, within ``--max-bytes``. The list takes at
    most a quarter of the bytes (then one line counts the rest); each page then gets an
    equal share of what is left after it, the header, the cut line and the summary, and
    a page shorter than its share leaves the rest to the pages after it. --json carries
    the same cut, so an agent reads alike either way."""
    from mnemosyne_core.fold import as_utf8
    from mnemosyne_core.recall import cut_text

    def size(line: str) -> int:
        return len(line.encode("utf-8", "surrogateescape")) + 1

    limit = args.max_bytes
    listed: list[str] = []
    used = 0
    for index, entry in enumerate(result.matches):
        other = f" (another version of {entry.version_of}: not read)" if entry.version_of is not None else ""
        line = printable(entry.path + other)
        if limit and used + size(line) > limit // 4:
            rest = len(result.matches) - index
            listed.append(f"… and {rest} more {'match' if rest == 1 else 'matches'} (--max-bytes 0 lists them all)")
            break
        listed.append(line)
        used += size(line)
    used = sum(map(size, listed)) + 1 + size(printable(_summary(result)))
    texts: list[tuple[bytes, int, str]] = []
    read = result.read
    for index, entry in enumerate(read):
        # A UTF-16 or UTF-32 page is printed as UTF-8, as the rest of the output is.
        assert entry.content is not None, "a read entry holds its text (only the unread drop it)"
        content = as_utf8(entry.content)
        if content and not content.endswith(b"\n"):
            content += b"\n"
        header = size(f"==> {printable(entry.path)} <==") + 1
        share = (limit - used) // (len(read) - index)
        command = command_line("find", args.vault, args.dir, "--cat", keywords=[entry.path])
        if not limit or header + len(content) <= share:
            texts.append((content, 0, command))
            used += header + len(content)
            continue
        # Reserved for the cut line at its longest: every line of the page left out.
        longest = _cut_line(content.count(b"\n"), command)
        kept, left = cut_text(content, share - header - size(longest))
        texts.append((kept, left, command))
        used += header + len(kept) + size(_cut_line(left, command))
    return listed, texts


def _cut_line(left: int, command: str) -> str:
    """The line after a page cut short: how many of its lines were left out, and the call
    that prints it whole (find --cat with its vault-relative path, which names that page)."""
    lines = "line" if left == 1 else "lines"
    return printable(f"[… {left} more {lines}; to print the whole page: {command}]")


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


def _print_json(args: RecallArguments, console: Console, result: RecallResult) -> None:
    matches = [entry.to_dict() for entry in result.matches]
    # The same cut as the text's: a read page too long for its share carries its first
    # lines and says what was left out, and how to print it whole.
    _, texts = _fit(args, result)
    cuts = {entry.path: cut for entry, cut in zip(result.read, texts, strict=True) if cut[1]}
    for item in matches:
        if item["path"] in cuts:
            kept, left, command = cuts[item["path"]]
            item["content"] = kept.decode("utf-8", "replace")
            item["cut"] = {"lines_shown": kept.count(b"\n"), "lines_left_out": left, "command": command}
    document = {
        "query": result.topic,
        "terms": list(result.terms),
        "match_count": len(result.matches),
        "read_slugs": result.read_slugs,
        "not_read": result.not_read,
        "matches": matches,
    }
    console.out_json(document)
