"""The pure half of an ingest: splitting the source, merging the frontmatter, rendering."""

from __future__ import annotations

import datetime

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core.frontmatter import loads_bytes, parse_block, title_of
from mnemosyne_ingest import BadSourceError, IngestArgumentError, build_page, split_source
from mnemosyne_ingest.page import Page, first_heading, render, same_ignoring_dates

TODAY = datetime.date(2026, 4, 20)
LATER = datetime.date(2026, 5, 1)


def page_for(source: bytes, name: str = "report.md", **options: str) -> bytes:
    document = split_source(source, name)
    defaults: dict[str, str] = {"constellation": "atlas", "dir": "analyses"}
    return build_page(document, stem=name.removesuffix(".md"), ingested=TODAY, **(defaults | options)).content


def test_keeps_source_keys_in_order_then_sets_the_ingest_keys() -> None:
    source = b"---\ntags: [a, b]\ntitle: Old Title\nauthor: me\ndate: 2026-03-18\n---\nBody\n"
    assert page_for(source) == (
        b"---\n"
        b"tags: [a, b]\n"
        b"title: Old Title\n"
        b"author: me\n"
        b"date: 2026-03-18\n"
        b"constellation: atlas\n"
        b"type: analysis\n"
        b"source: report.md\n"
        b"ingested: 2026-04-20\n"
        b"updated: 2026-04-20\n"
        b"---\n"
        b"Body\n"
    )


def test_source_values_of_ingest_keys_are_overwritten_in_place() -> None:
    source = b"---\nsource: https://example.org/x\nconstellation: hades\ningested: 2020-01-01\nz: 1\n---\n"
    assert page_for(source, title="T") == (
        b"---\nsource: report.md\nconstellation: atlas\ningested: 2026-04-20\nz: 1\ntitle: T\ntype: analysis\n"
        b"updated: 2026-04-20\n---\n"
    )


@pytest.mark.parametrize(
    ("updated", "written"),
    [
        (b"2026-02-01", b"2026-02-01"),
        (b"'2026-02-01'", b"'2026-02-01'"),
        (b"2026-02-01T10:15:00Z", b"2026-02-01 10:15:00+00:00"),  # the same value, as YAML writes it
        (b"last week", b"last week"),
        (b"[not, a, date]", b"[not, a, date]"),
    ],
)
def test_a_source_updated_is_kept_as_it_is(updated: bytes, written: bytes) -> None:
    """It is the source's own claim: kept in its place, valid or not (lint judges it)."""
    source = b"---\ntitle: T\nupdated: " + updated + b"\nz: 1\n---\nBody\n"
    assert page_for(source) == (
        b"---\ntitle: T\nupdated: " + written + b"\nz: 1\nconstellation: atlas\ntype: analysis\n"
        b"source: report.md\ningested: 2026-04-20\n---\nBody\n"
    )


def test_a_null_source_updated_gets_the_ingest_date_in_its_place() -> None:
    source = b"---\ntitle: T\nupdated:\nz: 1\n---\n"
    assert page_for(source) == (
        b"---\ntitle: T\nupdated: 2026-04-20\nz: 1\nconstellation: atlas\ntype: analysis\n"
        b"source: report.md\ningested: 2026-04-20\n---\n"
    )


def test_source_without_frontmatter_gets_one_and_keeps_every_byte() -> None:
    body = "Intro line\r\n\r\n# Über Straße — 日本語\r\nmore\r\n".encode()
    content = page_for(body)
    assert (
        content
        == (
            "---\ntitle: Über Straße — 日本語\nconstellation: atlas\ntype: analysis\n"
            "source: report.md\ningested: 2026-04-20\nupdated: 2026-04-20\n---\n"
        ).encode()
        + body
    )


@pytest.mark.parametrize(
    "body",
    [
        b"line one\r\nline two\r\n",
        "caf\u00e9 \u2014 na\u00efve \U0001f600\n\ttabbed\n".encode(),
        b"no trailing newline",
        b"\n\n\nleading blank lines\n---\nnot frontmatter\n---\n",
        b"",
    ],
)
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_body_is_copied_byte_for_byte(body: bytes, newline: bytes) -> None:
    source = b"---" + newline + b"title: T" + newline + b"---" + newline + body
    content = page_for(source)
    assert content.endswith(b"\n---\n" + body)
    assert content.count(body) >= 1
    assert loads_bytes(content).body.encode() == body


def test_byte_order_mark_is_dropped() -> None:
    assert page_for(b"\xef\xbb\xbf---\ntitle: T\n---\nx\n").startswith(b"---\ntitle: T\n")
    assert page_for(b"\xef\xbb\xbfplain\n").endswith(b"---\nplain\n")


