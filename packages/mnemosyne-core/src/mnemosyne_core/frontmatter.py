"""Frontmatter: the YAML mapping between a page's first line ``---`` and the next line that
is ``---`` or ``...`` (YAML's document end), each line's fence followed by nothing but
spaces, tabs and a CR, as Jekyll reads them (``---\\s*$``).

Every block is parsed by PyYAML's safe loader (``parse_block``), for find, lint and recall
alike: one parser, so no reader can read a block otherwise than another.
"""

from __future__ import annotations

from mnemosyne_core.fold import BOM, decode
from mnemosyne_core.record import Record

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping
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
        line_end = _fence_line_end(data, block_end + 3)
        if line_end >= 0:
            return block_start, block_end, line_end + (data[line_end : line_end + 1] == b"\n")
        if newline == dashes:
            dashes = data.find(b"\n---", block_end)
        else:
            dots = data.find(b"\n...", block_end)
    return None


#: What may follow a fence's three characters on its line, as Jekyll's ``---\s*$`` takes
#: it: spaces, tabs, and a CR (a CRLF line end, or stray ones).
_FENCE_TRAILERS = b" \t\r"


def _fence_line_end(data: bytes, after: int) -> int:
    """Where the line of a fence ends (its newline, or the end of ``data``) when nothing but
    ``_FENCE_TRAILERS`` follows the fence's three characters, which end at ``after``;
    -1 otherwise."""
    end = data.find(b"\n", after)
    if end < 0:
        end = len(data)
    return end if not data[after:end].strip(_FENCE_TRAILERS) else -1


def _opening_end(data: bytes) -> int:
    """Where the block starts: past the opening `---` line (a BOM before it ignored, spaces,
    tabs and a CR after it taken), or -1 when ``data`` does not start with one."""
    start = 3 if data.startswith(BOM) else 0
    if not data.startswith(b"---", start):
        return -1
    line_end = _fence_line_end(data, start + 3)
    return line_end + 1 if 0 <= line_end < len(data) else -1


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


def page_metadata(data: bytes) -> tuple[dict[Any, Any] | None, str]:
    """``loads_bytes``' metadata and status, without decoding the body."""
    span = locate(data)
    if span is None:
        return None, _missing_status(data)
    return parse_block_bytes(data[span[0] : span[1]])


def _missing_status(data: bytes) -> str:
    """The status of a page without a closed frontmatter."""
    return STATUS_UNCLOSED if opens_frontmatter(data) else STATUS_ABSENT


def parse_block_bytes(block: bytes) -> tuple[dict[Any, Any] | None, str]:
    """``parse_block`` of a raw block, decoded as find decodes pages."""
    return parse_block(block.decode("utf-8", "replace"))


def parse_block(block: str) -> tuple[dict[Any, Any] | None, str]:
    """The mapping a frontmatter block holds and its status (None unless a mapping), by
    PyYAML's safe loader (its C loader when built), bounded in size and nesting."""
    if _too_large(block) or _flow_depth_exceeds(block, MAX_FLOW_DEPTH):
        return None, STATUS_INVALID
    import yaml  # lazy: ~20 ms that a query meeting no frontmatter never pays

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


# --- the opening heading -------------------------------------------------------------------


def heading_title(data: bytes) -> str | None:
    """The title a page's opening heading gives it (docs/spec.md, rule 5), or None: its
    first non-blank line after the frontmatter (after a closed block, whatever its YAML;
    the page's first line when it has none), when that line is an ATX heading of level 1
    (``# Title``, up to three spaces before it). A closed heading's closing ``#`` run and a
    trailing attribute block (``{#id}``, ``_without_attributes``) are dropped, inline markup
    is reduced to its text (``inline_text``) and whitespace runs collapsed; an empty heading
    gives None."""
    span = locate(data)
    start = span[2] if span is not None else (3 if data.startswith(BOM) else 0)
    while True:
        end = data.find(b"\n", start)
        line = data[start:] if end < 0 else data[start:end]
        if line.strip(b" \t\r"):
            break
        if end < 0:
            return None
        start = end + 1
    indent = len(line) - len(line.lstrip(b" "))
    if indent > 3 or line[indent : indent + 1] != b"#" or line[indent + 1 : indent + 2] not in _AFTER_THE_MARK:
        return None
    content = line[indent + 1 :].decode("utf-8", "replace").strip(" \t\r")
    # A closing sequence: a run of # at the end, after a space or alone (`# Title ##`).
    without = content.rstrip("#")
    if without != content and (not without or without[-1] in " \t"):
        content = without
    return collapse_whitespace(inline_text(_without_attributes(content))) or None


