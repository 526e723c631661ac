"""Every command's arguments, declared once: each command's ``Arguments`` class lists its
rows (``Option``), and everything that knows a command's arguments reads that class:
argparse's registration (arguments.py), the console script's own parser of a plain find,
recall or lint and of a completion's ``--list-dirs`` (``parse_words`` below), the help (help.py), the
completion scripts (completion.py), the mistakes' way out (app.py) and the test that holds
docs/commands.md's flag tables to them. The parsed arguments are an instance of the same
class, so a misspelt attribute fails mypy.

A plain find, recall or lint is parsed without argparse: importing it and building the parser cost more
than the search of a small vault (docs/performance.md). So this module imports nothing
(typing only for the type checker).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Generic, TypeVar, overload

    Value = TypeVar("Value")
    Parsed = TypeVar("Parsed", bound="Arguments")

    class _Typed(Generic[Value]):
        """For the type checker only: an Option is generic in the value it parses to."""

else:

    class _Typed:
        """At run time a row is not generic: ``Option[bool]`` appears in annotations only."""

        __slots__ = ()

        def __class_getitem__(cls, item: object) -> type:
            return cls

    Value = object


#: The spellings of help, which every command takes.
HELP_FLAGS = ("-h", "--help")
HELP_TEXT = "show this help message and exit"
#: Ends the options: every later word is a keyword.
END_OF_OPTIONS = "--"


class BadValue(ValueError):
    """An option's value that is not one: the message says what it must be, as argparse
    words it after ``argument --flag:``."""


class Option(_Typed[Value]):
    """One argument of a command: an option (its spellings in ``names``) or, with no names,
    a positional (``nargs`` None for one word, ``"?"`` for at most one, ``"+"`` for one or
    more). An option without ``metavar`` is a flag. ``read`` turns a value's text into the
    value or raises BadValue (its message is the error); ``choices`` are the values it may
    have, for the help and the completion scripts. ``complete`` names what a shell
    completes it with (completion.py); a ``hidden`` one is in neither help nor scripts.

    The attribute of the parsed arguments (``dest``) is the name the row has in its
    ``Arguments`` class; a row shared by several commands has the same name in each."""

    __slots__ = (
        "choices",
        "complete",
        "default",
        "dest",
        "help",
        "hidden",
        "metavar",
        "names",
        "nargs",
        "read",
        "repeatable",
        "required",
    )

    def __init__(
        self,
        names: tuple[str, ...],
        help: str,  # noqa: A002  (argparse's name for it)
        default: Value,
        *,
        metavar: str | None = None,
        nargs: str | None = None,
        choices: tuple[str, ...] | None = None,
        read: Callable[[str], Any] | None = None,
        repeatable: bool = False,
        required: bool = False,
        complete: str | None = None,
        hidden: bool = False,
    ):
        self.names = names
        self.dest = ""
        self.help = help
        self.default = default
        self.metavar = metavar
        self.nargs = nargs
        self.choices = choices
        self.read = read if read is not None or choices is None else one_of(choices)
        self.repeatable = repeatable
        self.required = required
        self.complete = complete
        self.hidden = hidden

    if TYPE_CHECKING:
        # Read on a class, a row; on parsed arguments, its value.
        @overload
        def __get__(self, instance: None, owner: type[Arguments]) -> Option[Value]: ...
        @overload
        def __get__(self, instance: Arguments, owner: type[Arguments]) -> Value: ...
        def __get__(self, instance: Arguments | None, owner: type[Arguments]) -> Option[Value] | Value:
            raise NotImplementedError

    @property
    def positional(self) -> bool:
        return not self.names

    @property
    def takes_value(self) -> bool:
        """Whether an option takes a value (the next word, or after ``=``)."""
        return self.metavar is not None and not self.positional

    def value(self, text: str) -> Any:
        """``text`` as this argument's value; BadValue when it is not one."""
        return text if self.read is None else self.read(text)

    def spelled(self) -> str:
        """How --help's usage line shows it: ``[--limit N]``, ``--constellation NAME``,
        ``KEYWORD [KEYWORD ...]``, ``[PATH]``."""
        if self.positional:
            assert self.metavar is not None
            return {"+": f"{self.metavar} [{self.metavar} ...]", "?": f"[{self.metavar}]"}.get(
                self.nargs or "", self.metavar
            )
        spelled = self.names[0] if self.metavar is None else f"{self.names[0]} {self.metavar}"
        return spelled if self.required else f"[{spelled}]"

    def invocation(self) -> str:
        """How --help's list of options names it: ``-0, --null``, ``--limit N``, ``KEYWORD``."""
        if self.positional:
            assert self.metavar is not None
            return self.metavar
        if self.metavar is None:
            return ", ".join(self.names)
        return ", ".join(f"{name} {self.metavar}" for name in self.names)


