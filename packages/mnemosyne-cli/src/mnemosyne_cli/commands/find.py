"""``mnemosyne wiki find``: locate pages by keyword."""

from __future__ import annotations

import os

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
    shell_line,
    vault_error_code,
)
from mnemosyne_cli.output import counted, has_control_character, page_line, printable
from mnemosyne_contract import exit_status
from mnemosyne_core import InvalidQueryError, VaultError
from mnemosyne_core.backend import FindRequest
from mnemosyne_core.pasted import page_keywords
from mnemosyne_core.results import DEFAULT_LIMIT

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_cli.environment import Environment
    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend
    from mnemosyne_core.context import Context
    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.results import FindResult, Match


class FindArguments(PagesArguments):
    """``wiki find``'s arguments."""

    keywords: Option[list[str]] = Option(
        (), "a literal substring; every one must match", [], metavar="KEYWORD", nargs="+"
    )
    cat = flag("--cat", help="print the one matching page verbatim; exit 2 unless exactly one matches")
    json = flag("--json", help="print a JSON array of {path, title, constellation, type}")
    matched = flag(
        "--matched",
        help='say where the pages matched: with --json, a "matched" key per item (title, path or text); '
        "otherwise one stderr line when no page's title or path holds every keyword",
    )
    paths = flag("--paths", help="print only each page's path, one per line, like rg -l (no title)")
    absolute = flag(
        "--absolute",
        help="print absolute paths (the vault root with symlinks resolved) in plain, --paths and --json output",
    )
    null = flag(
        "-0",
        "--null",
        help="with --paths: end each path with a NUL byte instead of a newline, as it is on disk (for xargs -0)",
    )
    limit: Option[int] = Option(
        ("--limit",),
        f"show at most N pages (default {DEFAULT_LIMIT}; 0 for all)",
        DEFAULT_LIMIT,
        metavar="N",
        read=read_limit,
    )
    vault = VAULT
    dir = DIR
    color = COLOR


COMMAND = Command(
    "find",
    FindArguments,
    summary="list the pages that contain every keyword",
    description="List the pages whose title, vault-relative path or text contains every "
    "KEYWORD (case-insensitive, literal substrings, AND), so a path copied from this output "
    "finds its page (a whole output line and an --absolute path too). Pages whose title (or an alias) "
    "or path holds every keyword come first: "
    "those where every keyword starts a word, then those whose title or an alias alone holds them, "
    "then the shortest title, then by path; the rest, which only mention the keywords, follow by "
    "how early their text holds them all, then by path. One line per page: <dir>/<file>.md — <title>.",
    examples=[
        "mnemosyne wiki find mastra --vault ~/aion",
        "mnemosyne wiki find mastra slack --limit 0",
        "mnemosyne wiki find mastra --json --matched",
        "mnemosyne wiki find kestrel --cat",
        "mnemosyne wiki find mastra --paths -0 --absolute | xargs -0 wc -l",
    ],
    exit_codes=[
        (exit_status.OK, "one or more pages match; they are on stdout"),
        (exit_status.NO_MATCH, "no page matches; stdout is empty ([] with --json)"),
        (exit_status.CAT_NEEDS_ONE_MATCH, "--cat matched zero pages or more than one; stdout is empty"),
        (
            exit_status.VAULT_ERROR,
            "no vault found, or it is missing, without scanned dirs or without any page, "
            "or a page could not be read and nothing matched",
        ),
        (
            exit_status.USAGE,
            "usage error (unknown flag, bad --limit, empty keyword, --cat, --json or --paths together, "
            "-0 without --paths, --dir naming no dir of the vault, a pasted path outside the vault)",
        ),
        (exit_status.WRITE_FAILED, "stdout could not take the results (closed, disk full)"),
        (exit_status.INTERRUPTED, "interrupted (Ctrl-C)"),
    ],
    note="a keyword that starts with '-' goes after '--': mnemosyne wiki find -- -v --verbose",
)


