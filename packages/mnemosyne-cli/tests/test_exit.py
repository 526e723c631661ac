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
#: calls sys.exit), "ctrl-c-as-main-returns" (before run() takes the exit's own handler).
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
if mode.startswith("ctrl-c-then") or mode == "ctrl-c":
    class InterruptedFlush:
        def __init__(self, stream):
            self.stream = stream
        def __getattr__(self, name):
            return getattr(self.stream, name)
        stuck = mode == "ctrl-c-then-stuck-flush"
        def flush(self):
            if console_script._answered is not None and not console_script._interrupted:
                _signal.raise_signal(_signal.SIGINT)
                if mode == "ctrl-c-then-failed-flush":
                    raise BrokenPipeError(32, "Broken pipe")
                if self.stuck:
                    self.stuck = False
                    time.sleep(3600)
            self.stream.flush()
    sys.stdout = InterruptedFlush(sys.stdout)
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
