"""What recall reads of one page: its title, slug, tags and date (``RecallFields``), for
recall's scan and the index alike, and the date rule lint checks pages against.

A leaf: ``page.read_page`` keeps these in a page's record, so it imports neither page nor
recall back.
"""

from __future__ import annotations

import datetime

from mnemosyne_core.fold import as_utf8, fold
from mnemosyne_core.frontmatter import collapse_whitespace, page_metadata

TYPE_CHECKING = False  # typing's own, without importing typing: a page read into the index imports this
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: ``YYYY-MM-DD``, alone or followed by ``T`` or a space and a time (``updated_date``).
_ISO_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_ISO_DATE_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ].+"

#: The frontmatter keys that date a page, in the order recall takes the first valid one:
#: ``updated`` (Aion, Dendron), then ``lastmod`` (Hugo's last change), then ``date``
#: (Jekyll's and Hugo's publication date).
DATE_KEYS = ("updated", "lastmod", "date")
#: Whole numbers in this range are epoch milliseconds (Dendron writes ``updated`` so):
#: from 1973-03-03 to 2286-11-20. Smaller ones (a year, epoch seconds) are not taken for
#: dates: no convention makes them unambiguous.
EPOCH_MILLISECONDS = range(10**11, 10**13)


def updated_date(value: object) -> datetime.date | None:
    """The date one of ``DATE_KEYS`` stands for, or None when it is missing or not a valid
    date.

    A datetime counts by its date as written; a string must be ``YYYY-MM-DD``, optionally
    followed by ``T`` or a space and a time that ``datetime.fromisoformat`` accepts; a whole
    number in ``EPOCH_MILLISECONDS`` counts by its UTC date.
    """
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value not in EPOCH_MILLISECONDS:
            return None
        return datetime.datetime.fromtimestamp(value / 1000, tz=datetime.UTC).date()
    if not isinstance(value, str):
        return None
    text = value.strip()
    # Imported here, where a page just read is dated (its frontmatter's PyYAML has imported
    # re already): a recall that takes the dates the index keeps imports none.
    import re

    try:
        if re.fullmatch(_ISO_DATE, text):
            return datetime.date.fromisoformat(text)
        if re.fullmatch(_ISO_DATE_TIME, text):
            return datetime.datetime.fromisoformat(text).date()
    except ValueError:
        return None
    return None


def page_date(metadata: Mapping[Any, Any]) -> datetime.date | None:
    """The date recall ranks a page by: the first of ``DATE_KEYS`` that holds a valid one."""
    for key in DATE_KEYS:
        date = updated_date(metadata.get(key))
        if date is not None:
            return date
    return None


def tags_of(value: object) -> list[str]:
    """The string tags: a list's string items, or a string as one tag."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


class RecallFields:
    """What recall reads of a page's frontmatter: title, slug, tags and date, and the
    folded strings a term is looked for in."""

    __slots__ = ("folded", "slug", "tags", "title", "updated")

    def __init__(self, metadata: dict[Any, Any]):
        title = metadata.get("title")
        slug = metadata.get("slug")
        self.tags = tags_of(metadata.get("tags"))
        fields = [value for value in (title, slug) if isinstance(value, str)] + self.tags
        self.folded = [fold(field) for field in fields]
        self.title = collapse_whitespace(title) if isinstance(title, str) else None
        self.slug = slug if isinstance(slug, str) else None
        self.updated = page_date(metadata)


def recall_fields(data: bytes) -> RecallFields | None:
    """The recall fields of a page (its bytes, or any prefix holding its frontmatter), or
    None when it has no usable frontmatter mapping."""
    metadata, _status = page_metadata(as_utf8(data))
    return RecallFields(metadata) if metadata else None
