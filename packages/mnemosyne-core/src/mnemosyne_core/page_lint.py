"""lint's word on one page alone, from its bytes: its findings (``check_page``) and the
title it gives itself. Made when a page is read into the index (``page.read_page``) as by
lint's own scan, so a leaf: it imports neither page nor lint back.
"""

from __future__ import annotations

from functools import partial

from mnemosyne_core.config import CONSTELLATIONS
from mnemosyne_core.fold import TEXT_PROBE_BYTES, as_utf8, is_text
from mnemosyne_core.frontmatter import (
    STATUS_ABSENT,
    STATUS_NOT_MAPPING,
    STATUS_OK,
    STATUS_UNCLOSED,
    heading_title,
    page_metadata,
    title_of,
)
from mnemosyne_core.page_recall import DATE_KEYS, page_date, updated_date

TYPE_CHECKING = False  # typing's own, without importing typing: a page read into the index imports this
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# Reason codes of a page alone: stable, agents branch on them (``lint.REASON_CODES``).
NO_FRONTMATTER = "no-frontmatter"
UNCLOSED_FRONTMATTER = "unclosed-frontmatter"
INVALID_FRONTMATTER = "invalid-frontmatter"
FRONTMATTER_NOT_MAPPING = "frontmatter-not-mapping"
MISSING_TITLE = "missing-title"
MISSING_UPDATED = "missing-updated"
INVALID_UPDATED = "invalid-updated"
NOT_UTF8 = "not-utf8"
NOT_TEXT = "not-text"
UNKNOWN_CONSTELLATION = "unknown-constellation"


class Finding(tuple[str, str, str]):
    """One thing lint reports about one path: (path, code, message), the order lint
    reports findings in. A tuple, so that a vault's findings (100,000 on a vault of as many
    pages without frontmatter) are made, sorted, hashed and joined into lines in C."""

    __slots__ = ()

    def __new__(cls, path: str, code: str, message: str) -> Finding:
        return tuple.__new__(cls, (path, code, message))

    def __getnewargs__(self) -> tuple[str, str, str]:
        # The three fields __new__ takes (a tuple's own gives one): copy and pickle remake it.
        return (self[0], self[1], self[2])

    @property
    def path(self) -> str:
        return self[0]

    @property
    def code(self) -> str:
        return self[1]

    @property
    def message(self) -> str:
        return self[2]

    def __repr__(self) -> str:
        return f"Finding(path={self[0]!r}, code={self[1]!r}, message={self[2]!r})"

    def to_dict(self) -> dict[str, str]:
        """The finding as lint --json reports it."""
        return {"path": self[0], "code": self[1], "message": self[2]}


#: A finding made from a (path, code, message) row without a call of Python's a row.
as_finding = partial(tuple.__new__, Finding)


def check_page(path: str, data: bytes, heading_titles: bool = False) -> tuple[str | None, list[Finding]]:
    """The findings for one searched page given its bytes, and the title it gives itself
    (whitespace collapsed; None when it has none): its usable frontmatter title, else, when
    ``heading_titles`` (``Scan.heading_titles``), its opening heading's, as find shows it."""
    findings: list[Finding] = []
    data = as_utf8(data)
    if not is_text(data):
        nul = data.index(b"\0", 0, TEXT_PROBE_BYTES)
        findings.append(
            Finding(
                path,
                NOT_TEXT,
                f"byte {nul} is NUL: not text (a binary file, or UTF-16 or UTF-32 without a byte order mark);"
                " find cannot match its words",
            )
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        findings.append(
            Finding(path, NOT_UTF8, f"byte {error.start} is not valid UTF-8; find reads such bytes as U+FFFD")
        )
    metadata, status = page_metadata(data)
    usable = metadata is not None and status == STATUS_OK
    title = (title_of(metadata, "") or None) if usable else None
    heading = heading_title(data) if heading_titles and title is None else None
    if metadata is None or not usable:
        findings.append(_frontmatter_finding(path, status, heading))
        return heading, findings
    if title is None:
        findings.append(Finding(path, MISSING_TITLE, f"{_title_problem(metadata)}; {_shown_instead(heading)}"))
        title = heading
    findings += _date_findings(path, metadata)
    if "constellation" in metadata:
        constellation = metadata["constellation"]
        if not isinstance(constellation, str) or constellation not in CONSTELLATIONS:
            findings.append(
                Finding(
                    path,
                    UNKNOWN_CONSTELLATION,
                    f"constellation {_shown(constellation)} is not one of {', '.join(CONSTELLATIONS)}",
                )
            )
    return title, findings


def _date_findings(path: str, metadata: Mapping[Any, Any]) -> list[Finding]:
    """The date finding of a page: none of ``DATE_KEYS`` set, or the first one set not a
    valid date (recall's rule, ``page_recall.page_date``)."""
    given = [key for key in DATE_KEYS if metadata.get(key) is not None]
    if not given:
        return [Finding(path, MISSING_UPDATED, "no updated, lastmod or date; recall ranks the page last")]
    first = given[0]
    if updated_date(metadata[first]) is not None:
        return []
    used = page_date(metadata)
    then = f"recall ranks the page by {used.isoformat()}" if used is not None else "recall ranks the page last"
    shown = _shown(metadata[first])
    return [Finding(path, INVALID_UPDATED, f"{first} {shown} is not a YYYY-MM-DD date; {then}")]


def _shown_instead(heading: str | None) -> str:
    """What find shows as the title of a page that names none in its frontmatter."""
    return "find shows the file name stem" if heading is None else f"find shows its opening heading {heading!r}"


def _frontmatter_finding(path: str, status: str, heading: str | None = None) -> Finding:
    if status == STATUS_ABSENT:
        return Finding(path, NO_FRONTMATTER, f"no frontmatter (first line is not ---); {_shown_instead(heading)}")
    if status == STATUS_UNCLOSED:
        never_closed = "frontmatter opened by --- is never closed by --- or ...; it is ignored"
        return Finding(path, UNCLOSED_FRONTMATTER, never_closed)
    if status == STATUS_NOT_MAPPING:
        return Finding(path, FRONTMATTER_NOT_MAPPING, "frontmatter is not a key: value mapping; it is ignored")
    # STATUS_INVALID, and any status a later frontmatter module may add: unusable either way.
    return Finding(path, INVALID_FRONTMATTER, "frontmatter is not valid YAML; it is ignored")


def _title_problem(metadata: Mapping[Any, Any]) -> str:
    if "title" not in metadata or metadata["title"] is None:
        return "no title"
    title = metadata["title"]
    if isinstance(title, str):
        return "the title is blank"
    return f"the title is a {_type_name(title)}, not a string"


def _type_name(value: Any) -> str:
    return {dict: "mapping", list: "list", bool: "boolean", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )


def _shown(value: Any) -> str:
    if isinstance(value, (list, dict)):
        import reprlib

        text = reprlib.repr(value)  # bounded: a YAML alias bomb is never spelled out
    else:
        text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."
