"""Frontmatter: the YAML mapping between a page's first line ``---`` and the next line that
is exactly ``---`` or ``...`` (YAML's document end; a trailing CR ignored).

``loads`` is pure over text, ``load`` a thin wrapper over a file, as in python-frontmatter.
Everything is parsed by PyYAML's safe loader (``parse_block``), except common ``key: value``
blocks, read from the raw bytes without importing YAML: find takes their string fields
(``fast_string_fields``), lint and recall the entries of the keys they read (``fast_mapping``,
by ``parse_block_bytes``); tests/test_fast_paths.py holds each to PyYAML's answers.
"""

from __future__ import annotations

from mnemosyne_core.fold import BOM, RegexOnceItPays, decode
from mnemosyne_core.record import Record

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    import os
    import re
    from collections.abc import Container, Mapping
    from typing import Any

#: Larger frontmatter is treated as invalid: parsing one title must stay bounded.
MAX_BLOCK_BYTES = 1 << 20
#: Deeper flow nesting ([[[...) outside quotes is treated as invalid (see _flow_depth_exceeds).
MAX_FLOW_DEPTH = 64

# Why a page's frontmatter could not be used (lint reports these; find only searches).
STATUS_OK = "ok"
STATUS_ABSENT = "absent"
STATUS_UNCLOSED = "unclosed"
STATUS_INVALID = "invalid"
STATUS_NOT_MAPPING = "not-mapping"


def locate(data: bytes) -> tuple[int, int, int] | None:
    """Byte offsets ``(block_start, block_end, body_start)`` of the frontmatter in ``data``,
    or None when ``data`` has none or it is not closed."""
    block_start = _opening_end(data)
    if block_start < 0:
        return None
    # The closing line starts at the block's start or right after a newline (the opening
    # line ends in one, so a search from its newline finds both). It is `---` or YAML's
    # document end `...`, which Jekyll and YAML both take; the first of either closes it.
    dashes = data.find(b"\n---", block_start - 1)
    dots = data.find(b"\n...", block_start - 1)
    while dashes >= 0 or dots >= 0:
        newline = dashes if dots < 0 or 0 <= dashes < dots else dots
        block_end = newline + 1
        line_end = block_end + 3
        if data[line_end : line_end + 1] == b"\r":
            line_end += 1
        if data[line_end : line_end + 1] in _LINE_ENDS:
            return block_start, block_end, line_end + (data[line_end : line_end + 1] == b"\n")
        if newline == dashes:
            dashes = data.find(b"\n---", block_end)
        else:
            dots = data.find(b"\n...", block_end)
    return None


#: What may follow a closing `---` (and its CR): a newline or the end of the page.
_LINE_ENDS = (b"\n", b"")


def _opening_end(data: bytes) -> int:
    """Where the block starts: past the opening `---` line (a BOM before it ignored, a CR
    before its newline taken), or -1 when ``data`` does not start with one."""
    start = 3 if data.startswith(BOM) else 0
    if data.startswith(b"---\n", start):
        return start + 4
    return start + 5 if data.startswith(b"---\r\n", start) else -1


def opens_frontmatter(data: bytes) -> bool:
    """Whether ``data`` starts with the ``---`` line, so its frontmatter may close later."""
    return _opening_end(data) >= 0


class Frontmatter(Record):
    """A page split into its frontmatter mapping (None when unusable) and its body."""

    __slots__ = ("body", "metadata", "status")

    def __init__(self, metadata: dict[Any, Any] | None, body: str, status: str):
        self.metadata = metadata
        self.body = body
        self.status = status


def loads_bytes(data: bytes) -> Frontmatter:
    """Split and parse a page given as raw bytes (decoded as find decodes them)."""
    span = locate(data)
    if span is None:
        return Frontmatter(None, decode(data), _missing_status(data))
    block_start, block_end, body_start = span
    metadata, status = parse_block_bytes(data[block_start:block_end])
    return Frontmatter(metadata, data[body_start:].decode("utf-8", "replace"), status)


def page_metadata(data: bytes, keys: Container[str] | None = None) -> tuple[dict[Any, Any] | None, str]:
    """``loads_bytes``' metadata and status, without decoding the body; with ``keys``, as
    for ``parse_block_bytes``."""
    span = locate(data)
    if span is None:
        return None, _missing_status(data)
    return parse_block_bytes(data[span[0] : span[1]], keys)


