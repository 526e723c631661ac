"""How long a find is open to a Ctrl-C that ends badly: SIGINT at evenly spread delays into
the installed console script, each call sorted by how it ended (docs/reliability.md).

The delays cover the whole call, so the share of calls a signal cut short badly, times the
span of delays, estimates how many milliseconds of a call that window is. Run it on a quiet
machine: load stretches every phase of the start-up alike.

    python bench/interrupt_window.py --vault fixtures/vaults/aion \\
        build/bench/pip-venv/bin/mnemosyne build/bench/uv-venv/bin/mnemosyne
"""

from __future__ import annotations

import argparse
import collections
import signal
import subprocess
import time
from pathlib import Path

#: How a call ended, in the order the report lists them.
OUTCOMES = (
    "exit 130, at most an empty line",
    "killed by SIGINT, stderr empty (before Python's handler: a shell shows 130)",
    "finished before the signal",
    "Fatal Python error (the interpreter's start-up)",
    "traceback (the installer's script or Python's set-up of it)",
    "other",
)


def outcome(code: int, stderr: str) -> str:
    if code == 130 and stderr in ("", "\n"):
        return OUTCOMES[0]
    if code == -signal.SIGINT and not stderr:
        return OUTCOMES[1]
    if code in (0, 1) and "KeyboardInterrupt" not in stderr and "Fatal" not in stderr:
        return OUTCOMES[2]
    if stderr.startswith("Fatal Python error"):
        return OUTCOMES[3]
    if "KeyboardInterrupt" in stderr:
        return OUTCOMES[4]
    return OUTCOMES[5]


def mean_ms(command: list[str], runs: int) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - started) / runs * 1000


def measure(command: list[str], span_ms: float, steps: int, repeats: int) -> collections.Counter[str]:
    """The outcomes of ``steps`` x ``repeats`` calls interrupted at evenly spread delays."""
    tally: collections.Counter[str] = collections.Counter()
    for step in range(steps):
        delay = span_ms * step / (steps - 1) / 1000
        for _ in range(repeats):
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate()
            tally[outcome(process.returncode, stderr)] += 1
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scripts", nargs="+", help="installed mnemosyne console scripts")
    parser.add_argument("--vault", required=True)
    parser.add_argument("--span", type=float, default=80.0, help="the latest delay, in ms (default 80)")
    parser.add_argument("--steps", type=int, default=81)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    for script in options.scripts:
        command = [script, "wiki", "find", "mastra", "--vault", options.vault]
        tally = measure(command, options.span, options.steps, options.repeats)
        call, bare = mean_ms(command, 20), mean_ms([str(Path(script).parent / "python"), "-c", "pass"], 20)
        total = sum(tally.values())
        bad = sum(tally[kind] for kind in OUTCOMES[3:])
        print(f"{script}: a call takes {call:.1f} ms, its python -c pass {bare:.1f} ms")
        print(f"  {total} calls interrupted at 0-{options.span:g} ms:")
        for kind in OUTCOMES:
            print(f"  {tally[kind]:5}  {kind}")
        print(f"  window: {bad / total * options.span:.1f} ms ({bad} of {total} calls ended badly)")


if __name__ == "__main__":
    main()
