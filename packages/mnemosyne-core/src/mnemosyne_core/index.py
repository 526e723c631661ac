"""The vault's index: one SQLite database that holds what find and recall need of each page,
behind one small interface, ``NoteIndex`` (as zk keeps its notebook).

Schema (``FORMAT`` is SQLite's ``user_version``; any other is rebuilt, never read):

- ``pages``: one row a page: its vault-relative path, the stat it had when read (size,
  mtime_ns, ctime_ns, inode, device) and git's racy flag, a digest of its bytes (``digest``:
  a page read again with the same bytes gets only its stat written), whether it has other hard links
  and whether it reads as text, the fields find prints (title, constellation, type), its
  names as judge takes them (folded title and aliases), recall's fields (``recall``), and
  what lint needs of it, made when it is read: the title
  it gives itself (``lint_title``, NULL for none) and that folded (``lint_folded``, what
  duplicate titles are grouped by), the
  digests copies are told by (``whole``, ``body``: ``pagefields.content_digests``), and
  whether recall sees no title, slug or tag in it (``recall_unseen``).
- ``page_findings``: one row a finding of lint's about a page alone (``page_lint.check_page``:
  its path, code and message, and whether both are UTF-8, ``utf8``: SQLite gives those
  back as text itself), clustered by path (its primary key), so that a page written again
  drops its rows in one range. A message is kept in its row, though a vault without
  frontmatter under the default layout repeats one for every page (13.7 MB at 100,000
  pages): under a layout that takes titles from headings it names each page's heading, so
  a table of distinct messages would hold nearly every one twice (its row and its unique
  index), and double the table.
- ``recall_terms``: one row a folded title, slug or tag of a page, the strings a recall
  term is looked for in (as bytes: ``instr`` on them is ``in`` on the strings).
- ``copy_digests``: one row a distinct digest of a page (its ``whole`` and ``body``): two
  pages may be copies only when two rows share a digest, which its key, digest first,
  tells at once. A page's rows are found by the digests its ``pages`` row holds, so the
  table needs no index by page.
- ``text_rows``: one row a page (its id): ``names`` (the folded title, path and aliases, a
  newline between them), ``body`` (the folded text), and where each of the body's first
  lines ends (``end1``...: ``_line_ends``), ahead of the text so that no query reads past
  it for them: a mention on those lines gets its depth in SQL, with no Python call. Text
  is folded by find's own rule before it goes in, so no SQLite folding is ever used.
  ``texts`` is its FTS5 table
  (external content), with the trigram tokenizer (``case_sensitive 1``, ``detail=none``,
  ``columnsize=0``: no query ranks by a column's size, so none is kept):
  a query its trigrams pick rows for reads them through ``texts``; one that reads every
  row reads ``text_rows`` itself, at half the cost of FTS5's full scan.
- ``names``: one row a name of a page (its folded path, title, stem, each alias: ``kind``;
  a name it has twice, once, as its lowest kind), with its length and a *marked* copy
  (``marked``: a noncharacter before each word start), and
  ``name_grams``, the trigrams of the names (external content: ``detail=none`` refuses a
  column filter on ``texts``). Rule 8's first group is ranked from these alone.
- ``words``: the vocabulary a miss's "did you mean" looks in (``suggest``): one row a word
  (``fold.words_of``) of the folded names or text of a page written since the last
  rebuild, with its length and its characters reversed (``drow``, indexed: a suffix is a
  range of it), and ``word_grams``, the trigrams of the words. Never pruned: a word no page
  holds any more stays until a rebuild, and the suggestion checks the pages for each word it
  names, so the table only has to hold every word of every page.
- ``dirs``: one row a listed dir whose pages were all unchanged and none racy when a call
  last compared them (``freshness.fresh_listed``): its vault-relative path (``dir``, as
  ``stored_text``), a digest of its page names in listing order with each page's stat key
  (``digest``), the ids of those pages (``ids``, marshalled) and how many of them do not read
  as text (``not_text``). A call whose own names and stat keys of a dir give the same digest
  takes every page of it as fresh without reading one of its rows. Any change to a row's
  path, stat, racy flag or text-ness, or a row added or dropped, empties the table (the
  ``pages_*`` triggers): a digest is only ever kept beside the very rows it was made from,
  whichever writer (a call, a builder, a served call) changed them.
- ``meta``: the code that wrote it (``code``), whether a whole build is in it
  (``complete``), the title rule it was built under (``heading_titles``), a ``wiki
  serve``'s token and what a served call reuses of the last listing besides its dirs
  (``served``, ``freshness.keep_listing``), what the vault's config and ignore files
  decided, keyed by their stat, so that a call whose files are unchanged parses neither
  (``rules``, ``vault.KeptRules``), when it was last written (``written_ns``), and
  how many pages it holds (``pages``), how many of them are not text (``not_text``) and
  how many recall sees no title, slug or tag in (``recall_unseen``): triggers on
  ``pages`` keep them in the transaction of each write, so no call counts; and
  how many ``copy_digests`` rows repeat a digest an earlier row has (``shared_digests``:
  the rows less the distinct digests, kept by triggers on that table). A rowid table, its
  names in an index of their own: in a ``WITHOUT ROWID`` table a lookup that compares its
  key with the ``rules`` row reads that row's whole value (1.7 MB at 100,000 pages), and
  every served call looked ``served`` up past it (2.7 ms).
- ``served_dirs``: each dir the last listing a server's token was kept with listed, with
  the (device, inode) a served call checks and the (mtime_ns, ctime_ns) a served miss
  checks. Which pages that listing holds is the ``pages`` table itself.

A query is rule 8 in SQL (``NoteIndex.top``), as zk's DAO builds one statement: the
trigrams of every keyword of three characters or more pick the rows (an explicit AND:
FTS5's implicit one drops a phrase of under three characters), ``instr()`` checks each
keyword whole, and ORDER BY ... LIMIT returns the pages find prints, so Python builds only
those rows. ``find.judge`` is the reference the statements are tested against, and what
``--no-cache`` runs. No ``LIKE`` anywhere (it crashed 3.40.1 on two LIKEs in one WHERE,
and its folding is not ``casefold``).

Text that SQLite's C functions cannot take as it is (a NUL, a lone surrogate in a file
name) is stored with ``UNSTORABLE`` in its place; a keyword that holds it, a newline (the
names' separator) or a NUL is never asked here (``answerable``): the scan answers it.
"""

from __future__ import annotations

# The C module itself: sqlite3's Python layer imports datetime (its default date adapters),
# milliseconds of every find's start-up, for adapters the index never uses.
import _sqlite3 as sqlite3
import contextlib
import marshal
import os
import stat
import sys
import time
from itertools import zip_longest

from mnemosyne_core.config import UNLISTED_PAGES, stem_of
from mnemosyne_core.fold import fold, holds_whole, words_of
from mnemosyne_core.results import PATH, TEXT, TITLE

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from mnemosyne_core.page import Page, StatKey
    from mnemosyne_core.page_recall import RecallFields

#: Bumped whenever the schema or what a row holds changes: an index of another format is
#: rebuilt, never read.
FORMAT = 24
#: How long a call waits for another's write before it answers by the scan instead: a
#: reader never waits at all (WAL), a writer at most this long.
BUSY_TIMEOUT_MS = 500
#: Stands where a stored text held what SQLite's C functions stop at (NUL) or cannot encode
#: (a lone surrogate): a noncharacter, so no page's own text is taken for it by a keyword
#: that ``answerable`` lets through.
UNSTORABLE = "\ufffe"
#: Between the names in the ``names`` column: a keyword without it matches one name or none.
NAMES_SEPARATOR = "\n"
#: At most this many trigrams of the keywords go into one MATCH: they only pick candidates
#: (``instr`` checks each keyword whole), and a 4,000-character keyword's every trigram
#: would cost more than it saves.
MAX_TRIGRAMS = 48
#: About this many of them, and one of each keyword at least, are asked how many pages hold
#: them (``_text_rows_picked``).
_TRIGRAMS_ASKED = 4

#: How many of a body's first lines ``text_rows`` keeps the ends of (``end1``...): a keyword
#: first met on one of them is given its depth by SQL alone (``_depth_of``).
_LINES_KEPT = 8
_END_COLUMNS = ", ".join(f"end{line}" for line in range(1, _LINES_KEPT + 1))

