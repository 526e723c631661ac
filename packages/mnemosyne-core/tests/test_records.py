"""Records, TOML quoting and the markdown-like name test, each declared once: a record's
equality and repr follow every one of its slots, so adding a field cannot leave either
behind; a quoted string reads back as itself; the test lint and the miss note share."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemosyne_core.config import (
    FLAT_SUFFIXES,
    MARKDOWN_SUFFIXES,
    Layout,
    VaultConfig,
    is_markdown_like,
    markdown_like_endings,
    toml_array,
    toml_string,
)
from mnemosyne_core.context import Context
from mnemosyne_core.diagnostics import Diagnostic
from mnemosyne_core.frontmatter import Frontmatter
from mnemosyne_core.location import VaultLocation
from mnemosyne_core.page import PageRef
from mnemosyne_core.recall import Entry
from mnemosyne_core.record import HashableRecord, Record
from mnemosyne_core.results import Match

#: One record of each class built on Record, each slot holding a value of its own.
RECORDS: list[Record] = [
    VaultConfig(("wiki",), "memory", ("L001",), "/v/.mnemosyne.toml", True, depth="tree", suffixes=(".md",)),
    Layout(("atlas",), "tree", (".md", ".mdx"), ("drafts/",), "vault-config", "vault-config"),
    VaultLocation("/v", "flag", "~/v", "/home/u/.config/mnemosyne/config.toml"),
    Diagnostic("atlas", "cannot-list", "Permission denied", is_dir=True),
    Context(3, "a line", ((0, 1),)),
    Match("atlas/a.md", "A", "atlas", "note", "title", b"page"),
    PageRef("atlas", "a.md", "/v/atlas/a.md"),
    Frontmatter({"title": "A"}, "body", "ok"),
    Entry(PageRef("atlas", "a.md", "/v/atlas/a.md"), "A", "a", ["t"], None, b"page"),
]
#: A value no slot of RECORDS holds, for changing one slot at a time.
OTHER = object()


def slots_of(record: Record) -> tuple[str, ...]:
    return tuple(slot for klass in type(record).__mro__ for slot in getattr(klass, "__slots__", ()))


def copy_of(record: Record, **changes: object) -> Record:
    """A record of the same class with the same slots, but for ``changes``."""
    copy = object.__new__(type(record))
    for slot in slots_of(record):
        object.__setattr__(copy, slot, changes.get(slot, getattr(record, slot)))
    return copy


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: type(record).__name__)
def test_each_slot_decides_equality_and_shows_in_the_repr(record: Record) -> None:
    assert slots_of(record), "a record without slots holds no value"
    assert copy_of(record) == record
    assert repr(copy_of(record)) == repr(record)
    for slot in slots_of(record):
        changed = copy_of(record, **{slot: OTHER})
        assert changed != record, slot
        assert repr(changed) != repr(record), slot
        assert f"{slot}={OTHER!r}" in repr(changed)


def test_the_repr_names_the_class_and_every_slot_in_order() -> None:
    layout = Layout(("atlas",), "tree", (".md",), ("drafts/",))
    assert repr(layout) == (
        "Layout(depth='tree', dirs=('atlas',), dirs_source='default', exclude=('drafts/',), "
        "source='default', suffixes=('.md',))"
    )


def test_configs_differing_only_in_layout_keys_print_apart() -> None:
    # The hand-written repr once left depth, suffixes and exclude out: unequal configs
    # printed alike and pytest's diff showed no difference.
    plain = VaultConfig(("wiki",))
    for changed in (
        VaultConfig(("wiki",), depth="tree"),
        VaultConfig(("wiki",), suffixes=(".mdx",)),
        VaultConfig(("wiki",), exclude=("drafts/",)),
        VaultConfig(("wiki",), cache_enabled=False),
    ):
        assert changed != plain
        assert repr(changed) != repr(plain)


def test_records_of_different_classes_are_never_equal() -> None:
    class Other(Record):
        __slots__ = ("code", "detail", "is_dir", "path")

    other = Other()
    diagnostic = Diagnostic("atlas", "cannot-list", "Permission denied", is_dir=True)
    for slot in slots_of(diagnostic):
        object.__setattr__(other, slot, getattr(diagnostic, slot))
    assert other != diagnostic
    assert diagnostic != other
    assert diagnostic != diagnostic.as_fields()


def test_hashable_records_hash_by_value_and_the_others_not_at_all() -> None:
    assert isinstance(Diagnostic("a", "b"), HashableRecord)
    assert len({Diagnostic("a", "b"), Diagnostic("a", "b"), Diagnostic("a", "c")}) == 2
    assert len({Context(1, "x"), Context(1, "x")}) == 1
    for record in RECORDS:
        if not isinstance(record, HashableRecord):
            with pytest.raises(TypeError, match="unhashable"):
                hash(record)


@given(st.text(st.characters(exclude_categories=["Cs"])))
def test_a_toml_string_reads_back_as_the_text(text: str) -> None:
    assert tomllib.loads(f"key = {toml_string(text)}") == {"key": text}


@given(st.lists(st.text(st.characters(exclude_categories=["Cs"]))))
def test_a_toml_array_reads_back_as_the_items(items: list[str]) -> None:
    assert tomllib.loads(f"key = {toml_array(items)}") == {"key": items}


def test_toml_quoting_escapes_only_what_toml_must() -> None:
    assert toml_string('no"tes\\é\t\x7f\x1b') == '"no\\"tes\\\\é\\t\\u007f\\u001b"'
    assert toml_array(["atlas", "docs/en"]) == '["atlas", "docs/en"]'
    assert toml_array([]) == "[]"


def test_a_markdown_like_name_ends_in_a_markdown_or_layout_suffix_in_any_case() -> None:
    endings = markdown_like_endings((".Page", *FLAT_SUFFIXES))
    assert endings == (*MARKDOWN_SUFFIXES, ".page")
    for name in ("a.md", "A.MD", "b.Markdown", "c.mdx", "d.PAGE", "e.page"):
        assert is_markdown_like(name, endings), name
    for name in ("a.txt", "md", "a.md.bak", "a.mdown"):
        assert not is_markdown_like(name, endings), name