def _without_attributes(content: str) -> str:
    """A heading without the attribute block that markdown-it-attrs, VitePress, Hugo and
    Pandoc read at its end (``## Props {#props}``, ``{.lead}``): the page's id for its
    anchor, not a word of its title."""
    if not content.endswith("}"):
        return content
    start = content.rfind(" {")
    attributes = content[start + 2 : -1].split() if start >= 0 else []
    if attributes and all(attribute[:1] in "#." or "=" in attribute for attribute in attributes):
        return content[:start].rstrip()
    return content


#: What may follow the ``#`` of a level-1 heading: a space or tab, or the line's end.
_AFTER_THE_MARK = (b" ", b"\t", b"\r", b"")
#: A backslash escape of an ASCII punctuation character (CommonMark): the character as it is.
_ESCAPED = r"\\([!-/:-@\[-`{-~])"
#: The inline markup ``inline_text`` reduces, in the order it is reduced: a wiki link
#: (``[[target|shown]]`` or ``[[target]]``), a link or image (``[text](url)``), strong and
#: emphasised text with ``*`` or ``_`` (``_`` not inside a word, as CommonMark has it).
_INLINE = (
    (r"\[\[([^\[\]|]*)\|([^\[\]]*)\]\]", r"\2"),
    (r"\[\[([^\[\]]*)\]\]", r"\1"),
    (r"!?\[([^\[\]]*)\]\([^()]*\)", r"\1"),
    (r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"\1"),
    (r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)", r"\1"),
    (r"\*(?=\S)(.+?)(?<=\S)\*", r"\1"),
    (r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)", r"\1"),
)
#: Where a character marks markup: text without any is its own text.
_MARKUP_CHARACTERS = frozenset("\\`*_[")


def inline_text(text: str) -> str:
    """``text`` (one line of markdown) with its inline markup reduced to the text it shows:
    code spans to their code (nothing inside them is markup), wiki links to their shown
    name, links and images to their text, strong and emphasised text to the text, and a
    backslash escape to the character it escapes."""
    if _MARKUP_CHARACTERS.isdisjoint(text):
        return text
    import re  # only a heading with markup needs it

    pieces = re.split(r"(`+)(.+?)\1", text)
    # re.split with two groups: text, fence, code, text, fence, code, ..., text.
    shown = []
    for index in range(0, len(pieces), 3):
        shown.append(_reduced(pieces[index]))
        if index + 2 < len(pieces):
            code = pieces[index + 2]
            # CommonMark strips one space on each side of a code span that has both.
            shown.append(code[1:-1] if len(code) > 2 and code[0] == code[-1] == " " and code.strip() else code)
    return "".join(shown)


def _reduced(text: str) -> str:
    """Text outside code spans with its links, emphasis and escapes reduced."""
    import re

    escaped: list[str] = []

    def hold(match: re.Match[str]) -> str:
        escaped.append(match.group(1))
        return f"\ue000{len(escaped) - 1}\ue001"

    # An escaped character is no markup: held out while the markup is reduced.
    text = re.sub(_ESCAPED, hold, text)
    for pattern, replacement in _INLINE:
        text = re.sub(pattern, replacement, text)
    return re.sub("\ue000([0-9]+)\ue001", lambda match: escaped[int(match.group(1))], text)


# --- Logseq: page properties and page names -----------------------------------------------


def logseq_properties(data: bytes) -> dict[str, Any] | None:
    """The title and aliases of a Logseq page from its first block's properties (``title::
    Page``, ``alias:: [[One]], Two``), as a mapping ``title_of`` and ``pagefields.aliases_of``
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


def string_field(metadata: Mapping[Any, Any] | None, key: str) -> str | None:
    """``metadata[key]`` when it is a string, else None."""
    value = metadata.get(key) if metadata else None
    return value if isinstance(value, str) else None
