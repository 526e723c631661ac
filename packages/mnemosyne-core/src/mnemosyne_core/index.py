"""The vault's index: one SQLite database that holds what find and recall need of each page,
behind one small interface, ``NoteIndex`` (as zk keeps its notebook).

Schema (``FORMAT`` is SQLite's ``user_version``; any other is rebuilt, never read):

- ``pages``: one row a page: its vault-relative path, the stat it had when read (size,
  mtime_ns, ctime_ns, inode, device) and git's racy flag, a digest of its bytes (``digest``:
  a page read again with the same bytes gets only its stat written), whether it has other hard links
  and whether it reads as text, the fields find prints (title, constellation, type), its
  names as judge takes them (folded title and aliases), its frontmatter bytes and recall's
  fields (made on the first recall).
- ``texts``: an FTS5 table with the trigram tokenizer (``case_sensitive 1``, ``detail=none``,
  content stored): ``names`` (the folded title, path and aliases, a newline between them)
  and ``body`` (the folded text). Text is folded by find's own rule before it goes in, so
  no SQLite folding is ever used.
- ``meta``: the code that wrote it (``code``), whether a whole build is in it
  (``complete``), the title rule it was built under (``heading_titles``), a ``wiki
  serve``'s token and the listing a served call reuses, when it was last written
  (``written_ns``).

A query picks candidates the way codesearch and Zoekt do: the trigrams of every keyword of
three characters or more, ANDed (an explicit AND: FTS5's implicit one drops a phrase of
under three characters), then ``instr()`` in the same statement checks each keyword in the
stored folded text, so no Python runs for a page that cannot match. ``find.judge`` then
decides every candidate. No ``LIKE`` anywhere (it crashed 3.40.1 on two LIKEs in one
WHERE, and its folding is not ``casefold``).

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
import time

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from mnemosyne_core.page import Page, StatKey
    from mnemosyne_core.recall import RecallFields

#: Bumped whenever the schema or what a row holds changes: an index of another format is
#: rebuilt, never read.
FORMAT = 5
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

_SCHEMA = f"""
CREATE TABLE meta(name TEXT PRIMARY KEY, value) WITHOUT ROWID;
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
    head BLOB,
    recall BLOB,
    digest BLOB
);
CREATE VIRTUAL TABLE texts USING fts5(names, body, tokenize='trigram case_sensitive 1', detail=none);
PRAGMA user_version = {FORMAT};
"""


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


def _blob(text: str) -> bytes:
    # File names may hold lone surrogates (undecodable bytes): kept exactly, as bytes.
    return text.encode("utf-8", "surrogatepass")


def stored_path(rel_path: str) -> bytes:
    """A vault-relative path as the index stores it (``NoteIndex.stat_rows``' keys)."""
    return _blob(rel_path)


def _text(blob: bytes) -> str:
    return blob.decode("utf-8", "surrogatepass")


def storable(text: str) -> str:
    """``text`` as SQLite's text functions can take it: NULs and lone surrogates stand as
    ``UNSTORABLE``, every other character as it is (so lines and columns keep their place)."""
    if "\0" in text:
        text = text.replace("\0", UNSTORABLE)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join(UNSTORABLE if "\ud800" <= char <= "\udfff" else char for char in text)
    return text


def answerable(folded_keywords: Sequence[str]) -> bool:
    """Whether the index answers these keywords exactly as the scan does: none holds a NUL,
    a newline, ``UNSTORABLE`` or a lone surrogate (the scan answers those)."""
    return all(
        "\0" not in keyword
        and NAMES_SEPARATOR not in keyword
        and UNSTORABLE not in keyword
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


#: A candidate's row brings the text before each keyword's first occurrence when that
#: occurrence lies within this many characters of the text's start (where a page named by
#: its keywords names them), so its line and column are known without another query; one
#: that lies further costs one (``text_before``).
LINE_WINDOW = 2048


class IndexedPage:
    """One candidate as the index returns it: what judge and find's output need, with where
    each keyword first occurs in the folded text, from the same statement: its position (0:
    not there) and, within ``LINE_WINDOW`` of the start, the text before it."""

    __slots__ = (
        "_index",
        "_keywords",
        "constellation",
        "folded_aliases",
        "folded_title",
        "found",
        "id",
        "path",
        "title",
        "type",
    )

    def __init__(self, index: NoteIndex, keywords: Sequence[str], row: tuple[object, ...]) -> None:
        self._index = index
        #: Each keyword's place in ``positions``.
        self._keywords = {keyword: at for at, keyword in enumerate(keywords)}
        self.id: int = row[0]  # type: ignore[assignment]
        self.path = _text(row[1])  # type: ignore[arg-type]
        self.title = _text(row[2])  # type: ignore[arg-type]
        self.constellation = None if row[3] is None else _text(row[3])  # type: ignore[arg-type]
        self.type = None if row[4] is None else _text(row[4])  # type: ignore[arg-type]
        self.folded_title = _text(row[5])  # type: ignore[arg-type]
        # Written by ``NoteIndex.write`` into our own 0600 file.
        self.folded_aliases: tuple[str, ...] = marshal.loads(row[6])  # type: ignore[arg-type]  # noqa: S302
        #: Per keyword: (1-based character position of its first occurrence in the text, 0:
        #: none; the text before it when that is within ``LINE_WINDOW``, else None).
        self.found: list[tuple[int, str | None]] = [
            (row[at], row[at + 1])  # type: ignore[misc]
            for at in range(7, len(row), 2)
        ]

    def text_contains(self, folded_keyword: str) -> bool:
        """judge's ``text_contains``: whether the page's folded text holds the keyword."""
        return self.found[self._keywords[folded_keyword]][0] > 0

    def text_position(self, folded_keyword: str) -> tuple[int, int] | None:
        """judge's ``text_position``: (line, column in characters) of the keyword's first
        occurrence in the page's folded text."""
        position, before = self.found[self._keywords[folded_keyword]]
        if not position:
            return None
        if before is None:
            before = self._index.text_before(self.id, position - 1)  # past the window
        return before.count("\n"), len(before) - before.rfind("\n") - 1


class NoteIndex:
    """The index of one vault for one user and set of rights (``cache.index_path``)."""

    def __init__(self, connection: sqlite3.Connection, path: str) -> None:
        self.connection = connection
        self.path = path

    # --- opening ---

    @classmethod
    def open(cls, path: str, *, create: bool = False, read_only: bool = False) -> NoteIndex:
        """The index at ``path``, made empty if ``create`` and there is none; IndexUnusable
        when there is none, or it is not ours (a symlink, another owner, open to others).
        ``read_only``: opened for reading alone (``wiki info``), nothing written, not even
        the journal mode."""
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
        """Whether a whole build by this code is in the index: only then is it read."""
        return self.format() == FORMAT and self.meta("code") == code and self.meta("complete") == 1

    # --- writing ---

    def begin_write(self) -> None:
        """Take the write lock (waiting at most the busy timeout) for one transaction."""
        self.connection.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.connection.execute("COMMIT")

    def rollback(self) -> None:
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")

    def begin_snapshot(self) -> None:
        """Start one transaction for a whole call: what it reads of the index (the stat
        keys, the candidates, a page's text) is one state of it, and its own writes (pages
        read anew) join that state or fail. Another writer that committed after the call's
        first read makes the call's first write fail (SQLite's busy snapshot): the call then
        answers by the scan, never from two states at once. ``end_snapshot`` ends it."""
        self.connection.execute("BEGIN")

    def end_snapshot(self) -> None:
        """Commit what the call wrote (``begin_snapshot``). Its answer is made by then: a
        commit that fails (a full disk) loses only what the next call reads again."""
        with contextlib.suppress(sqlite3.Error):
            if self.connection.in_transaction:
                self.connection.execute("COMMIT")

    def reset(self, code: str) -> None:
        """Drop every table and make the schema anew, empty and incomplete (inside the
        caller's write transaction: readers keep seeing the old index until it commits)."""
        connection = self.connection
        # Fetched whole first: a table cannot be dropped while a statement still reads it.
        tables = connection.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        for kind, name in tables:
            if not name.startswith(("sqlite_", "texts_")):
                connection.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                connection.execute(statement)
        self.set_meta("code", code)
        self.set_meta("complete", 0)

    def set_meta(self, name: str, value: object) -> None:
        self.connection.execute("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)", (name, value))

    def write(self, pages: Iterable[Page]) -> dict[str, int]:
        """Put each page read anew in place of its old row (inside the caller's write
        transaction); returns each written page's id. A
        page keeps its id when it is written again: a concurrent call that took the old
        row as fresh still finds it."""
        connection = self.connection
        ids: dict[str, int] = {}
        for page in pages:
            path = _blob(page.path)
            held = connection.execute("SELECT id, digest FROM pages WHERE path = ?", (path,)).fetchone()
            if held is not None and held[1] == page.digest:
                # The same bytes under the same path (and the same title rule, which the whole
                # index shares) make the same row: only the stat changed, and the FTS row, the
                # costly write, stays (touch, chown -R or a checkout change every page's stat).
                connection.execute(
                    "UPDATE pages SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ?, device = ?, racy = ?,"
                    " volatile = ? WHERE id = ?",
                    (*page.key, page.racy, page.volatile, held[0]),
                )
                ids[page.path] = held[0]
                continue
            values = (
                *page.key,
                page.racy,
                page.volatile,
                page.not_text,
                _blob(page.title),
                marshal.dumps(page.aliases),
                None if page.constellation is None else _blob(page.constellation),
                None if page.type is None else _blob(page.type),
                _blob(page.folded_title),
                marshal.dumps(page.folded_aliases),
                page.head,
                page.digest,
                path,
            )
            row = connection.execute(
                "UPDATE pages SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ?, device = ?, racy = ?,"
                " volatile = ?, not_text = ?, title = ?, aliases = ?, constellation = ?, type = ?,"
                " folded_title = ?, folded_aliases = ?, head = ?, recall = NULL, digest = ? WHERE path = ?"
                " RETURNING id",
                values,
            ).fetchone()
            if row is None:
                page_id = connection.execute(
                    "INSERT INTO pages(size, mtime_ns, ctime_ns, inode, device, racy, volatile, not_text, title,"
                    " aliases, constellation, type, folded_title, folded_aliases, head, digest, path)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    values,
                ).lastrowid
            else:
                page_id = row[0]
                connection.execute("DELETE FROM texts WHERE rowid = ?", (page_id,))
            names = NAMES_SEPARATOR.join((page.folded_title, page.folded_path, *page.folded_aliases))
            connection.execute(
                "INSERT INTO texts(rowid, names, body) VALUES (?, ?, ?)",
                (page_id, storable(names), storable(page.folded_text)),
            )
            ids[page.path] = page_id  # type: ignore[assignment]
        self.set_meta("written_ns", time.time_ns())
        return ids

    def remove(self, paths: Iterable[str]) -> None:
        """Drop the rows of ``paths`` (inside the caller's write transaction)."""
        for rel_path in paths:
            self._delete(_blob(rel_path))

    def _delete(self, path: bytes) -> None:
        row = self.connection.execute("DELETE FROM pages WHERE path = ? RETURNING id", (path,)).fetchone()
        if row is not None:
            self.connection.execute("DELETE FROM texts WHERE rowid = ?", row)

    # --- reading ---

    def stat_rows(self) -> dict[bytes, tuple[bytes, int, int, int, int, int, int, int, int]]:
        """Every page's row as a call that listed the vault checks each listed page against:
        (path, id, size, mtime_ns, ctime_ns, inode, device, racy, not_text), by its path as
        stored (``stored_path``). Kept as SQLite returns them: at 100,000 pages, building a
        record or even a nested tuple a row cost a find a third of a second."""
        rows = self.connection.execute(
            "SELECT path, id, size, mtime_ns, ctime_ns, inode, device, racy, not_text FROM pages"
        )
        return {row[0]: row for row in rows}

    def watched_by_stat(self) -> dict[str, tuple[int, StatKey, bool]]:
        """(id, stat key, racy) of the pages a watch cannot vouch for (racy, or with other
        hard links), by path: a served call stats these and the ones the server names."""
        rows = self.connection.execute(
            "SELECT path, id, size, mtime_ns, ctime_ns, inode, device, racy FROM pages WHERE racy OR volatile"
        )
        return {_text(path): (page_id, tuple(key), bool(racy)) for path, page_id, *key, racy in rows}

    def stat_keys_of(self, paths: Iterable[str]) -> dict[str, tuple[int, StatKey, bool]]:
        """(id, stat key, racy) of each of ``paths`` the index holds."""
        found: dict[str, tuple[int, StatKey, bool]] = {}
        for rel_path in paths:
            row = self.connection.execute(
                "SELECT id, size, mtime_ns, ctime_ns, inode, device, racy FROM pages WHERE path = ?",
                (_blob(rel_path),),
            ).fetchone()
            if row is not None:
                found[rel_path] = (row[0], tuple(row[1:6]), bool(row[6]))
        return found

    def identity(self, rel_path: str) -> tuple[int, int, int, int] | None:
        """The page as ``page.identity_of`` tells versions apart, as it was read."""
        row = self.connection.execute(
            "SELECT device, inode, size, mtime_ns FROM pages WHERE path = ?", (_blob(rel_path),)
        ).fetchone()
        return None if row is None else tuple(row)

    def page_count(self) -> int:
        return int(self.connection.execute("SELECT count(*) FROM pages").fetchone()[0])

    def not_text_count(self) -> int:
        return int(self.connection.execute("SELECT count(*) FROM pages WHERE not_text").fetchone()[0])

    def candidates(self, folded_keywords: Sequence[str]) -> list[IndexedPage]:
        """Every page whose names or text hold each keyword (the keywords ``answerable``),
        with each keyword's position in its text. Its trigrams pick the rows, ``instr``
        checks each keyword whole, in one statement."""
        holds = " AND ".join("(instr(texts.names, ?) > 0 OR instr(texts.body, ?) > 0)" for _ in folded_keywords)
        positions = ", ".join(f"instr(texts.body, ?) AS k{at}" for at in range(len(folded_keywords)))
        fields = "p.id, p.path, p.title, p.constellation, p.type, p.folded_title, p.folded_aliases"
        # The text before each keyword within the window comes with the row: a candidate
        # costs no query of its own in Python.
        found = ", ".join(
            f"k{at}, CASE WHEN k{at} BETWEEN 1 AND {LINE_WINDOW + 1} THEN substr(body, 1, k{at} - 1) END"
            for at in range(len(folded_keywords))
        )
        grams = trigrams(folded_keywords)
        where = f"texts MATCH ? AND {holds}" if grams else holds
        arguments: list[object] = list(folded_keywords)
        if grams:
            arguments.append(match_expression(grams))
        arguments += [keyword for keyword in folded_keywords for _ in (0, 1)]
        # Only "?" placeholders and column names are formatted in: every value is bound.
        joined = "texts JOIN pages AS p ON p.id = texts.rowid"
        inner = f"SELECT {fields}, texts.body AS body, {positions} FROM {joined} WHERE {where}"  # noqa: S608
        sql = f"SELECT id, path, title, constellation, type, folded_title, folded_aliases, {found} FROM ({inner})"  # noqa: S608
        return [IndexedPage(self, folded_keywords, row) for row in self.connection.execute(sql, arguments)]

    def holding(self, folded_keyword: str) -> list[int]:
        """The ids of the pages whose names or text hold the keyword (a miss counts them)."""
        grams = trigrams([folded_keyword])
        holds = "(instr(names, ?) > 0 OR instr(body, ?) > 0)"
        if grams:
            sql = f"SELECT rowid FROM texts WHERE texts MATCH ? AND {holds}"  # noqa: S608 - placeholders only
            arguments: tuple[str, ...] = (match_expression(grams), folded_keyword, folded_keyword)
        else:
            sql, arguments = f"SELECT rowid FROM texts WHERE {holds}", (folded_keyword, folded_keyword)  # noqa: S608
        return [row[0] for row in self.connection.execute(sql, arguments)]

    def text_before(self, page_id: int, length: int) -> str:
        """The first ``length`` characters of a page's stored folded text."""
        row = self.connection.execute(
            "SELECT substr(body, 1, ?) FROM texts WHERE rowid = ?", (length, page_id)
        ).fetchone()
        if row is None:
            raise IndexUnusable("a candidate's row is gone")  # only outside one call's snapshot
        return str(row[0])

    def heads_without_recall(self) -> list[tuple[int, bytes | None]]:
        """(id, frontmatter bytes) of every page whose recall fields are not made yet."""
        return list(self.connection.execute("SELECT id, head FROM pages WHERE recall IS NULL"))

    def set_recall(self, made: Iterable[tuple[int, RecallFields | None]]) -> None:
        """Keep the recall fields made for pages (inside the caller's write transaction)."""
        self.connection.executemany(
            "UPDATE pages SET recall = ? WHERE id = ?", ((_recall_blob(fields), page_id) for page_id, fields in made)
        )

    def recall_rows(self) -> Iterable[tuple[int, str, RecallFields | None, tuple[int, int, int, int]]]:
        """(id, path, recall fields, identity) of every page, its recall fields made."""
        rows = self.connection.execute("SELECT id, path, recall, device, inode, size, mtime_ns FROM pages")
        for page_id, path, recall, *identity in rows:
            yield page_id, _text(path), _recall_fields(recall), tuple(identity)


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

    from mnemosyne_core.recall import RecallFields

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


__all__ = ["FORMAT", "IndexUnusable", "IndexedPage", "NoteIndex", "answerable", "fault_of"]
