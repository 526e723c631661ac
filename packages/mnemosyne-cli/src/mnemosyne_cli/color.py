"""ANSI colours for a terminal. Imported only once colour is on (``output.wants_color``):
a find into a pipe never loads it.

Each style is an SGR parameter string. Text is painted after ``output.printable`` has
escaped its control characters, so the only escape sequences on the line are these.
"""

from __future__ import annotations

#: A page's path in find's lines: magenta, as ripgrep and grep colour file names.
PATH = "35"
#: A page's title in find's lines.
TITLE = "32"
#: A keyword in the context line of a page that only mentions it: bold red, as ripgrep
#: colours a match.
MATCH = "1;31"
#: A lint reason code.
CODE = "33"
#: The ``error:`` and ``warning:`` prefixes on stderr.
ERROR = "1;31"
WARNING = "1;33"

_RESET = "\x1b[0m"


def paint(text: str, style: str) -> str:
    """``text`` in ``style``, reset after it."""
    return f"\x1b[{style}m{text}{_RESET}"
