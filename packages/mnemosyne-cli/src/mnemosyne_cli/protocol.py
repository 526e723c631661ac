"""What crosses the socket between ``wiki serve`` and a find or recall call: data only.

A request names what the query needs and nothing of the caller: the resolved vault, its
layout, the keywords or topic, the limit, and whether the call wants page content. No
environment, no working dir, no terminal: the caller resolves all of that itself and
renders the answer with the scan's own code. A reply carries the search result (matches,
counts, diagnostics) or says why the server does not answer (then the caller scans).

- A frame is a 4-byte big-endian length, then that many bytes.
- A request is NUL-separated UTF-8 (surrogateescape) fields::

      version, op, vault, layout item count, layout items..., limit, wants, terms...

  ``op`` is ``find``, ``recall`` or ``status`` (which has no further field). A layout item
  is ``key=value``, in this order: ``depth=flat|tree``, one ``dir=NAME`` per searched dir
  in order, one ``suffix=.md`` per page suffix, one ``exclude=PATTERN`` per exclude
  pattern, then ``dirs-given=0|1`` (whether --dir named the dirs, which decides a
  warning): everything of the layout that decides which files are listed. Each value is
  checked by the config's own rules; anything else is an error reply.
  ``wants`` is empty or ``content`` (--cat, recall's read entries: the caller then reads
  those pages itself and checks they are the ones the server judged).
- A reply is ``marshal`` data ``(version, status, body)``: ``ok`` with the result,
  ``unserved`` with the reason (scan instead), ``error`` for a request it refused. A
  result that matched nothing carries the markdown files the layout leaves out when the
  server keeps them (a tree), so the caller words its miss note without walking the
  vault; ``None`` there means the caller walks for them.

This module is on the start-up path of every find: it imports nothing at module level
beyond ``os`` and ``marshal`` (built in); the core's result types are imported when a reply
is turned into one.
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from mnemosyne_core.config import Layout
    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.results import FindResult
    from mnemosyne_core.vault import Identity

PROTOCOL_VERSION = 4
#: A request holds a query; a reply a result (never a page's text: callers read those).
MAX_REQUEST_BYTES = 1 << 20
MAX_REPLY_BYTES = 1 << 28
OP_FIND = "find"
OP_RECALL = "recall"
OP_STATUS = "status"
WANT_CONTENT = "content"
STATUS_OK = "ok"
STATUS_UNSERVED = "unserved"
STATUS_ERROR = "error"
#: At most this many layout items or terms, and digits in a count or limit: bounds for
#: the strict decoder, far above any real call.
MAX_ITEMS = 4096
MAX_DIGITS = 9


class ProtocolError(ValueError):
    """Bytes that are not a request or reply this version understands."""


# --- where a vault's server lives ---


def socket_dir(environ: Mapping[str, str] = os.environ) -> str:
    """The per-user dir holding the sockets and locks: ``$XDG_RUNTIME_DIR/mnemosyne``,
    else ``<user cache dir>/mnemosyne/run``. Nothing lives in the vault."""
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "mnemosyne")
    cache = environ.get("XDG_CACHE_HOME")
    if not cache or not os.path.isabs(cache):
        cache = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "mnemosyne", "run")


def unsafe_dir_reason(path: str, *, private: bool = True) -> str | None:
    """Why ``path`` cannot hold our sockets, or None when it can: it must be a real dir
    (not a symlink) owned by us, and not writable by others (``private``: not even
    readable by them). The server checks it before listening, the client before asking."""
    import stat

    try:
        info = os.lstat(path)
    except OSError as error:
        return f"{path}: {error.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if info.st_uid != os.geteuid():
        return f"{path} is owned by uid {info.st_uid}, not by us (uid {os.geteuid()})"
    mask = 0o077 if private else 0o022
    if info.st_mode & mask:
        return f"{path} has mode {stat.S_IMODE(info.st_mode):o}; it must not be open to other users"
    return None


def runtime_parent(environ: Mapping[str, str] = os.environ) -> str | None:
    """XDG_RUNTIME_DIR when the socket dir lies in it (it must then not be open to others
    for writing), else None."""
    path = socket_dir(environ)
    runtime = environ.get("XDG_RUNTIME_DIR")
    return runtime if runtime and os.path.dirname(path) == runtime else None


def vault_key(vault_real: str) -> str:
    """A short name for a vault, from its real path: a server's socket and lock file."""
    from _blake2 import blake2b

    return blake2b(os.fsencode(vault_real), digest_size=12).hexdigest()


def socket_path(vault_real: str, environ: Mapping[str, str] = os.environ) -> str:
    return os.path.join(socket_dir(environ), vault_key(vault_real) + ".sock")


