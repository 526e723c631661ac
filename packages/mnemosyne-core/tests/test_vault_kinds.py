"""Vaults other tools write, read as they lie on disk: pages in UTF-16 and UTF-32, pages
that are not text. Each is searched by the scan and through the vault's index
(built, then kept fresh), which must agree with it exactly."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from index_harness import build_index

from mnemosyne_core import search
from mnemosyne_core.backend import FindRequest
from mnemosyne_core.cache import IndexedScan
from mnemosyne_core.fold import TEXT_PROBE_BYTES, as_utf8, decode, is_text

if TYPE_CHECKING:
    from mnemosyne_core.results import FindResult

WIDE_PAGE = "---\ntitle: Wide Kestrel\n---\nThe café by the needle.\n"


def write_vault(root: Path, pages: dict[str, bytes]) -> str:
    for rel_path, data in pages.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_bytes(data)
    return str(root.resolve())


def answer(result: FindResult) -> tuple[object, ...]:
    matches = [(match.path, match.title, match.matched, match.content) for match in result.matches]
    return matches, result.total, result.keyword_counts, result.not_text


def scanned_and_served(vault: str, keywords: list[str], *, keep_content: bool = False) -> tuple[object, ...]:
    """The scan's answer, after checking that the cache gives the same, cold and warm."""
    scanned = search(vault, keywords, limit=0, keep_content=keep_content)
    build_index(vault)
    for _call in ("built", "kept fresh"):
        backend = IndexedScan(os.environ)
        cached = backend.search(FindRequest(vault, keywords, limit=0, keep_content=keep_content))
        assert backend.indexed
        assert answer(cached) == answer(scanned)
    return answer(scanned)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_a_wide_page_with_a_mark_is_matched_by_its_text_and_title(tmp_path: Path, codec: str) -> None:
    mark = {"utf-16-be": b"\xfe\xff", "utf-32-be": b"\x00\x00\xfe\xff"}.get(codec, b"")
    data = mark + WIDE_PAGE.encode(codec)
    vault = write_vault(tmp_path, {"notes/wide.md": data, "notes/other.md": b"needle\n"})
    expected = [("notes/wide.md", "Wide Kestrel", "title", None)]
    assert scanned_and_served(vault, ["kestrel"]) == (expected, 1, {}, 0)
    matches = scanned_and_served(vault, ["CAFÉ", "needle"])[0]
    assert matches == [("notes/wide.md", "Wide Kestrel", "text", None)]
    # --cat prints the page as it is on disk, mark and all.
    cat = scanned_and_served(vault, ["kestrel"], keep_content=True)[0]
    assert cat == [("notes/wide.md", "Wide Kestrel", "title", data)]


