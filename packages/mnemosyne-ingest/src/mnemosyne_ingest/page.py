"""The page an ingest writes, built from the source's bytes. Pure: no file system.

The page is the source's frontmatter mapping (keys and order kept) with ``title``,
``constellation``, ``type``, ``source`` and ``ingested`` set, and ``updated`` set when the
source has none, emitted as YAML by PyYAML's safe dumper, followed by the source's body
byte for byte.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mnemosyne_core.fold import BOM
from mnemosyne_core.frontmatter import (
    STATUS_NOT_MAPPING,
    STATUS_OK,
    collapse_whitespace,
    locate,
    opens_frontmatter,
    parse_block,
    string_field,
    title_of,
)
from mnemosyne_ingest.errors import BadSourceError, IngestArgumentError

if TYPE_CHECKING:
    import datetime

DEFAULT_DIR = "analyses"
#: The type a page gets in a dir when neither --type nor the source's frontmatter names one.
DEFAULT_TYPES: dict[str, str] = {"analyses": "analysis"}
#: The key holding the ingest date; two pages that differ only in its value are the same.
INGESTED_KEY = "ingested"
#: The key recall ranks by (newest first) and lint requires. Ingest sets it to the ingest
#: date only when the source has none, and then sets its value aside like ``ingested``.
UPDATED_KEY = "updated"

# Wide enough that PyYAML never folds a long title onto a second line.
_YAML_WIDTH = 1 << 30
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CLOSING_HASHES = re.compile(r"(?:^|\s+)#+\s*$")


@dataclass(slots=True)
class SourceDocument:
    """A source split into its frontmatter mapping (empty when it has none) and its body,
    the bytes after the frontmatter's closing ``---`` line."""

    name: str
    metadata: dict[Any, Any]
    body: bytes


@dataclass(slots=True)
class Page:
    """The page to write: its frontmatter mapping, body and resolved fields.

    ``ingest_dates`` names the frontmatter keys whose value is the ingest date, not
    content: a page that differs from this one only in their values is the same page.
    """

    metadata: dict[Any, Any]
    body: bytes
    title: str
    constellation: str
    type: str
    ingest_dates: tuple[str, ...] = (INGESTED_KEY,)
    #: The page's bytes, exactly as written: rendered once, read by the write, the
    #: comparison with an existing page and --dry-run alike.
    content: bytes = field(init=False)

    def __post_init__(self) -> None:
        self.content = render(self.metadata, self.body)


def split_source(data: bytes, name: str) -> SourceDocument:
    """Split the source ``data`` (named ``name`` in messages) into frontmatter and body.

    A leading UTF-8 byte order mark is dropped: the page starts with its own ``---``.
    Raises BadSourceError when the source is empty, not UTF-8, or opens a frontmatter
    block that is not closed, not valid YAML or not a mapping.
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data.strip():
        raise BadSourceError(f"source {name!r} is empty: pass a markdown file with content")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadSourceError(
            f"source {name!r} is not UTF-8 (invalid byte at offset {error.start}): convert it to UTF-8"
        ) from None
    span = locate(data)
    if span is None:
        if opens_frontmatter(data):
            raise BadSourceError(
                f"source {name!r} opens a frontmatter block that is never closed: add the closing '---' line"
            )
        return SourceDocument(name, {}, data)
    block_start, block_end, body_start = span
    block = data[block_start:block_end].decode("utf-8")
    metadata, status = parse_block(block)
    if metadata is None and status == STATUS_NOT_MAPPING and _only_comments(block):
        metadata, status = {}, STATUS_OK
    if metadata is None:
        what = "is not a mapping of keys" if status == STATUS_NOT_MAPPING else "is not valid YAML"
        raise BadSourceError(f"the frontmatter of source {name!r} {what}: fix it, or remove the block")
    return SourceDocument(name, metadata, data[body_start:])


def _only_comments(block: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in block.splitlines())


def first_heading(body: bytes) -> str | None:
    """The text of the body's first ``# `` heading outside fenced code, whitespace
    collapsed and any closing ``#`` run removed; None when there is none."""
    fence = ""
    for raw_line in body.decode("utf-8", "replace").split("\n"):
        line = raw_line.removesuffix("\r")
        opener = _FENCE.match(line)
        if opener is not None:
            marker = opener.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line[opener.end() :].strip():
                fence = ""
            continue
        if fence or not line.startswith("# "):
            continue
        text = collapse_whitespace(_CLOSING_HASHES.sub("", line[2:]))
        if text:
            return text
    return None


def resolve_title(flag: str | None, source: SourceDocument, stem: str) -> str:
    """The page title: ``flag``, else the source's frontmatter title, else its first
    ``# `` heading, else ``stem``; whitespace runs collapsed to one space."""
    if flag is not None:
        title = collapse_whitespace(flag)
        if not title:
            raise IngestArgumentError("--title is blank: pass a title with a non-space character, or omit --title")
        return title
    return title_of(source.metadata, "") or first_heading(source.body) or stem