def run(args: FindArguments, console: Console, backend: Backend) -> int:
    contradiction = _contradiction(args)
    if contradiction:
        console.error(contradiction)
        return exit_status.USAGE
    try:
        # A pasted path (an output line, an --absolute path, ./path) becomes the path find
        # prints, and every message below names it so.
        args.keywords = list(page_keywords(args.keywords, args.vault, args.dir, **console.env.vault_lookup()))
        result = backend.search(
            FindRequest(
                args.vault,
                args.keywords,
                limit=args.limit,
                dirs=args.dir,
                keep_content=args.cat,
                **console.env.vault_lookup(),
            )
        )
    except InvalidQueryError as error:
        console.error(str(error))
        return exit_status.USAGE
    except VaultError as error:
        console.error(str(error))
        _say_options_taken_for_keywords(console, args.keywords)
        return vault_error_code(error)
    query = " ".join(args.keywords)
    if args.cat and result.total > 1 and result.named == 1 and result.the_page is None:
        # Before --absolute rewrites the paths: the way out names the page as find matches it.
        console.err(_cat_way_out(args, console.env, backend, result, query))
    # Before --absolute too: each page is read again by its vault-relative path.
    contexts, unread = (
        _contexts(result, args.keywords) if args.matched and not args.cat and not args.paths else ({}, [])
    )
    if args.absolute:
        # From here on every path printed (plain, --paths, --json, --cat's candidates) is absolute.
        for match in result.matches:
            match.path = os.path.join(result.vault, match.path)
    code = _report(args, console, result, query, contexts)
    if code != exit_status.OK:
        _say_options_taken_for_keywords(console, args.keywords)
    for warning in result.warnings:
        console.diagnostic(warning)
    for path, reason in unread:
        console.warning(f"{path}: cannot read it again to show its context ({reason})")
    return code


def _report(
    args: FindArguments, console: Console, result: FindResult, query: str, contexts: dict[int, Context | None]
) -> int:
    if result.total == 0:
        if result.incomplete:
            console.err(printable(f"no wiki page matches '{query}' among the pages that could be read"))
            console.error("the search was incomplete (see the warnings below): fix them and search again")
            return exit_status.VAULT_ERROR
        if result.pages_searched == 0 and not args.dir:
            # Not a miss: nothing was searched. A wrong path (a typo, the wrong folder)
            # must not read as "no such page". A --dir names a dir the vault has (else 64),
            # so a search there asked well and is a miss, said below.
            from mnemosyne_core.layout import no_pages_message

            console.error(printable(no_pages_message(result.vault, args.dir)))
            say_miss_note(console, result, args.dir)
            return exit_status.VAULT_ERROR
        if args.json:
            console.out("[]")
        console.err(printable(f"no wiki page matches '{query}'"))
        if len(result.keyword_counts) > 1:
            _print_keyword_counts(console, result.keyword_counts, args.limit)
        if result.suggestions:
            _print_suggestions(console, result.suggestions, several=len(result.keyword_counts) > 1)
        if result.pages_searched == 0 and args.dir:
            from mnemosyne_core.layout import empty_dir_notes

            try:
                notes = empty_dir_notes(result.vault, args.dir)
            except (VaultError, OSError):
                notes = []  # the dir went away meanwhile: the miss stands as it is
            for note in notes:
                console.err(printable(note))
        say_miss_note(console, result, args.dir)
        if result.not_text:
            # Their words cannot match: "no such page" would be a guess for them.
            them = "them" if result.not_text > 1 else "it"
            console.err(f"{counted(result.not_text, 'file')} could not be read as text; wiki lint lists {them}")
        if args.cat:
            console.err("--cat needs exactly one match")
            return exit_status.CAT_NEEDS_ONE_MATCH
        return exit_status.NO_MATCH
    if args.cat:
        the_page = result.the_page
        if the_page is not None:
            assert the_page.content is not None, "searched with keep_content: the page --cat prints holds its bytes"
            console.out_bytes(the_page.content)
            return exit_status.OK
        console.err(
            printable(
                f"--cat needs exactly one match, but {result.total} pages match '{query}'; add a keyword to narrow it:"
            )
        )
        # At most --limit candidates, like find's own list: 4,000 lines would flood an agent.
        for match in result.matches:
            console.err(f"  {_line(match)}")
        if result.total > len(result.matches):
            console.err(f"… and {result.total - len(result.matches)} more: add a keyword to narrow it")
        return exit_status.CAT_NEEDS_ONE_MATCH
    if args.json:
        items: list[dict[str, object]] = [{**match.to_dict(matched=args.matched)} for match in result.matches]
        for index, context in contexts.items():
            items[index]["context"] = None if context is None else context.to_dict()
        console.out_json(items)
    elif args.paths:
        _print_paths(console, [match.path for match in result.matches], null=args.null)
    else:
        color = console.color_stdout()
        for index, match in enumerate(result.matches):
            console.out(_line(match, color=color))
            context = contexts.get(index)
            if context is not None:
                console.out(context_line(context, color=color))
    if args.matched and not args.json:
        # --json says it per item; plain and --paths say it once: where the named pages end.
        console.err(printable(_boundary(result.total, result.named, args.keywords)))
    if result.total > len(result.matches):
        console.err(f"showing {len(result.matches)} of {result.total} matches")
    return exit_status.OK


