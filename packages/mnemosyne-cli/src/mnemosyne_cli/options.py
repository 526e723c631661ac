"""find's options, declared once, importing nothing but the core's default limit: argparse's registration (find's and
the shared ones in arguments.py), the console script's own parser of a plain find
(``console_script.find_arguments``) and the tests all read this table, so they cannot
drift apart.

A plain find is parsed without argparse: importing it and building the parser cost more
than the search of a small vault (docs/performance.md).
"""

from __future__ import annotations

from mnemosyne_core.results import DEFAULT_LIMIT

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable


#: --color's values; auto is the default.
COLOR_MODES = ("auto", "always", "never")
#: The spellings of help, which argparse adds to every parser.
HELP_FLAGS = ("-h", "--help")
#: Ends the options: every later word is a keyword.
END_OF_OPTIONS = "--"


def parse_limit(text: str) -> int | None:
    """--limit's value: 0 (no cap) or a positive whole number, in ASCII digits; None for
    anything else."""
    return int(text) if text.isascii() and text.isdigit() else None


class Option:
    """One option: its spellings, the attribute of the parsed arguments it sets, and its
    value, if it takes one (``metavar``): the values it may have (``choices``) or how to
    read one (``parse``: the value, or None when it is not one, which ``rule`` says).
    ``console_parses`` says whether the console script's own parser takes it, or leaves
    the call to argparse."""

    __slots__ = (
        "choices",
        "console_parses",
        "default",
        "dest",
        "help",
        "metavar",
        "names",
        "parse",
        "repeatable",
        "rule",
    )

    def __init__(
        self,
        names: tuple[str, ...],
        dest: str,
        help: str,  # noqa: A002  (argparse's name for it)
        *,
        metavar: str | None = None,
        default: object = None,
        choices: tuple[str, ...] | None = None,
        parse: Callable[[str], object | None] | None = None,
        rule: str = "",
        repeatable: bool = False,
        console_parses: bool = True,
    ):
        self.names = names
        self.dest = dest
        self.help = help
        self.metavar = metavar
        self.default = False if metavar is None else default
        self.choices = choices
        self.parse = parse
        self.rule = rule
        self.repeatable = repeatable
        self.console_parses = console_parses

    @property
    def takes_value(self) -> bool:
        return self.metavar is not None


CAT = Option(("--cat",), "cat", "print the one matching page verbatim; exit 2 unless exactly one matches")
JSON = Option(("--json",), "json", "print a JSON array of {path, title, constellation, type}")
MATCHED = Option(
    ("--matched",),
    "matched",
    'say where the pages matched: with --json, a "matched" key per item (title, path or text); '
    "otherwise one stderr line when no page's title or path holds every keyword",
)
PATHS = Option(("--paths",), "paths", "print only each page's path, one per line, like rg -l (no title)")
ABSOLUTE = Option(
    ("--absolute",),
    "absolute",
    "print absolute paths (the vault root with symlinks resolved) in plain, --paths and --json output",
)
NULL = Option(
    ("-0", "--null"),
    "null",
    "with --paths: end each path with a NUL byte instead of a newline, as it is on disk (for xargs -0)",
)
LIMIT = Option(
    ("--limit",),
    "limit",
    f"show at most N pages (default {DEFAULT_LIMIT}; 0 for all)",
    metavar="N",
    default=DEFAULT_LIMIT,
    parse=parse_limit,
    rule="0 (no cap) or a positive whole number",
)
VAULT = Option(
    ("--vault",),
    "vault",
    "the vault root (default: the dir of the nearest .mnemosyne.toml from the current dir up, "
    "else $AION_VAULT, else vault in ~/.config/mnemosyne/config.toml)",
    metavar="PATH",
)
#: Each --dir's check lives in the core (``config.check_dir_name``), whose message argparse
#: words: a call with --dir goes to argparse.
DIR = Option(
    ("--dir",),
    "dir",
    "search this dir (vault-relative, nested allowed, . for the root) instead of the configured ones, "
    "as deep as the layout says; repeatable",
    metavar="NAME",
    repeatable=True,
    console_parses=False,
)
COLOR = Option(
    ("--color",),
    "color",
    "colour on a terminal: auto (default; NO_COLOR turns it off, FORCE_COLOR on), always or never",
    metavar="WHEN",
    default="auto",
    choices=COLOR_MODES,
)
NO_SERVER = Option(
    ("--no-server",),
    "no_server",
    "ask no 'wiki serve': list the vault and check every page through the page cache (the answer is the same)",
)

NO_CACHE = Option(
    ("--no-cache",),
    "no_cache",
    "read every page from disk, without the page cache or a 'wiki serve' (the answer is the same)",
)

#: Every option of ``wiki find``, in --help's order.
FIND_OPTIONS = (CAT, JSON, MATCHED, PATHS, ABSOLUTE, NULL, LIMIT, VAULT, DIR, COLOR, NO_SERVER, NO_CACHE)