def resolve_type(flag: str | None, source: SourceDocument, dir: str) -> str:  # noqa: A002 - a vault dir
    """The page type: ``flag``, else the source's frontmatter type, else the dir's default
    (``analysis`` in analyses/)."""
    if flag is not None:
        page_type = collapse_whitespace(flag)
        if not page_type:
            raise IngestArgumentError("--type is blank: pass a type such as 'analysis', or omit --type")
        return page_type
    page_type = collapse_whitespace(string_field(source.metadata, "type") or "")
    if page_type:
        return page_type
    if dir in DEFAULT_TYPES:
        return DEFAULT_TYPES[dir]
    raise IngestArgumentError(
        f"no type for a page in {dir}/: the source's frontmatter has none; pass --type T (e.g. --type analysis)"
    )


def build_page(
    source: SourceDocument,
    *,
    stem: str,
    constellation: str,
    dir: str,  # noqa: A002 - a vault dir
    ingested: datetime.date,
    title: str | None = None,
    type: str | None = None,  # noqa: A002 - the frontmatter key's name
) -> Page:
    """The page for ``source``: its frontmatter with title, constellation, type, source (its
    file name) and ingested set, in that order after its own keys, then updated (also
    ``ingested``) unless the source has a non-null updated of its own, which is kept as it
    is; and its body unchanged.

    Raises BadSourceError when the merged frontmatter would not read back as written.
    """
    page_title = resolve_title(title, source, stem)
    page_type = resolve_type(type, source, dir)
    metadata = dict(source.metadata)
    metadata["title"] = page_title
    metadata["constellation"] = constellation
    metadata["type"] = page_type
    metadata["source"] = source.name
    metadata[INGESTED_KEY] = ingested
    ingest_dates: tuple[str, ...] = (INGESTED_KEY,)
    if metadata.get(UPDATED_KEY) is None:
        # Without it recall ranks the page last and lint flags it. A null
        # updated keeps its place in the source's key order.
        metadata[UPDATED_KEY] = ingested
        ingest_dates = (INGESTED_KEY, UPDATED_KEY)
    page = Page(metadata, source.body, page_title, constellation, page_type, ingest_dates)
    _check_round_trip(page, source.name)
    return page


def dump_frontmatter(metadata: dict[Any, Any]) -> str:
    """``metadata`` as a YAML block: one ``key: value`` line per key in its order, Unicode
    as is, collections of scalars in flow style (``[a, b]``), no line folded, dates
    unquoted."""
    import yaml

    text: str = yaml.dump(
        metadata,
        Dumper=_block_root_dumper(),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=None,
        width=_YAML_WIDTH,
    )
    return text


@functools.cache
def _block_root_dumper() -> type[Any]:
    import datetime

    import yaml  # lazy, as in the core: the CLI's start-up never pays for it

    class BlockRootDumper(yaml.SafeDumper):
        # A date held by two keys (ingested and updated) would otherwise come out as
        # `&id001 2026-04-20` and `*id001`: valid YAML, but no longer a plain date line.
        def ignore_aliases(self, data: Any) -> bool:
            return isinstance(data, datetime.date) or bool(super().ignore_aliases(data))

        # default_flow_style=None puts collections of scalars in flow style; without this
        # a frontmatter holding only scalars would come out as one `{title: ..., ...}` line.
        def represent(self, data: Any) -> None:
            node = self.represent_data(data)
            if isinstance(node, yaml.MappingNode):
                node.flow_style = False
            self.serialize(node)
            self.represented_objects = {}
            self.object_keeper = []
            self.alias_key = None

    return BlockRootDumper


def render(metadata: dict[Any, Any], body: bytes) -> bytes:
    """A page's bytes: ``---``, the frontmatter, ``---``, then ``body`` as it is."""
    return b"---\n" + dump_frontmatter(metadata).encode("utf-8") + b"---\n" + body


def _check_round_trip(page: Page, source_name: str) -> None:
    # What the vault's readers see must be what was meant: split the page as find does,
    # parse its block, and emit it again. A value that YAML cannot carry (or a block that
    # the '---' scanner would cut short) shows up here instead of as a corrupt page.
    content = page.content
    span = locate(content)
    parsed = parse_block(content[span[0] : span[1]].decode("utf-8"))[0] if span else None
    if parsed is None or dump_frontmatter(parsed) != dump_frontmatter(page.metadata):
        raise BadSourceError(
            f"the frontmatter of source {source_name!r} does not survive being written back as YAML: "
            "simplify its values (plain strings, numbers, dates, lists)"
        )
    if title_of(parsed, "") != page.title:
        raise BadSourceError(f"the title {page.title!r} does not read back unchanged: pass a plainer --title")


def same_ignoring_dates(existing: bytes, page: Page) -> bool:
    """Whether ``existing`` is ``page`` except perhaps for the values of its ingest dates
    (``page.ingest_dates``): so re-ingesting an unchanged source on a later day finds the
    same page. A source's own ``updated`` is content and must match."""
    if existing == page.content:
        return True
    span = locate(existing)
    if span is None:
        return False
    metadata = parse_block(existing[span[0] : span[1]].decode("utf-8", "replace"))[0]
    if metadata is None or any(key not in metadata for key in page.ingest_dates):
        return False
    dated = dict(page.metadata)
    for key in page.ingest_dates:
        dated[key] = metadata[key]
    return render(dated, page.body) == existing
