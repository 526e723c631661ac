"""``mnemosyne wiki info``: which vault, found how, and what find searches in it."""

from __future__ import annotations

from mnemosyne_cli import __version__
from mnemosyne_cli.options import COLOR, DIR, VAULT, Arguments, Command, command_line, flag, vault_error_code
from mnemosyne_cli.output import counted, printable
from mnemosyne_contract import exit_status
from mnemosyne_core import VaultError, config

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_cli.autostart import AutoStarted
    from mnemosyne_cli.client import Status
    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend
    from mnemosyne_core.cache import IndexInfo
    from mnemosyne_core.config import Layout
    from mnemosyne_core.info import DirInfo, VaultInfo
    from mnemosyne_core.lint import Copies


class InfoArguments(Arguments):
    """``wiki info``'s arguments."""

    json = flag("--json", help="print one JSON object (schema: mnemosyne_contract info.schema.json)")
    vault = VAULT
    dir = DIR
    color = COLOR


COMMAND = Command(
    "info",
    InfoArguments,
    summary="show the vault, how it was found, and what find searches in it",
    description="Answer 'why can't find see my page?': the vault and which way named it "
    "(--vault, a .mnemosyne.toml from the current dir up, AION_VAULT, the user config), "
    "the config files read, each scanned dir (present or missing) with its page count, "
    "how many .md files find never searches (wiki lint lists them), the 'wiki serve' that "
    "answers for the vault, if any (and whether it was auto-started), and the version.",
    examples=[
        "mnemosyne wiki info",
        "mnemosyne wiki info --vault ~/aion --json",
        "mnemosyne wiki info --dir notes",
    ],
    exit_codes=[
        (exit_status.OK, "the vault is described on stdout"),
        (
            exit_status.VAULT_ERROR,
            "no vault found, or a bad config file; or no scanned dir can be searched "
            "(described on stdout, the reason on stderr)",
        ),
        (
            exit_status.USAGE,
            "usage error (unknown flag or argument, a bad --dir name, or none names a dir of the vault)",
        ),
        (exit_status.WRITE_FAILED, "stdout could not take the report (closed, disk full)"),
        (exit_status.INTERRUPTED, "interrupted (Ctrl-C)"),
    ],
)


def run(args: InfoArguments, console: Console, backend: Backend | None) -> int:
    from mnemosyne_cli import autostart
    from mnemosyne_cli.client import status
    from mnemosyne_cli.versions import installed_versions
    from mnemosyne_core.config import load_vault_config
    from mnemosyne_core.info import describe_vault

    env = console.env
    try:
        info = describe_vault(args.vault, dirs=args.dir, **env.vault_lookup())
        vault = info.location.path
        settings = load_vault_config(vault)
        # A call decides by the vault's own layout, whatever --dir this one names.
        listed = info.pages if args.dir is None else describe_vault(args.vault, **env.vault_lookup()).pages
        auto = autostart.describe(vault, settings.serve_auto, listed, env, settings.serve_idle_minutes)
    except VaultError as error:
        console.error(str(error))
        return exit_status.VAULT_ERROR
    versions = installed_versions()
    served = status(vault, env)
    if args.json:
        console.out_json(to_json(info, versions, served, auto))
    else:
        lint = printable(command_line("lint", args.vault, args.dir))
        for line in report_lines(info, versions, lint, served, auto, console.env.home):
            console.out(line)
    if info.error:
        console.error(info.error)
        return vault_error_code(info.failure) if info.failure is not None else exit_status.VAULT_ERROR
    return exit_status.OK


def to_json(
    info: VaultInfo,
    versions: dict[str, str | None],
    served: Status | None = None,
    auto: AutoStarted | None = None,
) -> dict[str, object]:
    """The --json object; info.schema.json describes every key."""
    location = info.location
    server = None
    if served is not None:
        server = {**served.to_dict(), "auto_started": _auto_started(served, auto)}
    return {
        "vault": location.path,
        "source": location.source,
        "given": location.given,
        "source_file": location.source_file,
        "config_files": info.config_files,
        "layout": info.layout.to_dict() if info.layout is not None else None,
        "prefer": list(info.prefer),
        "dirs_source": info.dirs_source,
        "dirs": [dir_info.to_dict() for dir_info in info.dirs],
        "pages": info.pages,
        "unsearched": info.unsearched,
        "error": info.error,
        "cache": info.cache.to_dict() if info.cache is not None else None,
        "server": server,
        "auto_start": {
            "enabled": bool(auto and auto.enabled),
            "reason": auto.reason if auto else "",
            "idle_minutes": auto.idle_minutes if auto else config.DEFAULT_IDLE_MINUTES,
            "log": auto.log if auto else None,
        },
        "version": __version__,
        "packages": versions,
    }


