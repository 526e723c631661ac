"""The page cache's own rules, on a real file system: which pages a call reads again (racy
entries, pages that changed while read), what a --dir call keeps of the file, that a call
where nothing changed does not write it, and the keyword loop over one buffer
(``Snapshot.holding``) against the plain test of each record."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core import cache
from mnemosyne_core.backend import FindRequest, RecallRequest
from mnemosyne_core.find import search
from mnemosyne_core.vault import read_to_end, scan

PAGES = {
    "a/one.md": "---\ntitle: One\n---\nalpha\n",
    "a/two.md": "---\ntitle: Two\n---\nbeta alpha\n",
    "b/three.md": "---\ntitle: Three\n---\ngamma\n",
}
#: A moment long past: a page whose mtime and ctime are both this old is not racy.
LONG_AGO_NS = 1_000_000_000


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel_path, text in PAGES.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="utf-8")
    (root / ".mnemosyne.toml").write_text('dirs = ["a", "b"]\n', encoding="utf-8")
    return root


@pytest.fixture
def backend(tmp_path: Path) -> cache.CachedScan:
    return cache.CachedScan({"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)})


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The vault-relative path of every page the cache reads from disk, in order."""
    seen: list[str] = []
    real = cache.read_page

    def spy(read_path: str, rel_path: str, now_ns: int | None = None, heading_titles: bool = False) -> cache.Page:
        seen.append(rel_path)
        return real(read_path, rel_path, now_ns, heading_titles)

    monkeypatch.setattr(cache, "read_page", spy)
    return seen


def cache_file(tmp_path: Path, vault: Path) -> Path:
    return Path(cache.cache_file_path(str(tmp_path / "cache" / "mnemosyne"), os.path.realpath(vault)))