def test_a_long_wide_page_is_read_whole(tmp_path: Path) -> None:
    text = "---\ntitle: Long\n---\n" + "filler line\n" * (TEXT_PROBE_BYTES // 4) + "osprey at the end\n"
    vault = write_vault(tmp_path, {"notes/long.md": text.encode("utf-16")})
    assert scanned_and_served(vault, ["osprey"])[0] == [("notes/long.md", "Long", "text", None)]


def test_as_utf8_transcodes_only_pages_with_a_wide_mark() -> None:
    assert as_utf8("é".encode("utf-16")) == "é".encode()
    assert as_utf8(b"\xff\xfe\x00\xd8") == "\ufffd".encode()  # a lone surrogate
    assert as_utf8(b"\xff\xfe\x41") == "\ufffd".encode()  # a unit cut short
    for plain in (b"", b"\xff", b"\xef\xbb\xbfx", b"\x00\x00\xfe", b"\xfe"):
        assert as_utf8(plain) is plain
    assert decode(b"\xff\xfe\x00\x00" + "x".encode("utf-32-le")) == "x"


def test_is_text_looks_for_a_nul_in_the_first_16_kib() -> None:
    assert is_text(b"plain\n")
    assert not is_text(b"\x00")
    assert not is_text("no mark".encode("utf-16-le"))
    assert is_text(b"x" * TEXT_PROBE_BYTES + b"\x00")


def test_a_miss_counts_the_pages_that_are_not_text(tmp_path: Path) -> None:
    vault = write_vault(
        tmp_path,
        {
            "notes/no-mark.md": "Sixteen without a mark\n".encode("utf-16-le"),
            "notes/image.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "notes/wide.md": WIDE_PAGE.encode("utf-16"),
            "notes/plain.md": b"plain\n",
        },
    )
    assert scanned_and_served(vault, ["sixteen"]) == ([], 0, {"sixteen": 0}, 2)
    # A match needs no count: its pages are real whatever the others hold.
    assert scanned_and_served(vault, ["plain"])[1:] == (1, {}, 0)


def test_the_count_holds_when_two_processes_share_the_search(tmp_path: Path) -> None:
    pages = {f"notes/page-{number:04}.md": b"plain page\n" for number in range(600)}
    pages["notes/page-0001.md"] = b"\x00binary"
    pages["notes/page-0599.md"] = b"\x00binary"
    vault = write_vault(tmp_path, pages)
    assert search(vault, ["kestrel"]).not_text == 2


LOGSEQ = {
    "pages/Whiteboard___Tool___Shape___Rectangle.md": b"alias:: Rectangle tool\ntype:: [[Tool]]\n\n- Draws.\n",
    "pages/New to Logseq%3F.md": b"- Start here\n",
    "pages/Community___Sprint.md": b"- title:: Community/Query Sprint\n  alias:: [[Sprint]], Learning sprint\n- body\n",
    "pages/front.md": b"---\ntitle: Front\n---\ntitle:: Not read\n",
    "pages/late.md": b"- body first\ntitle:: Not a property\n",
}


@pytest.mark.parametrize(
    ("keywords", "expected"),
    [
        (["Whiteboard/Tool/Shape/Rectangle"], [("pages/Whiteboard___Tool___Shape___Rectangle.md", "title")]),
        (["rectangle", "tool"], [("pages/Whiteboard___Tool___Shape___Rectangle.md", "title")]),
        (["logseq?"], [("pages/New to Logseq%3F.md", "title")]),
        (["learning", "sprint"], [("pages/Community___Sprint.md", "title")]),
        (["not", "read"], [("pages/front.md", "text")]),
        (["not", "a", "property"], [("pages/late.md", "text")]),
    ],
)
def test_logseq_properties_and_page_names(tmp_path: Path, keywords: list[str], expected: list[object]) -> None:
    vault = write_vault(tmp_path, LOGSEQ)
    matches = scanned_and_served(vault, keywords)[0]
    assert isinstance(matches, list)
    assert [(path, matched) for path, _title, matched, _content in matches] == expected


def test_logseq_titles_shown(tmp_path: Path) -> None:
    vault = write_vault(tmp_path, LOGSEQ)
    titles = {match.path: match.title for match in search(vault, ["pages"], limit=0).matches}
    assert titles == {
        "pages/Whiteboard___Tool___Shape___Rectangle.md": "Whiteboard/Tool/Shape/Rectangle",
        "pages/New to Logseq%3F.md": "New to Logseq?",
        "pages/Community___Sprint.md": "Community/Query Sprint",
        "pages/front.md": "Front",
        "pages/late.md": "late",
    }


# --- titles from the opening heading (docs/spec.md, rule 5) ------------------------------

HEADED = b"# Osprey Field Notes\n\nosprey sightings\n"


@pytest.mark.parametrize(
    ("files", "rel_path", "title"),
    [
        # A folder of notes (zero config): the heading names the page.
        ({}, "notes/field.md", "Osprey Field Notes"),
        # A configured layout, here over a dir named like a default one.
        ({".mnemosyne.toml": b'dirs = ["atlas"]\n'}, "atlas/field.md", "Osprey Field Notes"),
        # The default (Aion) layout: the file name, as before.
        ({}, "atlas/field.md", "field"),
        # An Obsidian vault: the file name is the note's name, whatever it opens with.
        ({".obsidian/app.json": b"{}\n"}, "notes/field.md", "field"),
        ({".obsidian/app.json": b"{}\n", ".mnemosyne.toml": b'dirs = ["notes"]\n'}, "notes/field.md", "field"),
    ],
)
def test_the_opening_heading_titles_a_page_in_every_layout_but_aion_and_obsidian(
    tmp_path: Path, files: dict[str, bytes], rel_path: str, title: str
) -> None:
    vault = write_vault(tmp_path, {**files, rel_path: HEADED})
    # The title takes part in matching and order: "field notes" is a title match.
    matched = "title" if title != "field" else "text"
    assert scanned_and_served(vault, ["osprey"])[0] == [(rel_path, title, matched, None)]


def test_a_vault_that_becomes_an_obsidian_vault_is_titled_anew_through_the_cache(tmp_path: Path) -> None:
    vault = write_vault(tmp_path, {"notes/field.md": HEADED})
    assert scanned_and_served(vault, ["osprey"])[0] == [("notes/field.md", "Osprey Field Notes", "title", None)]
    (tmp_path / ".obsidian").mkdir()  # no page changed: only the title rule did
    assert scanned_and_served(vault, ["osprey"])[0] == [("notes/field.md", "field", "text", None)]