def report_lines(
    info: VaultInfo,
    versions: dict[str, str | None],
    lint: str,
    served: Status | None = None,
    auto: AutoStarted | None = None,
    home: str | None = None,
) -> list[str]:
    """The plain report: one ``key: value`` line per fact, the scanned dirs indented below
    theirs. A new fact (the wiki server, say) is one more line here and one more key in
    ``to_json``."""
    from mnemosyne_cli.versions import package_version

    lines = [
        f"vault: {printable(info.location.path)}",
        f"found by: {found_by(info)}",
        f"config files: {', '.join(map(printable, info.config_files)) or 'none'}",
    ]
    if info.layout is not None:
        lines.append(f"layout: {layout_summary(info.layout)}")
    if info.prefer:
        lines.append(
            f"prefer: {printable(', '.join(info.prefer))} (their pages come first among the versions of a page; "
            f"[order] prefer in {config.VAULT_CONFIG_FILE})"
        )
    lines.append(f"scanned dirs ({_dirs_source(info.dirs_source)}):")
    for dir_info in info.dirs:
        lines.append(f"  {printable(dir_info.name)}/: {_dir_state(dir_info)}")
        lines += [f"    {printable(name)}/: {counted(pages, 'page')}" for name, pages in dir_info.subdirs]
    lines.append(f"pages: {info.pages}")
    if info.unsearched:
        files = "file" if info.unsearched == 1 else "files"
        lines.append(f"skipped: {info.unsearched} markdown {files} find never searches; '{lint}' lists them")
    else:
        lines.append("skipped: none")
    if info.error is None:
        # What a miss would say, word for word (the same classifier): the files an ignore
        # file excludes and those beside the default (Aion) dirs, with the way out.
        from mnemosyne_core.layout import miss_note

        note = miss_note(info.location.path, info.dirs_given, home=home)
        if note is not None:
            lines.append(printable(note))
    if info.copies is not None and info.copies.dirs:
        lines.append(f"copies: {copies_state(info.copies)}")
    if info.cache is not None:
        lines.append(f"index: {cache_state(info.cache, served is not None)}")
    lines.append(f"server: {server_state(served, auto)}")
    packages = ", ".join(package_version(name, installed) for name, installed in versions.items())
    lines.append(f"version: mnemosyne {__version__} ({packages})")
    return lines


def copies_state(copies: Copies) -> str:
    """The ``copies:`` line's value: which dirs repeat which dir's pages, all of them or
    some (those named, and how many others an exclude would drop), and the exclude line that
    leaves out the dirs that are all copies (lint's duplicate-title)."""
    from mnemosyne_core.lint import shown_copies

    whole: dict[str, list[str]] = {}
    parts = []
    for copy in copies.dirs:
        if copy.whole:
            whole.setdefault(copy.of, []).append(f"{printable(copy.dir)}/")
    for original, dirs in whole.items():
        shown = ", ".join(dirs[:-1]) + f" and {dirs[-1]}" if len(dirs) > 1 else dirs[0]
        parts.append(f"{shown} {'copy' if len(dirs) > 1 else 'copies'} {printable(original) or '.'}/ page for page")
    for copy in copies.dirs:
        if not copy.whole:
            others = copy.pages - len(copy.copies)
            parts.append(
                f"{printable(copy.dir)}/ copies {len(copy.copies)} of its {counted(copy.pages, 'page')} from "
                f"{printable(copy.of) or '.'}/ ({printable(shown_copies(copy))}), and an exclude of it would drop "
                f"{counted(others, 'page')} that {'is' if others == 1 else 'are'} no copy"
            )
    if whole:
        way_out = printable(copies.way_out())
        return f"{'; '.join(parts)}; find lists every copy: to leave out the dirs that are all copies, {way_out}"
    return f"{'; '.join(parts)}; find lists every copy, and no dir is all copies: no exclude is suggested"


def cache_state(cache: IndexInfo, served: bool = False) -> str:
    """The ``index:`` line's value: the database, its size, how many pages in it are fresh,
    when it was last written and whether a running server tells each call what changed;
    whether a builder is at work; or why find and recall do not use it."""
    if cache.unused is not None:
        return f"not used: {printable(cache.unused)}"
    if cache.path is None:
        return "none (no cache dir can be made: every call reads every page)"
    building = ""
    if cache.building is not None:
        done, total = cache.building
        building = f"being built ({done} of {counted(total, 'page')} read)" if total else "being built"
    failed = f"; {_failed_state(cache.failed)}" if cache.failed is not None else ""
    if not cache.complete:
        if cache.outdated:
            state = building or "written by another version (the next find, recall or wiki init rebuilds it)"
        else:
            state = building or "not built yet (the next find, recall or wiki init builds it)"
        return f"{printable(cache.path)}, {state}{failed}"
    size = f"{cache.bytes / (1 << 20):.1f} MiB" if cache.bytes >= 1 << 20 else f"{cache.bytes >> 10} KiB"
    if cache.damaged is not None:
        # Its rows may look fresh: what a call read of it is what counts.
        damaged = f"damaged ({cache.damaged}): find and recall read every page until a builder replaces it"
        return f"{printable(cache.path)}, {size}, {printable(damaged)}{failed}"
    written = f", written {_utc(cache.written)}" if cache.written is not None else ""
    fed = "; the server below tells each call what changed" if served else ""
    rebuilding = f"; {building}" if building else ""
    fresh = f"{cache.fresh} of {counted(cache.pages, 'page')} fresh"
    return f"{printable(cache.path)}, {size}, {fresh}{written}{fed}{rebuilding}{failed}"


