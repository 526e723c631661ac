"""``wiki find``: every page holding all keywords, in a deterministic order.

A keyword matches a page when its fold is a substring of the folded title, file name stem
or whole file text (frontmatter included). Pages whose title and stem hold every keyword
come first, then the rest, each group by relative path in code-point order. No scoring.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from mnemosyne_core.config import CONSTELLATIONS
from mnemosyne_core.errors import InvalidQueryError
from mnemosyne_core.fold import TextMatcher, fold
from mnemosyne_core.frontmatter import locate, opens_frontmatter, parse_block, string_field, title_of
from mnemosyne_core.vault import open_page, resolve_vault, scan

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mnemosyne_core.vault import PageRef

DEFAULT_LIMIT = 20
#: The first read of a page. Most pages fit whole; a title match never reads past it.
HEAD_BYTES = 1 << 14


class Match:
    """A page that holds every keyword."""

    __slots__ = ("constellation", "content", "in_title", "path", "title", "type")

    def __init__(
        self,
        path: str,
        title: str,
        constellation: str | None,
        type: str | None,  # noqa: A002 - the frontmatter key's name
        in_title: bool,
        content: bytes | None = None,
    ):
        self.path = path
        self.title = title
        self.constellation = constellation
        self.type = type
        #: Whether title and stem alone hold every keyword (the first group of the order).
        self.in_title = in_title
        #: The page's bytes, kept only when the search was asked to (--cat).
        self.content = content

    def to_dict(self) -> dict[str, str | None]:
        """The page as find --json reports it."""
        return {"path": self.path, "title": self.title, "constellation": self.constellation, "type": self.type}

    def __repr__(self) -> str:
        return f"Match({self.path!r}, {self.title!r})"


class FindResult:
    """What a search found: the matches (capped by the limit), their total before the cap,
    how many pages each keyword alone matched, and what went wrong along the way."""

    __slots__ = ("keyword_counts", "matches", "pages_searched", "total", "unreadable", "warnings")

    def __init__(self) -> None:
        self.matches: list[Match] = []
        self.total = 0
        self.pages_searched = 0
        #: Per keyword as given: in how many pages it occurs (title, stem or text).
        self.keyword_counts: dict[str, int] = {}
        #: One line each: a page or dir skipped, and why.
        self.warnings: list[str] = []
        #: Pages (or dirs) in scope that could not be read.
        self.unreadable = 0

    @property
    def incomplete(self) -> bool:
        """Whether something in scope went unread, so "no match" cannot be promised."""
        return self.unreadable > 0


def check_keywords(keywords: Sequence[str]) -> None:
    """Raise InvalidQueryError unless there is at least one keyword and none is blank."""
    if isinstance(keywords, str):
        raise InvalidQueryError("keywords must be a list of strings, not one string")
    if not keywords:
        raise InvalidQueryError("no keyword given: pass at least one KEYWORD")
    for keyword in keywords:
        if not keyword.strip():
            raise InvalidQueryError(f"empty keyword {keyword!r}: every KEYWORD must have a non-space character")


def search(
    vault: str | os.PathLike[str] | None,
    keywords: Sequence[str],
    *,
    limit: int = DEFAULT_LIMIT,
    dirs: Sequence[str] | None = None,
    keep_content: bool = False,
) -> FindResult:
    """Find the pages of ``vault`` (None: AION_VAULT) that hold every keyword.

    ``limit`` caps ``matches`` (0: no cap; ``total`` always counts them all); ``dirs``
    overrides the scanned dirs; ``keep_content`` keeps each match's bytes (for --cat).
    Raises VaultError or InvalidQueryError; a page that cannot be read is a warning.
    """
    check_keywords(keywords)
    if limit < 0:
        raise InvalidQueryError(f"limit {limit} is negative: pass 0 for no cap or a positive number")
    vault_real = resolve_vault(vault)
    pages = scan(vault_real, dirs)
    result = FindResult()
    result.warnings.extend(pages.warnings)
    result.unreadable = pages.incomplete
    folded = tuple(dict.fromkeys(fold(keyword) for keyword in keywords))
    pages_with: dict[str, int] = dict.fromkeys(folded, 0)
    matches: list[Match] = []
    for page in pages.pages:
        try:
            match, present = _examine(page, folded, keep_content)
        except OSError as error:
            result.unreadable += 1
            reason = "vanished during the search" if isinstance(error, FileNotFoundError) else error.strerror
            result.warnings.append(f"{page.rel_path}: cannot read ({reason}); skipped")
            continue
        result.pages_searched += 1
        for keyword in present:
            pages_with[keyword] += 1
        if match is not None:
            matches.append(match)
    matches.sort(key=lambda match: (not match.in_title, match.path))
    result.total = len(matches)
    result.matches = matches[:limit] if limit else matches
    result.keyword_counts = {keyword: pages_with[fold(keyword)] for keyword in keywords}
    return result


def _examine(page: PageRef, keywords: tuple[str, ...], keep_content: bool) -> tuple[Match | None, set[str]]:
    """Decide one page: the Match if it holds every keyword, and which keywords it holds.
    Reads the head once; reads on past it only when title and stem do not decide."""
    fd = open_page(page.read_path)
    try:
        data = os.read(fd, HEAD_BYTES)
        complete = False
        span = locate(data)
        if span is None and len(data) == HEAD_BYTES and opens_frontmatter(data):
            data, complete = data + _read_to_end(fd), True
            span = locate(data)
        fields = parse_block(data[span[0] : span[1]].decode("utf-8", "replace"))[0] if span else None
        stem = page.stem
        title = title_of(fields, stem)
        folded_title, folded_stem = fold(title), fold(stem)
        present = {keyword for keyword in keywords if keyword in folded_title or keyword in folded_stem}
        in_title = len(present) == len(keywords)
        if not in_title or keep_content:
            if not complete:
                data += _read_to_end(fd)
            if not in_title:
                present |= TextMatcher(data).present(keyword for keyword in keywords if keyword not in present)
    finally:
        os.close(fd)
    if len(present) < len(keywords):
        return None, present
    constellation = string_field(fields, "constellation")
    if constellation is None and page.dir in CONSTELLATIONS:
        constellation = page.dir
    match = Match(
        page.rel_path,
        title,
        constellation,
        string_field(fields, "type"),
        in_title,
        data if keep_content else None,
    )
    return match, present


def _read_to_end(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def find_pages(keywords: Sequence[str], limit: int = DEFAULT_LIMIT, *, vault: str | None = None) -> list[dict[str, Any]]:
    """The seed's API: the matching pages as find --json reports them, vault from AION_VAULT
    unless ``vault`` is given."""
    return [match.to_dict() for match in search(vault, keywords, limit=limit).matches]
