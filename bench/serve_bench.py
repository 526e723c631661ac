"""A running ``wiki serve`` for ``nox -s bench`` (bench/run_bench.py): started for a vault,
its start-up time read from its first line, its resident memory read from /proc. The served
rows themselves are timed by run_bench.py beside ``rg -l -i -F`` (docs/performance.md).
"""

from __future__ import annotations

import os
import re
import subprocess

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def start_server(mnemosyne: str, vault: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], float]:
    """The server for ``vault`` and the time it took to watch it, read from its first line."""
    process = subprocess.Popen(
        [mnemosyne, "wiki", "serve", "--vault", str(vault)], env=env, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    match = re.search(r"dirs in ([0-9.]+) s", line)
    if match is None:
        process.kill()
        raise SystemExit(f"the server did not start: {line}{process.stderr.read()}")
    return process, float(match.group(1))


def resident_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm", "rb") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