def _utc(seconds: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


#: When a build that failed is tried before its retry time, by its fault.
_RETRIED_SOONER = {"full": "once the disk has room, or ", "unwritable": "once the index is writable, or "}


def _failed_state(failed: dict[str, object]) -> str:
    """The last build's failure: when, the error, and when a find or recall tries again."""
    import time

    when, retry, fault = failed["time"], failed["retry"], failed["fault"]
    assert isinstance(when, int | float)
    assert isinstance(retry, int | float)
    assert isinstance(fault, str)
    if retry <= time.time():
        again = "the next find or recall tries again"
    else:
        again = f"a find or recall tries again {_RETRIED_SOONER.get(fault, '')}from {_utc(retry)} on"
    return printable(f"the last build failed {_utc(when)}: {failed['reason']}; {again}")


def server_state(served: Status | None, auto: AutoStarted | None) -> str:
    """The ``server:`` line's value: the running server, whether it was auto-started and
    where it logs, and when it exits; else whether a call would start one and why, and the
    last auto-start's log if any."""
    from mnemosyne_cli.autostart import minutes

    log = printable(auto.log or "") if auto is not None else ""
    if served is not None:
        how = f"; auto-started, log {log}" if _auto_started(served, auto) else ""
        idle = f"; exits after {minutes(auto.idle_minutes)} without a call" if auto is not None else ""
        return f"{served.summary()}{how}{idle}{served.not_answering()}"
    if auto is None:
        return "none ('wiki serve' starts one)"
    if not auto.enabled:
        return f"none (auto-start is off: {printable(auto.reason)}; 'wiki serve' or [serve] auto = true starts one)"
    last = f"; the last one's log: {log}" if log else ""
    return f"none (auto-start is on: {printable(auto.reason)}; a find or recall starts one{last})"


def _auto_started(served: Status, auto: AutoStarted | None) -> bool:
    return auto is not None and auto.server_pid == served.pid


def found_by(info: VaultInfo) -> str:
    """How the vault was found, as the user would write it."""
    location = info.location
    given = printable(location.given)
    source_file = printable(location.source_file or "")
    if location.source == config.FROM_FLAG:
        return f"--vault {given}"
    if location.source == config.FROM_VAULT_CONFIG:
        return f"{source_file}, the nearest {config.VAULT_CONFIG_FILE} from the current dir up"
    if location.source == config.FROM_ENV:
        return f"{config.VAULT_ENV_VAR}={given}"
    return f'vault = "{given}" in {source_file}'


def layout_summary(layout: Layout) -> str:
    """The layout in force on one line: depth, suffixes, exclude, and where it came from."""
    depth = "flat (the files directly in each dir)" if layout.depth == config.DEPTH_FLAT else "tree (whole subtrees)"
    text = f"{depth}, suffixes {' '.join(layout.suffixes)}"
    if layout.exclude:
        text += f", excluding {' '.join(layout.exclude)}"
    if layout.source == config.LAYOUT_FROM_VAULT_CONFIG:
        return printable(f"{text}; from {config.VAULT_CONFIG_FILE}")
    if layout.source == config.LAYOUT_FROM_ZERO_CONFIG:
        return printable(f"{text}; zero config: no {config.VAULT_CONFIG_FILE} layout and none of the default dirs")
    return printable(f"{text}; the default (Aion) layout, as the vault has default dirs")


def _dirs_source(source: str) -> str:
    if source == config.DIRS_FROM_FLAG:
        return "from --dir"
    if source == config.DIRS_FROM_VAULT_CONFIG:
        return f"from {config.VAULT_CONFIG_FILE}"
    return "the default"


def _dir_state(dir_info: DirInfo) -> str:
    from mnemosyne_core.info import DIR_NOT_A_DIR, DIR_PRESENT, DIR_UNREADABLE

    pages = counted(dir_info.pages, "page")
    if dir_info.state == DIR_PRESENT:
        return pages
    if dir_info.state == DIR_UNREADABLE:
        return f"unreadable, {pages} listed: {printable(dir_info.reason or '')}"
    state = "not a dir" if dir_info.state == DIR_NOT_A_DIR else dir_info.state
    return f"{state}: {printable(dir_info.reason)}" if dir_info.reason else state