_SCHEMA = f"""
CREATE TABLE meta(name TEXT PRIMARY KEY, value);
CREATE TABLE pages(
    id INTEGER PRIMARY KEY,
    path BLOB NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    device INTEGER NOT NULL,
    racy INTEGER NOT NULL,
    volatile INTEGER NOT NULL,
    not_text INTEGER NOT NULL,
    title BLOB NOT NULL,
    aliases BLOB NOT NULL,
    constellation BLOB,
    type BLOB,
    folded_title BLOB NOT NULL,
    folded_aliases BLOB NOT NULL,
    recall BLOB,
    digest BLOB,
    lint_title BLOB,
    lint_folded BLOB,
    whole BLOB,
    body BLOB,
    recall_unseen INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE recall_terms(page_id INTEGER NOT NULL, term BLOB NOT NULL);
CREATE INDEX recall_terms_of_page ON recall_terms(page_id);
CREATE TABLE copy_digests(
    digest BLOB NOT NULL, page_id INTEGER NOT NULL, PRIMARY KEY (digest, page_id)
) WITHOUT ROWID;
CREATE TABLE page_findings(
    path BLOB NOT NULL, code TEXT NOT NULL, message BLOB NOT NULL, page_id INTEGER NOT NULL, utf8 INTEGER NOT NULL,
    PRIMARY KEY (path, code, message)
) WITHOUT ROWID;
CREATE INDEX page_findings_not_utf8 ON page_findings(page_id) WHERE NOT utf8;
CREATE INDEX pages_lint_folded ON pages(lint_folded) WHERE lint_folded IS NOT NULL;
CREATE TABLE text_rows(
    id INTEGER PRIMARY KEY, {_END_COLUMNS.replace(",", " INTEGER NOT NULL,")} INTEGER NOT NULL,
    names TEXT NOT NULL, body TEXT NOT NULL
);
CREATE VIRTUAL TABLE texts USING fts5(
    names, body, content='text_rows', content_rowid='id', tokenize='trigram case_sensitive 1', detail=none,
    columnsize=0
);
CREATE TABLE names(
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    length INTEGER NOT NULL,
    name TEXT NOT NULL,
    marked TEXT NOT NULL
);
CREATE INDEX names_of_page ON names(page_id, kind);
CREATE INDEX names_as_paths ON names(name) WHERE kind = 3;
CREATE VIRTUAL TABLE name_grams USING fts5(
    name, content='names', content_rowid='id', tokenize='trigram case_sensitive 1', detail=none,
    columnsize=0
);
CREATE INDEX pages_watched ON pages(id) WHERE racy OR volatile;
CREATE TABLE words(id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE, length INTEGER NOT NULL, drow TEXT NOT NULL);
CREATE INDEX words_by_end ON words(drow);
CREATE VIRTUAL TABLE word_grams USING fts5(
    word, content='words', content_rowid='id', tokenize='trigram case_sensitive 1', detail=none,
    columnsize=0
);
CREATE TABLE served_dirs(
    dir_rel BLOB PRIMARY KEY,
    dir_path BLOB NOT NULL,
    device INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO meta(name, value) VALUES ('pages', 0), ('not_text', 0), ('recall_unseen', 0), ('shared_digests', 0);
CREATE TRIGGER pages_counted_in AFTER INSERT ON pages BEGIN
    UPDATE meta SET value = value + 1 WHERE name = 'pages';
    UPDATE meta SET value = value + NEW.not_text WHERE name = 'not_text';
    UPDATE meta SET value = value + NEW.recall_unseen WHERE name = 'recall_unseen';
END;
CREATE TRIGGER pages_counted_out AFTER DELETE ON pages BEGIN
    UPDATE meta SET value = value - 1 WHERE name = 'pages';
    UPDATE meta SET value = value - OLD.not_text WHERE name = 'not_text';
    UPDATE meta SET value = value - OLD.recall_unseen WHERE name = 'recall_unseen';
END;
CREATE TRIGGER pages_not_text_counted AFTER UPDATE OF not_text ON pages WHEN NEW.not_text != OLD.not_text BEGIN
    UPDATE meta SET value = value + NEW.not_text - OLD.not_text WHERE name = 'not_text';
END;
CREATE TRIGGER pages_unseen_counted AFTER UPDATE OF recall_unseen ON pages
WHEN NEW.recall_unseen != OLD.recall_unseen BEGIN
    UPDATE meta SET value = value + NEW.recall_unseen - OLD.recall_unseen WHERE name = 'recall_unseen';
END;
CREATE TRIGGER copy_digests_counted_in AFTER INSERT ON copy_digests
WHEN EXISTS (SELECT 1 FROM copy_digests WHERE digest = NEW.digest AND page_id != NEW.page_id) BEGIN
    UPDATE meta SET value = value + 1 WHERE name = 'shared_digests';
END;
CREATE TRIGGER copy_digests_counted_out AFTER DELETE ON copy_digests
WHEN EXISTS (SELECT 1 FROM copy_digests WHERE digest = OLD.digest) BEGIN
    UPDATE meta SET value = value - 1 WHERE name = 'shared_digests';
END;
CREATE TABLE dirs(
    dir BLOB PRIMARY KEY, digest BLOB NOT NULL, ids BLOB NOT NULL, not_text INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER pages_added AFTER INSERT ON pages BEGIN DELETE FROM dirs; END;
CREATE TRIGGER pages_dropped AFTER DELETE ON pages BEGIN DELETE FROM dirs; END;
CREATE TRIGGER pages_restated AFTER UPDATE OF path, size, mtime_ns, ctime_ns, inode, device, racy, not_text ON pages
BEGIN DELETE FROM dirs; END;
PRAGMA user_version = {FORMAT};
"""


#: The pages a watch cannot vouch for: read through their partial index (``pages_watched``),
#: so a served call touches those rows alone.
WATCHED_SQL = "SELECT path, id, size, mtime_ns, ctime_ns, inode, device, racy FROM pages WHERE racy OR volatile"
#: A page's row as a call that listed the vault checks it (``NoteIndex.stat_rows``).
_STAT_ROWS = "SELECT path, id, size, mtime_ns, ctime_ns, inode, device, racy, not_text FROM pages"


def code_key() -> str:
    """What decides what a row holds besides the page: the index's format, the Python (its
    Unicode tables fold), the modules that read pages, by their files' stat, PyYAML, which
    parses every frontmatter the index keeps, and pathspec, whose gitignore matching the
    kept ignore rules' answers come from (``installed_identity``)."""
    parts: list[object] = [FORMAT, sys.version]
    package = os.path.dirname(__file__)
    for module in READING_MODULES:
        try:
            info = os.stat(os.path.join(package, module))
            parts.append((info.st_size, info.st_mtime_ns))
        except OSError:
            parts.append(None)
    parts.append(installed_identity("yaml", "_yaml"))
    parts.append(installed_identity("pathspec"))
    return repr(parts)


def installed_identity(package: str, native_prefix: str = "") -> object:
    """The ``package`` this process would import, without importing it: where it is, its
    ``__init__.py``'s stat, and (``native_prefix``) its compiled modules' files. An upgrade
    can read the same file otherwise: PyYAML's C loader and its pure one read some
    documents differently, and pathspec has changed how a gitignore pattern matches. None
    when there is none."""
    # sys.path in order, as the import would look (importlib's finder costs a find's start-up
    # most of a millisecond; a package on a path entry is what an install makes).
    for entry in sys.path:
        origin = os.path.join(entry or ".", package, "__init__.py")
        try:
            info = os.stat(origin)
            native = (
                sorted(name for name in os.listdir(os.path.dirname(origin)) if name.startswith(native_prefix))
                if native_prefix
                else []
            )
        except OSError:
            continue
        return (origin, info.st_size, info.st_mtime_ns, native)
    return None


#: The modules whose code decides what a row holds: a change to any (a new install, an
#: edit), as to PyYAML or pathspec (``installed_identity``), makes every index written before it one that is
#: rebuilt, never read.
READING_MODULES = (
    "config.py",
    "diagnostics.py",
    "find.py",
    "fold.py",
    "frontmatter.py",
    "index.py",
    "lint.py",
    "page.py",
    "page_lint.py",
    "page_recall.py",
    "pagefields.py",
    "recall.py",
    "vault.py",
    "versions.py",
)