def _missing_status(data: bytes) -> str:
    """The status of a page without a closed frontmatter."""
    return STATUS_UNCLOSED if opens_frontmatter(data) else STATUS_ABSENT


def loads(text: str) -> Frontmatter:
    """Split and parse a page given as text."""
    return loads_bytes(text.encode("utf-8", "surrogatepass"))


def load(path: str | os.PathLike[str]) -> Frontmatter:
    """Split and parse the page at ``path``."""
    with open(path, "rb") as handle:
        return loads_bytes(handle.read())


def parse_block_bytes(block: bytes, keys: Container[str] | None = None) -> tuple[dict[Any, Any] | None, str]:
    """``parse_block`` of a raw block (decoded as find decodes pages), answered without
    YAML when the block is in the fast subset (``fast_mapping``). With ``keys``, the
    mapping may hold only those keys' entries (it does when answered without YAML)."""
    mapping = fast_mapping(block, keys)
    if mapping is not None:
        return mapping, STATUS_OK
    return parse_block(block.decode("utf-8", "replace"))


def parse_block(block: str) -> tuple[dict[Any, Any] | None, str]:
    """The mapping a frontmatter block holds and its status (None unless a mapping), by
    PyYAML's safe loader (its C loader when built), bounded in size and nesting."""
    if _too_large(block) or _flow_depth_exceeds(block, MAX_FLOW_DEPTH):
        return None, STATUS_INVALID
    import yaml  # lazy: ~20 ms that a query over plain frontmatter never pays

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        value = yaml.load(block, Loader=loader)  # noqa: S506 - a safe loader, always
    except Exception:
        # The safe constructors raise more than YAMLError: ValueError for 2026-13-45,
        # KeyError for `!!bool maybe`, AttributeError for `!!timestamp nope`, ...
        return None, STATUS_INVALID
    if not isinstance(value, dict):
        return None, STATUS_NOT_MAPPING
    return value, STATUS_OK


def _too_large(block: str) -> bool:
    # MAX_BLOCK_BYTES counts bytes; a character is at most 4 of them.
    return len(block) * 4 > MAX_BLOCK_BYTES and len(block.encode("utf-8", "surrogatepass")) > MAX_BLOCK_BYTES


_OPENS_QUOTE_AFTER = frozenset("\n:[{,-")


