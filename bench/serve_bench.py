"""The benchmark behind ``nox -s bench-serve``: ``wiki find`` told by a running ``wiki
serve`` what changed (its pages from the warm page cache, the vault not listed) against
``rg -l -i -F`` and a bare ``python -c pass``, each pair in one hyperfine run.

On the fixture vault (start-up bound) and the generated 100k-page vault of ``nox -s
bench`` (build/bench/classic-100000, generated here when missing): a rare keyword, a
keyword on every page, the server's resident memory and the time it takes to watch the
vault. Every served answer is checked against the plain scan's (``--no-cache``) first.
Writes the table between the markers in docs/server.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))

import generate_vault  # noqa: E402 - fixtures/ is not a package; its path is set just above

FIXTURE_VAULT = ROOT / "fixtures" / "vaults" / "aion"
BUILD_DIR = ROOT / "build" / "bench"
DOC = ROOT / "docs" / "server.md"
BEGIN, END = "<!-- serve-bench:begin -->", "<!-- serve-bench:end -->"
#: A keyword on every generated page: each has a frontmatter title.
EVERY_PAGE = "title"
RARE_TARGET, EVERY_TARGET, STARTUP_TARGET = 0.1, 0.3, 2.0


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


def check_same(mnemosyne: str, argv: list[str], env: dict[str, str]) -> None:
    served = subprocess.run([mnemosyne, *argv], env=env, capture_output=True, check=False)
    # The first call lists the vault and keeps the server's token; the second is served.
    served = subprocess.run([mnemosyne, *argv], env=env, capture_output=True, check=False)
    scanned = subprocess.run([mnemosyne, *argv, "--no-cache"], env=env, capture_output=True, check=False)
    if (served.returncode, served.stdout, served.stderr) != (scanned.returncode, scanned.stdout, scanned.stderr):
        raise SystemExit(f"the served answer differs from the plain scan's: {argv}")


def hyperfine(commands: dict[str, str], runs: int, env: dict[str, str]) -> dict[str, float]:
    """Mean seconds of each command, timed in one hyperfine run."""
    with tempfile.NamedTemporaryFile(suffix=".json") as export:
        argv = ["hyperfine", "-N", "-w", "2", "-r", str(runs), "--export-json", export.name]
        for name, command in commands.items():
            argv += ["-n", name, command]
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        results = json.loads(Path(export.name).read_text(encoding="utf-8"))["results"]
    return {result["command"]: float(result["mean"]) for result in results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mnemosyne", default=shutil.which("mnemosyne") or "mnemosyne")
    parser.add_argument("--pages", type=int, default=100000, help="pages of the generated vault")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-write", action="store_true", help="print the table; leave docs/server.md alone")
    args = parser.parse_args(argv)
    runtime = Path(tempfile.mkdtemp(prefix="mnemosyne-bench-run-"))
    runtime.chmod(0o700)
    # A cache dir of its own: the user's cache is never touched, and every run starts cold.
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XDG_CACHE_HOME": str(runtime / "cache")}
    large = BUILD_DIR / f"classic-{args.pages}"
    generate_vault.ensure(args.pages, str(large))
    python = str(Path(args.mnemosyne).parent / "python")
    rows: list[list[str]] = []
    fixture_server, fixture_index = start_server(args.mnemosyne, FIXTURE_VAULT, env)
    large_server, large_index = start_server(args.mnemosyne, large, env)
    try:
        find = f"{args.mnemosyne} wiki find"
        check_same(args.mnemosyne, ["wiki", "find", "mastra", "--vault", str(FIXTURE_VAULT)], env)
        startup = hyperfine(
            {"served": f"{find} mastra --vault {FIXTURE_VAULT}", "bare": f"{python} -c pass"}, args.runs * 3, env
        )
        ratio = startup["served"] / startup["bare"]
        rows.append(
            [
                "94-page fixture: `find mastra` served, warm cache / `python -c pass`",
                f"≤ {STARTUP_TARGET}×",
                f"{ratio:.2f}× ({startup['served'] * 1000:.0f} / {startup['bare'] * 1000:.0f} ms)",
            ]
        )
        for label, keyword, target in (
            ("rare keyword", generate_vault.RARE_WORD, RARE_TARGET),
            ("keyword on every page", EVERY_PAGE, EVERY_TARGET),
        ):
            check_same(args.mnemosyne, ["wiki", "find", keyword, "--vault", str(large)], env)
            timed = hyperfine(
                {"served": f"{find} {keyword} --vault {large}", "rg": f"rg -l -i -F {keyword} {large}"}, args.runs, env
            )
            ratio = timed["served"] / timed["rg"]
            rows.append(
                [
                    f"{args.pages // 1000}k pages, {label} (`{keyword}`): served / `rg -l -i -F`",
                    f"≤ {target}×",
                    f"{ratio:.2f}× ({timed['served'] * 1000:.0f} / {timed['rg'] * 1000:.0f} ms)",
                ]
            )
        resident = resident_bytes(large_server.pid)
        rows.append([f"{args.pages // 1000}k pages: server memory", "reported", f"{resident / 2**20:.0f} MiB"])
        rows.append([f"{args.pages // 1000}k pages: start-up watch", "reported", f"{large_index:.1f} s"])
        rows.append(["94-page fixture: start-up watch", "reported", f"{fixture_index:.2f} s"])
    finally:
        for process in (fixture_server, large_server):
            process.terminate()
            process.wait(30)
        shutil.rmtree(runtime, ignore_errors=True)
    when = time.strftime("%Y-%m-%d", time.gmtime())
    table = [
        f"Measured by `nox -s bench-serve` on {when} ({os.cpu_count()} cores; the machine's other load shows in",
        "rg's own times).",
        "",
        "| measure | target | measured |",
        "| --- | --- | --- |",
        *(f"| {' | '.join(row)} |" for row in rows),
    ]
    print("\n".join(table))
    if not args.no_write:
        doc = DOC.read_text(encoding="utf-8")
        start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        DOC.write_text(doc[:start] + "\n" + "\n".join(table) + "\n" + doc[end:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
