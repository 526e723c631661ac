"""Where a ``wiki serve`` pays: a warm find with no server, with one, and the scan, on
vaults of several sizes, with an idle server's resident memory and inotify watches.

    python bench/server_threshold.py kestrel VAULT...

Each vault (made by fixtures/generate_vault.py) gets its index built first; then the
median of 9 runs of ``find WORD --no-server`` and of ``find WORD`` with a server started
by hand, and of 5 runs of ``--no-cache``. One JSON line per vault. The runtime and cache
dirs are below /tmp/mnb, apart from the user's. docs/performance.md, "When a server pays",
holds what it printed.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MNEMOSYNE = [str(Path(sys.executable).parent / "mnemosyne")]
BASE = Path("/tmp/mnb")  # noqa: S108 - a scratch dir of the benchmark's own, as its docstring says
ENV = {**os.environ, "XDG_RUNTIME_DIR": str(BASE / "run"), "XDG_CACHE_HOME": str(BASE / "cache"), "HOME": str(BASE)}
ENV.pop("MNEMOSYNE_NO_SERVER", None)


def run(args: list[str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    began = time.perf_counter()
    completed = subprocess.run([*MNEMOSYNE, *args], env=ENV, capture_output=True, check=False)
    return time.perf_counter() - began, completed


def median_ms(args: list[str], runs: int = 9) -> float:
    return statistics.median(run(args)[0] for _ in range(runs)) * 1000


def info(vault: str) -> dict[str, object]:
    return dict(json.loads(run(["wiki", "info", "--json", "--vault", vault])[1].stdout))


def measure(word: str, vault: str) -> dict[str, object]:
    run(["wiki", "find", word, "--no-server", "--vault", vault])  # starts the builder
    began = time.time()
    while not info(vault)["cache"]["complete"]:  # type: ignore[index]
        time.sleep(1)
    built = time.time() - began
    warm = median_ms(["wiki", "find", word, "--no-server", "--vault", vault])
    scan = median_ms(["wiki", "find", word, "--no-cache", "--vault", vault], 5)
    server = subprocess.Popen(
        [*MNEMOSYNE, "wiki", "serve", "--vault", vault], env=ENV, stderr=subprocess.PIPE, text=True
    )
    assert server.stderr is not None
    watching = server.stderr.readline().strip()  # written once the watch is built
    try:
        for _ in range(2):  # the first keeps the server's token, the second is served
            run(["wiki", "find", word, "--vault", vault])
        served = median_ms(["wiki", "find", word, "--vault", vault])
        status = Path(f"/proc/{server.pid}/status").read_text(encoding="ascii")
        rss = int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]) / 1024
        fdinfo = Path(f"/proc/{server.pid}/fdinfo")
        watches = sum(text.count("inotify wd:") for text in (f.read_text(encoding="ascii") for f in fdinfo.iterdir()))
    finally:
        server.terminate()
        server.wait()
    return {
        "vault": vault,
        "pages": info(vault)["pages"],
        "index_build_s": round(built),
        "scan_ms": round(scan),
        "warm_no_server_ms": round(warm),
        "served_ms": round(served),
        "idle_rss_mib": round(rss, 1),
        "inotify_watches": watches,
        "server_log": watching,
    }


if __name__ == "__main__":
    (BASE / "run").mkdir(mode=0o700, parents=True, exist_ok=True)
    for path in sys.argv[2:]:
        print(json.dumps(measure(sys.argv[1], path)), flush=True)