def lock_path(vault_real: str, environ: Mapping[str, str] = os.environ) -> str:
    return os.path.join(socket_dir(environ), vault_key(vault_real) + ".lock")


# --- frames ---


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def frame_length(head: bytes) -> int:
    return int.from_bytes(head[:4], "big")


# --- requests ---


class Request:
    """A decoded request. ``layout`` is its items as (key, value) pairs, in order."""

    __slots__ = ("layout", "limit", "op", "terms", "vault", "wants_content")

    def __init__(
        self,
        op: str,
        vault: str = "",
        layout: Sequence[tuple[str, str]] = (),
        limit: int = 0,
        wants_content: bool = False,
        terms: Sequence[str] = (),
    ):
        self.op = op
        self.vault = vault
        self.layout = tuple(layout)
        self.limit = limit
        self.wants_content = wants_content
        self.terms = tuple(terms)

    def encode(self) -> bytes:
        if self.op == OP_STATUS:
            fields = [str(PROTOCOL_VERSION), self.op]
        else:
            items = [f"{key}={value}" for key, value in self.layout]
            wants = WANT_CONTENT if self.wants_content else ""
            fields = [str(PROTOCOL_VERSION), self.op, self.vault, str(len(items)), *items, str(self.limit), wants]
            fields += self.terms
        return "\0".join(fields).encode("utf-8", "surrogateescape")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        return all(getattr(self, slot) == getattr(other, slot) for slot in Request.__slots__)

    def __repr__(self) -> str:
        return (
            f"Request({self.op!r}, {self.vault!r}, {self.layout!r}, {self.limit}, {self.wants_content}, {self.terms!r})"
        )


def layout_items(layout: Layout, dirs_given: bool) -> tuple[tuple[str, str], ...]:
    """The layout items of ``layout`` (its dirs named by --dir: ``dirs_given``)."""
    return (
        ("depth", layout.depth),
        *(("dir", name) for name in layout.dirs),
        *(("suffix", suffix) for suffix in layout.suffixes),
        *(("exclude", pattern) for pattern in layout.exclude),
        ("dirs-given", "1" if dirs_given else "0"),
    )


#: The keys of the layout items, in the order they come (``layout_items``).
_LAYOUT_KEYS = ("depth", "dir", "suffix", "exclude", "dirs-given")


def decode_layout(items: Sequence[tuple[str, str]]) -> tuple[Layout, bool]:
    """The layout the items of ``layout_items`` describe, and whether --dir named its dirs;
    ProtocolError for items out of order, a key it does not know, or a value the config
    would refuse (a dir, suffix or pattern that ``.mnemosyne.toml`` could not hold)."""
    from mnemosyne_core.config import DEPTHS, Layout, check_dir_name, check_suffix, pattern_error

    values: dict[str, list[str]] = {key: [] for key in _LAYOUT_KEYS}
    last = 0
    for key, value in items:
        if key not in values:
            raise ProtocolError(f"unknown layout key {key[:20]!r}")
        order = _LAYOUT_KEYS.index(key)
        if order < last:
            raise ProtocolError(f"layout key {key!r} out of order")
        last = order
        values[key].append(value)
    depth, given = values["depth"], values["dirs-given"]
    if len(depth) != 1 or depth[0] not in DEPTHS:
        raise ProtocolError("the layout needs one depth, flat or tree")
    if len(given) != 1 or given[0] not in ("0", "1"):
        raise ProtocolError("the layout needs one dirs-given, 0 or 1")
    dirs, suffixes, exclude = values["dir"], values["suffix"], values["exclude"]
    if not dirs or not suffixes:
        raise ProtocolError("the layout needs a dir and a suffix")
    if len(set(dirs)) != len(dirs) or any(check_dir_name(name) for name in dirs):
        raise ProtocolError("a layout dir is repeated or not a vault-relative dir")
    if any(check_suffix(suffix) for suffix in suffixes):
        raise ProtocolError("a layout suffix is not one a page can end in")
    if any(pattern_error(pattern) for pattern in exclude):
        raise ProtocolError("a layout exclude pattern is not one")
    return Layout(tuple(dirs), depth[0], tuple(suffixes), tuple(exclude)), given[0] == "1"


def _count(text: str, limit: int) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS):
        raise ProtocolError(f"not a count: {text[:20]!r}")
    value = int(text)
    if value > limit:
        raise ProtocolError(f"count {value} exceeds {limit}")
    return value