@pytest.mark.parametrize(
    ("source", "options", "title"),
    [
        (b"---\ntitle: From Frontmatter\n---\n# From Heading\n", {"title": "From Flag"}, "From Flag"),
        (b"---\ntitle: From Frontmatter\n---\n# From Heading\n", {}, "From Frontmatter"),
        (b"---\ntitle: '   '\n---\n# From Heading\n", {}, "From Heading"),
        (b"---\ntitle: 42\n---\n# From Heading\n", {}, "From Heading"),
        (b"---\nauthor: x\n---\n## Not this\n# From Heading #\n", {}, "From Heading"),
        (b"---\nauthor: x\n---\nNo heading at all\n#hashtag\n", {}, "report"),
        (b"```sh\n# a shell comment\n```\n# Real Heading\n", {}, "Real Heading"),
        (b"~~~~\n# inside\n~~~\n# still inside\n~~~~\n# After Fence\n", {}, "After Fence"),
        (b"# \n#  Spaced   Out \n", {}, "Spaced Out"),
        (b"---\ntitle: |\n  Two\n  lines\n---\n", {"title": " Flag  with\tspaces "}, "Flag with spaces"),
        (b"---\ntitle: |\n  Two\n  lines\n---\n", {}, "Two lines"),
    ],
)
def test_title_precedence_flag_then_frontmatter_then_heading_then_stem(
    source: bytes, options: dict[str, str], title: str
) -> None:
    content = page_for(source, **options)
    metadata = loads_bytes(content).metadata
    assert metadata is not None
    assert metadata["title"] == title
    assert title_of(metadata, "stem") == title


@pytest.mark.parametrize(
    ("source", "options", "expected"),
    [
        (b"---\ntype: report\n---\n", {}, "report"),
        (b"---\ntype: report\n---\n", {"type": "decision"}, "decision"),
        (b"---\ntitle: T\n---\n", {}, "analysis"),
        (b"---\ntitle: T\n---\n", {"dir": "hermes", "type": "howto"}, "howto"),
        (b"---\ntype: design\n---\n", {"dir": "hermes"}, "design"),
    ],
)
def test_type_precedence_flag_then_source_then_dir_default(
    source: bytes, options: dict[str, str], expected: str
) -> None:
    metadata = loads_bytes(page_for(source, **options)).metadata
    assert metadata is not None
    assert metadata["type"] == expected


def test_no_type_outside_analyses_is_an_argument_error() -> None:
    with pytest.raises(IngestArgumentError, match=r"^no type for a page in hermes/: .*pass --type T"):
        page_for(b"---\ntitle: T\n---\n", dir="hermes")


@pytest.mark.parametrize(("flag", "value"), [("title", "  "), ("type", "\t")])
def test_blank_flags_are_argument_errors(flag: str, value: str) -> None:
    with pytest.raises(IngestArgumentError, match=rf"^--{flag} is blank"):
        page_for(b"x\n", **{flag: value})


@pytest.mark.parametrize(
    "title",
    [
        "Agent Ecosystem Report — March 2026",
        "ADR-004: Stay on Hetzner — Not Fly.io",
        "2026-03-18",
        "yes",
        "null",
        "123",
        "#hashtag",
        "- dash",
        "'quoted' and \"double\"",
        "key: value # not a comment",
        "[not, a, list]",
        "{not: a map}",
        "---",
        "caf\u00e9 \U0001f600 \u65e5\u672c",
        "x" * 500,
    ],
)
def test_title_round_trips_through_the_core_parser(title: str) -> None:
    content = page_for(b"body\n", title=title)
    metadata = loads_bytes(content).metadata
    assert metadata is not None
    assert metadata["title"] == title
    assert content.count(b"\n---\n") == 1  # one line-wide title, never folded


def test_dates_stay_unquoted_dates() -> None:
    content = page_for(b"---\ndate: 2026-03-18\ncreated: 2025-10-06\n---\n")
    assert b"\ndate: 2026-03-18\n" in content
    assert b"\ningested: 2026-04-20\n" in content
    metadata = loads_bytes(content).metadata
    assert metadata is not None
    assert metadata["date"] == datetime.date(2026, 3, 18)
    assert metadata["ingested"] == TODAY
    assert metadata["updated"] == TODAY


def test_render_matches_yaml_safe_load_exactly() -> None:
    source = b"---\ntitle: 'A: B'\nnested: {k: [1, 2]}\nflag: true\nnothing: null\nmulti: |\n  x\n  ---\n  y\n---\n"
    content = page_for(source)
    span_end = content.index(b"\n---\n", 4)
    block = content[4 : span_end + 1].decode()
    assert yaml.safe_load(block) == parse_block(block)[0]
    assert parse_block(block)[0] == {
        "title": "A: B",
        "nested": {"k": [1, 2]},
        "flag": True,
        "nothing": None,
        "multi": "x\n---\ny\n",
        "constellation": "atlas",
        "type": "analysis",
        "source": "report.md",
        "ingested": TODAY,
        "updated": TODAY,
    }


