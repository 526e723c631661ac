"""Frontmatter: the split (rule 4), titles (rule 5), and the YAML-free path against YAML."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from mnemosyne_core.frontmatter import (
    MAX_BLOCK_BYTES,
    STATUS_ABSENT,
    STATUS_INVALID,
    STATUS_NOT_MAPPING,
    STATUS_OK,
    STATUS_UNCLOSED,
    fast_string_fields,
    load,
    loads,
    locate,
    parse_block,
    title_of,
)


def test_loads_splits_metadata_and_body() -> None:
    parsed = loads("---\ntitle: A Page\ntags: [x, y]\n---\n# Body\ntext\n")
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
    parsed = loads(text)
    assert (parsed.metadata, parsed.status) == (None, status)


def test_load_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_bytes(b"\xef\xbb\xbf---\r\ntitle: CRLF\r\n---\r\nbody\r\n")
    parsed = load(path)
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
        # Only a line of exactly three dots: more dots, a space or text after them do not.
        (b"---\na: 1\n....\n... \n...x\n---\n", (4, 24, 28)),
        (b"---\na: 1\n.....\n", None),
    ],
)
def test_document_end_closes_the_block(data: bytes, span: tuple[int, int, int] | None) -> None:
    assert locate(data) == span


def test_document_end_page_keeps_its_title() -> None:
    parsed = loads("---\ntitle: Jekyll Page\n...\nbody\n")
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


# Blocks YAML reads as mappings, and blocks the fast path must leave to YAML.
SIMPLE_BLOCKS = [
    "title: Plain Title\n",
    "title: Plain Title\nconstellation: atlas\ntype: decision\n",
    'title: "Quoted: with colon"\n',
    "title: 'It''s quoted'\n",
    "title: Don't Panic\n",
    "title: C# Notes\n",
    "title: Über Straße — café\n",
    "tags: [a, b-c, d.e]\ncreated: 2026-02-14\nupdated: 2026-03-01\n",
    "tags:\n  - one\n  - two\n",
    "tags:\n- one\n- two\n",
    "tags:\ntitle: After Empty\n",
    "title: First\ntitle: Second\n",
    "count: 42\nzero: 0\n",
    "flag: yes\nother: Off\nnothing: null\n",
    "# a comment\ntitle: With Comment\n\n",
    "title: yES\n",
    "empty: []\n",
    "tags: [yes, 12, 2026-01-02]\n",
    "title: Trailing spaces   \n",
    "title: Windows\r\ntype: crlf\r\n",
]

DECLINED_BLOCKS = [
    "title: Foo: Bar\n",  # mapping in a plain scalar: invalid YAML
    "title: Foo #comment\n",
    "title: |\n  block\n",
    "title: &anchor value\n",
    'title: "escaped \\" quote"\n',
    "nested:\n  key: value\n",
    "title: 2026-13-45\n",
    "title: 3.14\n",
    "yes: key is a boolean\n",
    "title: a\ttab\n",
    "title:\tvalue\n",
    "title: multi\n  line\n",
    "- a\n- b\n",
    "plain text\n",
    "title: trailing colon:\n",
    "title: bell \x07 char\n",
    "",
    "# only a comment\n",
]


@pytest.mark.parametrize("block", SIMPLE_BLOCKS + DECLINED_BLOCKS)
def test_fast_fields_equal_yamls_string_fields_whenever_they_answer(block: str) -> None:
    fast = fast_string_fields(block.encode())
    if fast is not None:
        mapping = yaml.safe_load(block)
        assert fast == {key: value for key, value in mapping.items() if isinstance(value, str)}


@pytest.mark.parametrize("block", DECLINED_BLOCKS)
def test_blocks_outside_the_subset_are_left_to_yaml(block: str) -> None:
    assert fast_string_fields(block.encode()) is None


def test_common_blocks_are_read_without_yaml() -> None:
    answered = [block for block in SIMPLE_BLOCKS if fast_string_fields(block.encode()) is not None]
    assert len(answered) >= 10, answered


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


def test_blocks_over_the_size_limit_are_invalid_on_both_paths() -> None:
    block = "title: Big\n" + "k: value\n" * (MAX_BLOCK_BYTES // 9 + 1)
    assert fast_string_fields(block.encode()) is None
    assert parse_block(block) == (None, STATUS_INVALID)
    wide = "title: Wide\nk: " + "\u20ac" * (MAX_BLOCK_BYTES // 3) + "\n"  # 3 bytes a character
    assert parse_block(wide) == (None, STATUS_INVALID)
