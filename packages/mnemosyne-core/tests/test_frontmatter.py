"""Frontmatter: the split (rule 4), titles (rule 5), and the bounds of the YAML parse."""

from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core.frontmatter import (
    MAX_BLOCK_BYTES,
    STATUS_ABSENT,
    STATUS_INVALID,
    STATUS_NOT_MAPPING,
    STATUS_OK,
    STATUS_UNCLOSED,
    heading_title,
    inline_text,
    loads_bytes,
    locate,
    parse_block,
    title_of,
)


def test_loads_splits_metadata_and_body() -> None:
    parsed = loads_bytes(b"---\ntitle: A Page\ntags: [x, y]\n---\n# Body\ntext\n")
    assert (parsed.metadata, parsed.body, parsed.status) == (
        {"title": "A Page", "tags": ["x", "y"]},
        "# Body\ntext\n",
        STATUS_OK,
    )


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("# no frontmatter\n", STATUS_ABSENT),
        ("---\ntitle: open\n", STATUS_UNCLOSED),
        ("---\ntitle: [bad\n---\n", STATUS_INVALID),
        ("---\njust a string\n---\n", STATUS_NOT_MAPPING),
        ("---\n---\n", STATUS_NOT_MAPPING),
        ("---\nupdated: 2026-13-45\n---\n", STATUS_INVALID),
    ],
)
def test_unusable_frontmatter_has_a_status_and_no_metadata(text: str, status: str) -> None:
    parsed = loads_bytes(text.encode())
    assert (parsed.metadata, parsed.status) == (None, status)


def test_a_bom_and_crlf_lines_split_alike() -> None:
    parsed = loads_bytes(b"\xef\xbb\xbf---\r\ntitle: CRLF\r\n---\r\nbody\r\n")
    assert (parsed.metadata, parsed.body) == ({"title": "CRLF"}, "body\r\n")


def test_locate_offsets() -> None:
    data = b"---\na: 1\n---\nbody"
    assert locate(data) == (4, 9, 13)
    assert data[4:9] == b"a: 1\n"
    assert locate(b"---\na: 1\n---") == (4, 9, 12)


@pytest.mark.parametrize(
    ("data", "span"),
    [
        # YAML's document end closes the block as `---` does (Jekyll writes it).
        (b"---\na: 1\n...\nbody", (4, 9, 13)),
        (b"---\r\na: 1\r\n...\r\nbody", (5, 11, 16)),
        (b"---\na: 1\n...", (4, 9, 12)),
        # Whichever comes first closes it.
        (b"---\na: 1\n...\nb: 2\n---\n", (4, 9, 13)),
        (b"---\na: 1\n---\n...\n", (4, 9, 13)),
        # Only a line of three dots: more dots or text after them do not.
        (b"---\na: 1\n....\n...x\n---\n", (4, 19, 23)),
        (b"---\na: 1\n.....\n", None),
    ],
)
def test_document_end_closes_the_block(data: bytes, span: tuple[int, int, int] | None) -> None:
    assert locate(data) == span


@pytest.mark.parametrize(
    ("data", "span"),
    [
        # Jekyll reads a fence as `---\s*$`: spaces and tabs may follow it, on either line.
        (b"---\na: 1\n--- \nbody", (4, 9, 14)),
        (b"---\na: 1\n---\t \nbody", (4, 9, 15)),
        (b"---  \na: 1\n---\nbody", (6, 11, 15)),
        (b"--- \r\na: 1\r\n--- \r\nbody", (6, 12, 18)),
        (b"---\na: 1\n... \nbody", (4, 9, 14)),
        (b"---\na: 1\n---  ", (4, 9, 14)),  # the closing line at the end of the page
        # Anything else on the line is no fence.
        (b"---\na: 1\n--- x\n---\n", (4, 15, 19)),
        (b"--- x\na: 1\n---\n", None),
        ("---\u00a0\na: 1\n---\n".encode(), None),  # a no-break space is text
        (b"--- ", None),  # an opening line needs its line end
    ],
)
def test_fences_may_carry_trailing_spaces_and_tabs(data: bytes, span: tuple[int, int, int] | None) -> None:
    assert locate(data) == span