def uri_path(path: str) -> str:
    """``path`` as the path of an SQLite URI: ``%``, ``?`` and ``#`` escaped (urllib's import
    costs a find's start-up more than these three replacements)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


class IndexUnusable(Exception):
    """The index cannot answer this call (missing, of another format or code, incomplete,
    corrupt, locked past the busy timeout, on a read-only or full disk): the scan answers.
    ``fault``: what kind of cause it is (``fault_of``)."""

    def __init__(self, message: str, fault: str = "other") -> None:
        super().__init__(message)
        self.fault = fault


#: The faults that say what lies at the index's path is no index of ours to keep: it is
#: replaced by a new one. Every other fault (a full disk, an I/O error, a lock, a read-only
#: disk) may pass, and the index that is there may be whole: it is kept.
REPLACEABLE_FAULTS = frozenset({"corrupt", "not a database", "not ours"})

#: SQLite's primary result codes (the low byte of an extended one), by the fault each is.
_FAULT_BY_CODE = {
    3: "unwritable",  # SQLITE_PERM
    5: "busy",  # SQLITE_BUSY
    6: "busy",  # SQLITE_LOCKED
    8: "unwritable",  # SQLITE_READONLY
    10: "io",  # SQLITE_IOERR
    11: "corrupt",  # SQLITE_CORRUPT
    13: "full",  # SQLITE_FULL
    14: "unwritable",  # SQLITE_CANTOPEN
    26: "not a database",  # SQLITE_NOTADB
}
#: The same by SQLite's message, for an error that carries no code (raised by hand, or
#: by an older Python's module).
_FAULT_BY_MESSAGE = (
    ("malformed", "corrupt"),
    ("not a database", "not a database"),
    ("disk is full", "full"),
    ("disk i/o error", "io"),
    ("locked", "busy"),
    ("readonly", "unwritable"),
    ("unable to open", "unwritable"),
)


def fault_of(error: BaseException) -> str:
    """What kind of fault ``error`` is: ``corrupt`` (a damaged page of a database), ``not a
    database``, ``not ours`` (not a private regular file of ours), ``full`` (no space),
    ``io``, ``busy`` (locked), ``unwritable`` (a read-only disk, no permission), ``missing``
    or ``other``."""
    import errno

    if isinstance(error, IndexUnusable):
        return error.fault
    if isinstance(error, OSError):
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "unwritable"
        return "io" if error.errno == errno.EIO else "other"
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in _FAULT_BY_CODE:
            return _FAULT_BY_CODE[code & 0xFF]
        message = str(error).lower()
        for words, fault in _FAULT_BY_MESSAGE:
            if words in message:
                return fault
    return "other"


def stored_text(text: str) -> bytes:
    """Text as the index stores it, a vault-relative path too (``NoteIndex.stat_rows``' keys)."""
    # File names may hold lone surrogates (undecodable bytes): kept exactly, as bytes.
    return text.encode("utf-8", "surrogatepass")


def _text(blob: bytes) -> str:
    return blob.decode("utf-8", "surrogatepass")


def _utf8(text: str) -> bool:
    """Whether ``stored_text`` of ``text`` is UTF-8 (no lone surrogate): SQLite can give it
    back as text itself."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable(text: str) -> str:
    """``text`` as SQLite's text functions can take it: NULs and lone surrogates stand as
    ``UNSTORABLE``, every other character as it is (so lines and columns keep their place)."""
    if "\0" in text:
        text = text.replace("\0", UNSTORABLE)
    if not _utf8(text):
        text = "".join(UNSTORABLE if "\ud800" <= char <= "\udfff" else char for char in text)
    return text


def answerable(folded_keywords: Sequence[str]) -> bool:
    """Whether the index answers these keywords exactly as the scan does: none holds a NUL,
    a newline, ``UNSTORABLE``, ``WORD_START`` or a lone surrogate (the scan answers those)."""
    return all(
        "\0" not in keyword
        and NAMES_SEPARATOR not in keyword
        and UNSTORABLE not in keyword
        and WORD_START not in keyword
        and storable(keyword) == keyword
        for keyword in folded_keywords
    )


def trigrams(folded_keywords: Sequence[str]) -> list[str]:
    """The distinct trigrams (in characters, as the trigram tokenizer cuts them) of the
    keywords of three characters or more, at most ``MAX_TRIGRAMS``, spread over each."""
    grams: dict[str, None] = {}
    for keyword in folded_keywords:
        every = [keyword[at : at + 3] for at in range(len(keyword) - 2)]
        step = max(1, len(every) // 16)
        grams.update(dict.fromkeys(every[::step]))
    return list(grams)[:MAX_TRIGRAMS]


def match_expression(grams: Sequence[str]) -> str:
    """The FTS5 query of every trigram, each a quoted string (so ``*``, ``:``, ``^``, ``(``,
    ``-``, NEAR, AND, OR and NOT are text), joined by an explicit AND."""
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)


#: Marks, in ``names.marked``, the start of every word of a name: a keyword starts a word in
#: a name exactly when its own marked form occurs in the marked name (``marked``). A
#: noncharacter, like ``UNSTORABLE``, so no page's text is taken for it.
WORD_START = "\uffff"


def marked(folded: str) -> str:
    """``folded`` with ``WORD_START`` before each character that starts a word (``find.starts_word``:
    the first character, and each one after a character that is not ``str.isalnum``). A
    keyword starts a word somewhere in a name iff ``marked(keyword) in marked(name)``: the
    marks inside the keyword depend on its own characters alone, and the one before it says
    that the name has a word start there. (No regex: a warm find imports no ``re``.)"""
    parts = []
    starts = True
    for char in folded.replace(WORD_START, UNSTORABLE):
        if starts:
            parts.append(WORD_START)
        parts.append(char)
        starts = not char.isalnum()
    return "".join(parts)


#: A name's kind in ``names.kind``: rule 8's key 4 takes the title, then the file name's
#: stem, then an alias of the same length (a name's kind is that key), and the path only
#: with the title. (``names_as_paths`` names PATH_NAME's value.)
TITLE_NAME, STEM_NAME, ALIAS_NAME, PATH_NAME = 0, 1, 2, 3
#: Where each part of a first-group page's order lies in its packed key (``Ranked``): no
#: keyword is its whole path, a keyword starts no word, then the title and path together
#: hold them (no name alone), then the name's length, then its kind (two bits).
#: Lengths stay far below 2**58.
_NOT_ITS_PATH, _NO_WORD_START, _TITLE_AND_PATH, _LENGTH = 62, 61, 60, 2
#: A mention depth packed as one integer: the line above, the column below.
_LINE = 32


def _line_ends(body: str) -> list[int]:
    """Where each of the first ``_LINES_KEPT`` lines of ``body`` ends: its newline's place
    (1-based, in characters, as ``instr`` counts), or just past the body's end for a line
    it does not have, so that every place in the body is before it."""
    ends = []
    at = -1
    for _ in range(_LINES_KEPT):
        at = body.find("\n", at + 1)
        if at < 0:
            break
        ends.append(at + 1)
    return ends + [len(body) + 1] * (_LINES_KEPT - len(ends))


def _depth_of(place: str, *, line_ends: bool) -> str:
    """SQL for ``depth()`` of the text before ``place`` (an ``instr`` of ``body``): on one
    of the first lines, from where they end (``line_ends``: the row's ``end1``... are at
    hand) with no Python call (a word on every page of 100,000 cost 195 ms of calls); by
    ``depth()`` past them, or without them, from the body the rows (``held``) carry: each
    keyword's ``instr`` after the first needs it anyway."""
    # As bytes: decoding the text before a mention to a str for Python cost more than
    # reading it (a docs site's changelogs mention `install` a megabyte down).
    python = f"depth(CAST(substr(body, 1, {place} - 1) AS BLOB))"
    if not line_ends:
        return python
    starts = ["0", *(f"end{line}" for line in range(1, _LINES_KEPT))]
    lines = " ".join(
        f"WHEN {place} <= end{line + 1} THEN ({line} << {_LINE}) | ({place} - 1 - {start})"
        for line, start in enumerate(starts)
    )
    return f"CASE {lines} ELSE {python} END"


def _mention_depth(before: bytes) -> int:
    """The (line, column) just past ``before``, the UTF-8 of the text before a keyword, packed
    (``_LINE``): SQLite's ``depth()``. Lines split at ``\n`` as ``fold.position`` splits them;
    the column counts characters, of the last line alone."""
    line_start = before.rfind(b"\n") + 1
    return (before.count(b"\n") << _LINE) | len(before[line_start:].decode())


#: The columns of a page's row ``NoteIndex.write`` fills, in ``_page_values``' order.
_PAGE_COLUMNS = (
    "size", "mtime_ns", "ctime_ns", "inode", "device", "racy", "volatile", "not_text", "title", "aliases",
    "constellation", "type", "folded_title", "folded_aliases", "recall", "digest", "lint_title", "lint_folded",
    "whole", "body", "recall_unseen",
)  # fmt: skip


#: The stat columns of a page's row: all a page read again with the same bytes changes.
_RESTATE_PAGE = f"UPDATE pages SET {', '.join(f'{column} = ?' for column in _PAGE_COLUMNS[:7])} WHERE id = ?"
_INSERT_PAGE = (
    f"INSERT INTO pages({', '.join(_PAGE_COLUMNS)}, path) VALUES ({', '.join('?' * (len(_PAGE_COLUMNS) + 1))})"
)
_UPDATE_PAGE = f"UPDATE pages SET {', '.join(f'{column} = ?' for column in _PAGE_COLUMNS)} WHERE id = ?"


def _page_values(page: Page) -> tuple[object, ...]:
    """A page's values for ``_PAGE_COLUMNS``."""
    return (
        *page.key,
        page.racy,
        page.volatile,
        page.not_text,
        stored_text(page.title),
        marshal.dumps(page.aliases),
        None if page.constellation is None else stored_text(page.constellation),
        None if page.type is None else stored_text(page.type),
        stored_text(page.folded_title),
        marshal.dumps(page.folded_aliases),
        _recall_blob(page.recall),
        page.digest,
        None if page.lint_title is None else stored_text(page.lint_title),
        None if page.lint_title is None else stored_text(fold(page.lint_title)),
        *page.digests,
        # What recall looks a term up in: none when it sees no title, slug or tag.
        page.recall is None or not page.recall.folded,
    )


def _names(page: Page) -> list[tuple[int, str]]:
    """(kind, name as stored) of each of a page's ``names`` rows: its path, and each other
    name once, as its lowest kind. Rows of one name differ in their key by the kind alone,
    so the lowest is the one ``min`` takes: a stem that is the title (every page without
    one of its own) was a third of the table at 100,000 pages, and no key."""
    stem = stem_of(page.folded_path.rpartition("/")[2])
    kinds: dict[str, int] = {}
    for kind, name in ((TITLE_NAME, page.folded_title), (STEM_NAME, stem)):
        kinds.setdefault(storable(name), kind)
    for alias in page.folded_aliases:
        kinds.setdefault(storable(alias), ALIAS_NAME)
    return [(PATH_NAME, storable(page.folded_path)), *((kind, name) for name, kind in kinds.items())]


def _max_id(connection: sqlite3.Connection, table: str) -> int:
    """The highest id in ``table``: a row added after it gets a higher one (a rowid is max
    + 1), so the rows above it are the ones just added."""
    return int(connection.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0])


class _FtsWrites:
    """The FTS5 rows one write drops and adds, written together at its end (``write``)."""

    __slots__ = ("names_above", "names_gone", "texts", "texts_gone", "words")

    def __init__(self) -> None:
        self.texts_gone: list[tuple[int]] = []
        self.names_gone: list[tuple[int, str]] = []
        self.texts: list[tuple[int, str, str]] = []
        #: The ``names`` rows above this id were just added: ``name_grams`` is told of them.
        self.names_above: int | None = None
        #: The words of the pages written (``fold.words_of``), each once a write.
        self.words: set[str] = set()

    def write(self, connection: sqlite3.Connection, known_words: set[str]) -> None:
        """Write the rows; ``known_words``, the words this connection already put in
        ``words``, grows by the new ones: a build writes a batch at a time, and most of a
        batch's words were in an earlier one (asking SQLite again for each cost a 100k build
        a third more time)."""
        new_words = self.words - known_words
        if new_words:
            # Those rows are the words the trigram table is told of, one statement for them all.
            before = _max_id(connection, "words")
            connection.executemany(
                "INSERT OR IGNORE INTO words(word, length, drow) VALUES (?, ?, ?)",
                ((word, len(word), word[::-1]) for word in new_words),
            )
            connection.execute("INSERT INTO word_grams(rowid, word) SELECT id, word FROM words WHERE id > ?", (before,))
            known_words |= new_words
        # texts and name_grams keep no copy of what they index (external content): each is
        # told the old values, before the rows holding them go.
        connection.executemany(
            "INSERT INTO texts(texts, rowid, names, body) SELECT 'delete', id, names, body FROM text_rows WHERE id = ?",
            self.texts_gone,
        )
        connection.executemany("DELETE FROM text_rows WHERE id = ?", self.texts_gone)
        connection.executemany(
            "INSERT INTO name_grams(name_grams, rowid, name) VALUES ('delete', ?, ?)", self.names_gone
        )
        connection.executemany(
            f"INSERT INTO text_rows(id, {_END_COLUMNS}, names, body) VALUES (?{', ?' * _LINES_KEPT}, ?, ?)",
            ((page_id, *_line_ends(body), names, body) for page_id, names, body in self.texts),
        )
        connection.executemany("INSERT INTO texts(rowid, names, body) VALUES (?, ?, ?)", self.texts)
        if self.names_above is not None:
            connection.execute(
                "INSERT INTO name_grams(rowid, name) SELECT id, name FROM names WHERE id > ?", (self.names_above,)
            )


class Ranked:
    """What ``NoteIndex.top`` answers: the shown rows in rule 8's order, how many pages
    match, how many of them are named (the first group), and (on a miss) how many pages
    hold each keyword."""

    __slots__ = ("counts", "exact", "named", "rows", "total")

    def __init__(self) -> None:
        #: (path, title, constellation, type, where it matched: ``results.TITLE``/``PATH``/``TEXT``).
        self.rows: list[tuple[str, str, str | None, str | None, str]] = []
        self.total = 0
        self.named = 0
        #: How many matching pages a keyword is the whole path of (they come first).
        self.exact = 0
        #: Per folded keyword, the pages holding it; filled on a miss only.
        self.counts: list[int] = []


class NoteIndex:
    """The index of one vault for one user and set of rights (``cache.index_path``)."""

    def __init__(self, connection: sqlite3.Connection, path: str) -> None:
        self.connection = connection
        self.path = path
        # Mention depth past a page's first lines (``_depth_of``) in one Python call a row:
        # plain SQL costs column × prefix length.
        connection.create_function("depth", 1, _mention_depth, deterministic=True)
        #: Whether this connection made its view of the trigrams' doclists (``_pages_holding``).
        self._vocabulary = False
        #: The scope the last ``top`` searched, as SQL on ``texts.rowid`` (``temp.scope_ids``):
        #: a miss's suggestions count the same pages.
        self._within = ""
        #: The words this connection put in ``words`` or found there in its transaction
        #: (``_FtsWrites.write``); forgotten when the transaction ends or the tables are
        #: made anew, since a rollback or a failed commit may have dropped them.
        self._known_words: set[str] = set()

    # --- opening ---

    @classmethod
    def open(
        cls, path: str, *, create: bool = False, read_only: bool = False, page_size: int | None = None
    ) -> NoteIndex:
        """The index at ``path``, made empty if ``create`` and there is none; IndexUnusable
        when there is none, or it is not ours (a symlink, another owner, open to others).
        ``read_only``: opened for reading alone (``wiki info``), nothing written, not even
        the journal mode. ``page_size``: SQLite's page size, when the file is empty yet."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            if not create:
                raise IndexUnusable("no index yet", "missing") from None
            # Made 0600 before SQLite opens it: it never exists with wider rights.
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
            except FileExistsError:
                pass
            except OSError as error:
                raise IndexUnusable(f"cannot make {path}: {error.strerror}", fault_of(error)) from None
            info = os.lstat(path)
        except OSError as error:
            raise IndexUnusable(f"cannot use {path}: {error.strerror}", fault_of(error)) from None
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise IndexUnusable(f"{path} is not a private file of ours", "not ours")
        try:
            # mode=rw: SQLite opens the file checked above and never makes one with the umask's rights.
            uri = "file:" + uri_path(path) + ("?mode=ro" if read_only else "?mode=rw")
            connection = sqlite3.connect(uri, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, uri=True)
        except sqlite3.Error as error:
            raise IndexUnusable(str(error), fault_of(error)) from None
        index = cls(connection, path)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if read_only:
                return index
            if page_size is not None and info.st_size == 0:
                # Before the journal mode: the first page written fixes the size for good.
                connection.execute(f"PRAGMA page_size = {int(page_size)}")
            if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as error:
            index.close()
            raise IndexUnusable(str(error), fault_of(error)) from None
        return index

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> NoteIndex:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def format(self) -> int:
        return int(self.connection.execute("PRAGMA user_version").fetchone()[0])

    def meta(self, name: str) -> object:
        """A value of the ``meta`` table (None: unset, or no schema yet)."""
        if self.format() != FORMAT:
            return None
        row = self.connection.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def usable(self, code: str) -> bool:
        """Whether a whole build by this code is in the index, in a file as long as its
        header says: only then is it read."""
        return (
            self.format() == FORMAT
            and self.meta("code") == code
            and self.meta("complete") == 1
            and not self._cut_short()
        )

    def _cut_short(self) -> bool:
        """Whether the file ends before its last page: a truncated index whose lost pages no
        query happens to read would answer as if whole. (With a write-ahead log the newest
        pages may lie there instead, and the file is rightly shorter.)"""
        try:
            if os.stat(self.path + "-wal").st_size > 0:
                return False
        except OSError:
            pass
        pages = self.connection.execute("PRAGMA page_count").fetchone()[0]
        return bool(os.stat(self.path).st_size < pages * self.page_size())

    def page_size(self) -> int:
        return int(self.connection.execute("PRAGMA page_size").fetchone()[0])

    # --- writing ---

    def begin_write(self) -> None:
        """Take the write lock (waiting at most the busy timeout) for one transaction."""
        self._known_words.clear()
        self.connection.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self._known_words.clear()
        self.connection.execute("COMMIT")

    def rollback(self) -> None:
        self._known_words.clear()
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")

    def begin_snapshot(self) -> None:
        """Start one transaction for a whole call: what it reads of the index (the stat
        keys, the candidates, a page's text) is one state of it, and its own writes (pages
        read anew) join that state or fail. Another writer that committed after the call's
        first read makes the call's first write fail (SQLite's busy snapshot): the call then
        answers by the scan, never from two states at once. ``end_snapshot`` ends it."""
        self._known_words.clear()
        self.connection.execute("BEGIN")

    def end_snapshot(self) -> None:
        """Commit what the call wrote (``begin_snapshot``). Its answer is made by then: a
        commit that fails (a full disk) loses only what the next call reads again."""
        self._known_words.clear()
        with contextlib.suppress(sqlite3.Error):
            if self.connection.in_transaction:
                self.connection.execute("COMMIT")

    def reset(self, code: str) -> None:
        """Drop every table and make the schema anew, empty and incomplete (inside the
        caller's write transaction: readers keep seeing the old index until it commits)."""
        self._known_words.clear()
        connection = self.connection
        # Fetched whole first: a table cannot be dropped while a statement still reads it.
        tables = connection.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        for kind, name in tables:
            if not name.startswith(("sqlite_", "texts_", "name_grams_", "word_grams_")):
                connection.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        # A trigger's body holds statements of its own: a piece ends a statement only when
        # SQLite says the text up to it is one.
        statement = ""
        for piece in _SCHEMA.split(";"):
            statement += piece + ";"
            if sqlite3.complete_statement(statement):
                if statement.strip(" \n;"):
                    connection.execute(statement)
                statement = ""
        self.set_meta("code", code)
        self.set_meta("complete", 0)

    def set_meta(self, name: str, value: object) -> None:
        self.connection.execute("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)", (name, value))

    def write(self, pages: Iterable[Page]) -> dict[str, int]:
        """Put each page read anew in place of its old row (inside the caller's write
        transaction); returns each written page's id. A
        page keeps its id when it is written again: a concurrent call that took the old
        row as fresh still finds it.

        Each table's new rows go in by one statement for all the pages (a build writes a
        batch at a time): a statement a page and a table cost a 100k build a fifth of its
        time; a page written again first drops its old rows, a few statements. The FTS rows
        go in last, all of them: FTS5 writes out what it holds in memory at every statement
        savepoint, which any write to ``pages`` opens (its triggers), so interleaving them
        cut the trigram index into one segment a page."""
        connection = self.connection
        # The last read of a path stands, as when each was written in turn.
        by_path = {stored_text(page.path): page for page in pages}
        held = self._held(list(by_path))
        ids: dict[str, int] = {}
        fts = _FtsWrites()
        restated = []
        rewritten = []
        added = []
        # The pages whose row is written whole: their other tables' rows go in after them.
        renewed = []
        for path, page in by_path.items():
            old = held.get(path)
            if old is not None and old[1] == page.digest:
                # The same bytes under the same path (and the same title rule, which the whole
                # index shares) make the same row: only the stat changed, and the FTS row, the
                # costly write, stays (touch, chown -R or a checkout change every page's stat).
                restated.append((*page.key, page.racy, page.volatile, old[0]))
                ids[page.path] = old[0]
                continue
            renewed.append((path, page))
            if old is None:
                added.append((*_page_values(page), path))
                continue
            page_id = ids[page.path] = old[0]
            rewritten.append((*_page_values(page), page_id))
            self._drop_rows_of(page_id, path, fts)
        connection.executemany(_RESTATE_PAGE, restated)
        connection.executemany(_UPDATE_PAGE, rewritten)
        if added:
            # The rows above the old maximum are the pages just added, read back with their paths.
            before = _max_id(connection, "pages")
            connection.executemany(_INSERT_PAGE, added)
            for page_id, path in connection.execute("SELECT id, path FROM pages WHERE id > ?", (before,)):
                ids[by_path[path].path] = page_id
        written = [(path, page, ids[page.path]) for path, page in renewed]
        # OR IGNORE: a finding said twice of one page is reported once.
        connection.executemany(
            "INSERT OR IGNORE INTO page_findings(path, code, message, page_id, utf8) VALUES (?, ?, ?, ?, ?)",
            (
                (path, code, stored_text(message), page_id, _utf8(page.path) and _utf8(message))
                for path, page, page_id in written
                for code, message in page.lint
            ),
        )
        connection.executemany(
            # OR IGNORE: a row left behind (none is) would otherwise fail every write of its page.
            "INSERT OR IGNORE INTO copy_digests(page_id, digest) VALUES (?, ?)",
            (
                (page_id, digest)
                for _path, page, page_id in written
                for digest in dict.fromkeys(page.digests)
                if digest is not None
            ),
        )
        connection.executemany(
            "INSERT INTO recall_terms(page_id, term) VALUES (?, ?)",
            (
                (page_id, stored_text(term))
                for _path, page, page_id in written
                if page.recall is not None
                for term in dict.fromkeys(page.recall.folded)
            ),
        )
        if written:
            fts.names_above = _max_id(connection, "names")
        connection.executemany(
            "INSERT INTO names(page_id, kind, length, name, marked) VALUES (?, ?, ?, ?, ?)",
            (
                (page_id, kind, len(name), name, marked(name))
                for _path, page, page_id in written
                for kind, name in _names(page)
            ),
        )
        for _path, page, page_id in written:
            names = NAMES_SEPARATOR.join((page.folded_title, page.folded_path, *page.folded_aliases))
            fts.texts.append((page_id, storable(names), storable(page.folded_text)))
            fts.words |= words_of(f"{names}\n{page.folded_text}")
        fts.write(connection, self._known_words)
        self.set_meta("written_ns", time.time_ns())
        return ids

    def _held(self, paths: list[bytes]) -> dict[bytes, tuple[int, bytes | None]]:
        """(id, digest) of each of ``paths`` the index holds, by path."""
        held: dict[bytes, tuple[int, bytes | None]] = {}
        # Well under SQLite's limit on a statement's values (32,766).
        for at in range(0, len(paths), 500):
            chunk = paths[at : at + 500]
            rows = self.connection.execute(
                f"SELECT path, id, digest FROM pages WHERE path IN ({', '.join('?' * len(chunk))})", chunk
            )
            held.update((path, (page_id, digest)) for path, page_id, digest in rows)
        return held

    def remove(self, paths: Iterable[str]) -> None:
        """Drop the rows of ``paths`` (inside the caller's write transaction)."""
        for path in map(stored_text, paths):
            row = self.connection.execute("SELECT id FROM pages WHERE path = ?", (path,)).fetchone()
            if row is not None:
                fts = _FtsWrites()
                self._drop_rows_of(row[0], path, fts)
                self.connection.execute("DELETE FROM pages WHERE id = ?", row)
                fts.write(self.connection, self._known_words)

    def _drop_rows_of(self, page_id: int, path: bytes, fts: _FtsWrites) -> None:
        """Drop a page's rows but its ``pages`` one, which still holds what was written with
        them; its FTS rows are left to ``fts``, told of them."""
        connection = self.connection
        fts.texts_gone.append((page_id,))
        fts.names_gone += connection.execute("DELETE FROM names WHERE page_id = ? RETURNING id, name", (page_id,))
        connection.execute("DELETE FROM recall_terms WHERE page_id = ?", (page_id,))
        connection.execute(
            "DELETE FROM copy_digests WHERE page_id = :id"
            " AND digest IN (SELECT whole FROM pages WHERE id = :id UNION ALL SELECT body FROM pages WHERE id = :id)",
            {"id": page_id},
        )
        connection.execute("DELETE FROM page_findings WHERE path = ?", (path,))

    # --- reading ---

    def stat_rows(self) -> dict[bytes, tuple[bytes, int, int, int, int, int, int, int, int]]:
        """Every page's row as a call that listed the vault checks each listed page against:
        (path, id, size, mtime_ns, ctime_ns, inode, device, racy, not_text), by its path as
        stored (``stored_text``). Kept as SQLite returns them: at 100,000 pages, building a
        record or even a nested tuple a row cost a find a third of a second."""
        return {row[0]: row for row in self.connection.execute(_STAT_ROWS)}

    def kept_dirs(self) -> dict[bytes, tuple[bytes, bytes, int]]:
        """(digest, marshalled page ids, not-text count) of each dir the ``dirs`` table
        keeps, by its path as stored."""
        rows = self.connection.execute("SELECT dir, digest, ids, not_text FROM dirs")
        return {dir_path: (digest, ids, not_text) for dir_path, digest, ids, not_text in rows}

    def keep_dirs(self, rows: Iterable[tuple[bytes, bytes, bytes, int]]) -> None:
        """Keep (dir, digest, marshalled ids, not-text count) rows (inside the caller's write
        transaction; after its pages are written: writing one empties the table)."""
        self.connection.executemany("INSERT OR REPLACE INTO dirs(dir, digest, ids, not_text) VALUES (?, ?, ?, ?)", rows)

    def dir_stat_rows(self, dir_rel: str) -> dict[bytes, tuple[bytes, int, int, int, int, int, int, int, int]]:
        """``stat_rows`` of the pages directly in the dir ``dir_rel`` ("" for the root): one
        range of the path index ('/' + 1 is '0'), the pages of the dirs below it left out."""
        prefix = stored_text(f"{dir_rel}/") if dir_rel else b""
        rows = (
            self.connection.execute(f"{_STAT_ROWS} WHERE path >= ? AND path < ?", (prefix, prefix[:-1] + b"0"))
            if prefix
            else self.connection.execute(_STAT_ROWS)
        )
        start = len(prefix)
        return {row[0]: row for row in rows if row[0].find(b"/", start) < 0}

    def stored_paths(self) -> list[bytes]:
        """Every page's path as stored."""
        return [row[0] for row in self.connection.execute("SELECT path FROM pages")]

    def watched_by_stat(self) -> dict[str, tuple[int, StatKey, bool]]:
        """(id, stat key, racy) of the pages a watch cannot vouch for (racy, or with other
        hard links), by path: a served call stats these and the ones the server names."""
        rows = self.connection.execute(WATCHED_SQL)
        return {_text(path): (page_id, tuple(key), bool(racy)) for path, page_id, *key, racy in rows}

    def stat_keys_of(self, paths: Iterable[str]) -> dict[str, tuple[int, StatKey, bool]]:
        """(id, stat key, racy) of each of ``paths`` the index holds."""
        found: dict[str, tuple[int, StatKey, bool]] = {}
        for rel_path in paths:
            row = self.connection.execute(
                "SELECT id, size, mtime_ns, ctime_ns, inode, device, racy FROM pages WHERE path = ?",
                (stored_text(rel_path),),
            ).fetchone()
            if row is not None:
                found[rel_path] = (row[0], tuple(row[1:6]), bool(row[6]))
        return found

    def identity(self, rel_path: str) -> tuple[int, int, int, int] | None:
        """The page as ``page.read_as_judged`` tells versions apart, as it was read."""
        row = self.connection.execute(
            "SELECT device, inode, size, mtime_ns FROM pages WHERE path = ?", (stored_text(rel_path),)
        ).fetchone()
        return None if row is None else tuple(row)

    def page_count(self) -> int:
        """The pages the index holds: kept in ``meta`` by the schema's triggers, in the
        transaction of each insert and delete, so that no call counts the table."""
        return int(self.connection.execute("SELECT value FROM meta WHERE name = 'pages'").fetchone()[0])

    def not_text_count(self) -> int:
        """The pages that do not read as text, kept as ``page_count`` is (an update of
        ``not_text`` too)."""
        return int(self.connection.execute("SELECT value FROM meta WHERE name = 'not_text'").fetchone()[0])

    # --- what a served call reuses of the last listing (``freshness.keep_listing``) ---

    def served_dirs(self) -> list[tuple[str, str, int, int, int, int]]:
        """(vault-relative dir, its path as read, device, inode, mtime_ns, ctime_ns) of
        each dir the kept listing listed."""
        rows = self.connection.execute("SELECT dir_rel, dir_path, device, inode, mtime_ns, ctime_ns FROM served_dirs")
        return [(_text(rel), _text(path), *key) for rel, path, *key in rows]

    def set_served_dirs(self, dirs: Iterable[tuple[str, str, int, int, int, int]]) -> None:
        """Replace the kept listing's dirs (inside the caller's write transaction)."""
        self.connection.execute("DELETE FROM served_dirs")
        self.connection.executemany(
            "INSERT INTO served_dirs(dir_rel, dir_path, device, inode, mtime_ns, ctime_ns) VALUES (?, ?, ?, ?, ?, ?)",
            ((stored_text(rel), stored_text(path), *key) for rel, path, *key in dirs),
        )

    def top(
        self, folded_keywords: Sequence[str], limit: int, prefer: Sequence[str] = (), scope: Iterable[int] | None = None
    ) -> Ranked:
        """Rule 8 in SQL (docs/spec.md): the first ``limit`` matching pages (0: all) in
        find's order, how many match, how many of them are named, and on a miss how many
        pages hold each keyword. ``prefer`` is the vault's ``[order] prefer``; ``scope``
        the ids of the pages searched (None: every page the index holds). The keywords are
        folded and ``answerable``. ``find.judge`` is the reference these statements are
        tested against: Python builds only the rows it returns.

        The first group comes from ``names``: its trigrams pick the name rows holding each
        keyword, the pages holding them all are ranked by one packed integer (not its
        path, no word start, title and path, length, kind: ``_NOT_ITS_PATH``...), the best
        name a page has by ``min``. The second group comes from ``texts``, by mention depth
        (``_depth_of``), only when the first does not fill the limit. Each group's count is
        taken of it materialised; when the first fills the limit, the total is one ``count``."""
        keywords = tuple(folded_keywords)
        values: dict[str, object] = {}
        for at, keyword in enumerate(keywords):
            values[f"k{at}"] = keyword
            values[f"m{at}"] = marked(keyword)
        ranked = Ranked()
        order = _preferred_order(prefer, values)
        in_scope = self._within = ""
        if scope is not None:
            self._id_table("scope_ids", scope)
            in_scope = " WHERE page_id IN temp.scope_ids"
            self._within = " AND texts.rowid IN temp.scope_ids"
        cap = " LIMIT :limit" if limit else ""
        values["limit"] = limit
        # Only placeholders and fixed SQL are formatted into these statements: every value is bound.
        # The counts are taken of each group materialised once: a window count kept every
        # joined row, its page's fields and all, to the end (a quarter of this statement for
        # `the` at 100k).
        rows = self.connection.execute(
            f"WITH {_named_pages(keywords, values)}, shown AS MATERIALIZED (SELECT page_id, k FROM g1{in_scope})"
            " SELECT p.id, p.path, p.title, p.constellation, p.type, shown.k, (SELECT count(*) FROM shown),"
            " (SELECT sum(k = 0) FROM shown) FROM shown JOIN pages AS p ON p.id = shown.page_id"
            f" ORDER BY shown.k, {order}p.path{cap}",
            values,
        ).fetchall()
        ranked.named, ranked.exact = rows[0][-2:] if rows else (0, 0)
        ranked.rows = [
            (_text(path), _text(title), _optional_text(constellation), _optional_text(kind), _matched_by(key))
            for _id, path, title, constellation, kind, key, _count, _exact in rows
        ]
        if limit and len(rows) >= limit and len(keywords) == 1 and len(keywords[0]) == 3 and scope is None:
            # One trigram: a page is in its doclist exactly when its names or text hold it.
            ranked.total = self._pages_holding(keywords[0])
            return ranked
        picked, reads_rows = self._text_rows_picked(keywords, values)
        if limit and len(rows) >= limit:
            sql = f"SELECT count(*) FROM {picked} AND {_holds(len(keywords))}"
            ranked.total = self.connection.execute(sql, values).fetchone()[0]
            return ranked
        self._id_table("named_ids", (row[0] for row in rows))
        values["limit"] = limit - len(rows)
        depths = ", ".join(
            f"CASE WHEN i{at} > 0 THEN {_depth_of(f'i{at}', line_ends=reads_rows)} + {len(keyword)} ELSE 0 END"
            for at, keyword in enumerate(keywords)
        )
        # The line ends only where the rows are read from ``text_rows`` itself: FTS5's rows
        # have none (a join would look each up again).
        carried = ["texts.rowid AS id", *([_END_COLUMNS] if reads_rows else []), "names", "body"]
        # NOT MATERIALIZED: a level SQLite would otherwise copy whole, every text with it
        # (twice the statement for `install` on a docs site), is read in place.
        level = "l{} AS NOT MATERIALIZED ({})"
        levels = [level.format(0, f"SELECT {', '.join(carried)} FROM {picked} AND texts.rowid NOT IN temp.named_ids")]
        # Each keyword's ``instr`` runs once a row, and only on the rows that hold every
        # keyword before it: a row is kept or dropped by the places found, not by ``_holds``
        # again (an ``instr`` run twice a row, a third of a docs site's statement), and a row
        # without the first keyword is not searched for the others. OFFSET keeps SQLite from
        # flattening a level into the next, which would run its ``instr`` again for every
        # place it is named there. One table expression a level, not nested subqueries:
        # nesting two a keyword overflowed SQLite's parser at seven keywords.
        for at in range(len(keywords)):
            places = f"instr(names, :k{at}) AS n{at}, instr(body, :k{at}) AS i{at}"
            found = f"SELECT *, {places} FROM l{at} LIMIT -1 OFFSET 0"
            levels.append(level.format(at + 1, f"SELECT * FROM ({found}) WHERE n{at} > 0 OR i{at} > 0"))
        mentions = self.connection.execute(
            f"WITH {', '.join(levels)},"
            f" m AS MATERIALIZED (SELECT id, max(0, {depths}) AS depth FROM l{len(keywords)} AS held)"
            " SELECT p.path, p.title, p.constellation, p.type, (SELECT count(*) FROM m) FROM m"
            f" JOIN pages AS p ON p.id = m.id ORDER BY m.depth, {order}p.path{cap}",
            values,
        ).fetchall()
        ranked.rows += [
            (_text(path), _text(title), _optional_text(constellation), _optional_text(kind), TEXT)
            for path, title, constellation, kind, _count in mentions
        ]
        ranked.total = ranked.named + (mentions[0][-1] if mentions else 0)
        if ranked.total == 0 and len(keywords) > 1:
            ranked.counts = [self._holding(keyword) for keyword in keywords]
        return ranked

    def _id_table(self, name: str, ids: Iterable[int]) -> None:
        """``temp.<name>``, a table of this connection's alone, holding ``ids``: a query
        checks a row against it by its primary key (a JSON list was parsed again for every row)."""
        connection = self.connection
        connection.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name}(id INTEGER PRIMARY KEY)")
        connection.execute(f"DELETE FROM temp.{name}")
        connection.executemany(f"INSERT INTO temp.{name}(id) VALUES (?)", ((page_id,) for page_id in ids))

    def _text_rows_picked(self, keywords: tuple[str, ...], values: dict[str, object]) -> tuple[str, bool]:
        """FROM and WHERE of the searched text rows (as ``texts``) that may hold each
        keyword (``_holds`` decides, or the places ``top`` finds): picked by the first of
        the keywords' trigrams asked (a few of each) that at most a quarter of the pages
        hold (a MATCH). When no keyword has three characters, or every one asked is in
        more, every row of ``text_rows`` is read: that costs less than walking the
        doclists (twice less for a word on every page), and reading the table itself half
        what FTS5's full scan does. With whether it reads ``text_rows`` itself."""
        enough = self.page_count() // 4
        # A few of each keyword's trigrams, spread over it, are asked: each count reads the
        # trigram's doclist (3 ms of a common one at 100k pages), and the trigrams of a word
        # on most pages are all common (`information`'s nine cost 27 ms). The first of each
        # keyword's is asked first. Either way the answer is exact.
        each = max(1, -(-_TRIGRAMS_ASKED // len(keywords)))
        of_each = [trigrams([keyword]) for keyword in keywords]
        spread = [grams[:: max(1, -(-len(grams) // each))] for grams in of_each]
        for gram in dict.fromkeys(gram for grams in zip_longest(*spread) for gram in grams if gram is not None):
            if self._pages_holding(gram) <= enough:
                values["grams"] = match_expression([gram])
                return f"texts WHERE texts MATCH :grams{self._within}", False
        return f"text_rows AS texts WHERE 1{self._within}", True

    def _pages_holding(self, gram: str) -> int:
        """How many pages' names or text hold the trigram: its doclist's length, from FTS5's
        own vocabulary (a table of this connection's alone)."""
        connection = self.connection
        if not self._vocabulary:
            connection.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.text_grams USING fts5vocab(main, texts, row)")
            self._vocabulary = True
        row = connection.execute("SELECT doc FROM temp.text_grams WHERE term = ?", (gram,)).fetchone()
        return 0 if row is None else int(row[0])

    def _holding(self, folded_keyword: str) -> int:
        """How many pages (in the scope the last ``top`` searched) hold the keyword: a miss says it."""
        values: dict[str, object] = {"k0": folded_keyword}
        sql = f"SELECT count(*) FROM {self._text_rows_picked((folded_keyword,), values)[0]} AND {_holds(1)}"
        return int(self.connection.execute(sql, values).fetchone()[0])

    # --- a miss's suggestions (``suggest``), over the pages the last ``top`` searched ---

    def words_near(self, prefix: str, middle: str, suffix: str, length: int, most: int) -> list[str]:
        """The words of ``words`` within ``most`` characters of ``length`` long that start
        with ``prefix``, end with ``suffix`` or hold ``middle`` (``suggest.pieces``): each
        a range of an index or one trigram's doclist, never the whole table."""
        values: dict[str, object] = {
            "low": length - most,
            "high": length + most,
            "prefix": prefix,
            # No word holds a noncharacter (no letter or digit): the end of every range.
            "prefix_end": prefix + "\U0010ffff",
            "xiffus": suffix[::-1],
            "xiffus_end": suffix[::-1] + "\U0010ffff",
        }
        sized = " AND length BETWEEN :low AND :high"
        sql = (
            f"SELECT word FROM words WHERE word >= :prefix AND word < :prefix_end{sized}"
            f" UNION SELECT word FROM words WHERE drow >= :xiffus AND drow < :xiffus_end{sized}"
        )
        if middle:
            values["middle"], values["gram"] = middle, match_expression([middle])
            sql += (
                " UNION SELECT word FROM words WHERE id IN (SELECT rowid FROM word_grams WHERE word_grams MATCH :gram)"
                f" AND instr(word, :middle) > 0{sized}"
            )
        return [row[0] for row in self.connection.execute(sql, values)]

    def _word_rows(self, folded_word: str) -> tuple[str, dict[str, object]]:
        """The FROM and WHERE of the searched ``texts`` rows holding the word, and their
        values: every trigram of it ANDed, which FTS5 walks lazily, so a statement that
        stops early (LIMIT, the first row that will do) reads few rows of a common word.
        (``_text_rows_picked``' doclist lengths would cost more than that: fts5vocab reads each
        trigram's doclist whole.) A word near a keyword has three characters or more."""
        values: dict[str, object] = {"k0": folded_word, "grams": match_expression(trigrams([folded_word]))}
        return f"texts WHERE texts MATCH :grams AND {_holds(1)}{self._within}", values

    def word_pages(self, folded_word: str, cap: int) -> int:
        """How many searched pages hold the word as find counts a keyword, up to ``cap``."""
        rows, values = self._word_rows(folded_word)
        values["cap"] = cap
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {rows} LIMIT :cap)"
        return int(self.connection.execute(sql, values).fetchone()[0])

    def held_whole(self, folded_word: str) -> bool:
        """Whether a searched page's names or text hold the word whole (``fold.holds_whole``):
        the first page holding it mostly does, so few rows are read."""
        rows, values = self._word_rows(folded_word)
        found = self.connection.execute(f"SELECT names, body FROM {rows}", values)
        return any(holds_whole(names, folded_word) or holds_whole(body, folded_word) for names, body in found)

    def recall_matches(
        self, folded_terms: Sequence[str]
    ) -> list[tuple[int, str, RecallFields | None, tuple[int, int, int, int]]]:
        """(id, path, recall fields, identity) of every page one of whose folded titles,
        slugs or tags holds one of ``folded_terms``: the candidates ``recall.entry_if_match``
        decides, picked without building a row for the pages no term is in."""
        if not folded_terms:
            return []
        values = [stored_text(term) for term in folded_terms]
        holds = " OR ".join("instr(term, ?) > 0" for _ in values)
        rows = self.connection.execute(
            "SELECT id, path, recall, device, inode, size, mtime_ns FROM pages"
            f" WHERE id IN (SELECT page_id FROM recall_terms WHERE {holds})",
            values,
        )
        return [
            (page_id, _text(path), _recall_fields(recall), tuple(identity)) for page_id, path, recall, *identity in rows
        ]

    def recall_unseen(self, scope: Iterable[int] | None) -> int:
        """How many pages of ``scope`` (their ids; None: every page) recall sees no title,
        slug or tag in: of every page, kept as ``page_count`` is; of a scope, counted in
        SQL, one lookup a page of it (a vault without frontmatter has 100,000 such pages)."""
        if scope is None:
            row = self.connection.execute("SELECT value FROM meta WHERE name = 'recall_unseen'").fetchone()
        else:
            self._id_table("recall_scope_ids", scope)
            row = self.connection.execute(
                "SELECT count(*) FROM temp.recall_scope_ids AS scope CROSS JOIN pages ON pages.id = scope.id"
                " WHERE pages.recall_unseen"
            ).fetchone()
        return int(row[0])

    def lint_findings(self, scope: Iterable[int] | None) -> list[tuple[str, str, str]]:
        """(path, code, message) of each finding about a page alone, each once, of the pages
        of ``scope`` (their ids; None: every page). SQLite gives the UTF-8 ones back as text
        itself: no Python call a row (a vault without frontmatter has a finding a page)."""
        within = ""
        if scope is not None:
            # A table of its own: ``scope_ids`` is the scope the last ``top`` searched.
            self._id_table("lint_scope_ids", scope)
            within = " AND page_id IN temp.lint_scope_ids"
        connection = self.connection
        found = connection.execute(
            f"SELECT CAST(path AS TEXT), code, CAST(message AS TEXT) FROM page_findings WHERE utf8{within}"
        ).fetchall()
        found += [
            (_text(path), code, _text(message))
            for path, code, message in connection.execute(
                f"SELECT path, code, message FROM page_findings WHERE NOT utf8{within}"
            )
        ]
        return found

    def shared_titles(self) -> list[tuple[int, str, str]]:
        """(id, path, title as lint takes it) of every page whose folded title another page
        has too: the pages a duplicate title may be said of."""
        rows = self.connection.execute(
            "SELECT id, path, lint_title FROM pages WHERE lint_folded IN"
            " (SELECT lint_folded FROM pages WHERE lint_folded IS NOT NULL GROUP BY lint_folded HAVING count(*) > 1)"
        )
        return [(page_id, _text(path), _text(title)) for page_id, path, title in rows]

    def titled(self, paths: Iterable[str]) -> dict[str, int]:
        """The id of each of ``paths`` that gives itself a title (lint's ``check_page``)."""
        found = {}
        for rel_path in paths:
            row = self.connection.execute(
                "SELECT id FROM pages WHERE path = ? AND lint_title IS NOT NULL", (stored_text(rel_path),)
            ).fetchone()
            if row is not None:
                found[rel_path] = row[0]
        return found

    def titled_paths_holding(self, part: str) -> list[tuple[int, str]]:
        """(id, path) of every page that gives itself a title and whose path holds ``part``."""
        rows = self.connection.execute(
            "SELECT id, path FROM pages WHERE lint_title IS NOT NULL AND instr(path, ?) > 0", (stored_text(part),)
        )
        return [(page_id, _text(path)) for page_id, path in rows]

    def digests_shared(self) -> bool:
        """Whether two pages share a digest copies are told by (``pagefields.content_digests``):
        only then may a page be a copy of another."""
        # The rows past the first of each digest, kept by the schema's triggers: a GROUP BY
        # over the table cost a warm lint of 100,000 pages 49 ms.
        return bool(self.connection.execute("SELECT value FROM meta WHERE name = 'shared_digests'").fetchone()[0])

    def digests(self) -> list[tuple[int, str, tuple[bytes | None, bytes | None]]]:
        """(id, path, (whole, body) digests) of every page."""
        rows = self.connection.execute("SELECT id, path, whole, body FROM pages")
        return [(page_id, _text(path), (whole, body)) for page_id, path, whole, body in rows]


def _matched_by(key: int) -> str:
    """Where a first-group page matched, by its packed key: a keyword is its path, its
    title and path together hold the keywords, or one name alone (``find.matched_by``)."""
    return PATH if not key >> _NOT_ITS_PATH & 1 or key >> _TITLE_AND_PATH & 1 else TITLE


def _optional_text(blob: bytes | None) -> str | None:
    return None if blob is None else _text(blob)


def _preferred_order(prefer: Sequence[str], values: dict[str, object]) -> str:
    """Key 5 as an ORDER BY term ending in ", " (nothing without ``[order] prefer``): the
    place of the first preferred dir the page's path starts with, else that of
    ``UNLISTED_PAGES`` (``find.preferred_rank``). The path is a BLOB of
    UTF-8, so a byte prefix is the string's prefix, and its order the code points'."""
    if not prefer:
        return ""
    cases = []
    for at, prefix in enumerate(prefer):
        values[f"p{at}"] = stored_text(prefix)
        cases.append(f"WHEN substr(p.path, 1, {len(stored_text(prefix))}) = :p{at} THEN {at}")
    unlisted = prefer.index(UNLISTED_PAGES) if UNLISTED_PAGES in prefer else len(prefer)
    return f"CASE {' '.join(cases)} ELSE {unlisted} END, "


def _names_holding(at: int, keyword: str, values: dict[str, object]) -> str:
    """FROM and WHERE of the name rows (``names AS n``) that hold keyword ``at``: picked by
    its trigrams, checked whole. CROSS JOIN walks the trigrams' rows and looks each name up
    by its id (``IN`` made a table of those ids first)."""
    grams = trigrams([keyword])
    if not grams:
        return f"names AS n WHERE instr(n.name, :k{at}) > 0"
    values[f"g{at}"] = match_expression(grams)
    return (
        f"name_grams CROSS JOIN names AS n ON n.id = name_grams.rowid"
        f" WHERE name_grams MATCH :g{at} AND instr(n.name, :k{at}) > 0"
    )


def _named_by_several(keywords: tuple[str, ...], values: dict[str, object]) -> str:
    """``named(page_id, k)`` for two keywords or more: the pages one of whose names holds
    them all, else whose title and path together do."""
    count = range(len(keywords))
    candidates = " INTERSECT ".join(
        f"SELECT page_id FROM {_names_holding(at, keyword, values)}" for at, keyword in enumerate(keywords)
    )
    in_name = " AND ".join(f"instr(name, :k{at}) > 0" for at in count)
    starts = " AND ".join(f"instr(marked, :m{at}) > 0" for at in count)
    in_title_or_path = " AND ".join(f"(instr(t.name, :k{at}) > 0 OR instr(p.name, :k{at}) > 0)" for at in count)
    starts_in_title_or_path = " AND ".join(
        f"(CASE WHEN instr(t.name, :k{at}) > 0 THEN instr(t.marked, :m{at}) ELSE instr(p.marked, :m{at}) END) > 0"
        for at in count
    )
    return (
        f"candidates AS ({candidates}),"
        f" by_name AS (SELECT page_id, min(((NOT ({starts})) << {_NO_WORD_START}) | (length << {_LENGTH})"
        f" | kind) AS k"
        f" FROM names WHERE page_id IN candidates AND kind != {PATH_NAME} AND {in_name} GROUP BY page_id),"
        f" named AS (SELECT page_id, k FROM by_name UNION ALL"
        f" SELECT t.page_id, ((NOT ({starts_in_title_or_path})) << {_NO_WORD_START}) | (1 << {_TITLE_AND_PATH})"
        f" | (p.length << {_LENGTH}) FROM names AS t JOIN names AS p ON p.page_id = t.page_id AND p.kind = {PATH_NAME}"
        f" WHERE t.page_id IN candidates AND t.kind = {TITLE_NAME} AND {in_title_or_path}"
        f" AND t.page_id NOT IN (SELECT page_id FROM by_name)),"
    )


def _holds(keywords: int, row: str = "") -> str:
    """SQL: whether a text row's names or text hold each of the first ``keywords`` keywords
    (``:k0``...), whole, as ``instr`` finds them; ``row``: the text row's table, where a
    statement joins others."""
    names, body = (f"{row}.names", f"{row}.body") if row else ("names", "body")
    return " AND ".join(f"(instr({names}, :k{at}) > 0 OR instr({body}, :k{at}) > 0)" for at in range(keywords))


def _named_pages(keywords: tuple[str, ...], values: dict[str, object]) -> str:
    """The common table expressions ending in ``g1(page_id, k)``: each first-group page
    (rule 8: a keyword is its path, or one name alone, or the title and the path together,
    hold every keyword) with its packed key, the best of its names' (``named_key``'s order)."""
    count = range(len(keywords))
    paths = ", ".join(f":k{at}" for at in count)
    # The page a keyword is the path of comes first (k 0), wherever its keywords lie.
    # CROSS JOIN keeps the names, found by their index, outside: the planner would scan text_rows.
    its_path = (
        f"SELECT n.page_id FROM names AS n CROSS JOIN text_rows AS texts ON texts.id = n.page_id"
        f" WHERE n.kind = {PATH_NAME} AND n.name IN ({paths}) AND {_holds(len(keywords), 'texts')}"
    )
    not_its_path = f"(1 << {_NOT_ITS_PATH})"
    if len(keywords) == 1:
        # One keyword: each name row holding it gives the page a key (a path's, with the
        # title, only when no name alone holds it), so one GROUP BY over those rows, and
        # -1 for the page it is the path of, is the whole group, without reading any page's
        # other names. A path's row sorts after every name alone by the bit _NOT_ITS_PATH
        # holds there, which the key then drops. (A GROUP BY apart, then a union with the
        # path's page, cost a sixth more for `the` at 100k pages.)
        row_key = (
            f"((kind = {PATH_NAME}) << {_NOT_ITS_PATH}) | ((NOT (instr(marked, :m0) > 0)) << {_NO_WORD_START})"
            f" | (length << {_LENGTH}) | CASE WHEN kind = {PATH_NAME} THEN 1 << {_TITLE_AND_PATH} ELSE kind END"
        )
        return (
            f"g1 AS (SELECT page_id, CASE WHEN min(r) < 0 THEN 0 ELSE (min(r) & ({not_its_path} - 1)) | {not_its_path}"
            f" END AS k FROM (SELECT page_id, {row_key} AS r FROM {_names_holding(0, keywords[0], values)}"
            f" UNION ALL SELECT page_id, -1 FROM ({its_path})) GROUP BY page_id)"
        )
    return (
        f"{_named_by_several(keywords, values)} its_path AS ({its_path}),"
        f" g1 AS (SELECT page_id, CASE WHEN page_id IN its_path THEN 0 ELSE k | {not_its_path} END AS k"
        f" FROM named UNION ALL SELECT page_id, 0 FROM its_path WHERE page_id NOT IN (SELECT page_id FROM named))"
    )


def _recall_blob(fields: RecallFields | None) -> bytes:
    """Recall's fields as the index keeps them: b"" for none."""
    if fields is None:
        return b""
    updated = fields.updated.toordinal() if fields.updated is not None else None
    return marshal.dumps((fields.folded, fields.slug, fields.tags, fields.title, updated))


def _recall_fields(blob: bytes | None) -> RecallFields | None:
    if not blob:
        return None
    import datetime

    from mnemosyne_core.page_recall import RecallFields

    fields = RecallFields.__new__(RecallFields)
    # Written by ``_recall_blob`` into our own 0600 file.
    fields.folded, fields.slug, fields.tags, fields.title, updated = marshal.loads(blob)  # noqa: S302
    fields.updated = datetime.date.fromordinal(updated) if updated is not None else None
    return fields


def written_by(build: Callable[[NoteIndex], None], index: NoteIndex) -> None:
    """Run ``build`` in one write transaction: all of it lands, or none of it. Inside a
    call's own transaction (``NoteIndex.begin_snapshot``) it is part of that one."""
    if index.connection.in_transaction:
        build(index)
        return
    index.begin_write()
    try:
        build(index)
    except BaseException:
        index.rollback()
        raise
    index.commit()


__all__ = ["FORMAT", "IndexUnusable", "NoteIndex", "Ranked", "answerable", "fault_of"]