@pytest.fixture
def warm(tmp_path: Path, vault: Path, backend: cache.CachedScan, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The vault's cache file after one find, with no racy window (every page trusted)."""
    monkeypatch.setattr(cache, "RACY_NS", 0)
    answer(backend, vault, "alpha")
    return cache_file(tmp_path, vault)


def answer(backend: cache.CachedScan, vault: Path, *keywords: str, dirs: list[str] | None = None) -> list[str]:
    result = backend.search(FindRequest(str(vault), list(keywords), dirs=dirs))
    plain = search(str(vault), list(keywords), dirs=dirs)
    assert [match.path for match in result.matches] == [match.path for match in plain.matches]
    return [match.path for match in result.matches]


def test_a_page_changed_within_the_racy_window_is_read_on_every_call(
    vault: Path, backend: cache.CachedScan, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Just written, every page is racy: a same-size rewrite in the same tick would leave
    its stat as it was, so its entry is not trusted."""
    answer(backend, vault, "alpha")
    assert sorted(reads) == sorted(PAGES)
    reads.clear()
    answer(backend, vault, "alpha")
    assert sorted(reads) == sorted(PAGES)
    # Once read long after its last change, an entry is trusted.
    monkeypatch.setattr(cache, "RACY_NS", 0)
    reads.clear()
    answer(backend, vault, "alpha")
    assert sorted(reads) == sorted(PAGES)
    reads.clear()
    answer(backend, vault, "alpha")
    assert reads == []


def test_only_the_racy_pages_are_read_again(
    vault: Path, backend: cache.CachedScan, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page old on disk is trusted while the page written a moment ago is not. Time is
    moved forward instead of ctime back (which no call can set): the read happens an
    hour after every page's last change, but for one rewritten in that hour."""
    real_time_ns = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real_time_ns() + 3600 * 10**9)
    answer(backend, vault, "alpha")
    reads.clear()
    answer(backend, vault, "alpha")
    assert reads == []
    monkeypatch.setattr(time, "time_ns", real_time_ns)
    (vault / "a" / "two.md").write_text("---\ntitle: Two\n---\nbeta alpha gamma\n", encoding="utf-8")
    answer(backend, vault, "alpha")
    assert reads == ["a/two.md"]
    reads.clear()
    assert sorted(answer(backend, vault, "gamma")) == ["a/two.md", "b/three.md"]
    assert reads == ["a/two.md"]  # still racy: read again


def test_a_page_that_changed_while_read_is_racy(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page_path = vault / "a" / "one.md"
    # Not racy by time: what makes it racy is the change during the read.
    os.utime(page_path, ns=(LONG_AGO_NS, LONG_AGO_NS))
    monkeypatch.setattr(cache, "RACY_NS", 0)
    assert cache.read_page(str(page_path), "a/one.md").racy is False

    def read_then_grow(fd: int) -> bytes:
        data = read_to_end(fd)
        with open(page_path, "ab") as page:
            page.write(b"more\n")
        return data

    monkeypatch.setattr(cache, "read_to_end", read_then_grow)
    page = cache.read_page(str(page_path), "a/one.md")
    assert page.racy is True
    assert page.key[0] == len(PAGES["a/one.md"])  # the stat taken before the read


def test_a_dir_call_keeps_the_other_dirs_pages(warm: Path, vault: Path, backend: cache.CachedScan) -> None:
    path = warm
    (vault / "a" / "one.md").write_text("---\ntitle: One\n---\nalpha delta\n", encoding="utf-8")
    (vault / "a" / "four.md").write_text("---\ntitle: Four\n---\ndelta\n", encoding="utf-8")
    assert answer(backend, vault, "delta", dirs=["a"]) == ["a/four.md", "a/one.md"]
    stored = cache.load(str(path), cache.code_key())
    assert stored is not None
    assert sorted(stored.index) == ["a/four.md", "a/one.md", "a/two.md", "b/three.md"]
    # What the --dir call read is what the whole call now takes unread.
    assert b"delta" in stored.page(stored.index["a/one.md"]).record


def test_a_call_where_nothing_changed_does_not_write_the_file(
    warm: Path, vault: Path, backend: cache.CachedScan
) -> None:
    path = warm
    written = path.stat()
    answer(backend, vault, "gamma")
    answer(backend, vault, "beta", dirs=["a"])
    backend.recall(RecallRequest(str(vault), "one"))  # the first recall fills recall's fields: a write
    written = path.stat()
    backend.recall(RecallRequest(str(vault), "two"))
    answer(backend, vault, "alpha")
    now = path.stat()
    assert (now.st_ino, now.st_mtime_ns, now.st_size) == (written.st_ino, written.st_mtime_ns, written.st_size)


def test_a_page_gone_from_the_vault_leaves_the_file(warm: Path, vault: Path, backend: cache.CachedScan) -> None:
    path = warm
    (vault / "a" / "two.md").unlink()
    assert answer(backend, vault, "alpha") == ["a/one.md"]
    stored = cache.load(str(path), cache.code_key())
    assert stored is not None
    assert sorted(stored.index) == ["a/one.md", "b/three.md"]


# --- the keyword loop over one buffer --------------------------------------------------------

#: Records as ``read_page`` makes them: names, each NUL-ended (a title may itself hold a
#: NUL), then text; the alphabet is small so that needles are often found, across
#: records' ends too.
_ALPHABET = st.sampled_from([*"ab\0\n", "é", "ß", "設"])
_RECORDS = st.lists(st.text(_ALPHABET, max_size=12).map(cache.utf8), max_size=12)
#: Keywords never hold a NUL (the query's words are split on none and folded).
_NEEDLES = st.text(st.sampled_from([*"ab\n", "é", "ß", "設"]), min_size=1, max_size=4).map(cache.utf8)


def _snapshot(records: list[bytes], trailing_nul: bool) -> cache.Snapshot:
    """A snapshot's buffer as either path builds it: joined by ``fresh_snapshot``, or as
    ``save`` stored it (each record NUL-ended)."""
    snapshot = cache.Snapshot(None)
    starts = []
    offset = 0
    for record in records:
        starts.append(offset)
        offset += len(record) + 1
    snapshot.starts = starts
    snapshot.buffer = b"\0".join(records) + (b"\0" if trailing_nul and records else b"")
    return snapshot


@settings(max_examples=examples(300))
@given(records=_RECORDS, needle=_NEEDLES, trailing_nul=st.booleans())
@example(records=[b"ab", b"", b"", b"ba"], needle=b"a", trailing_nul=False)
@example(records=[b"a\0b", b"b"], needle=b"b", trailing_nul=True)
@example(records=[b"aa", b"a"], needle=b"aa", trailing_nul=False)
def test_holding_finds_exactly_the_records_that_hold_the_needle(
    records: list[bytes], needle: bytes, trailing_nul: bool
) -> None:
    plain = [index for index, record in enumerate(records) if needle in record]
    assert _snapshot(records, trailing_nul).holding(needle) == plain


@settings(max_examples=examples(100))
@given(records=_RECORDS, needle=_NEEDLES)
def test_holding_over_a_saved_file_equals_the_plain_test(
    tmp_path_factory: pytest.TempPathFactory, records: list[bytes], needle: bytes
) -> None:
    """The same through ``save`` and ``load``: the buffer and offsets as the file keeps them."""
    path = str(tmp_path_factory.mktemp("saved") / "file.pages")
    pages = []
    for index, record in enumerate(records):
        page = cache.Page()
        page.record = record
        page.key = (len(record), index, index, index, 1)
        pages.append((f"a/{index}.md", page))
    cache.save(path, b"code", pages)
    stored = cache.load(path, b"code")
    assert stored is not None
    snapshot = cache.Snapshot(stored)
    snapshot.buffer, snapshot.starts = stored.records, stored.offsets[:-1]
    assert snapshot.holding(needle) == [index for index, record in enumerate(records) if needle in record]
    assert [stored.page(index).record for index in range(len(records))] == records


def test_the_stat_check_split_between_two_processes_equals_the_one_process_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fresh_by_stat`` (a second process stats half of a large vault's pages) against
    the caller's own loop: every page the same fresh or not, through edits, a removal, an
    unreadable page and a racy one; and the answers the plain scan's."""
    from mnemosyne_core import split

    monkeypatch.setattr(cache, "RACY_NS", 0)
    root = tmp_path / "big"
    for number in range(60):
        page = root / ("notes" if number % 2 else "atlas") / f"page-{number}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"---\ntitle: Page {number}\n---\nkestrel {number % 7}\n", encoding="utf-8")
    backend = cache.CachedScan(os.environ)
    splits: list[int] = []
    real_in_two = split.in_two

    def counted_in_two(count: int, *args: object) -> object:
        splits.append(count)
        return real_in_two(count, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "in_two", counted_in_two)
    answer(backend, root, "kestrel")  # cold: every page read, the cache written
    (root / "atlas" / "page-4.md").write_text("---\ntitle: Page 4\n---\nchanged\n", encoding="utf-8")
    (root / "notes" / "page-7.md").unlink()
    pages = scan(os.path.realpath(root))
    cache_dir = cache.cache_dir_path(os.environ)
    assert cache_dir is not None
    stored = cache.load(cache.cache_file_path(cache_dir, pages.vault), cache.code_key())
    assert stored is not None
    monkeypatch.setattr(cache, "STAT_SPLIT_MIN_PAGES", 10**9)
    one_process = cache.fresh_snapshot(pages, stored)
    monkeypatch.setattr(cache, "STAT_SPLIT_MIN_PAGES", 1)
    fresh = cache.fresh_by_stat(pages, stored)
    two_processes = cache.fresh_snapshot(pages, stored)
    assert splits[-2:] == [len(pages), len(pages)] if split.can_fork() else fresh == b""
    assert [isinstance(source, int) for source in two_processes.sources] == [
        isinstance(source, int) for source in one_process.sources
    ]
    assert list(two_processes.refs) == list(one_process.refs)
    for keywords in (["kestrel"], ["changed"], ["page", "3"]):
        assert answer(backend, root, *keywords) == [match.path for match in search(str(root), keywords).matches]