def looks_like_a_negative_number(word: str) -> bool:
    """Whether argparse takes ``word`` for a negative number (``-5``, ``-1.5``, ``-.5``), not
    a flag: its ``^-\\d+$|^-\\d*\\.\\d+$``, without importing re (start-up time). ``\\d`` is
    any decimal digit (``-٣``, not ``-²``); ``$`` also matches before a final newline."""
    if not word.startswith("-"):
        return False
    number = word[1:].removesuffix("\n")
    whole, dot, fraction = number.partition(".")
    if not dot:
        return whole.isdecimal()
    return fraction.isdecimal() and (whole == "" or whole.isdecimal())


def flag(*names: str, help: str, hidden: bool = False) -> Option[bool]:  # noqa: A002
    """An option that takes no value: True when given."""
    return Option(names, help, False, hidden=hidden)


def one_of(choices: tuple[str, ...]) -> Callable[[str], str]:
    """The reader of a value that must be one of ``choices``: a near miss gets a guess."""

    def read(text: str) -> str:
        if text in choices:
            return text
        import difflib  # only a mistyped value pays for it

        guesses = difflib.get_close_matches(text, list(choices), n=1)
        if guesses:
            raise BadValue(f"invalid choice: {text!r}: did you mean {guesses[0]!r}?")
        raise BadValue(f"invalid choice: {text!r} (choose from {', '.join(repr(choice) for choice in choices)})")

    return read


def read_limit(text: str) -> int:
    """--limit's value: 0 (no cap) or a positive whole number, in ASCII digits."""
    if text.isascii() and text.isdigit():
        return int(text)
    raise BadValue(f"must be 0 (no cap) or a positive whole number, not {text!r}")


def read_dir_name(text: str) -> str:
    """--dir: a vault-relative dir (``atlas``, ``docs/en``, ``.`` for the root). A bad one is a
    usage error (64), not a vault error. Trailing slashes are dropped: shell completion adds
    one to a dir name (``atlas/``)."""
    from mnemosyne_core.config import check_dir_name  # only a --dir pays for the import

    name = text.rstrip("/") or text
    reason = check_dir_name(name)
    if reason:
        raise BadValue(f"{text!r} {reason}; pass a vault-relative dir (docs/en; '.' is the vault root)")
    return name


class Arguments:
    """A command's arguments: a subclass lists its rows as class attributes, in --help's
    order (a base's rows follow the subclass's own); an instance holds the parsed values
    under the same names. Two are equal when their class and values are."""

    #: Every row of the class, set for each subclass.
    table: tuple[Option[Any], ...] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        rows: dict[str, Option[Any]] = {}
        for klass in cls.__mro__:
            for name, row in vars(klass).items():
                if isinstance(row, Option):
                    rows.setdefault(name, row)
        for name, row in rows.items():
            # Here, not in Option.__set_name__: Python 3.11 wraps whatever that raises in a
            # RuntimeError, a Ctrl-C during the import included, which then is no exit 130.
            if row.dest and row.dest != name:
                spelled = "/".join(row.names) or row.metavar
                raise TypeError(f"{spelled} is {row.dest!r} in one command and {name!r} in another")
            row.dest = name
        cls.table = tuple(rows.values())

    def __init__(self, **values: object):
        for row in self.table:
            setattr(self, row.dest, values.pop(row.dest, row.default))
        if values:
            raise TypeError(f"{type(self).__name__} has no argument {', '.join(sorted(values))}")

    @classmethod
    def option(cls, name: str) -> Option[Any] | None:
        """The row that ``name`` (``--json``, ``-0``) spells, if any."""
        return next((row for row in cls.table if name in row.names), None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Arguments) or type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list is

    def __repr__(self) -> str:
        values = ", ".join(f"{row.dest}={getattr(self, row.dest)!r}" for row in self.table)
        return f"{type(self).__name__}({values})"


class Command:
    """A command as its --help describes it: one line for its parent's list (``summary``),
    the description, the examples and the exit codes that apply (None: the general ones),
    a closing ``note``, and its ``arguments``."""

    __slots__ = ("arguments", "description", "examples", "exit_codes", "name", "note", "summary")

    def __init__(
        self,
        name: str,
        arguments: type[Arguments],
        *,
        summary: str,
        description: str,
        examples: Sequence[str],
        exit_codes: Sequence[tuple[int, str]] | None = None,
        note: str = "",
    ):
        self.name = name
        self.arguments = arguments
        self.summary = summary
        self.description = description
        self.examples = examples
        self.exit_codes = exit_codes
        self.note = note