def _say_options_taken_for_keywords(console: Console, keywords: list[str]) -> None:
    """After a failed call: a keyword that spells one of find's own long options
    (``--vault``, ``--json=x``) can only have come after ``--``, which made it a keyword;
    the call most likely meant it as an option, and its failure ("no vault found", no
    match) would otherwise not say why."""
    names = {name for row in FindArguments.table for name in row.names if name.startswith("--")}
    taken = [keyword for keyword in keywords if keyword.partition("=")[0] in names]
    if taken:
        named = ", ".join(f"'{option}'" for option in taken)
        them = "it a keyword, not an option" if len(taken) == 1 else "them keywords, not options"
        console.warning(f"{named} came after '--', which made {them}; put the options before '--'")


def _boundary(total: int, named: int, keywords: list[str]) -> str:
    """--matched's stderr line (plain and --paths): where the pages a title, an alias or
    the path names end and the ones that only mention the keywords begin. Line 1 is the
    page the keywords name only when some page is named."""
    query = " ".join(keywords)
    pronoun = "it" if len(keywords) == 1 else "them"
    if named == 0:
        pages = "this page mentions" if total == 1 else f"these {total} pages mention"
        text = "its text" if total == 1 else "their text"
        return f"no title or path holds '{query}'; {pages} {pronoun} in {text}"
    named_pages = f"{counted(named, 'page')} {'is' if named == 1 else 'are'} named by '{query}'"
    mentioning = total - named
    if mentioning == 0:
        return f"{named_pages}; no page only mentions {pronoun}"
    more = f"{mentioning} more {'mentions' if mentioning == 1 else 'mention'}"
    return f"{named_pages}; {more} {pronoun} in {'its' if mentioning == 1 else 'their'} text"


def _contexts(result: FindResult, keywords: list[str]) -> tuple[dict[int, Context | None], list[tuple[str, str]]]:
    """--matched: the context line of each shown page that only mentions the keywords, by
    its index in ``result.matches`` (None for a page that holds no keyword in any line now,
    or can no longer be read), and the (path, reason) of each page that could not be read.
    Each page is read again here, with the caller's own rights, whoever answered the search
    (the scan or a server)."""
    from mnemosyne_core.context import context_of
    from mnemosyne_core.fold import fold
    from mnemosyne_core.results import TEXT

    folded = [fold(keyword) for keyword in keywords]
    contexts: dict[int, Context | None] = {}
    unread = []
    for index, match in enumerate(result.matches):
        if match.matched != TEXT:
            continue
        try:
            contexts[index] = context_of(result.vault, match.path, folded)
        except OSError as error:
            contexts[index] = None
            unread.append((match.path, "it is gone" if isinstance(error, FileNotFoundError) else str(error.strerror)))
    return contexts, unread


def context_line(context: Context, *, color: bool = False) -> str:
    """A context under its page's line: indented, ``<line number>: <text>``, control
    characters escaped; with ``color``, each keyword painted after it is escaped."""
    text = context.text
    if not color or not context.marks:
        return f"  {context.line}: {printable(text)}"
    from mnemosyne_cli.color import MATCH, paint

    pieces = []
    shown = 0
    for start, end in context.marks:
        pieces += [printable(text[shown:start]), paint(printable(text[start:end]), MATCH)]
        shown = end
    pieces.append(printable(text[shown:]))
    return f"  {context.line}: {''.join(pieces)}"