@settings(max_examples=examples(35))
@given(
    st.dictionaries(
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12),
        st.one_of(st.text(max_size=30), st.integers(), st.booleans(), st.none(), st.dates()),
        max_size=5,
    )
)
def test_any_source_mapping_round_trips_or_is_refused(metadata: dict[str, object]) -> None:
    block = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True)
    source = b"---\n" + block.encode() + b"---\nbody\n"
    try:
        document = split_source(source, "s.md")
    except BadSourceError:
        return  # a block the core does not read back as a mapping: refused, never mangled
    try:
        content = build_page(document, stem="s", constellation="atlas", dir="analyses", ingested=TODAY).content
    except BadSourceError:
        return
    read_back = loads_bytes(content).metadata
    assert read_back is not None
    for key, value in document.metadata.items():
        if key == "updated" and value is None:
            assert read_back[key] == TODAY
        elif key not in {"title", "constellation", "type", "source", "ingested"}:
            assert read_back[key] == value
    assert list(read_back)[: len(document.metadata)] == list(document.metadata)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (b"", r"^source 'report.md' is empty: "),
        (b" \n\t\r\n", r"^source 'report.md' is empty: "),
        (b"\xef\xbb\xbf", r"^source 'report.md' is empty: "),
        (b"ok\n\xff\xfe bad", r"^source 'report.md' is not UTF-8 \(invalid byte at offset 3\): convert it to UTF-8$"),
        (b"---\ntitle: T\nno closing line\n", r"^source 'report.md' opens a frontmatter block that is never closed: "),
        (b"---\ntitle: [unclosed\n---\n", r"^the frontmatter of source 'report.md' is not valid YAML: "),
        (b"---\n- a list\n---\n", r"^the frontmatter of source 'report.md' is not a mapping of keys: "),
        (b"---\njust a string\n---\n", r"^the frontmatter of source 'report.md' is not a mapping of keys: "),
    ],
)
def test_bad_sources_are_refused(source: bytes, message: str) -> None:
    with pytest.raises(BadSourceError, match=message):
        split_source(source, "report.md")


def test_empty_or_comment_only_frontmatter_is_an_empty_mapping() -> None:
    assert split_source(b"---\n---\nbody\n", "s.md").metadata == {}
    assert split_source(b"---\n# just a comment\n\n---\nbody\n", "s.md").metadata == {}
    assert page_for(b"---\n---\n# Heading\n").endswith(b"---\n# Heading\n")


def test_first_heading_ignores_non_h1_and_fenced_lines() -> None:
    assert first_heading(b"##  Two\n#Tight\n    # indented code\n") is None
    assert first_heading(b"```\n# in code\n``` trailing text keeps the fence open\n# still in\n") is None
    assert first_heading(b"# Title ###\n") == "Title"
    assert first_heading(b"# C# Tips\n") == "C# Tips"


def dated(source: bytes, ingested: datetime.date) -> Page:
    document = split_source(source, "s.md")
    return build_page(document, stem="s", constellation="atlas", dir="analyses", ingested=ingested)


def test_same_ignoring_dates_sets_aside_only_the_ingest_dates() -> None:
    page = dated(b"---\ntitle: T\n---\nbody\n", TODAY)
    earlier = dated(b"---\ntitle: T\n---\nbody\n", datetime.date(2025, 1, 2))
    assert page.ingest_dates == ("ingested", "updated")
    assert earlier.content.count(b"2025-01-02") == 2
    assert same_ignoring_dates(page.content, page)
    assert same_ignoring_dates(earlier.content, page)
    assert same_ignoring_dates(earlier.content.replace(b"updated: 2025-01-02", b"updated: 2026-11-11"), page)
    assert not same_ignoring_dates(earlier.content.replace(b"body", b"bodY"), page)
    assert not same_ignoring_dates(earlier.content.replace(b"title: T", b"title: U"), page)
    for key in page.ingest_dates:  # a page an older ingest wrote without updated is different
        without_date = dict(page.metadata)
        del without_date[key]
        assert not same_ignoring_dates(render(without_date, page.body), page)
    assert not same_ignoring_dates(b"no frontmatter", page)
    assert not same_ignoring_dates(b"---\n[broken\n---\n", page)


def test_a_source_updated_is_content_not_an_ingest_date() -> None:
    page = dated(b"---\ntitle: T\nupdated: 2026-02-01\n---\nbody\n", TODAY)
    assert page.ingest_dates == ("ingested",)
    assert same_ignoring_dates(dated(b"---\ntitle: T\nupdated: 2026-02-01\n---\nbody\n", LATER).content, page)
    assert not same_ignoring_dates(dated(b"---\ntitle: T\nupdated: 2026-01-01\n---\nbody\n", TODAY).content, page)
