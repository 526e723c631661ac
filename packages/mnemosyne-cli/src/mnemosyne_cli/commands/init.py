"""``mnemosyne wiki init``: write a ``.mnemosyne.toml`` for the layout a folder has."""

from __future__ import annotations

from mnemosyne_cli.options import COLOR, Arguments, Command, Option, flag
from mnemosyne_cli.output import counted, printable
from mnemosyne_contract import exit_status

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend


class InitArguments(Arguments):
    """``wiki init``'s arguments."""

    path: Option[str] = Option((), "the folder to make a vault (default: .)", ".", metavar="PATH", nargs="?")
    dry_run = flag("--dry-run", help="print the file instead of writing it")
    color = COLOR


COMMAND = Command(
    "init",
    InitArguments,
    summary="make a folder a vault: write a commented .mnemosyne.toml for the layout it has, and build its index",
    description="Write PATH/.mnemosyne.toml (default: the current dir), commented, for the layout the "
    "commands use there without it: the default dirs it has, flat, when it has any; else the whole tree "
    "of .md, .markdown and .mdx files. Afterwards every command run in PATH or below it finds the vault. "
    "Never overwrites an existing .mnemosyne.toml. Prints the file's path on stdout and the layout on "
    "stderr, with the markdown files it leaves out and the setting that takes them in. A folder that keeps "
    "a page per release or per language (the same path under sibling dirs such as 7.4/ and 7.6/, or en/ "
    "and it/) also gets an [order] prefer of the highest release and the language the others copy, said "
    "in one more stderr line. Then it builds the vault's index, which find and recall read (on a terminal "
    "with a progress bar on stderr; nothing about it is printed when stderr is not one).",
    examples=[
        "mnemosyne wiki init",
        "mnemosyne wiki init ~/notes --dry-run",
    ],
    exit_codes=[
        (exit_status.OK, "the file was written (or, with --dry-run, printed)"),
        (
            exit_status.VAULT_ERROR,
            "PATH is missing or not a dir, or is no notes folder (/, the home dir, a system dir)",
        ),
        (exit_status.TARGET_EXISTS, "PATH has a .mnemosyne.toml already; nothing written"),
        (exit_status.USAGE, "usage error (unknown flag or argument)"),
        (exit_status.WRITE_FAILED, "the file could not be written (nothing was left behind)"),
        (exit_status.INTERRUPTED, "interrupted (Ctrl-C)"),
    ],
)


def run(args: InitArguments, console: Console, backend: Backend | None) -> int:
    """Write the file; ``backend`` (None: no command but find and recall asks one) is unused: init reads no page."""
    from mnemosyne_core.errors import ConfigExistsError, ConfigWriteError, VaultError
    from mnemosyne_core.layout import plan_init, write_init

    try:
        plan = plan_init(args.path, console.env.environ, console.env.home)
        if args.dry_run:
            console.out_bytes(plan.text.encode("utf-8"))
            _say_left_out(console, plan.note)
            _say_prefer(console, plan.prefer)
            return exit_status.OK
        write_init(plan)
    except VaultError as error:
        console.error(str(error))
        return exit_status.VAULT_ERROR
    except ConfigExistsError as error:
        console.error(str(error))
        return exit_status.TARGET_EXISTS
    except ConfigWriteError as error:
        console.error(str(error))
        return exit_status.WRITE_FAILED
    layout = plan.layout
    console.out(printable(plan.path))
    console.err(
        printable(
            f"a {layout.depth} layout of {', '.join(layout.dirs)} ({' '.join(layout.suffixes)}): "
            f"{counted(plan.pages, 'page')} now; edit the file to change it"
        )
    )
    _say_left_out(console, plan.note)
    _say_prefer(console, plan.prefer)
    _build_index(console, plan.path)
    return exit_status.OK


def _build_index(console: Console, config_path: str) -> None:
    """Build the vault's whole index now, in the foreground, so the first find reads it
    (a find that finds none answers by the scan and leaves the build to a detached builder).
    A bar on a terminal's stderr; nothing when stderr is not one. An index that cannot be
    built is no failure of init: the file is written, and find and recall scan meanwhile."""
    import os

    from mnemosyne_core.build import build
    from mnemosyne_core.cache import index_path, usable_cache_dir

    vault_real = os.path.dirname(config_path)
    terminal = console.stderr_is_terminal()
    cache_dir, why_not = usable_cache_dir(console.env.environ, create=True, vault_real=vault_real)
    if cache_dir is None:
        if terminal:
            console.err(printable(f"no index built: {why_not}"))
        return

    def draw(done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        console.redraw(f"indexing [{'#' * filled}{'.' * (width - filled)}] {done}/{counted(total, 'page')}")

    path = index_path(cache_dir, vault_real)
    try:
        pages = build(path, vault_real, console.env.home, wait=True, progress=draw if terminal else None)
    except Exception as error:
        # The vault unlistable after all, the index unwritable (SQLite's own errors among
        # them): the config is written, and find and recall scan until a call builds it.
        if terminal:
            console.redraw("")
            console.warning(f"the index was not built ({error}): find and recall scan until a call builds it")
        return
    if terminal:
        console.redraw("")
        console.err(printable(f"index: {counted(pages or 0, 'page')} in {path}"))


def _say_prefer(console: Console, prefer: Sequence[str]) -> None:
    """The versions or translations the written file prefers, so that a vault is never
    ordered by a choice nobody was told of, each with the reason it was chosen."""
    if not prefer:
        return
    from mnemosyne_core.config import UNLISTED_PAGES
    from mnemosyne_core.versions import VERSION, dir_kind

    chosen = list(prefer)
    translations: list[str] = []
    if UNLISTED_PAGES in chosen:
        at = chosen.index(UNLISTED_PAGES)
        chosen, translations = chosen[:at], chosen[at + 1 :]
    said = []
    if chosen:
        releases = [dir_kind(name.rstrip("/").rpartition("/")[2]) == VERSION for name in chosen]
        reasons = ["the highest release" if release else "the language the others repeat most" for release in releases]
        why = " and ".join(dict.fromkeys(reasons))  # each reason once, in the order of the dirs
        said.append(f"the one under {', '.join(chosen)} first ({why})")
    if translations:
        where = "before theirs" if chosen else "first"
        said.append(
            f"the one outside {', '.join(translations)} {where} (the original: those dirs translate the pages "
            "beside them)"
        )
    console.err(
        printable(f"versions of a page found: find puts {', and '.join(said)}; edit [order] prefer to change it")
    )


def _say_left_out(console: Console, note: str | None) -> None:
    """The markdown files the written layout leaves out, as a miss would count them: a dir
    merely named like a default dir must not narrow the vault silently from the start."""
    if note is not None:
        console.err(printable(note))