def parse_words(arguments: type[Parsed], words: Sequence[str]) -> Parsed | None:
    """The arguments argparse would parse ``words`` (a command's words, after its name) to,
    for a command with at most one positional; None whenever the words are anything but a
    plain call (help, ``--``, a word starting with ``-`` that is no option of the command, a
    flag given twice, a value that is not one, a NUL), and then argparse decides, errors
    included. tests/test_console_script.py holds the two to the same answers."""
    positionals = [row for row in arguments.table if row.positional]
    if len(positionals) > 1:
        return None
    positional = positionals[0] if positionals else None
    parsed: dict[str, object] = {row.dest: row.default for row in arguments.table}
    taken: list[str] = []
    runs = 0
    seen: set[str] = set()
    after_positional = False
    position = 0
    while position < len(words):
        word = words[position]
        position += 1
        if "\0" in word:
            return None
        if not word.startswith("-"):
            # argparse takes one run of positional words; a second run is unrecognized.
            runs += 0 if after_positional else 1
            if runs > 1 or positional is None:
                return None
            taken.append(word)
            after_positional = True
            continue
        after_positional = False
        name, equals, text = word.partition("=")
        row = arguments.option(name)
        if row is None or (row.dest in seen and not row.repeatable):
            return None
        seen.add(row.dest)
        if not row.takes_value:
            if equals:
                return None
            parsed[row.dest] = True
            continue
        if not equals:
            if position == len(words):
                return None
            text = words[position]
            position += 1
        if text.startswith("-") or "\0" in text:
            return None
        try:
            value = row.value(text)
        except BadValue:
            return None
        if row.repeatable:
            parsed[row.dest] = [*(parsed[row.dest] or ()), value]  # type: ignore[misc]
        else:
            parsed[row.dest] = value
    if positional is not None:
        wanted = {"+": (1, len(taken)), "?": (0, 1), None: (1, 1)}[positional.nargs]
        if not wanted[0] <= len(taken) <= wanted[1]:
            return None
        try:
            values = [positional.value(word) for word in taken]
        except BadValue:
            return None
        if positional.nargs == "+":
            parsed[positional.dest] = values
        elif values:
            parsed[positional.dest] = values[0]
    return arguments(**parsed)


# The rows several commands share, defined once so they parse and read alike.

VAULT: Option[str | None] = Option(
    ("--vault",),
    "the vault root (default: the dir of the nearest .mnemosyne.toml from the current dir up, "
    "else $AION_VAULT, else vault in ~/.config/mnemosyne/config.toml)",
    None,
    metavar="PATH",
    complete="dir",
)
#: Each --dir's check lives in the core (``config.check_dir_name``).
DIR: Option[list[str] | None] = Option(
    ("--dir",),
    "search this dir (vault-relative, nested allowed, . for the root) instead of the configured ones, "
    "as deep as the layout says; repeatable",
    None,
    metavar="NAME",
    read=read_dir_name,
    repeatable=True,
    complete="vault-dirs",
)
#: --color's values; auto is the default.
COLOR_MODES = ("auto", "always", "never")
COLOR: Option[str] = Option(
    ("--color",),
    "colour on a terminal: auto (default; NO_COLOR turns it off, FORCE_COLOR on), always or never",
    "auto",
    metavar="WHEN",
    choices=COLOR_MODES,
)
NO_SERVER = flag(
    "--no-server",
    help="ask and start no 'wiki serve' (as MNEMOSYNE_NO_SERVER does): list the vault and check every page "
    "through its index (the answer is the same)",
)
NO_CACHE = flag(
    "--no-cache",
    help="read every page from disk, without the index or a 'wiki serve' (the answer is the same)",
)


def vault_error_code(error: Exception) -> int:
    """The exit code of a VaultError a command met: USAGE when the --dir given named no
    dir of the vault (``UnknownDirError``: the call is mistyped, the vault may be fine),
    else VAULT_ERROR."""
    from mnemosyne_contract import exit_status
    from mnemosyne_core.errors import UnknownDirError

    return exit_status.USAGE if isinstance(error, UnknownDirError) else exit_status.VAULT_ERROR


class PagesArguments(Arguments):
    """The arguments of the commands the index and a ``wiki serve`` answer (find,
    recall): where their pages come from."""

    no_server = NO_SERVER
    no_cache = NO_CACHE


def command_line(
    command: str, vault: str | None, dirs: Sequence[str] | None, *options: str, keywords: Sequence[str] = ()
) -> str:
    """The ``wiki <command>`` call a way-out message suggests, ready to paste: the options,
    the caller's own --vault and --dir (so it looks at the same vault and dirs), then the
    keywords, after ``--`` when one of them starts with '-'; each word quoted for the shell."""
    words = ["mnemosyne", "wiki", command, *options]
    if vault is not None:
        words += [VAULT.names[0], vault]
    for name in dirs or ():
        words += [DIR.names[0], name]
    if any(keyword.startswith("-") for keyword in keywords):
        words.append(END_OF_OPTIONS)
    return shell_line([*words, *keywords])


#: The characters a word may hold and stay unquoted: ``shlex.quote``'s, which are
#: ``[\w@%+=:,./-]`` with ASCII ``\w``.
_SHELL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def shell_line(words: Sequence[str]) -> str:
    """``shlex.join(words)``, without shlex: its import compiles a regex (re and enum),
    which a recall pays on every page it cuts short, to print the way to read it whole."""
    quoted = []
    for word in words:
        if word and all(char in _SHELL_SAFE for char in word):
            quoted.append(word)
        else:
            quoted.append("'" + word.replace("'", "'\"'\"'") + "'")
    return " ".join(quoted)
