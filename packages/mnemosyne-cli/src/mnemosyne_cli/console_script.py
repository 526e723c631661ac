"""The ``mnemosyne`` console script.

A plain ``wiki find``, ``wiki recall`` or ``wiki lint`` call (its words and its command's
options) and a completion script's ``completion --list-dirs`` are parsed here, without argparse:
importing argparse and building its parser cost more than searching a small vault
(docs/performance.md). This parser (``options.parse_words``) and argparse's are both made
from each command's one declaration of its arguments. Every other call, and every call this parser is not sure of
(help, ``--``, a keyword starting with ``-``, a flag given twice, an unknown flag, a bad
value), goes to ``app.main`` and its argparse parser, which stays the reference:
tests/test_console_script.py holds the two to the same arguments.
"""

from __future__ import annotations

# signal's C core, which the interpreter has already imported (typeshed leaves it out): the
# signal module would import enum, and every millisecond before run() takes SIGINT is one
# in which a Ctrl-C ends in a traceback.
import _signal  # type: ignore[import-not-found]
import os  # already imported by the interpreter's start-up: costs nothing here
import sys

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from mnemosyne_cli.commands.find import FindArguments
    from mnemosyne_cli.commands.lint import LintArguments
    from mnemosyne_cli.commands.recall import RecallArguments
    from mnemosyne_cli.completion import CompletionArguments
    from mnemosyne_cli.environment import Environment
    from mnemosyne_core.backend import Backend


def fast_arguments(words: Sequence[str]) -> FindArguments | RecallArguments | LintArguments | None:
    """The arguments argparse would parse from ``words`` for a plain ``wiki find``, ``wiki
    recall`` or ``wiki lint`` call, or None when the call is not one (then argparse decides,
    errors included)."""
    if len(words) < 2 or words[0] != "wiki":
        return None
    from mnemosyne_cli.options import parse_words

    if words[1] == "find":
        from mnemosyne_cli.commands.find import FindArguments

        return parse_words(FindArguments, words[2:])
    if words[1] == "recall":
        from mnemosyne_cli.commands.recall import RecallArguments

        return parse_words(RecallArguments, words[2:])
    if words[1] == "lint":
        from mnemosyne_cli.commands.lint import LintArguments

        return parse_words(LintArguments, words[2:])
    return None


#: Ctrl-C's exit code (``exit_status.INTERRUPTED``, not imported: start-up time).
INTERRUPTED = 130
#: Whether ``main`` is answering: a Ctrl-C is then a KeyboardInterrupt, which main (and
#: ``output.guarded`` inside it) turns into exit 130; outside main it ends the call at once.
_answering = False


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> int:
    """Run ``mnemosyne`` with ``argv`` (default: sys.argv[1:]) in ``env`` (default: this
    process's environment, current dir, home and streams) and return the exit code."""
    global _answering
    try:
        _answering = True
        return _answer(sys.argv[1:] if argv is None else list(argv), env)
    except KeyboardInterrupt:
        _end_interrupted_line()
        return INTERRUPTED
    finally:
        _answering = False


def _answer(words: list[str], env: Environment | None) -> int:
    from mnemosyne_cli.environment import Environment

    env = Environment() if env is None else env
    args = fast_arguments(words)
    listed = _list_dirs_call(words) if args is None else None
    if args is None and listed is None:
        from mnemosyne_cli.app import main as parse_and_run

        return parse_and_run(words, env)
    from mnemosyne_cli.output import Console, guarded

    console = Console(env)
    if listed is not None:
        from mnemosyne_cli.completion import list_dirs

        vault = listed.vault
        return guarded(console, lambda: list_dirs(vault, console))
    assert args is not None
    console.color_mode = args.color
    if words[1] == "lint":
        from mnemosyne_cli.commands import lint

        linted = args
        assert isinstance(linted, lint.LintArguments)
        # lint asks no Backend: it reads the index itself (app gives it none either).
        return guarded(console, lambda: lint.run(linted, console, None))
    from mnemosyne_cli.client import backend_for
    from mnemosyne_cli.options import PagesArguments

    assert isinstance(args, PagesArguments)
    no_cache, no_server = args.no_cache, args.no_server

    def backend() -> Backend:
        # A running 'wiki serve' for the vault answers it when it can (docs/server.md).
        return backend_for(env, no_cache=no_cache, no_server=no_server)

    if words[1] == "find":
        from mnemosyne_cli.commands import find

        found = args
        assert isinstance(found, find.FindArguments)
        return guarded(console, lambda: find.run(found, console, backend()))
    from mnemosyne_cli.commands import recall

    recalled = args
    assert isinstance(recalled, recall.RecallArguments)
    return guarded(console, lambda: recall.run(recalled, console, backend()))