def _cat_way_out(args: FindArguments, env: Environment, backend: Backend, result: FindResult, query: str) -> str:
    """--cat's first stderr line when several pages match but one alone is named by its
    title or path (it sorts first): that page, and a command that prints it."""
    named = result.matches[0]
    # Its path as the one keyword names it alone (rule 8: the page a keyword is the path
    # of), unless another page's path folds to the same: then the file itself is the way out.
    try:
        request = FindRequest(args.vault, [named.path], limit=1, dirs=args.dir, **env.vault_lookup())
        alone = backend.search(request).the_page is not None
    except VaultError:  # the vault went away since: the file is still the way out
        alone = False
    if alone:
        command = command_line("find", args.vault, args.dir, "--cat", keywords=[named.path])
    else:
        command = shell_line(["cat", "--", os.path.join(result.vault, named.path)])
    return printable(
        f"only {named.path} — {named.title} holds '{query}' in its title or path; to print it, run: {command}"
    )


def _print_suggestions(console: Console, suggestions: dict[str, list[tuple[str, int]]], *, several: bool) -> None:
    """A keyword in no page is often a typo: the words the searched pages hold near it
    (``suggest``), with the pages a find for each would list, counted up to its cap."""
    from mnemosyne_core.suggest import COUNT_CAP

    for keyword, words in suggestions.items():
        near = ", ".join(
            f"{word} ({f'{COUNT_CAP}+ pages' if pages >= COUNT_CAP else counted(pages, 'page')})"
            for word, pages in words
        )
        console.err(printable(f"did you mean: {near}" + (f" for '{keyword}'" if several else "")))


def _print_keyword_counts(console: Console, keyword_counts: dict[str, int], limit: int) -> None:
    """Each keyword's own page count, so a miss shows which keyword emptied the AND: at
    most ``limit`` lines (0: every one), like the page lines, then how many were left out."""
    shown = list(keyword_counts.items())[: limit or None]
    for keyword, count in shown:
        console.err(printable(f"  '{keyword}': {counted(count, 'page')}"))
    left_out = len(keyword_counts) - len(shown)
    if left_out:
        console.err(f"  … and {counted(left_out, 'more keyword')} (--limit 0 shows them all)")


def say_miss_note(console: Console, result: FindResult | RecallResult, dirs: list[str] | None) -> None:
    """After a miss (``result``: find's or recall's): one stderr line when the searched dirs
    hold markdown files the layout leaves out, so "no match" is never read as "no such
    page" (docs/agents.md). A scan's result brings those files along (found in its own
    listing), and so does a served result on a tree; a served one on a flat layout does
    not, and the vault is listed for them here."""
    from mnemosyne_core.layout import miss_note

    try:
        note = miss_note(result.vault, dirs, result.left_out, console.env.home)
    except (VaultError, OSError):
        return  # the vault changed under the search: the miss stands as it is
    if note is not None:
        console.err(printable(note))


def _contradiction(args: FindArguments) -> str | None:
    """Why the output flags cannot be combined, or None: --cat, --json and --paths each
    choose what stdout is, and -0 shapes only --paths."""
    if args.cat and args.json:
        return "--cat and --json cannot be combined: --cat prints the page itself; drop one"
    if args.paths and args.cat:
        return "--paths and --cat cannot be combined: --cat prints the page itself; drop one"
    if args.paths and args.json:
        return "--paths and --json cannot be combined: --paths prints bare paths, --json objects; drop one"
    if args.null and not args.paths:
        return "-0/--null applies only to --paths (each path then ends with a NUL byte): add --paths, or drop -0"
    return None


def _print_paths(console: Console, paths: list[str], *, null: bool) -> None:
    """--paths: each path's true bytes, NUL- or newline-terminated. A newline ends a path,
    so in newline mode a name holding a control character is shown escaped, with a warning
    (it also keeps an ESC out of the terminal); -0 prints every name as it is."""
    if null:
        console.out_bytes(b"".join(path.encode("utf-8", "surrogateescape") + b"\0" for path in paths))
        return
    escaped = []
    lines = []
    for path in paths:
        if has_control_character(path):
            path = printable(path)
            escaped.append(path)
        lines.append(path)
    console.out_bytes("".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape"))
    for path in escaped:
        console.warning(f"{path}: the name holds a control character, shown escaped; --paths -0 prints it as it is")


def _line(match: Match, *, color: bool = False) -> str:
    return page_line(match.path, match.title, color=color)
