"""Writing to the terminal: stdout for results, stderr for everything else.

Results go out as UTF-8 whatever the locale. A reader that closes the pipe early
(``| head -1``) ends the output quietly; any other failure to write stdout (closed, disk
full) is an OutputError, which main turns into exit 74, never into "no match".
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import IO

    from mnemosyne_cli.environment import Environment
    from mnemosyne_core.diagnostics import Diagnostic

PROG = "mnemosyne"
# No regular expressions here: re is off a plain find's import path (start-up time), and
# these run on a few short lines per call.


def _is_control(character: str) -> bool:
    """A C0 or C1 control character or DEL: a title with an ANSI escape must not recolour
    the terminal."""
    code = ord(character)
    return code < 0x20 or 0x7F <= code <= 0x9F


def _escaped(character: str) -> str:
    """A control character, or a surrogate standing for an undecodable byte of a file name,
    as an escape (``\\x1b``, ``\\xff``); any other character as it is."""
    code = ord(character)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code & 0xFF:02x}"
    return f"\\x{code:02x}" if _is_control(character) else character


def printable(text: str) -> str:
    """``text`` with control characters shown as escapes (``\\x1b``), safe for one line."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(map(_escaped, text))


def has_control_character(text: str) -> bool:
    """Whether ``text`` holds a C0 or C1 control character or DEL (a newline, an ESC)."""
    return not text.isprintable() and any(map(_is_control, text))


def counted(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless it is one: ``1 page``, ``3 pages``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def page_line(path: str, title: str, *, color: bool = False) -> str:
    """find's line for a page, ``<dir>/<file>.md — <title>``; ingest prints the same.
    With ``color``, the path and the title are painted, after they are escaped."""
    path, title = printable(path), printable(title)
    if color:
        from mnemosyne_cli.color import PATH, TITLE, paint

        path, title = paint(path, PATH), paint(title, TITLE)
    return f"{path} — {title}"


def diagnostic_text(diagnostic: Diagnostic) -> str:
    """The one wording of what a search skipped: the text after ``warning:``. The scan and
    a server's answer print through here, so their lines are the same by construction."""
    from mnemosyne_core import diagnostics

    code, path, detail = diagnostic.code, diagnostic.path, diagnostic.detail
    subject = f"{path}/" if diagnostic.is_dir else path
    if code == diagnostics.BROKEN_SYMLINK:
        return f"{subject}: broken symlink; skipped"
    if code == diagnostics.SYMLINK_ESCAPES:
        return f"{subject}: symlink leaves the vault; skipped"
    if code == diagnostics.CANNOT_LIST:
        return f"{subject}: cannot list ({detail}); its pages were not searched"
    if code == diagnostics.CANNOT_READ:
        return f"{subject}: cannot read ({detail}); skipped"
    if code == diagnostics.IGNORE_FILE_UNUSED:
        return f"{subject}: cannot use this ignore file ({detail}); its rules are not applied"
    if code == diagnostics.UNKNOWN_DIR:
        return f"--dir {path!r} names no dir of the vault; {detail}"
    # A code newer than this wording: still said, never dropped.
    return f"{subject}: {code}" + (f" ({detail})" if detail else "")


def wants_color(mode: str, stream: object, environ: Mapping[str, str]) -> bool:
    """Whether to colour what goes to ``stream``. First that decides wins: --color always
    or never; NO_COLOR set and not empty (no colour); FORCE_COLOR set and not empty
    (colour); TERM=dumb (no colour); else colour exactly when the stream is a terminal."""
    if mode != "auto":
        return mode == "always"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):  # a closed stream
        return False


class OutputError(Exception):
    """stdout cannot take the results (closed, or the write failed other than EPIPE)."""