def _end_interrupted_line() -> None:
    """End the ``^C`` line the terminal echoed, as ``output.guarded`` does: once."""
    global _line_ended
    if _line_ended:
        return
    _line_ended = True
    try:
        if sys.stderr is not None:
            sys.stderr.write("\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr closed: the exit code still tells


_line_ended = False
#: Whether a Ctrl-C came: only then is a dropped KeyboardInterrupt one of ours.
_interrupted = False


#: Seconds a call may take to end after its first Ctrl-C, before the watchdog ends it.
INTERRUPTED_GRACE = 2.0
#: Seconds the watchdog's own end may take (a flush into a pipe nobody reads) before the
#: process exits without it.
ENDING_GRACE = 0.5
#: Whether the next SIGALRM is ``_on_unraisable``'s second try (else it is the watchdog's).
#: One flag suffices: ITIMER_REAL is a single timer, so the retry's replaces the watchdog's.
_retry_pending = False
#: What was left of the watchdog's time when the retry's timer replaced it.
_watchdog_left = 0.0
#: Whether the watchdog has begun ending the call.
_ending = False


def _on_interrupt(signum: int, frame: object) -> None:
    """SIGINT in the console script. While main answers: Python's own KeyboardInterrupt.
    Before (the imports of start-up) and after (the exit): exit 130 at once, as main would,
    instead of a traceback from whatever import or statement it cut short.

    The interrupt can land inside the import system between taking a module's lock and
    the ``with`` that would release it; the cleanup's next import of that module then
    waits on the lock forever. So the first interrupt also arms a watchdog (SIGALRM, which
    ends a wait on a lock), and a call still running when it fires exits 130 at once.
    Later interrupts and retries keep its deadline: pressing Ctrl-C again never delays it."""
    global _interrupted, _retry_pending
    if signum == _signal.SIGALRM and not _retry_pending:
        _end_at_once()
    if _in_unraisable_hook:
        # Raised here, the interrupt would be dropped for good: Python ignores what its
        # unraisable hook raises (a retry due while the hook still ran, on a loaded machine,
        # was lost so).
        _retry_later()
        return
    if _retry_pending:
        _retry_pending = False
        _signal.setitimer(_signal.ITIMER_REAL, _watchdog_left if _watchdog_left > 0 else INTERRUPTED_GRACE)
    elif not _interrupted:
        _signal.setitimer(_signal.ITIMER_REAL, INTERRUPTED_GRACE)
    _interrupted = True
    if _answering:
        raise KeyboardInterrupt
    _end_interrupted_line()
    raise SystemExit(INTERRUPTED)


def _end_at_once() -> NoReturn:
    """The watchdog's end of an interrupted call: what stdout holds is written, the ``^C``
    line ended, and the process exits 130 without running any more of the call's code."""
    global _ending
    if _ending:  # the end itself is stuck (a full pipe): exit without it
        os._exit(INTERRUPTED)
    _ending = True
    _signal.setitimer(_signal.ITIMER_REAL, ENDING_GRACE)
    for finish in (getattr(sys.stdout, "flush", None), _end_interrupted_line):
        # No contextlib.suppress: its import could wait on the very lock that is stuck.
        try:
            if finish is not None:
                finish()
        except Exception:  # noqa: S110 - the stuck code may hold the stream: exit regardless
            pass
    os._exit(INTERRUPTED)


def _on_unraisable(unraisable: Any) -> None:
    """Python runs a signal handler in whatever Python code runs, a weakref callback or a
    ``__del__`` included (the import system has such callbacks), and there it prints the
    handler's exception as "Exception ignored" and goes on. Such a dropped interrupt is
    raised again a millisecond later, where it ends the call as any other (cleanups run)."""
    global _in_unraisable_hook
    _in_unraisable_hook = True
    try:
        if _interrupted and isinstance(unraisable.exc_value, (KeyboardInterrupt, SystemExit)):
            _retry_later()
        else:
            sys.__unraisablehook__(unraisable)
    finally:
        _in_unraisable_hook = False


def _retry_later() -> None:
    """Take an interrupt Python dropped, or would drop, to raise it again a millisecond
    later; the watchdog's time left (a first interrupt's whole grace) is kept for after."""
    global _interrupted, _retry_pending, _watchdog_left
    if not _retry_pending:
        _watchdog_left = _signal.getitimer(_signal.ITIMER_REAL)[0] if _interrupted else INTERRUPTED_GRACE
    _interrupted = _retry_pending = True
    _signal.setitimer(_signal.ITIMER_REAL, 0.001)


#: Whether ``_on_unraisable`` is running: an interrupt that lands there waits for its retry.
_in_unraisable_hook = False


def _list_dirs_call(words: list[str]) -> CompletionArguments | None:
    """The arguments of a ``completion --list-dirs`` call, which the completion scripts
    make on every Tab, when it needs no argparse (see ``completion.list_dirs_call``)."""
    if words[:2] != ["completion", "--list-dirs"]:
        return None
    from mnemosyne_cli.completion import list_dirs_call

    return list_dirs_call(words)


def run() -> NoReturn:
    """The console script. Its first act is to take SIGINT: from here on, a Ctrl-C at any
    moment exits 130 with at most an empty line on stderr (docs/reliability.md says what
    comes before: the interpreter's own start-up)."""
    global _answered, _retry_pending
    _signal.signal(_signal.SIGINT, _on_interrupt)
    _signal.signal(_signal.SIGALRM, _on_interrupt)  # _on_unraisable's second try, the watchdog
    sys.unraisablehook = _on_unraisable
    _skip_teardown_when_nothing_else_exits()
    code = main()
    if _retry_pending:
        # An interrupt Python dropped (it came in a __del__) whose second try has not come
        # yet: the call was interrupted all the same. The try is not left pending into the
        # exit, where the interpreter's finalization has put SIGALRM back to its default and
        # the process would die of it; the watchdog's time is what stays armed, and it is
        # the watchdog's again.
        _retry_pending = False
        _signal.setitimer(_signal.ITIMER_REAL, _watchdog_left if _watchdog_left > 0 else INTERRUPTED_GRACE)
        _end_interrupted_line()
        code = INTERRUPTED
    if _skips_teardown:
        # From here on a Ctrl-C cuts nothing short: it makes the exit 130. (One already
        # pending is run by the old handler as this swaps them, raising SystemExit(130)
        # before main's code is set: the exit callback ends that call 130.)
        _signal.signal(_signal.SIGINT, _on_interrupt_at_exit)
    _answered = code
    sys.exit(code)


#: Whether the process ends without the interpreter's teardown (``_end_without_teardown``).
_skips_teardown = False
#: The code main answered, once run() exits with it (None until then).
_answered: int | None = None
#: Whether a Ctrl-C came after main had answered: its ^C line is still to be ended.
_interrupted_at_exit = False


def _skip_teardown_when_nothing_else_exits() -> None:
    """The interpreter's teardown (every module, then every object, freed one by one) is
    3 to 4 ms of a served 30 ms find, and none of it is ours: by the time main returns,
    every file and index it opened is closed (each in a ``with`` or a ``finally``). So the
    last exit callback flushes the two streams and ends the process at once. It is only
    registered when it will run last (no callback came before it: callbacks run newest
    first); Python has already waited for any other thread before it runs."""
    global _skips_teardown
    import atexit  # built in: costs nothing

    registered = getattr(atexit, "_ncallbacks", None)
    if registered is not None and registered() == 0:
        atexit.register(_end_without_teardown)
        _skips_teardown = True


def _on_interrupt_at_exit(signum: int, frame: object) -> None:
    """SIGINT once main has answered, when the process ends itself: the exit becomes 130,
    and its ^C line is ended once the streams are flushed (written from here, it could land
    inside a flush of stderr). The first interrupt also arms the watchdog, so a flush
    blocked on a full pipe still ends."""
    global _interrupted, _interrupted_at_exit
    if not _interrupted:
        _signal.setitimer(_signal.ITIMER_REAL, INTERRUPTED_GRACE)
    _interrupted = _interrupted_at_exit = True


def _end_without_teardown() -> None:
    """End the process with the code main answered, its output flushed: 130 after any
    Ctrl-C (its ^C line ended, for one that came once main had answered). An exit main did
    not answer with no Ctrl-C (an exception), or a flush that fails on an uninterrupted
    call, is left to the interpreter's own exit, which flushes again and reports it."""
    if _answered is None and not _interrupted:
        return
    code = INTERRUPTED if _answered is None else _answered
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        if code != INTERRUPTED and not _interrupted_at_exit:
            # Asked again after the swap: one pending as it ran was taken by the old handler.
            _signal.signal(_signal.SIGINT, _on_interrupt)
            if not _interrupted_at_exit:
                return
    if _interrupted_at_exit:
        _end_interrupted_line()
        os._exit(INTERRUPTED)
    os._exit(code)
