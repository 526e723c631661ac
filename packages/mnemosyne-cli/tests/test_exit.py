"""Once main has answered, the console script ends the process without the interpreter's
teardown (``console_script._end_without_teardown``): the same output and exit code as the
interpreter's own exit, which still runs whenever something else is left to run at exit.

Each test runs the console script as its wrapper does, in a child process, with a witness
object whose ``__del__`` writes ``torn down`` to stderr: only a teardown frees it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from index_harness import build_index

FIXTURE_VAULT = str(Path(__file__).resolve().parents[3] / "fixtures" / "vaults" / "aion")

#: The console script as its wrapper runs it, with the witness; argv[1] says what else the
#: probe does: "plain", "callback-before" (an exit callback registered before run(), so the
#: interpreter's own exit runs), "callback-during" (one the call registers), and a Ctrl-C
#: once main has answered: "ctrl-c" (while the streams are flushed at the end),
#: "ctrl-c-then-failed-flush" (and the flush fails), "ctrl-c-then-stuck-flush" (and the
#: flush does not return until the watchdog flushes again), "ctrl-c-at-exit" (as run()
#: calls sys.exit), "ctrl-c-as-main-returns" (before run() takes the exit's own handler),
#: "ctrl-c-in-main-then-failed-flush" (main answers 130, then the last flush fails),
#: "retry-pending-then-stuck-flush" (main returns while a Ctrl-C Python dropped waits for
#: its second try, then the last flush does not return until the watchdog flushes again).
PROBE = """
import _signal, atexit, sys, time
from mnemosyne_cli import console_script

class Witness:
    def __del__(self):
        sys.stderr.write("torn down\\n")
        sys.stderr.flush()

witness = Witness()
mode = sys.argv.pop(1)
if mode == "callback-before":
    atexit.register(lambda: sys.stderr.write("callback before run\\n"))
if mode == "callback-during":
    answer = console_script._answer
    def answer_and_register(words, env):
        atexit.register(lambda: sys.stderr.write("callback during the call\\n"))
        return answer(words, env)
    console_script._answer = answer_and_register
if mode == "ctrl-c-in-main-then-failed-flush":
    def interrupted(words, env):
        _signal.raise_signal(_signal.SIGINT)
        return 0
    console_script._answer = interrupted
if mode == "retry-pending-then-stuck-flush":
    def dropped(words, env):
        # What _on_unraisable leaves when it takes a dropped interrupt: its second try due.
        console_script._interrupted = console_script._retry_pending = True
        console_script._watchdog_left = 0.5
        return 0
    console_script._answer = dropped
if mode == "ctrl-c" or mode.endswith("-flush"):
    # stdout, whose flush once main has answered does what the mode says: the first is
    # interrupted or stuck, and every one fails where a flush fails (a dead pipe stays so).
    class LastFlush:
        first = True
        def __init__(self, stream):
            self.stream = stream
        def __getattr__(self, name):
            return getattr(self.stream, name)
        def flush(self):
            if console_script._answered is not None:
                first, self.first = self.first, False
                if first and (mode == "ctrl-c" or mode.startswith("ctrl-c-then")):
                    _signal.raise_signal(_signal.SIGINT)
                if mode.endswith("failed-flush"):
                    raise BrokenPipeError(32, "Broken pipe")
                if first and mode.endswith("stuck-flush"):
                    time.sleep(3600)
            self.stream.flush()
    sys.stdout = LastFlush(sys.stdout)
answered = False
if mode == "ctrl-c-as-main-returns":
    answer = console_script.main
    def main_then_note():
        global answered
        code = answer()
        answered = True
        return code
    console_script.main = main_then_note
def interrupt_at(frame, event, arg):
    if event == "c_call" and (
        (mode == "ctrl-c-at-exit" and arg is sys.exit) or (answered and arg is _signal.signal)
    ):
        sys.setprofile(None)
        _signal.raise_signal(_signal.SIGINT)
