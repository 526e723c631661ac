"""What one page's bytes say of it, for the scan and the index alike: its frontmatter
fields, its title and aliases, and the digests copies are told by (``versions.find_copies``).

A leaf: ``page.read_page`` makes a page's record from these, and find, lint and ``wiki init``
read pages by them too, and it imports none of them back.
"""

from __future__ import annotations

from mnemosyne_core.fold import as_utf8
from mnemosyne_core.frontmatter import (
    collapse_whitespace,
    heading_title,
    locate,
    logseq_page_name,
    logseq_properties,
    parse_block_bytes,
    title_of,
)

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def page_fields(data: bytes) -> dict[Any, Any] | None:
    """The frontmatter mapping of a page read whole, for the scan and the index alike (None
    when it has none or it is unusable). A page without frontmatter gives the title and
    aliases of its Logseq properties, if it opens with them (``frontmatter.logseq_properties``)."""
    span = locate(data)
    return logseq_properties(data) if span is None else parse_block_bytes(data[span[0] : span[1]])[0]


def page_title(data: bytes, fields: Mapping[Any, Any] | None, stem: str, heading_titles: bool) -> str:
    """A page's title (docs/spec.md, rule 5), for the scan and the index alike: the
    title its ``fields`` (``page_fields(data)``) give, else, when ``heading_titles``
    (``vault.Scan.heading_titles``: the layout's word), the title of its opening ``# ``
    heading (``frontmatter.heading_title``), else the name its file name ``stem`` stands
    for (``frontmatter.logseq_page_name``: Logseq's ``A___B`` is ``A/B``). ``data``: the
    page's bytes as every reader takes them (``fold.as_utf8``)."""
    title = title_of(fields, "")
    if title:
        return title
    if heading_titles:
        title = heading_title(data) or ""
        if title:
            return title
    return logseq_page_name(stem)


def aliases_of(fields: Mapping[Any, Any] | None) -> tuple[str, ...]:
    """A page's other names: the frontmatter ``aliases`` (a list, or one string as Obsidian
    also takes it), each with its whitespace collapsed as a title's is; items that are not
    non-empty strings are left out."""
    value = fields.get("aliases") if fields else None
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names = (collapse_whitespace(item) for item in items if isinstance(item, str))
    return tuple(name for name in names if name)


def content_digests(data: bytes) -> tuple[bytes | None, bytes | None]:
    """What makes two pages copies: the digest of their bytes and of their text after the
    frontmatter (None where it is blank: two pages holding nothing but their frontmatter
    copy nothing of each other)."""
    import hashlib  # here: a find's start-up never digests a page

    whole = hashlib.blake2b(data, digest_size=16).digest() if data.strip() else None
    text = as_utf8(data)
    span = locate(text)
    body = text if span is None else text[span[2] :]
    return whole, hashlib.blake2b(body, digest_size=16).digest() if body.strip() else None