def _flow_depth_exceeds(block: str, limit: int) -> bool:
    """Whether ``[``/``{`` nest deeper than ``limit`` outside quoted scalars. Deep nesting
    takes the pure-Python loader seconds and stops libyaml (>= 0.2.5) only at 1000, so one
    limit, whatever the build, keeps the answer the same on every machine."""
    if block.count("[") + block.count("{") <= limit:
        return False
    depth = 0
    quote = ""
    previous = "\n"  # the last character outside a quote that is not a space
    escaped = False
    for char in block:
        if quote:
            if escaped:
                escaped = False
            elif quote == '"' and char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'" and previous in _OPENS_QUOTE_AFTER:
            quote = char
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}" and depth:
            depth -= 1
        if char != " ":
            previous = char
    return False


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace (newlines and tabs too) as one space, the ends stripped."""
    return " ".join(text.split())


def title_of(metadata: Mapping[Any, Any] | None, stem: str) -> str:
    """The frontmatter title when it is a non-empty string after collapsing whitespace,
    else the file name stem."""
    title = metadata.get("title") if metadata else None
    if isinstance(title, str):
        title = collapse_whitespace(title)
        if title:
            return title
    return stem


# --- Logseq: page properties and page names -----------------------------------------------


def logseq_properties(data: bytes) -> dict[str, Any] | None:
    """The title and aliases of a Logseq page from its first block's properties (``title::
    Page``, ``alias:: [[One]], Two``), as a mapping ``title_of`` and ``find.aliases_of``
    read (None when the page does not open with a property). The first block is the lines
    before the first blank line or bullet; or, when the page opens with a bullet, that
    bullet's line and its indented lines. Properties are read up to the first line that is
    not one. Only a page without frontmatter is read so: frontmatter holds its own."""
    start = 3 if data.startswith(BOM) else 0
    line_end = data.find(b"\n", start)
    first_line = data[start : line_end if line_end >= 0 else len(data)]
    if b"::" not in first_line:
        return None  # every page that is not Logseq's stops here, at one memchr
    text = data[start:].decode("utf-8", "replace")
    lines = text.split("\n")
    bulleted = lines[0].startswith("- ")
    fields: dict[str, Any] = {}
    for number, line in enumerate(lines):
        line = line.removesuffix("\r")
        if bulleted:
            if number == 0:
                line = line[2:]
            elif not line[:1].isspace() or line.lstrip().startswith("- "):
                break
        key, separator, value = line.strip().partition(":: ")
        if not separator:
            key, separator, value = (line.strip()[:-2], "::", "") if line.strip().endswith("::") else ("", "", "")
        if not separator or not key or not all(char.isalnum() or char in "-_" for char in key):
            break
        key = key.lower()
        if key == "title" and "title" not in fields:
            fields["title"] = value
        elif key == "alias" and "aliases" not in fields:
            fields["aliases"] = [_unbracketed(item) for item in value.split(",")]
    return fields or None


def _unbracketed(item: str) -> str:
    """A page reference as Logseq writes it in a property, ``[[Page]]``, as its name."""
    item = item.strip()
    if item.startswith("[[") and item.endswith("]]"):
        return item[2:-2]
    return item


#: How Logseq's file names (``:file/name-format :triple-lowbar``) spell a namespace's ``/``.
LOGSEQ_NAMESPACE = "___"


def logseq_page_name(stem: str) -> str:
    """The page name Logseq shows for a file name stem: ``A___B___C`` is ``A/B/C``, and
    ``%3F``-style escapes (of ``?``, ``#``, ``%`` ... as UTF-8) are the characters they stand
    for. A stem with neither is returned as it is (the same object), and so is a ``%`` not
    followed by an escape that decodes to UTF-8."""
    if LOGSEQ_NAMESPACE not in stem and "%" not in stem:
        return stem
    name = stem.replace(LOGSEQ_NAMESPACE, "/")
    if "%" in name:
        name = _percent_decoded(name)
    return name if name != stem else stem


def _percent_decoded(name: str) -> str:
    """``name`` with each run of ``%XX`` escapes decoded as UTF-8, a run that does not
    decode left as it is."""
    pieces = name.split("%")
    out = [pieces[0]]
    escaped = bytearray()
    for piece in pieces[1:]:
        hex_digits = piece[:2]
        if len(hex_digits) == 2 and all(char in "0123456789abcdefABCDEF" for char in hex_digits):
            escaped.append(int(hex_digits, 16))
            if len(piece) == 2:
                continue
            out.append(_decoded_run(escaped))
            escaped = bytearray()
            out.append(piece[2:])
        else:
            out.append(_decoded_run(escaped))
            escaped = bytearray()
            out.append("%" + piece)
    out.append(_decoded_run(escaped))
    return "".join(out)


def _decoded_run(escaped: bytearray) -> str:
    if not escaped:
        return ""
    try:
        return escaped.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"%{byte:02X}" for byte in escaped)


#: A backslash escape as a YAML double-quoted scalar reads it: hex digits, a line break with
#: the next line's indentation (the lines join), or one character.
_ESCAPE = r"\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|(?:\r\n|[\r\n\x85\u2028\u2029])[ \t]*|.)"
#: The one-character escapes of YAML's double-quoted scalars, as PyYAML reads them.
_ESCAPED_CHARACTERS = dict(zip('0abt\tnvfre "/\\N_LP', '\0\a\b\t\t\n\v\f\r\x1b "/\\\x85\xa0\u2028\u2029', strict=True))


def unescaped(block: str) -> str:
    """``block`` with every backslash escape decoded as a YAML double-quoted scalar decodes
    it, wherever it stands. A string the block holds is then in the block as written (plain,
    single-quoted and block scalars take a backslash as it is) or in this text (double
    quotes), but for line breaks and indentation: an escape never reaches past the quote
    that opens a string, so the decoding is in step with YAML's inside every double-quoted
    string. An escape YAML rejects is left as written (YAML then reads no mapping)."""
    if "\\" not in block:
        return block
    return compiled(_ESCAPE).sub(_decode_escape, block)


def _decode_escape(match: re.Match[str]) -> str:
    escape = match.group()[1:]
    if len(escape) > 1 and escape[0] in "xuU":
        code = int(escape[1:], 16)
        return chr(code) if code <= 0x10FFFF else match.group()
    if escape[0] in "\r\n\x85\u2028\u2029":
        return ""  # an escaped line break joins the lines
    return _ESCAPED_CHARACTERS.get(escape, match.group())


def string_field(metadata: Mapping[Any, Any] | None, key: str) -> str | None:
    """``metadata[key]`` when it is a string, else None."""
    value = metadata.get(key) if metadata else None
    return value if isinstance(value, str) else None


# --- the fast path: a strict subset of YAML whose meaning is certain without a parser ---

# PyYAML's implicit resolvers for words (YAML 1.1 booleans and null).
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL"), None),
}
_WORD_BYTES = frozenset(word.encode("ascii") for word in _WORDS)
#
# find needs only a page's string fields (title, constellation, type), and most vaults write
# every frontmatter line as `key: value` with a word, a quoted string, a date or a flow list
# of words. Such a block is checked as a whole and its strings taken as they are. The
# subset, line by line:
# - `key: value`, the key a letter or `_` then letters, digits, `_` and `-` (keys YAML reads
#   as booleans or null are refused by the readers, not here), the value one of
#   - plain text: a letter, then no control, `: # [ ] { } " \` or backquote, not ending in a space;
#   - a quoted string without controls, and without escapes in double quotes;
#   - a date that exists in every year, so YAML's date constructor never raises on it
#     (February 29th goes the plain path);
#   - a flow list of items (`[a, b-c, Two words]`, `[]`), an item words joined by single
#     spaces, a word a letter then letters, digits, `. _ / -` (an item starting with a
#     letter and holding no `,:#` is a plain string unless it is a boolean or null word;
#     Obsidian writes `aliases: [Other name, Old name]`);
# - `key:` then its items one per line (`  - item`), all at the indentation of the first;
# - every line ending in LF, and outside ASCII none of the characters YAML rejects or reads
#   as a line break (U+0080-U+009F, U+2028, U+2029), or reads differently by build (U+FEFF:
#   older libyaml rejects it), nor U+FFFE, U+FFFF.
# It is spelled twice: as one regex (_FAST_BLOCK), the fastest check over many pages, and
# as Python over bytes (``_lines_in_subset``), which spares a call that reads a few blocks
# importing re and compiling the regex, milliseconds of its start-up (``RegexOnceItPays``).
# tests/test_fast_paths.py holds the two to the same answers, and the readers to PyYAML's,
# on generated blocks in and out of the subset.

_FAST_KEY = rb"[A-Za-z_][A-Za-z0-9_-]*"
_FAST_PLAIN = rb"[A-Za-z](?:[^\x00-\x1f\x7f:#\[\]{}\"\\`]*[^\x00-\x20\x7f:#\[\]{}\"\\`])?"
_FAST_QUOTED = rb"\"[^\x00-\x1f\x7f\"\\]*\"|'[^\x00-\x1f\x7f']*'"
_FAST_DATE = (
    rb"[1-9][0-9]{3}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
)
_FAST_WORD = rb"[A-Za-z][A-Za-z0-9._/-]*"
_FAST_ITEM = _FAST_WORD + rb"(?: " + _FAST_WORD + rb")*"
_FAST_LIST = rb"\[(?:" + _FAST_ITEM + rb"(?:, " + _FAST_ITEM + rb")*)?\]"
_FAST_VALUE = rb"(?:" + rb"|".join((_FAST_PLAIN, _FAST_QUOTED, _FAST_DATE, _FAST_LIST)) + rb")"
_FAST_BLOCK_LIST = rb":\n( *)- " + _FAST_ITEM + rb"\n(?:\1- " + _FAST_ITEM + rb"\n)*"
_FAST_BLOCK = rb"(?:" + _FAST_KEY + rb"(?:: " + _FAST_VALUE + rb"\n|" + _FAST_BLOCK_LIST + rb"))+"
#: When a block is checked by _FAST_BLOCK rather than by ``_lines_in_subset``.
_SUBSET_REGEX = RegexOnceItPays()

#: How the line of a block list's item starts.
_ITEM_STARTS = (b" ", b"-")
_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_KEY_BYTES = _LETTERS + b"0123456789_-"
_WORD_OF_LIST_BYTES = _LETTERS + b"0123456789._/-"
_PLAIN_BYTES = bytes(byte for byte in range(0x20, 0x100) if byte not in b'\x7f:#[]{}"\\`')
_DOUBLE_QUOTED_BYTES = bytes(byte for byte in range(0x20, 0x100) if byte not in b'\x7f"\\')
_SINGLE_QUOTED_BYTES = bytes(byte for byte in range(0x20, 0x100) if byte not in b"\x7f'")
#: Per month, the days it has in every year (February 29th is not one of them).
_DAYS_IN_EVERY_YEAR = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
#: The UTF-8 of the characters outside ASCII that the subset leaves out, but U+0080-U+009F
#: (C2 80-C2 9F, see ``_outside_subset``). Only valid UTF-8 decodes to them, and these lead
#: bytes start a character wherever they stand, so bytes and decoded text hold them alike.
_OUTSIDE_SUBSET_UTF8 = tuple(char.encode("utf-8") for char in "\u2028\u2029\ufeff\ufffe\uffff")


def _fast_lines(block: bytes) -> list[bytes] | None:
    """The lines of ``block`` (each without its LF) when every one is in the fast subset;
    None otherwise."""
    if len(block) > MAX_BLOCK_BYTES:
        return None
    if _SUBSET_REGEX.pays():
        lines = block[:-1].split(b"\n") if compiled(_FAST_BLOCK).fullmatch(block) is not None else None
    else:
        lines = _lines_in_subset(block)
    if lines is None or (not block.isascii() and _outside_subset(block)):
        return None
    return lines


def _lines_in_subset(block: bytes) -> list[bytes] | None:
    """``block``'s lines when _FAST_BLOCK matches it whole, else None; without a regex."""
    if block[-1:] != b"\n":
        return None
    lines = block[:-1].split(b"\n")
    list_indent = -1  # the indentation of the items of the block list open, -1 when none is
    list_opened = False  # the line before was `key:`: an item must follow
    for line in lines:
        first = line[:1]
        if first in _ITEM_STARTS:
            item = line.lstrip(b" ")
            indent = len(line) - len(item)
            if list_opened:
                list_indent = indent
                list_opened = False
            elif indent != list_indent:
                return None
            if item[:2] != b"- " or not _is_list_item(item[2:]):
                return None
            continue
        if list_opened:
            return None
        key, colon, value = line.partition(b":")
        if not colon or not (first.isalpha() or first == b"_") or key.translate(None, _KEY_BYTES):
            return None
        list_indent = -1
        if not value:
            list_opened = True
        elif value[:1] != b" " or not _is_fast_value(value[1:]):
            return None
    return None if list_opened else lines


def _is_fast_value(value: bytes) -> bool:
    first = value[:1]
    if first.isalpha():  # bytes.isalpha: ASCII letters only
        return value[-1:] != b" " and not value.translate(None, _PLAIN_BYTES)
    if first == b'"' or first == b"'":
        allowed = _DOUBLE_QUOTED_BYTES if first == b'"' else _SINGLE_QUOTED_BYTES
        return len(value) > 1 and value[-1:] == first and not value[1:-1].translate(None, allowed)
    if first == b"[":
        inside = value[1:-1]
        return value[-1:] == b"]" and (not inside or all(map(_is_list_item, inside.split(b", "))))
    return _is_date_in_every_year(value)


def _is_list_item(item: bytes) -> bool:
    if b" " not in item:
        return _is_list_word(item)
    return all(map(_is_list_word, item.split(b" ")))  # an empty word: a double or end space


def _is_list_word(word: bytes) -> bool:
    return word[:1].isalpha() and not word.translate(None, _WORD_OF_LIST_BYTES)


def _is_date_in_every_year(value: bytes) -> bool:
    if len(value) != 10 or value[4:5] != b"-" or value[7:8] != b"-" or value[:1] == b"0":
        return False
    if not (value[:4] + value[5:7] + value[8:]).isdigit():  # bytes.isdigit: ASCII digits only
        return False
    month, day = int(value[5:7]), int(value[8:])
    return 1 <= month <= 12 and 1 <= day <= _DAYS_IN_EVERY_YEAR[month]


def _outside_subset(block: bytes) -> bool:
    """Whether ``block`` (lines of the subset, so no control byte) holds a character outside
    ASCII that the subset leaves out, once decoded as find decodes pages."""
    for sequence in _OUTSIDE_SUBSET_UTF8:
        if sequence in block:
            return True
    lead = block.find(b"\xc2")
    while lead >= 0:
        if 0x80 <= block[lead + 1] <= 0x9F:  # block ends in LF: a byte follows every lead
            return True
        lead = block.find(b"\xc2", lead + 1)
    return False


#: The patterns, compiled on first use: a call that shows no page's title never needs them.
_compiled: dict[str | bytes, re.Pattern[Any]] = {}


def compiled(pattern: str | bytes) -> re.Pattern[Any]:
    """``pattern`` compiled, once per process."""
    found = _compiled.get(pattern)
    if found is None:
        import re

        found = _compiled[pattern] = re.compile(pattern)
    return found


def fast_string_fields(block: bytes) -> dict[str, str] | None:
    """The string-valued fields of a frontmatter block given as raw bytes (between the
    ``---`` lines, each line ending in LF), exactly as PyYAML's safe loader reads them, when
    every line is in the fast subset; None otherwise (meaning: ask ``parse_block``).

    Only string values are kept: ``title_of`` and ``string_field`` give the same answers
    from this mapping as from the whole one.
    """
    lines = _fast_lines(block)
    if lines is None:
        return None
    fields: dict[str, str] = {}
    for line in lines:
        if line[:1] in _ITEM_STARTS:
            continue  # an item of a block list: no string
        key, _, value = line.partition(b":")
        if key in _WORD_BYTES:
            return None  # a boolean or null key: not a string key
        name = key.decode("ascii")
        value = value[1:]
        if value[:1] in (b'"', b"'"):
            fields[name] = value[1:-1].decode("utf-8", "replace")
        elif value[:1].isalpha() and value not in _WORD_BYTES:  # a plain string
            fields[name] = value.decode("utf-8", "replace")
        else:
            # A date, a list, a boolean, null or a block list: not a string. A later
            # duplicate key wins in YAML, so it also removes an earlier string.
            fields.pop(name, None)
    return fields


def fast_mapping(block: bytes, keys: Container[str] | None = None) -> dict[str, Any] | None:
    """The whole mapping a frontmatter block (raw bytes, as for ``fast_string_fields``)
    holds, exactly as PyYAML's safe loader builds it, when every line is in the fast subset;
    None otherwise (meaning: ask ``parse_block``). With ``keys``, only those keys' entries
    are built (the rest of the block is still checked): lint and recall read a few keys of
    every page's frontmatter, dates and lists included, and this spares most of them a YAML
    parse. tests/test_fast_paths.py holds it equal to PyYAML's on generated blocks."""
    lines = _fast_lines(block)
    if lines is None:
        return None
    mapping: dict[str, Any] = {}
    items: list[Any] | None = None  # the list the block list's items go to (None: not kept)
    for line in lines:
        if line[:1] in _ITEM_STARTS:  # `  - item` of the block list of the key above
            if items is not None:
                items.append(_fast_scalar(line.lstrip(b" ")[2:].decode("ascii")))
            continue
        key_bytes, _, value = line.partition(b":")
        if key_bytes in _WORD_BYTES:
            return None  # a boolean or null key
        items = None
        key = key_bytes.decode("ascii")
        if keys is not None and key not in keys:
            continue
        value = value[1:]
        if not value:  # `key:`, then its block list
            items = mapping[key] = []
        elif value == b"[]":
            mapping[key] = []
        elif value[:1] == b"[":
            mapping[key] = [_fast_scalar(item) for item in value[1:-1].decode("ascii").split(", ")]
        else:
            mapping[key] = _fast_scalar(value.decode("utf-8", "replace"))
    return mapping


def _fast_scalar(text: str) -> Any:
    """A value of the fast subset as YAML reads it: a quoted string, a date, or a plain word
    (a boolean, null or a string)."""
    if text[:1] in ('"', "'"):
        return text[1:-1]
    if text[:1].isdigit():  # _FAST_DATE: a date that exists in every year
        import datetime  # lint and recall import it anyway; find never reads a date

        return datetime.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    return _WORDS.get(text, text)
