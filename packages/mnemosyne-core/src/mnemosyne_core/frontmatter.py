"""Frontmatter: the YAML mapping between a page's first line ``---`` and the next line that
is exactly ``---`` (a trailing CR ignored).

``loads`` is pure over text, ``load`` a thin wrapper over a file, as in python-frontmatter.
Pages whose frontmatter is plain ``key: value`` lines are read without importing YAML
(``parse_simple``); anything else goes to PyYAML's safe loader (``parse_yaml``). Both give
the same mapping; tests/test_frontmatter.py holds them to that on generated blocks.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from mnemosyne_core.fold import decode

if TYPE_CHECKING:
    from collections.abc import Mapping

_BOM = b"\xef\xbb\xbf"
_OPENING_LINE = re.compile(rb"---\r?\n")
_CLOSING_LINE = re.compile(rb"^---\r?$", re.MULTILINE)

#: Larger frontmatter is treated as invalid: parsing one title must stay bounded.
MAX_BLOCK_BYTES = 1 << 20
#: Deeper flow nesting ([[[...) is treated as invalid: it would exhaust the C stack.
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
    start = 3 if data.startswith(_BOM) else 0
    opening = _OPENING_LINE.match(data, start)
    if opening is None:
        return None
    closing = _CLOSING_LINE.search(data, opening.end())
    if closing is None:
        return None
    body_start = closing.end() + 1 if data[closing.end() : closing.end() + 1] == b"\n" else closing.end()
    return opening.end(), closing.start(), body_start


def opens_frontmatter(data: bytes) -> bool:
    """Whether ``data`` starts with the ``---`` line, so its frontmatter may close later."""
    return _OPENING_LINE.match(data, 3 if data.startswith(_BOM) else 0) is not None


class Frontmatter:
    """A page split into its frontmatter mapping (None when unusable) and its body."""

    __slots__ = ("body", "metadata", "status")

    def __init__(self, metadata: dict[Any, Any] | None, body: str, status: str):
        self.metadata = metadata
        self.body = body
        self.status = status

    def __repr__(self) -> str:
        return f"Frontmatter(status={self.status!r}, metadata={self.metadata!r})"


def loads_bytes(data: bytes) -> Frontmatter:
    """Split and parse a page given as raw bytes (decoded as find decodes them)."""
    span = locate(data)
    if span is None:
        status = STATUS_UNCLOSED if opens_frontmatter(data) else STATUS_ABSENT
        return Frontmatter(None, decode(data), status)
    block_start, block_end, body_start = span
    metadata, status = parse_block(data[block_start:block_end].decode("utf-8", "replace"))
    return Frontmatter(metadata, data[body_start:].decode("utf-8", "replace"), status)


def loads(text: str) -> Frontmatter:
    """Split and parse a page given as text."""
    return loads_bytes(text.encode("utf-8", "surrogatepass"))


def load(path: str | os.PathLike[str]) -> Frontmatter:
    """Split and parse the page at ``path``."""
    with open(path, "rb") as handle:
        return loads_bytes(handle.read())


def parse_block(block: str) -> tuple[dict[Any, Any] | None, str]:
    """The mapping a frontmatter block holds and its status; None unless a mapping."""
    simple = parse_simple(block)
    if simple is not None:
        return simple, STATUS_OK
    return parse_yaml(block)


def parse_yaml(block: str) -> tuple[dict[Any, Any] | None, str]:
    """The plain path: PyYAML's safe loader (its C loader when built), bounded in size and
    nesting."""
    if len(block) > MAX_BLOCK_BYTES or _flow_depth_exceeds(block, MAX_FLOW_DEPTH):
        return None, STATUS_INVALID
    import yaml  # lazy: ~20 ms that a query over plain frontmatter never pays

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        value = yaml.load(block, Loader=loader)  # noqa: S506 - a safe loader, always
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError):
        # ValueError: dates such as 2026-13-45 match the timestamp pattern but do not exist.
        return None, STATUS_INVALID
    if not isinstance(value, dict):
        return None, STATUS_NOT_MAPPING
    return value, STATUS_OK


def _flow_depth_exceeds(block: str, limit: int) -> bool:
    if block.count("[") + block.count("{") <= limit:
        return False
    depth = 0
    for char in block:
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}" and depth:
            depth -= 1
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


def string_field(metadata: Mapping[Any, Any] | None, key: str) -> str | None:
    """``metadata[key]`` when it is a string, else None."""
    value = metadata.get(key) if metadata else None
    return value if isinstance(value, str) else None


# --- the fast path: a strict subset of YAML whose meaning is certain without a parser ---

# Characters YAML either rejects (controls, U+FEFF for libyaml), treats as line breaks
# (U+0085, U+2028, U+2029) or that the subset does not handle (tab, lone CR).
_OUTSIDE_SUBSET = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(.*)")
_ITEM_LINE = re.compile(r"( *)- (.*)")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_FLOW_ITEM = re.compile(r"[A-Za-z][A-Za-z0-9 ._/-]*")
# PyYAML's implicit resolvers for words (YAML 1.1 booleans and null).
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL"), None),
}
_NOT_SIMPLE = object()


def parse_simple(block: str) -> dict[str, Any] | None:
    """The mapping ``block`` holds when every line is a plain ``key: value``, a list item or
    a comment, exactly as PyYAML's safe loader would build it; None for anything else
    (meaning: ask YAML), including blocks with no key at all."""
    result: dict[str, Any] = {}
    open_key = ""  # the last `key:` line with no value: its items follow, or it is null
    open_list: list[Any] | None = None
    list_indent: int | None = None
    for raw_line in block.split("\n"):
        line = raw_line[:-1] if raw_line.endswith("\r") else raw_line
        if _OUTSIDE_SUBSET.search(line):
            return None
        stripped = line.strip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        item = _ITEM_LINE.fullmatch(line)
        if item is not None:
            indent = len(item.group(1))
            if open_list is None or (list_indent is not None and indent != list_indent):
                return None
            value = _scalar(item.group(2).strip(" "), in_flow=False)
            if value is _NOT_SIMPLE:
                return None
            open_list.append(value)
            list_indent = indent
            continue
        key_line = _KEY_LINE.fullmatch(line)
        if key_line is None:
            return None
        key, rest = key_line.groups()
        if key in _WORDS or (rest and not rest.startswith(" ")):
            return None
        if open_list is not None and not open_list:
            result[open_key] = None  # `key:` with no items under it is null
        open_list, list_indent = None, None
        text = rest.strip(" ")
        if not text:
            open_key, open_list = key, []
            result[key] = open_list
            continue
        value = _value(text)
        if value is _NOT_SIMPLE:
            return None
        result[key] = value
    if open_list is not None and not open_list:
        result[open_key] = None
    return result or None


def _value(text: str) -> Any:
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip(" ")
        if not inner:
            return []
        items = [_scalar(part.strip(" "), in_flow=True) for part in inner.split(",")]
        return _NOT_SIMPLE if any(item is _NOT_SIMPLE for item in items) else items
    return _scalar(text, in_flow=False)


def _scalar(text: str, *, in_flow: bool) -> Any:
    if not text:
        return _NOT_SIMPLE
    first = text[0]
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or not text.endswith('"') or '"' in inner or "\\" in inner:
            return _NOT_SIMPLE
        return inner
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or not text.endswith("'") or "'" in inner.replace("''", ""):
            return _NOT_SIMPLE
        return inner.replace("''", "'")
    if first.isdigit():
        return _number_or_date(text)
    if in_flow and not _FLOW_ITEM.fullmatch(text):
        return _NOT_SIMPLE
    if (
        not first.isalpha()
        or " #" in text
        or ": " in text
        or text.endswith(":")
        or any(char in text for char in "[]{}")
    ):
        return _NOT_SIMPLE
    return _WORDS[text] if text in _WORDS else text


def _number_or_date(text: str) -> Any:
    if _INT.fullmatch(text):
        return int(text)
    date = _DATE.fullmatch(text)
    if date is None:
        return _NOT_SIMPLE
    import datetime  # only pages with dates pay for it

    try:
        return datetime.date(*(int(part) for part in date.groups()))
    except ValueError:
        return _NOT_SIMPLE  # YAML raises on it; let the plain path say so
