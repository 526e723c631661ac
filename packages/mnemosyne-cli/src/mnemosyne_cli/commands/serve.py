"""``mnemosyne wiki serve``: watch the vault, so find and recall need not list it."""

from __future__ import annotations

import time

from mnemosyne_cli.options import VAULT, Arguments, Command, flag
from mnemosyne_cli.output import printable
from mnemosyne_contract import exit_status
from mnemosyne_core import VaultError

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend


class ServeArguments(Arguments):
    """``wiki serve``'s arguments."""

    status = flag("--status", help="say whether a server runs for the vault: pid, watched dirs, memory")
    vault = VAULT


COMMAND = Command(
    "serve",
    ServeArguments,
    summary="watch the vault so find and recall need not list it (Linux)",
    description="Run in the foreground, watching the dirs the vault's layout lists (inotify) and\n"
    "answering one question: which files changed since a token. While it runs, 'wiki\n"
    "find' and 'wiki recall' on this vault ask it, then read only the pages it names\n"
    "(with their own rights, into the vault's index) instead of listing the vault and\n"
    "checking every page; the answer is the same bytes. It never reads a page. They\n"
    "list the vault as before when it is not running, does not answer in time, or\n"
    "answers 'rescan' (see docs/server.md). One server per vault. A find or recall\n"
    "starts one on a vault of 5,000 pages, or any with [serve] auto = true. It exits\n"
    "after [serve] idle_minutes (30) without a call; Ctrl-C or SIGTERM stops it.",
    examples=[
        "mnemosyne wiki serve --vault ~/aion",
        "mnemosyne wiki serve --status --vault ~/aion",
    ],
    exit_codes=[
        (exit_status.OK, "stopped by SIGTERM, or idle for [serve] idle_minutes; --status: a server is running"),
        (exit_status.NO_MATCH, "--status: no server is running for the vault"),
        (
            exit_status.VAULT_ERROR,
            "no vault found, or it is missing, on a file system without change events (NFS, SMB, FUSE), "
            "or no safe socket dir",
        ),
        (exit_status.SERVER_RUNNING, "a server is already running for the vault (its pid is printed)"),
        (exit_status.USAGE, "usage error"),
        (exit_status.INTERRUPTED, "stopped by Ctrl-C"),
    ],
)


def run(args: ServeArguments, console: Console, backend: Backend | None) -> int:
    from mnemosyne_cli import autostart, client, server
    from mnemosyne_core.inotify import InotifyError
    from mnemosyne_core.location import resolve_vault

    env = console.env
    try:
        vault = resolve_vault(args.vault, **env.vault_lookup())
    except VaultError as error:
        console.error(str(error))
        return exit_status.VAULT_ERROR
    if args.status:
        running_now = client.status(vault, env)
        if running_now is None:
            console.out(f"no server is running for {vault}")
            return exit_status.NO_MATCH
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(running_now.started))
        auto = autostart.describe(vault, False, 0, env)
        how = f"; auto-started, log {printable(auto.log or '')}" if auto.server_pid == running_now.pid else ""
        console.out(
            f"server: {running_now.summary()}, {running_now.builds} watch builds, "
            f"{running_now.requests} requests since {started}{how}{running_now.not_answering()}"
        )
        return exit_status.OK
    from mnemosyne_core.config import load_vault_config, vault_layout

    try:
        vault_layout(vault)  # a bad config: refused before anything starts
        idle_minutes = load_vault_config(vault).serve_idle_minutes
    except VaultError as error:
        console.error(str(error))
        return exit_status.VAULT_ERROR
    running = server.Server.for_vault(vault, env)
    running.idle_seconds = idle_minutes * 60
    try:
        took = running.start()
    except server.AlreadyRunning as error:
        console.error(f"a server is already running for {vault} (pid {error.pid}); it answers find and recall")
        return exit_status.SERVER_RUNNING
    except (server.ServerError, InotifyError, OSError) as error:
        running.close()
        console.error(str(error))
        return exit_status.VAULT_ERROR
    server.exit_on_sigterm()
    doubt = f"; every caller lists the vault: {running.watch.doubt}" if running.watch.doubt else ""
    running.log(
        f"watching {vault}: {running.watch.watched_dirs} dirs in {took:.2f} s, "
        f"{server.resident_bytes() / (1 << 20):.0f} MiB resident; socket {running.socket_path}; "
        f"exits after {autostart.minutes(idle_minutes)} without a call{doubt}"
    )
    try:
        running.serve_forever()
    except SystemExit as stopped:
        return int(stopped.code or 0)
    finally:
        running.close()
    return exit_status.OK