if mode in {"ctrl-c-at-exit", "ctrl-c-as-main-returns"}:
    sys.setprofile(interrupt_at)
console_script.run()
"""


def run_probe(mode: str, *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, mode, *words],
        capture_output=True,
        text=True,
        check=False,
        # No server answers: the whole call runs here.
        env={**os.environ, "XDG_RUNTIME_DIR": "/nonexistent-runtime-dir", "NO_COLOR": "1"},
        timeout=60,
    )


@pytest.mark.parametrize(
    ("words", "code"),
    [
        (["wiki", "find", "mastra", "--vault", FIXTURE_VAULT], 0),
        (["wiki", "find", "zyzzyva", "--vault", FIXTURE_VAULT], 1),
        (["wiki", "recall", "mastra", "--vault", FIXTURE_VAULT], 0),
        (["wiki", "find", "mastra", "--vault", "/nonexistent-vault"], 3),
        # The fixture has pages lint finds fault with: exit 1.
        (["wiki", "lint", "--vault", FIXTURE_VAULT], 1),
    ],
    ids=["found", "none", "recall", "no vault", "lint"],
)
def test_a_call_ends_without_teardown_printing_and_exiting_as_the_interpreters_exit(
    words: list[str], code: int
) -> None:
    build_index(FIXTURE_VAULT)
    torn_down = run_probe("callback-before", *words)
    assert torn_down.stderr.endswith("callback before run\ntorn down\n")
    expected_stderr = torn_down.stderr.removesuffix("callback before run\ntorn down\n")

    done = run_probe("plain", *words)

    assert (done.returncode, done.stdout, done.stderr) == (code, torn_down.stdout, expected_stderr)
    assert torn_down.returncode == code


def test_an_exit_callback_the_call_registers_still_runs() -> None:
    done = run_probe("callback-during", "wiki", "find", "zyzzyva", "--vault", FIXTURE_VAULT)
    assert done.returncode == 1
    assert done.stderr.endswith("callback during the call\n")
    assert "torn down" not in done.stderr


@pytest.mark.parametrize(
    "mode",
    ["ctrl-c", "ctrl-c-then-failed-flush", "ctrl-c-then-stuck-flush", "ctrl-c-at-exit", "ctrl-c-as-main-returns"],
)
def test_a_ctrl_c_after_main_answered_exits_130_ending_the_line(mode: str) -> None:
    """Whenever it lands once main has answered: 130, what the call printed, one empty
    line more. A flush stuck on a full pipe nobody reads is ended by the watchdog the
    Ctrl-C arms."""
    build_index(FIXTURE_VAULT)
    expected = run_probe("plain", "wiki", "find", "mastra", "--vault", FIXTURE_VAULT)
    done = run_probe(mode, "wiki", "find", "mastra", "--vault", FIXTURE_VAULT)
    assert (done.returncode, done.stdout, done.stderr) == (130, expected.stdout, expected.stderr + "\n")


def test_a_call_ctrl_c_ended_exits_130_though_its_last_flush_fails() -> None:
    """main answered 130; the flush at the end fails (the pipe's reader died of the same
    Ctrl-C): still 130, not the interpreter's 120 for a failed flush at exit."""
    done = run_probe("ctrl-c-in-main-then-failed-flush", "wiki", "find", "mastra", "--vault", FIXTURE_VAULT)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "\n")


def test_a_dropped_ctrl_c_still_due_at_the_end_leaves_the_watchdog_to_end_a_stuck_flush() -> None:
    """run() takes the second try of an interrupt Python dropped as the call's end (130):
    the timer left is the watchdog's again, which ends a flush that never returns, instead
    of a retry that would kill the process by SIGALRM once the interpreter's exit has put
    its default back."""
    done = run_probe("retry-pending-then-stuck-flush", "wiki", "find", "mastra", "--vault", FIXTURE_VAULT)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "\n")
