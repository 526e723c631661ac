"""What a find answers (``FindResult``, ``Match``), the check and folding of its query and
the rows it shows, apart from the search (find.py): a call the index answers builds its
answer with these alone, without importing the scan, its frontmatter fields or the builder."""

from __future__ import annotations

from mnemosyne_core.config import CONSTELLATIONS
from mnemosyne_core.errors import InvalidQueryError
from mnemosyne_core.fold import fold
from mnemosyne_core.record import Record

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from mnemosyne_core.diagnostics import Diagnostic

#: How many pages a search shows when its caller names no limit (find --limit's default).
DEFAULT_LIMIT = 20

#: What ``Match.matched`` says for each tier of the order: where the page was found.
TITLE, PATH, TEXT = "title", "path", "text"


class Match(Record):
    """A page that holds every keyword."""

    __slots__ = ("constellation", "content", "matched", "path", "title", "type")

    def __init__(
        self,
        path: str,
        title: str,
        constellation: str | None,
        type: str | None,  # noqa: A002 - the frontmatter key's name
        matched: str,
        content: bytes | None = None,
    ):
        self.path = path
        self.title = title
        self.constellation = constellation
        self.type = type
        #: Where the page matched, the tier of the order it was sorted in: "title" (the
        #: title or an alias holds every keyword), "path" (title and path together do) or
        #: "text" (only its text completes them). See ``matched_by``.
        self.matched = matched
        #: The page's bytes, kept only when the search was asked to (--cat).
        self.content = content

    def to_dict(self, *, matched: bool = False) -> dict[str, str | None]:
        """The page as find --json reports it; with ``matched``, as --json --matched does."""
        fields = {"path": self.path, "title": self.title, "constellation": self.constellation, "type": self.type}
        if matched:
            fields["matched"] = self.matched
        return fields


class FindResult:
    """What a search found: the matches (capped by the limit), their total before the cap,
    how many pages each keyword alone matched, and what went wrong along the way."""

    __slots__ = (
        "exact",
        "keyword_counts",
        "left_out",
        "matches",
        "named",
        "not_text",
        "pages_searched",
        "suggestions",
        "total",
        "unreadable",
        "vault",
        "warnings",
    )

    def __init__(self) -> None:
        #: The vault root searched, resolved (symlink-free); each match's path is relative to it.
        self.vault = ""
        self.matches: list[Match] = []
        self.total = 0
        #: How many of the ``total`` matches a title, an alias or the path names (the first
        #: group of the order; they come first, so ``matches`` starts with them).
        self.named = 0
        #: How many of the matches a keyword names by their whole vault-relative path (the
        #: first of the order): --cat prints the one such page.
        self.exact = 0
        self.pages_searched = 0
        #: On a miss, per keyword as given: in how many pages it occurs (title, path or
        #: text); empty on a match, where nothing shows it (the index counts only a miss).
        self.keyword_counts: dict[str, int] = {}
        #: A page or dir skipped, and why.
        self.warnings: list[Diagnostic] = []
        #: Pages (or dirs) in scope that could not be read.
        self.unreadable = 0
        #: On a miss, the searched pages that do not read as text (``fold.is_text``: a NUL
        #: byte, as in a binary file or UTF-16 without its byte order mark); 0 on a match.
        self.not_text = 0
        #: On a miss, the markdown files the layout leaves out, as ``vault.scan(left_out=...)``
        #: lists them, when the answer knows them (the scan finds them in its own listing,
        #: ``vault.left_out_files``; a server keeps them for a tree); None when it does not
        #: (a served flat layout, an incomplete search): the miss note then lists the vault
        #: for them.
        self.left_out: list[tuple[str, str]] | None = None
        #: On a miss, per keyword as given that no page holds: the words of the searched
        #: pages one or two edits from it, with the pages holding each (``suggest``), the
        #: nearest first; a keyword with none near is not in it.
        self.suggestions: dict[str, list[tuple[str, int]]] = {}

    @property
    def the_page(self) -> Match | None:
        """The page --cat prints: the one match, else the one page a keyword is the path of
        (it sorts first); None when there is no such page."""
        if self.total == 1 or (self.exact == 1 and self.matches):
            return self.matches[0]
        return None

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


def keyword_counts(keywords: Sequence[str], counts: Sequence[int]) -> dict[str, int]:
    """A miss's count per keyword as given, from ``counts``, one per distinct folded keyword
    (``prepare_query``'s order)."""
    pages_with = dict(zip(dict.fromkeys(map(fold, keywords)), counts, strict=True))
    return {keyword: pages_with[fold(keyword)] for keyword in keywords}


def prepare_query(keywords: Sequence[str], limit: int) -> tuple[str, ...]:
    """The folded keywords, each once, after checking them and the limit (InvalidQueryError)."""
    check_keywords(keywords)
    if limit < 0:
        raise InvalidQueryError(f"limit {limit} is negative: pass 0 for no cap or a positive number")
    return tuple(dict.fromkeys(fold(keyword) for keyword in keywords))


def shown_match(
    rel_path: str,
    title: str,
    constellation: str | None,
    kind: str | None,
    matched: str,
    content: bytes | None = None,
) -> Match:
    """The match find shows for a page, from its frontmatter's ``constellation`` and
    ``type`` (the scan's and the index's alike): with no constellation field, the page's
    top-level dir when that is a constellation's (a nested page's too)."""
    if constellation is None:
        top = rel_path.rpartition("/")[0].partition("/")[0]
        if top in CONSTELLATIONS:
            constellation = top
    return Match(rel_path, title, constellation, kind, matched, content)