def decode_request(payload: bytes) -> Request:
    """The request in ``payload``; ProtocolError for anything else, whatever the bytes."""
    fields = payload.decode("utf-8", "surrogateescape").split("\0")
    if fields[0] != str(PROTOCOL_VERSION):
        raise ProtocolError(f"protocol version {fields[0][:20]!r}, not {PROTOCOL_VERSION}")
    if len(fields) < 2:
        raise ProtocolError("no operation")
    op = fields[1]
    if op == OP_STATUS:
        if len(fields) != 2:
            raise ProtocolError("status takes no field")
        return Request(op)
    if op not in (OP_FIND, OP_RECALL):
        raise ProtocolError(f"unknown operation {op[:20]!r}")
    if len(fields) < 4:
        raise ProtocolError("request too short")
    vault = fields[2]
    if not os.path.isabs(vault):
        raise ProtocolError("the vault is not an absolute path")
    count = _count(fields[3], min(MAX_ITEMS, len(fields) - 4))
    layout = []
    for item in fields[4 : 4 + count]:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise ProtocolError("a layout item is not key=value")
        layout.append((key, value))
    decode_layout(layout)
    rest = fields[4 + count :]
    if len(rest) < 3:
        raise ProtocolError("no limit, wants or term")
    limit = _count(rest[0], 10**MAX_DIGITS)
    if rest[1] not in ("", WANT_CONTENT):
        raise ProtocolError(f"unknown want {rest[1][:20]!r}")
    terms = rest[2:]
    if len(terms) > MAX_ITEMS or not all(term.strip() for term in terms):
        raise ProtocolError("a term is blank, or too many terms")
    return Request(op, vault, layout, limit, rest[1] == WANT_CONTENT, terms)


# --- replies ---


def encode_reply(status: str, body: Any = None) -> bytes:
    return marshal.dumps((PROTOCOL_VERSION, status, body))


def decode_reply(payload: bytes) -> tuple[str, Any]:
    """(status, body) of a reply; ProtocolError when it is not one of this version. Only a
    server running as the caller's own user is ever asked (SO_PEERCRED), so marshal's
    input is as trusted as the caller's own files; the shape is still checked."""
    try:
        reply = marshal.loads(payload)  # noqa: S302 - from a server of our own uid (SO_PEERCRED)
    except (EOFError, ValueError, TypeError) as error:
        raise ProtocolError(f"not a reply: {error}") from None
    if not (isinstance(reply, tuple) and len(reply) == 3 and reply[0] == PROTOCOL_VERSION):
        raise ProtocolError("not a reply of this version")
    if reply[1] not in (STATUS_OK, STATUS_UNSERVED, STATUS_ERROR):
        raise ProtocolError("unknown reply status")
    return reply[1], reply[2]


def _match_slots() -> tuple[str, ...]:
    from mnemosyne_core.results import Match

    return tuple(slot for slot in Match.__slots__ if slot != "content")


#: FindResult's fields that are not plain numbers or text, carried each in its own way.
_FIND_RESULT_PARTS = ("keyword_counts", "left_out", "matches", "warnings")


def _result_slots() -> tuple[str, ...]:
    from mnemosyne_core.results import FindResult

    return tuple(slot for slot in FindResult.__slots__ if slot not in _FIND_RESULT_PARTS)


def find_body(result: FindResult, identity: Identity | None) -> tuple[Any, ...]:
    """A find result as reply data: its plain fields and every field of every match by
    name, as the core defines them (so a field added there travels without a change
    here), but no match's content, which the caller reads itself (``identity``: of the
    one match, when the request wanted content)."""
    slots, fields = _match_slots(), _result_slots()
    return (
        fields,
        tuple(getattr(result, slot) for slot in fields),
        tuple(result.keyword_counts.items()),
        slots,
        tuple(tuple(getattr(match, slot) for slot in slots) for match in result.matches),
        tuple(warning.as_fields() for warning in result.warnings),
        identity,
        _left_out_body(result.left_out),
    )


def find_result(body: Any) -> tuple[FindResult, Identity | None]:
    """The FindResult a find reply's body holds (ProtocolError when it is malformed)."""
    from mnemosyne_core.results import FindResult, Match

    try:
        fields, values, counts, slots, matches, warnings, identity, left_out = body
        if fields != _result_slots() or slots != _match_slots():
            raise ProtocolError("the result has other fields")
        result = FindResult()
        for slot, value in zip(fields, values, strict=True):
            if not isinstance(value, (int, str)) or isinstance(value, bool):
                raise TypeError(f"{slot} is not a number or text")
            setattr(result, slot, value)
        result.keyword_counts = {_text(keyword): _number(count) for keyword, count in counts}
        for values_of_match in matches:
            match = Match.__new__(Match)
            match.content = None
            for slot, value in zip(slots, values_of_match, strict=True):
                setattr(match, slot, value)
            result.matches.append(match)
        result.warnings = [_diagnostic(fields) for fields in warnings]
        result.left_out = _left_out(left_out)
        return result, _identity(identity)
    except (TypeError, ValueError) as error:
        raise ProtocolError(f"malformed find reply: {error}") from None