class Console:
    """The two streams a command writes to, and the rest of the environment of its call
    (``env``), which the command reads instead of the process's."""

    def __init__(self, env: Environment):
        self.env = env
        # None when the process started with the stream closed (sys.stdout is None then).
        self._stdout: IO[str] | None = env.stdout
        self._stderr: IO[str] | None = env.stderr
        self._stdout_closed = False
        #: --color: auto, always or never; main sets it from the command line.
        self.color_mode = "auto"

    def out(self, text: str) -> None:
        """One line of results on stdout."""
        self.out_bytes((text + "\n").encode("utf-8", "surrogateescape"))

    def out_lines(self, lines: Iterable[str]) -> None:
        """Lines of results on stdout in one write: lint's 100,000 findings took a second
        as a write and two flushes each."""
        lines = list(lines)
        if lines:
            self.out_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))

    def out_json(self, value: object) -> None:
        """``value`` as one line of JSON on stdout."""
        import json  # only --json calls pay for it

        text = json.dumps(value, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes in a file name: keep them as \udcXX
            text = json.dumps(value)
        self.out(text)

    def out_bytes(self, data: bytes) -> None:
        """Bytes on stdout as they are (--cat)."""
        if self._stdout_closed:
            return
        if self._stdout is None:  # started with stdout closed (>&-)
            raise OutputError("cannot write the results: stdout is closed")
        try:
            buffer = getattr(self._stdout, "buffer", None)
            if buffer is None:
                self._stdout.write(data.decode("utf-8", "replace"))
            else:
                self._stdout.flush()
                buffer.write(data)
            self._stdout.flush()
        except BrokenPipeError:
            self._close_stdout()
        except (OSError, ValueError) as error:  # ValueError: a stream closed under us
            raise OutputError(f"cannot write the results to stdout: {error}") from None

    def _close_stdout(self) -> None:
        # Later writes, and the interpreter's flush at exit, go nowhere instead of raising.
        self._stdout_closed = True
        if self._stdout is None:
            return
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def color_stdout(self) -> bool:
        """Whether results on stdout may be coloured (never for --json, --paths, --cat:
        those print no colour whatever this says)."""
        return wants_color(self.color_mode, self._stdout, self.env.environ)

    def color_stderr(self) -> bool:
        """Whether the ``error:`` and ``warning:`` prefixes are coloured: stderr's own
        terminal decides, not stdout's."""
        return wants_color(self.color_mode, self._stderr, self.env.environ)

    def stderr_is_terminal(self) -> bool:
        """Whether stderr is a terminal (a progress bar is drawn only there)."""
        isatty = getattr(self._stderr, "isatty", None)
        try:
            return bool(isatty is not None and isatty())
        except (OSError, ValueError):  # a closed stream
            return False

    def redraw(self, text: str) -> None:
        """``text`` over the current stderr line (a progress bar; a terminal's only)."""
        if self._stderr is None:
            return
        try:
            self._stderr.write(f"\r{text}\x1b[K")
            self._stderr.flush()
        except (OSError, ValueError):
            pass

    def err(self, text: str) -> None:
        """One line on stderr, as given."""
        if self._stderr is None:  # started with stderr closed (2>&-)
            return
        try:
            self._stderr.write(text + "\n")
            self._stderr.flush()
        except (OSError, ValueError):
            pass  # nowhere left to say it; the exit code still tells

    def error(self, message: str) -> None:
        """``mnemosyne: error: message``."""
        self.err(f"{PROG}: {self._label('error')} {printable(message)}")

    def warning(self, message: str) -> None:
        """``mnemosyne: warning: message``."""
        self.err(f"{PROG}: {self._label('warning')} {printable(message)}")

    def diagnostic(self, diagnostic: Diagnostic) -> None:
        """A search's warning (``diagnostic_text``) as ``mnemosyne: warning: ...``."""
        self.warning(diagnostic_text(diagnostic))

    def _label(self, kind: str) -> str:
        if not self.color_stderr():
            return f"{kind}:"
        from mnemosyne_cli.color import ERROR, WARNING, paint

        return paint(f"{kind}:", ERROR if kind == "error" else WARNING)


def guarded(console: Console, command: Callable[[], int]) -> int:
    """Run ``command`` as every call ends: Ctrl-C exits 130 after ending the ``^C`` line
    the terminal echoed; a stdout that cannot take the results exits 74, never 1."""
    from mnemosyne_contract import exit_status

    try:
        return command()
    except KeyboardInterrupt:
        console.err("")
        return exit_status.INTERRUPTED
    except OutputError as error:
        console.error(str(error))
        return exit_status.WRITE_FAILED