def test_a_page_closing_with_a_trailing_space_keeps_its_title() -> None:
    parsed = loads_bytes(b"---\ntitle: Jekyll Page\n--- \nbody\n")
    assert (parsed.metadata, parsed.body, parsed.status) == ({"title": "Jekyll Page"}, "body\n", STATUS_OK)


def test_document_end_page_keeps_its_title() -> None:
    parsed = loads_bytes(b"---\ntitle: Jekyll Page\n...\nbody\n")
    assert (parsed.metadata, parsed.body, parsed.status) == ({"title": "Jekyll Page"}, "body\n", STATUS_OK)


@pytest.mark.parametrize(
    ("metadata", "title"),
    [
        ({"title": "  Many\n\t spaces  here "}, "Many spaces here"),
        ({"title": ""}, "stem"),
        ({"title": " \n "}, "stem"),
        ({"title": None}, "stem"),
        ({"title": ["a"]}, "stem"),
        ({"title": 7}, "stem"),
        ({}, "stem"),
        (None, "stem"),
    ],
)
def test_title_of(metadata: dict[str, object] | None, title: str) -> None:
    assert title_of(metadata, "stem") == title


def test_dates_read_as_dates() -> None:
    assert parse_block("updated: 2026-04-02\n") == ({"updated": datetime.date(2026, 4, 2)}, STATUS_OK)


def test_yaml_path_refuses_python_tags_and_bombs() -> None:
    assert parse_block("title: !!python/object/apply:os.system ['true']\n") == (None, STATUS_INVALID)
    assert parse_block("title: " + "[" * 100_000 + "]" * 100_000 + "\n") == (None, STATUS_INVALID)
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 9)}]\n" for n in range(8)
    )
    metadata, status = parse_block(laughs + "title: Still Bounded\n")
    assert status == STATUS_OK
    assert metadata is not None
    assert metadata["title"] == "Still Bounded"


@pytest.mark.parametrize("tagged", ["flag: !!bool maybe", "when: !!timestamp nope", "n: !!int x"])
def test_yaml_constructor_errors_of_any_type_mean_invalid(tagged: str) -> None:
    assert parse_block(f"title: T\n{tagged}\n") == (None, STATUS_INVALID)


def test_flow_nesting_limit_ignores_quotes_and_holds_for_every_loader() -> None:
    deep = "[" * 100 + "]" * 100
    assert parse_block(f"title: Deep\nx: {deep}\n") == (None, STATUS_INVALID)
    assert parse_block(f"title: Don't\nx: {deep}\n") == (None, STATUS_INVALID)
    assert parse_block(f'title: "{"[" * 100}"\n') == ({"title": "[" * 100}, STATUS_OK)
    assert parse_block(f"title: '{'{' * 100}'\n") == ({"title": "{" * 100}, STATUS_OK)