def recall_body(result: RecallResult, identities: Sequence[Identity] | None) -> tuple[Any, ...]:
    """A recall result as reply data; the read entries' text stays out (the caller reads
    those pages itself, checking them against ``identities``)."""
    entries = tuple(
        (
            entry.page.dir,
            entry.page.name,
            entry.title,
            entry.slug,
            tuple(entry.tags),
            entry.updated.toordinal() if entry.updated is not None else None,
        )
        for entry in result.matches
    )
    return (
        result.vault,
        result.topic,
        tuple(result.terms),
        entries,
        result.pages_searched,
        result.unreadable,
        result.unseen,
        tuple(warning.as_fields() for warning in result.warnings),
        tuple(identities) if identities is not None else None,
        _left_out_body(result.left_out),
    )


def recall_result(body: Any) -> tuple[RecallResult, list[Identity] | None]:
    """The RecallResult a recall reply's body holds, its read entries without their text
    (ProtocolError when it is malformed)."""
    import datetime

    from mnemosyne_core.recall import Entry, RecallResult
    from mnemosyne_core.vault import PageRef

    try:
        vault, topic, terms, entries, searched, unreadable, unseen, warnings, identities, left_out = body
        result = RecallResult(_text(vault), _text(topic), tuple(_text(term) for term in terms))
        for dir_name, name, title, slug, tags, updated in entries:
            page = PageRef(_text(dir_name), _text(name), "")
            day = datetime.date.fromordinal(_number(updated)) if updated is not None else None
            tag_list = [_text(tag) for tag in tags]
            entry = Entry(page, _optional_text(title), _optional_text(slug), tag_list, day, b"")
            entry.content = None  # the caller reads the read entries' text itself
            result.matches.append(entry)
        result.pages_searched, result.unreadable, result.unseen = (_number(n) for n in (searched, unreadable, unseen))
        result.warnings = [_diagnostic(fields) for fields in warnings]
        result.left_out = _left_out(left_out)
        read = None if identities is None else [_identity(identity) for identity in identities]
        if read is not None and (None in read or len(read) != len(result.read)):
            raise ProtocolError("the read entries' identities do not fit")
        return result, read  # type: ignore[return-value]
    except (TypeError, ValueError, OverflowError) as error:
        raise ProtocolError(f"malformed recall reply: {error}") from None


def _left_out_body(left_out: Sequence[tuple[str, str]] | None) -> tuple[tuple[str, str], ...] | None:
    """A result's ``left_out`` as reply data (None: the server does not keep them)."""
    return None if left_out is None else tuple(left_out)


def _left_out(value: object) -> list[tuple[str, str]] | None:
    """The ``left_out`` of a reply: None, or (kind, vault-relative path) pairs of the
    kinds ``vault.scan`` lists."""
    from mnemosyne_core.vault import LEFT_OUT_NESTED, LEFT_OUT_SUFFIX

    if value is None:
        return None
    if not isinstance(value, tuple):
        raise TypeError("expected the files left out")
    left_out = []
    for kind, rel_path in value:
        if kind not in (LEFT_OUT_NESTED, LEFT_OUT_SUFFIX):
            raise ValueError("not a kind of file left out")
        if kind == LEFT_OUT_SUFFIX and "." not in _text(rel_path).rpartition("/")[2]:
            raise ValueError("a file left out for its suffix has none")
        left_out.append((_text(kind), _text(rel_path)))
    return left_out


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value


def _optional_text(value: object) -> str | None:
    return None if value is None else _text(value)


def _number(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError("expected a count")
    return value


def _identity(value: object) -> Identity | None:
    if value is None:
        return None
    if not (isinstance(value, tuple) and len(value) == 4):
        raise TypeError("expected a page identity")
    return (_number(value[0]), _number(value[1]), _number(value[2]), _number(value[3]))


def _diagnostic(fields: Any) -> Any:
    from mnemosyne_core.diagnostics import Diagnostic

    path, code, detail, is_dir = fields
    if not isinstance(is_dir, bool):
        raise TypeError("expected a flag")
    return Diagnostic(_text(path), _text(code), _text(detail), is_dir=is_dir)