def test_blocks_over_the_size_limit_are_invalid() -> None:
    block = "title: Big\n" + "k: value\n" * (MAX_BLOCK_BYTES // 9 + 1)
    assert parse_block(block) == (None, STATUS_INVALID)
    wide = "title: Wide\nk: " + "\u20ac" * (MAX_BLOCK_BYTES // 3) + "\n"  # 3 bytes a character
    assert parse_block(wide) == (None, STATUS_INVALID)


#: Pieces of a page's start: frontmatter lines, their near misses, CRs, a BOM.
PAGE_PIECES = st.lists(
    st.sampled_from(
        [b"---", b"----", b"--", b"...", b"\n", b"\r", b"\r\n", b" ", b"\t", b"x", b"title: a", b"\xef\xbb\xbf"]
    ),
    max_size=12,
).map(b"".join)
#: locate's definition, as two regexes: the opening line, then the first line that is
#: `---` or `...`, each fence followed by nothing but spaces, tabs and CRs.
OPENING_LINE = re.compile(rb"---[ \t\r]*\n")
CLOSING_LINE = re.compile(rb"(?m)^(?:---|\.\.\.)[ \t\r]*$")


def locate_by_regex(data: bytes) -> tuple[int, int, int] | None:
    opening = OPENING_LINE.match(data, 3 if data.startswith(b"\xef\xbb\xbf") else 0)
    if opening is None:
        return None
    closing = CLOSING_LINE.search(data, opening.end())
    if closing is None:
        return None
    body_start = closing.end() + 1 if data[closing.end() : closing.end() + 1] == b"\n" else closing.end()
    return opening.end(), closing.start(), body_start


@settings(max_examples=examples(500), deadline=None)
@given(PAGE_PIECES)
@example(b"---\n---")
@example(b"---\r\n---\r")
@example(b"---\n---\r\r\n---\n")
@example(b"---\n----\n--- \n---\nbody")
def test_locate_equals_its_definition(data: bytes) -> None:
    assert locate(data) == locate_by_regex(data)


@pytest.mark.parametrize(
    ("data", "title"),
    [
        (b"# Plain Title\nbody\n", "Plain Title"),
        (b"\n  \n# After Blank Lines\n", "After Blank Lines"),
        (b"---\ntags: [a]\n---\n\n# After Frontmatter\n", "After Frontmatter"),
        (b"---\n[invalid yaml\n---\n# After A Closed Block\n", "After A Closed Block"),
        (b"\xef\xbb\xbf# After A BOM\r\nbody\r\n", "After A BOM"),
        (b"   # Three Spaces In\n", "Three Spaces In"),
        (b"# Closed Heading ##\n", "Closed Heading"),
        (b"# C# Notes\n", "C# Notes"),  # a # inside is text
        (b"# Ends In#\n", "Ends In#"),  # no space before it: no closing sequence
        (b"#\tTabbed\n", "Tabbed"),
        (b"#   Many    spaces  \n", "Many spaces"),
        # An attribute block at the end (VitePress, Hugo, Pandoc) is the anchor, not the title.
        (b"# Computed Properties {#computed-properties}\n", "Computed Properties"),
        (b"# Lead {.lead #top data-x=1}\n", "Lead"),
        (b"# Sets {a, b}\n", "Sets {a, b}"),  # braces holding words are text
        (b"# Template {{ name }}\n", "Template {{ name }}"),
        # Not a level-1 heading as the first non-blank line: no title.
        (b"text first\n# Too Late\n", None),
        (b"## Second Level\n", None),
        (b"#NoSpace\n", None),
        (b"    # Indented Four\n", None),
        (b"# \n", None),
        (b"# ##\n", None),
        (b"", None),
        (b"\n\n", None),
        (b"---\ntitle: x\n", None),  # an unclosed block is the page's first line, not a heading
    ],
)
def test_heading_title(data: bytes, title: str | None) -> None:
    assert heading_title(data) == title


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("**bold** and __strong__", "bold and strong"),
        ("*em* and _em_", "em and em"),
        ("snake_case_name stays", "snake_case_name stays"),  # _ inside a word is no emphasis
        ("`code *not em*` and ``a `tick` b``", "code *not em* and a `tick` b"),
        ("[text](https://example.com/a_b_c) and ![alt](x.png)", "text and alt"),
        ("[[Target|Shown name]] and [[Plain link]]", "Shown name and Plain link"),
        ("\\*not em\\* and C\\#", "*not em* and C#"),
        ("2 * 3 * 4", "2 * 3 * 4"),  # spaced stars are no emphasis
        ("no markup at all", "no markup at all"),
    ],
)
def test_inline_markup_is_reduced_to_its_text(text: str, shown: str) -> None:
    assert inline_text(text) == shown
