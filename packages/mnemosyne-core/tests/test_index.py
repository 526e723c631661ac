"""The vault's index, on a real file system: which pages a call reads again (racy entries,
pages that changed while read), what a --dir call keeps, that a call where nothing changed
writes nothing, that the first call answers by the scan and leaves the build to a builder,
and the candidate query (trigrams, then ``instr``) against the plain substring test."""

from __future__ import annotations

import _sqlite3 as sqlite3
import contextlib
import functools
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from index_harness import build_index, index_file
from property_examples import examples

from mnemosyne_core import build, cache, find, freshness, index, page
from mnemosyne_core.backend import FindRequest, RecallRequest
from mnemosyne_core.find import search
from mnemosyne_core.fold import fold, position
from mnemosyne_core.index import NoteIndex
from mnemosyne_core.page import read_to_end

PAGES = {
    "a/one.md": "---\ntitle: One\n---\nalpha\n",
    "a/two.md": "---\ntitle: Two\n---\nbeta alpha\n",
    "b/three.md": "---\ntitle: Three\n---\ngamma\n",
}
#: A moment long past: a page whose mtime and ctime are both this old is not racy.
LONG_AGO_NS = 1_000_000_000


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel_path, text in PAGES.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="utf-8")
    (root / ".mnemosyne.toml").write_text('dirs = ["a", "b"]\n', encoding="utf-8")
    return root


@pytest.fixture
def builders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The index paths a call started a detached builder for (none is started)."""
    started: list[str] = []
    monkeypatch.setattr(build, "start_detached", lambda path, *args: started.append(path))
    return started


@pytest.fixture
def backend(environ: dict[str, str], builders: list[str]) -> cache.IndexedScan:
    return cache.IndexedScan(environ)


@pytest.fixture
def built(vault: Path, environ: dict[str, str]) -> Path:
    """The vault's whole index, built as ``wiki init`` builds it."""
    return build_index(vault, environ)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The vault-relative path of every page a call reads from disk, in order."""
    seen: list[str] = []
    real = page.read_page

    def spy(read_path: str, rel_path: str, now_ns: int | None = None, heading_titles: bool = False) -> page.Page:
        seen.append(rel_path)
        return real(read_path, rel_path, now_ns, heading_titles)

    monkeypatch.setattr(freshness, "read_page", spy)
    return seen


def answer(backend: cache.IndexedScan, vault: Path, *keywords: str, dirs: list[str] | None = None) -> list[str]:
    """The call's matches, held to the plain scan's; the call must have used the index."""
    result = backend.search(FindRequest(str(vault), list(keywords), dirs=dirs, environ=backend.environ))
    plain = search(str(vault), list(keywords), dirs=dirs)
    assert [match.to_dict() for match in result.matches] == [match.to_dict() for match in plain.matches]
    assert (result.total, result.keyword_counts) == (plain.total, plain.keyword_counts)
    assert backend.indexed
    return [match.path for match in result.matches]


def rows(path: Path) -> list[str]:
    with NoteIndex.open(str(path)) as opened:
        return sorted(path.decode() for path in opened.stat_rows())


def test_the_first_call_answers_by_the_scan_and_starts_one_builder(
    vault: Path, backend: cache.IndexedScan, builders: list[str], environ: dict[str, str]
) -> None:
    result = backend.search(FindRequest(str(vault), ["alpha"], environ=environ))
    assert [match.path for match in result.matches] == ["a/one.md", "a/two.md"]
    assert not backend.indexed
    assert builders == [str(index_file(vault, environ))]


class _NeverAsked:
    """A change source that records being asked anything at all."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, vault_real: str, token: str | None) -> None:
        self.asked.append("changes")

    def available(self, vault_real: str) -> bool:
        self.asked.append("available")
        return True

    def unanswered(self, vault_real: str, serve_auto: bool | None, pages: int) -> None:
        self.asked.append("unanswered")


def test_without_the_index_the_scan_answers_as_named_and_nothing_is_cached_asked_or_built(
    tmp_path: Path, environ: dict[str, str], builders: list[str]
) -> None:
    """--no-cache: the request goes to the scan as the command named the vault (found from
    the working dir here: a `$` in its real path is no variable), and no index, server or
    builder is touched."""
    vault = tmp_path / "$notes"
    for rel_path, text in PAGES.items():
        (vault / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel_path).write_text(text, encoding="utf-8")
    (vault / ".mnemosyne.toml").write_text('dirs = ["a", "b"]\n', encoding="utf-8")
    source = _NeverAsked()
    backend = cache.IndexedScan(environ, source, use_index=False)
    cwd, home = str(vault / "a"), str(tmp_path)
    found = backend.search(FindRequest(None, ["alpha"], environ=environ, cwd=cwd, home=home))
    assert [match.path for match in found.matches] == ["a/one.md", "a/two.md"]
    recalled = backend.recall(RecallRequest(None, "two", environ=environ, cwd=cwd, home=home))
    assert [entry.path for entry in recalled.matches] == ["a/two.md"]
    assert (found.vault, recalled.vault) == (str(vault), str(vault))
    assert (source.asked, builders, backend.indexed) == ([], [], False)
    assert not (tmp_path / "cache").exists()


def test_an_index_without_a_whole_build_is_never_read(
    vault: Path, built: Path, backend: cache.IndexedScan, builders: list[str], environ: dict[str, str]
) -> None:
    with NoteIndex.open(str(built)) as opened:
        opened.connection.execute("UPDATE meta SET value = 0 WHERE name = 'complete'")
    result = backend.search(FindRequest(str(vault), ["alpha"], environ=environ))
    assert [match.path for match in result.matches] == ["a/one.md", "a/two.md"]
    assert not backend.indexed
    assert builders == [str(built)]


def test_a_builder_at_work_is_not_started_twice(
    vault: Path,
    environ: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    start_detached: Callable[..., None],
) -> None:
    import fcntl

    path = index_file(vault, environ)
    path.parent.mkdir(parents=True, mode=0o700)
    spawned: list[list[str]] = []
    monkeypatch.setattr(os, "posix_spawn", lambda executable, argv, env, **kwargs: spawned.append(argv))
    with open(build.lock_path(str(path)), "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.write(b"3 7")
        lock.flush()
        assert build.building(str(path)) == (3, 7)
        start_detached(str(path), str(vault), str(vault.parent), environ)
        assert spawned == []
    assert build.building(str(path)) is None
    start_detached(str(path), str(vault), str(vault.parent), environ)
    assert [argv[1:4] for argv in spawned] == [["-P", "-m", "mnemosyne_core.build"]]


def test_a_page_changed_within_the_racy_window_is_read_on_every_call(
    vault: Path, built: Path, backend: cache.IndexedScan, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Just written, every page is racy: a same-size rewrite in the same tick would leave
    its stat as it was, so its row is not trusted."""
    answer(backend, vault, "alpha")
    assert sorted(reads) == sorted(PAGES)
    reads.clear()
    answer(backend, vault, "alpha")
    assert sorted(reads) == sorted(PAGES)
    # Once read long after its last change, a row is trusted.
    monkeypatch.setattr(page, "RACY_NS", 0)
    reads.clear()
    answer(backend, vault, "alpha")
    assert sorted(reads) == sorted(PAGES)
    reads.clear()
    answer(backend, vault, "alpha")
    assert reads == []


def test_only_the_racy_pages_are_read_again(
    vault: Path, built: Path, backend: cache.IndexedScan, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page old on disk is trusted while the page written a moment ago is not. Time is
    moved forward instead of ctime back (which no call can set)."""
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
    monkeypatch.setattr(page, "RACY_NS", 0)
    assert page.read_page(str(page_path), "a/one.md").racy is False

    def read_then_grow(fd: int) -> bytes:
        data = read_to_end(fd)
        with open(page_path, "ab") as grown:
            grown.write(b"more\n")
        return data

    monkeypatch.setattr(page, "read_to_end", read_then_grow)
    read = page.read_page(str(page_path), "a/one.md")
    assert read.racy is True
    assert read.key[0] == len(PAGES["a/one.md"])  # the stat taken before the read


def test_a_dir_call_keeps_the_other_dirs_pages(
    vault: Path, built: Path, backend: cache.IndexedScan, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page, "RACY_NS", 0)
    (vault / "a" / "one.md").write_text("---\ntitle: One\n---\nalpha delta\n", encoding="utf-8")
    (vault / "a" / "four.md").write_text("---\ntitle: Four\n---\ndelta\n", encoding="utf-8")
    assert answer(backend, vault, "delta", dirs=["a"]) == ["a/four.md", "a/one.md"]
    assert rows(built) == ["a/four.md", "a/one.md", "a/two.md", "b/three.md"]
    # What the --dir call read is what the whole call now takes unread.
    assert answer(backend, vault, "delta") == ["a/four.md", "a/one.md"]


def test_a_dir_outside_the_layout_answers_only_for_its_own_call(
    vault: Path, built: Path, backend: cache.IndexedScan
) -> None:
    (vault / "c").mkdir()
    (vault / "c" / "five.md").write_text("alpha\n", encoding="utf-8")
    assert answer(backend, vault, "alpha", dirs=["c"]) == ["c/five.md"]
    assert answer(backend, vault, "alpha") == ["a/one.md", "a/two.md"]
    assert "c/five.md" not in rows(built)  # the vault's own listing drops what it does not list


def _written(path: Path) -> object:
    with NoteIndex.open(str(path)) as opened:
        return opened.connection.execute("PRAGMA data_version").fetchone(), opened.meta("written_ns")


def test_a_call_where_nothing_changed_writes_nothing(
    vault: Path, built: Path, backend: cache.IndexedScan, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page, "RACY_NS", 0)
    answer(backend, vault, "gamma")  # the pages built a moment ago were racy: read again once
    backend.recall(RecallRequest(str(vault), "one", environ=backend.environ))  # recall's fields: one write
    written = _written(built)
    answer(backend, vault, "gamma")
    answer(backend, vault, "beta", dirs=["a"])
    backend.recall(RecallRequest(str(vault), "two", environ=backend.environ))
    answer(backend, vault, "alpha")
    assert _written(built) == written


def test_a_page_gone_from_the_vault_leaves_the_index(vault: Path, built: Path, backend: cache.IndexedScan) -> None:
    (vault / "a" / "two.md").unlink()
    assert answer(backend, vault, "alpha") == ["a/one.md"]
    assert rows(built) == ["a/one.md", "b/three.md"]


def test_a_page_keeps_its_id_when_it_is_written_again(vault: Path, built: Path, backend: cache.IndexedScan) -> None:
    """A concurrent call that took a page's row as fresh still finds it after another call
    wrote the page again."""
    with NoteIndex.open(str(built)) as opened:
        before = {path: row[1] for path, row in opened.stat_rows().items()}
    (vault / "a" / "two.md").write_text("---\ntitle: Two\n---\nbeta delta\n", encoding="utf-8")
    assert answer(backend, vault, "delta") == ["a/two.md"]
    with NoteIndex.open(str(built)) as opened:
        assert {path: row[1] for path, row in opened.stat_rows().items()} == before


def _trigram_tables_agree(built: Path) -> None:
    """FTS5's own check of each trigram table against the rows it indexes (``rank`` 1: the
    external content too): a table told a wrong old value on a delete keeps trigrams no row
    holds, and one whose rows changed behind it indexes what no row says."""
    with NoteIndex.open(str(built)) as opened:
        for check in (
            "INSERT INTO texts(texts, rank) VALUES ('integrity-check', 1)",
            "INSERT INTO name_grams(name_grams, rank) VALUES ('integrity-check', 1)",
            "INSERT INTO word_grams(word_grams, rank) VALUES ('integrity-check', 1)",
        ):
            opened.connection.execute(check)


def test_the_trigram_tables_index_exactly_the_rows_they_name_after_rewrites_and_removals(
    vault: Path, built: Path, backend: cache.IndexedScan
) -> None:
    _trigram_tables_agree(built)
    (vault / "a" / "two.md").write_text("---\ntitle: Deux\naliases: [Zwei]\n---\nbeta delta\n", encoding="utf-8")
    (vault / "b" / "four.md").write_text("epsilon\n", encoding="utf-8")
    assert answer(backend, vault, "delta") == ["a/two.md"]
    (vault / "a" / "one.md").unlink()
    assert answer(backend, vault, "epsilon") == ["b/four.md"]
    _trigram_tables_agree(built)
    with NoteIndex.open(str(built)) as opened:
        held = opened.connection.execute("SELECT count(*) FROM text_rows").fetchone()[0]
        assert held == opened.page_count() == len(PAGES)  # one page added, one removed


# --- keywords and the candidate query ----------------------------------------------------------

#: Keywords FTS5 would read as query syntax if they were not quoted, each literal here.
QUERY_SYNTAX = ['"', '""', "a*", "^al", "title:one", "(alpha", "-alpha", "NEAR", "AND", "OR", "NOT", 'al"pha']


@pytest.mark.parametrize("keyword", QUERY_SYNTAX)
def test_keywords_holding_query_syntax_are_literal(
    vault: Path, built: Path, backend: cache.IndexedScan, keyword: str
) -> None:
    (vault / "a" / "syntax.md").write_text(f"a page about {keyword} and alpha\n", encoding="utf-8")
    assert "a/syntax.md" in answer(backend, vault, keyword)
    answer(backend, vault, keyword, "alpha")
    answer(backend, vault, keyword, "absent")


def test_a_page_a_name_alone_holds_a_keyword_in_is_ranked_by_that_name_not_by_its_path(
    vault: Path, backend: cache.IndexedScan, environ: dict[str, str]
) -> None:
    """Rule 8 keys a page by its title and path together only when no name alone holds the
    keywords, even when only the path has one at a word start: the index's one pass over a
    keyword's name rows keeps that. (Keyed by its path, z.md would come first: the shorter.)"""
    (vault / ".mnemosyne.toml").write_text('dirs = ["a", "b", "kapi"]\n', encoding="utf-8")
    (vault / "kapi").mkdir()
    (vault / "kapi" / "z.md").write_text("---\ntitle: Okapi\n---\nbody\n", encoding="utf-8")
    (vault / "kapi" / "zebra-long.md").write_text("---\ntitle: Zebra\n---\nbody\n", encoding="utf-8")
    build_index(vault, environ)
    assert answer(backend, vault, "kapi") == ["kapi/zebra-long.md", "kapi/z.md"]


@pytest.mark.parametrize("keyword", ["al\npha", "al\0pha", "al\ufffepha", "al\udc80pha"])
def test_keywords_the_index_cannot_hold_are_answered_by_the_scan(
    vault: Path, built: Path, backend: cache.IndexedScan, keyword: str
) -> None:
    (vault / "a" / "odd.md").write_bytes(f"a page about {keyword}\n".encode("utf-8", "surrogateescape"))
    result = backend.search(FindRequest(str(vault), [keyword], environ=backend.environ))
    plain = search(str(vault), [keyword])
    assert [match.path for match in result.matches] == [match.path for match in plain.matches]
    assert not backend.indexed


#: Already folded: letters, digits of two scripts, a combining mark (not alnum: a word starts
#: after it), CJK, FTS5's syntax characters, separators, CR and LF, NUL and U+FFFD.
_CHARS = [*'ab1 -/_"*:(^', "é", "\u0301", "\u0663", "設", "\n", "\r", "\0", "\ufffd"]
_TEXT = st.text(st.sampled_from(_CHARS), max_size=14)
#: Keywords: what a user can type that the index answers (``answerable``), under 3
#: characters too.
_KEYWORD = st.text(st.sampled_from([c for c in _CHARS if c not in "\n\0"]), min_size=1, max_size=4)
_DIRS = ["", "a/", "b/", "zh/a/", "a/b/"]


@st.composite
def _indexed_pages(draw: st.DrawFn) -> list[page.Page]:
    """Pages that often share a title, an alias or a text (so that they tie on every key
    but the preferred dir and the path), in dirs that nest; a page's title or alias is
    often its own stem (one ``names`` row for a name a page has twice)."""
    names = [*draw(st.lists(_TEXT, min_size=1, max_size=3)), "ab", "a b", "ba"]
    # Some texts of more lines than ``text_rows`` keeps the ends of: their depths come from
    # SQL on the first lines, from ``depth()`` past them.
    many_lines = st.lists(_TEXT, min_size=index._LINES_KEPT - 2, max_size=index._LINES_KEPT + 4).map("\n".join)
    texts = draw(st.lists(st.one_of(_TEXT, st.lists(_TEXT).map("\n".join), many_lines), min_size=1, max_size=3))
    texts.append("x" * 300 + " ab\r\nab")
    pages = []
    for number in range(draw(st.integers(1, 10))):
        stem = draw(st.text(st.sampled_from([*"ab-1 ", "é", "設"]), max_size=4))
        made = page.Page(f"{draw(st.sampled_from(_DIRS))}{stem}{number}.md")
        made.folded_path = made.path
        own_names = [*names, f"{stem}{number}"]
        made.folded_title = draw(st.sampled_from(own_names))
        made.folded_aliases = tuple(draw(st.lists(st.sampled_from(own_names).filter(bool), max_size=2)))
        made.title = made.folded_title.upper()
        made.folded_text = draw(st.sampled_from(texts))
        pages.append(made)
    return pages


@st.composite
def _keywords_of(draw: st.DrawFn, pages: list[page.Page]) -> list[str]:
    """1 to 3 keywords, most of them cut from the pages' own names and texts (so that pages
    match, in each group), the rest typed."""
    keywords = []
    sources = [
        text for made in pages for text in (made.folded_title, made.path, *made.folded_aliases, made.folded_text)
    ]
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 5)) == 0:  # a page's whole path: that page first
            keywords.append(draw(st.sampled_from(pages)).path)
            continue
        typed = draw(st.integers(0, 3)) == 0
        source = "" if typed else draw(st.sampled_from(sources))
        start = draw(st.integers(0, max(0, len(source) - 1)))
        cut = source[start : start + draw(st.integers(1, 4))].replace("\n", "").replace("\0", "")
        keywords.append(cut if cut.strip() else draw(_KEYWORD))
    return keywords


def _judged(
    pages: Sequence[page.Page], folded: tuple[str, ...], prefer: Sequence[str] = ()
) -> tuple[list[tuple[find.SortKey, page.Page]], list[int]]:
    """The reference: the matching pages by ``find.judge``'s key, in its order, and how many
    pages hold each keyword."""
    judged = []
    counts = [0] * len(folded)
    for made in pages:
        text = made.folded_text
        holds, key = find.judge(
            folded,
            made.path,
            made.folded_path,
            made.folded_title,
            text.__contains__,
            functools.partial(position, text),
            made.folded_aliases,
            tuple(prefer),
        )
        counts = [count + present for count, present in zip(counts, holds, strict=True)]
        if key is not None:
            judged.append((key, made))
    judged.sort(key=lambda pair: pair[0])
    return judged, counts


@settings(max_examples=examples(300), deadline=None)
@given(
    pages=_indexed_pages(),
    data=st.data(),
    limit=st.sampled_from([0, 1, 2, 5]),
    prefer=st.lists(st.sampled_from(["a/", "zh/", "b/", "a/b/", "./"]), unique=True, max_size=3),
    scoped=st.booleans(),
)
def test_rule_8_in_sql_answers_as_judge(
    tmp_path_factory: pytest.TempPathFactory,
    pages: list[page.Page],
    data: st.DataObject,
    limit: int,
    prefer: list[str],
    scoped: bool,
) -> None:
    """``NoteIndex.top`` against the reference, ``find.judge`` over the same pages: the
    shown rows in order, where each matched, the total, the named count, and on a miss each
    keyword's count. Word starts across scripts, digits and marks; equal titles, aliases
    and lengths; preferred dirs; CR and long lines; keywords under 3 characters and FTS
    syntax."""
    folded = tuple(dict.fromkeys(data.draw(_keywords_of(pages))))
    assume(index.answerable(folded))
    path = tmp_path_factory.mktemp("index") / "index.sqlite"
    written: dict[str, int] = {}

    def write(into: NoteIndex) -> None:
        into.reset("code")
        written.update(into.write(pages))

    with NoteIndex.open(str(path), create=True) as opened:
        index.written_by(write, opened)
        scope = sorted(written.values())[::2] if scoped else None
        ranked = opened.top(folded, limit, prefer, scope)
    searched = [made for made in pages if scope is None or written[made.path] in scope]
    judged, counts = _judged(searched, folded, prefer)
    shown = judged[:limit] if limit else judged
    expected = [(made.path, made.title, None, None, find.matched_by(key)) for key, made in shown]
    assert ranked.rows == expected
    named = sum(key[0] <= 0 for key, _ in judged)
    assert (ranked.total, ranked.named, ranked.exact) == (len(judged), named, sum(key[0] < 0 for key, _ in judged))
    if not judged and len(folded) > 1:
        assert ranked.counts == counts


def test_a_title_that_is_also_the_stem_ranks_as_a_title(tmp_path: Path) -> None:
    """A name a page has twice (its title is its stem, as for every page without a title
    of its own) is one ``names`` row of its lowest kind: it ties with another page's equal
    title and the path decides, as in judge; were it kept as the stem, it would come second."""
    pages = []
    for rel_path, title in (("b/other.md", "kestrel"), ("a/kestrel.md", "kestrel")):
        made = page.Page(rel_path)
        made.folded_path, made.folded_title, made.folded_text = rel_path, title, "text"
        made.folded_aliases = (title,)
        made.title = title
        pages.append(made)
    with _index_of(tmp_path / "index.sqlite", pages) as opened:
        ranked = opened.top(("kestrel",), 0)
        rows = opened.connection.execute("SELECT kind, name FROM names ORDER BY page_id, kind").fetchall()
    judged, _counts = _judged(pages, ("kestrel",))
    assert [row[0] for row in ranked.rows] == [made.path for _key, made in judged] == ["a/kestrel.md", "b/other.md"]
    # The alias that repeats the title has no row of its own either.
    assert sorted(rows) == sorted(
        [
            (index.PATH_NAME, "b/other.md"),
            (index.TITLE_NAME, "kestrel"),
            (index.STEM_NAME, "other"),
            (index.PATH_NAME, "a/kestrel.md"),
            (index.TITLE_NAME, "kestrel"),
        ]
    )


def _ranked_texts(
    tmp_path: Path, texts: dict[str, str], keywords: tuple[str, ...]
) -> tuple[index.Ranked, list[page.Page]]:
    """Every match of ``keywords`` (``top``) among pages of these folded texts (by path),
    all titled alike, and the pages."""
    pages = []
    for rel_path, text in texts.items():
        made = page.Page(rel_path)
        made.folded_path, made.folded_title, made.folded_text = rel_path, "t", text
        pages.append(made)
    with _index_of(tmp_path / "index.sqlite", pages) as opened:
        return opened.top(keywords, 0), pages


@contextlib.contextmanager
def _index_of(path: Path, pages: Sequence[page.Page]) -> Iterator[NoteIndex]:
    """A new index at ``path`` holding ``pages``, open."""

    def write(into: NoteIndex) -> None:
        into.reset("code")
        into.write(pages)

    with NoteIndex.open(str(path), create=True) as opened:
        index.written_by(write, opened)
        yield opened


@pytest.mark.parametrize("keywords", [("ab",), ("needle",), ("ab", "needle")])
def test_mention_depth_from_the_kept_line_ends_equals_judges(tmp_path: Path, keywords: tuple[str, ...]) -> None:
    """A keyword on one of the first lines gets its depth in SQL from where they end, one
    past them from ``depth()``: every page holds it, so every row of ``text_rows`` is read
    with its line ends. Lines short and long, CRLF, a body of fewer lines than are kept,
    the keyword at a line's start and at the body's end, before and past the kept lines,
    wide characters before it."""
    kept = index._LINES_KEPT
    texts = {
        "first-line.md": "xxxxx ab needle",
        "second-line.md": "x\nab needle",
        "second-line-later.md": "\nxxx ab needle",
        "crlf.md": "x\r\nab needle\r\n",
        "at-the-end.md": "\n\n\nxab needle",
        "last-kept-line.md": "\n" * (kept - 1) + "ab needle",
        "first-line-past.md": "\n" * kept + "ab needle",
        "far-past.md": "\n" * (kept + 5) + "x" * 40 + "ab needle\n\n",
        "long-first-line.md": "y" * 5000 + " ab needle\nmore\n",
        "needle-first.md": "needle\n\n\n\nab",
        # Past the kept lines the column is counted in characters, not in the bytes that
        # depth() is given: by bytes (60 and 91 before `ab`) these two would come after the 45 x's.
        "wide-past.md": "\n" * (kept + 1) + "é" * 30 + "ab needle",
        "wider-past.md": "\n" * (kept + 1) + "設" * 30 + " ab needle",
        "narrow-past.md": "\n" * (kept + 1) + "x" * 45 + "ab needle",
    }
    ranked, pages = _ranked_texts(tmp_path, texts, keywords)
    judged, _counts = _judged(pages, keywords)
    assert [row[0] for row in ranked.rows] == [made.path for _key, made in judged]
    assert len({key for key, _made in judged}) == len(judged)  # no tie left to the path


def test_mention_depth_of_rows_its_trigrams_pick_counts_characters(tmp_path: Path) -> None:
    """A keyword on few pages: its trigram picks the rows, and ``depth()`` gives every one its
    depth from the bytes before it, first line included. By bytes (60, 61, 45) the order
    would be the reverse of the characters' (30, 21, 45)."""
    texts = {f"filler-{at}.md": "nothing here" for at in range(12)}
    texts |= {"wide.md": "é" * 30 + "needle", "wider.md": "設" * 20 + " needle", "narrow.md": "x" * 45 + "needle"}
    ranked, pages = _ranked_texts(tmp_path, texts, ("needle",))
    judged, _counts = _judged(pages, ("needle",))
    expected = ["wider.md", "wide.md", "narrow.md"]
    assert [row[0] for row in ranked.rows] == [made.path for _key, made in judged] == expected


@pytest.mark.parametrize("keywords", [8, 24])
def test_many_keywords_are_ranked_in_sql_as_judge_ranks_them(tmp_path: Path, keywords: int) -> None:
    """Each keyword is a level of the statement: as many as a command line may hold still
    make one statement SQLite parses (two nested subqueries a keyword overflowed its
    parser at seven), and it ranks the pages holding them all as ``judge`` does."""
    words = tuple(f"word{at:02d}" for at in range(keywords))
    texts = {
        "all-late.md": "\n".join(words),
        "all-early.md": " ".join(words),
        "all-but-one.md": " ".join(words[:-1]),
        "none.md": "nothing",
    }
    ranked, pages = _ranked_texts(tmp_path, texts, words)
    judged, _counts = _judged(pages, words)
    assert [row[0] for row in ranked.rows] == [made.path for _key, made in judged] == ["all-early.md", "all-late.md"]


def test_mention_depth_ends_where_each_keyword_ends(tmp_path: Path) -> None:
    """Depth is where the keywords end, not where they start: "bbbb a" holds both by
    column 6, "a xxbbbb" by column 8 (by their starts, 5 and 4, the order would flip)."""
    ranked, _pages = _ranked_texts(tmp_path, {"y.md": "a xxbbbb", "x.md": "bbbb a"}, ("a", "bbbb"))
    assert [row[0] for row in ranked.rows] == ["x.md", "y.md"]


@settings(max_examples=examples(300), deadline=None)
@given(name=st.text(st.sampled_from([*_CHARS, "\uffff", "A", "\u00b2"]), max_size=12), keyword=_KEYWORD)
def test_a_marked_keyword_is_in_a_marked_name_exactly_where_it_starts_a_word(name: str, keyword: str) -> None:
    """The word-start test the index runs in C (``index.marked``) against the reference."""
    assert (index.marked(keyword) in index.marked(name)) == find.starts_word(keyword, name)


def test_the_detached_builder_never_imports_from_the_callers_current_dir(
    vault: Path,
    environ: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    start_detached: Callable[..., None],
) -> None:
    """A vault (or any dir a find runs in) holding a package named as ours: the builder a
    call starts must run the installed code, not that one (``python -P``)."""
    shadow = tmp_path / "cwd" / "mnemosyne_core"
    shadow.mkdir(parents=True)
    marker = tmp_path / "shadowed"
    (shadow / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    monkeypatch.chdir(shadow.parent)
    path = index_file(vault, environ)
    path.parent.mkdir(parents=True, mode=0o700)
    start_detached(str(path), os.path.realpath(vault), str(tmp_path), {**os.environ, **environ})
    deadline = time.monotonic() + 60
    while not (path.exists() and build.building(str(path)) is None and _complete(path)):
        assert not marker.exists(), "the builder ran the package in the caller's current dir"
        assert time.monotonic() < deadline, "the builder did not finish"
        time.sleep(0.05)
    assert not marker.exists()


def test_a_failed_build_is_not_started_again_for_a_while(
    vault: Path,
    environ: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    start_detached: Callable[..., None],
) -> None:
    """A build that cannot succeed (a full disk, a vault that cannot be listed) must not
    cost every call a builder reading the whole vault."""
    path = index_file(vault, environ)
    path.parent.mkdir(parents=True, mode=0o700)
    builder = [sys.executable, "-P", "-m", "mnemosyne_core.build", str(path), str(vault / "gone"), str(vault.parent)]
    assert subprocess.run(builder, check=False).returncode == 1  # a vault that cannot be listed
    # Patched only now: subprocess itself spawns with os.posix_spawn on some Pythons (3.13).
    spawned: list[list[str]] = []
    monkeypatch.setattr(os, "posix_spawn", lambda executable, argv, env, **kwargs: spawned.append(argv))
    start_detached(str(path), str(vault), str(vault.parent), environ)
    assert spawned == []
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + build.RETRY_AFTER_S + 1)
    start_detached(str(path), str(vault), str(vault.parent), environ)
    assert len(spawned) == 1


def _complete(path: Path) -> bool:
    try:
        with NoteIndex.open(str(path)) as opened:
            return opened.usable(index.code_key())
    except (index.IndexUnusable, sqlite3.Error):
        return False


def test_fields_holding_lone_surrogates_are_kept_exactly(tmp_path: Path) -> None:
    """A title, constellation or type YAML gave as lone surrogates (the pure loader does, for
    an escaped emoji): stored and read back as they were, no traceback."""
    made = page.Page("a/x.md")
    made.title, made.constellation, made.type = "t\ud83d", "c\udc80", "\ud83d\ude00"
    made.folded_title, made.folded_path, made.folded_text = fold(made.title), "a/x.md", "body"
    path = tmp_path / "index.sqlite"

    def write(into: NoteIndex) -> None:
        into.reset("code")
        into.write([made])

    with NoteIndex.open(str(path), create=True) as opened:
        index.written_by(write, opened)
        ((_path, *found, _matched),) = opened.top(("body",), 0).rows
    assert found == [made.title, made.constellation, made.type]


def test_mention_depth_from_the_index_equals_the_scans_on_long_lines(
    vault: Path, backend: cache.IndexedScan, environ: dict[str, str]
) -> None:
    """Where a keyword first occurs (line, column), counted by SQLite from the text before
    it, on lines long and short, wide characters included."""
    window = 2048
    texts = {
        "a/past-the-window.md": "é" * (window + 40) + " needle\n",
        "a/inside-the-window.md": "x" * (window - 40) + " needle\n",
        "a/at-the-window.md": "y" * (window - 2) + " needle\n",
        "b/third-line.md": "\n\nneedle\n",
        "b/long-line-after-newlines.md": "\n" + "z" * (2 * window) + " needle",
        "b/first-column.md": "needle first",
    }
    for rel_path, text in texts.items():
        (vault / rel_path).write_text(text, encoding="utf-8")
    build_index(vault, environ)
    assert answer(backend, vault, "needle") == [
        "b/first-column.md",
        "a/inside-the-window.md",
        "a/at-the-window.md",
        "a/past-the-window.md",
        "b/long-line-after-newlines.md",
        "b/third-line.md",
    ]


@pytest.fixture
def fts_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement that writes a row of the FTS table (``texts``) or the rows it indexes
    (``text_rows``), as SQLite ran it, on any connection the index is opened with from now on."""
    seen: list[str] = []
    real_open = NoteIndex.open.__func__  # type: ignore[attr-defined]

    def traced(cls: type[NoteIndex], path: str, /, **kwargs: bool) -> NoteIndex:
        opened: NoteIndex = real_open(cls, path, **kwargs)

        def note(statement: str) -> None:
            if statement.startswith(("INSERT INTO text", "DELETE FROM text")):
                seen.append(statement)

        opened.connection.set_trace_callback(note)
        return opened

    monkeypatch.setattr(NoteIndex, "open", classmethod(traced))
    return seen


def _touch_every_page(vault: Path, seconds: int) -> None:
    for path in sorted(vault.rglob("*.md")):
        os.utime(path, ns=(seconds * 10**9, seconds * 10**9))


def test_a_page_read_again_with_the_same_bytes_writes_only_its_stat(
    vault: Path,
    built: Path,
    backend: cache.IndexedScan,
    reads: list[str],
    fts_writes: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every page touched (touch, chown -R, a checkout): each is read again, and none of the
    FTS rows, the costly part of a write, is written again; a page whose bytes changed is."""
    monkeypatch.setattr(page, "RACY_NS", 0)
    answer(backend, vault, "alpha")  # the build's racy rows read again: same bytes
    assert sorted(reads) == sorted(PAGES)
    _touch_every_page(vault, 2_000_000)
    reads.clear()
    assert answer(backend, vault, "alpha") == ["a/one.md", "a/two.md"]
    assert sorted(reads) == sorted(PAGES)
    assert fts_writes == []
    (vault / "b" / "three.md").write_text("---\ntitle: Three\n---\ngamma alpha\n", encoding="utf-8")
    reads.clear()
    assert answer(backend, vault, "alpha") == ["a/one.md", "a/two.md", "b/three.md"]
    assert reads == ["b/three.md"]
    assert [statement.split(" WHERE")[0].split(" VALUES")[0] for statement in fts_writes] == [
        "INSERT INTO texts(texts, rowid, names, body) SELECT 'delete', id, names, body FROM text_rows",
        "DELETE FROM text_rows",
        f"INSERT INTO text_rows(id, {index._END_COLUMNS}, names, body)",
        "INSERT INTO texts(rowid, names, body)",
    ]
    reads.clear()
    answer(backend, vault, "alpha")
    assert reads == []


def test_more_changed_pages_than_a_call_can_read_are_left_to_a_builder(
    vault: Path,
    built: Path,
    backend: cache.IndexedScan,
    builders: list[str],
    reads: list[str],
    fts_writes: list[str],
    environ: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the call's share of pages to read, it reads none: it answers by the scan and
    wants a builder, which catches the index up (stat rows only) instead of building anew."""
    monkeypatch.setattr(page, "RACY_NS", 0)
    answer(backend, vault, "alpha")  # the build's racy rows read again
    monkeypatch.setattr(freshness, "CATCH_UP_FLOOR", 1)  # 3 pages: at most 1 read by a call
    (vault / "a" / "two.md").write_text("---\ntitle: Two\n---\nbeta alpha again\n", encoding="utf-8")
    reads.clear()
    answer(backend, vault, "alpha")
    assert reads == ["a/two.md"]
    assert builders == []
    _touch_every_page(vault, 3_000_000)
    reads.clear()
    fts_writes.clear()
    result = backend.search(FindRequest(str(vault), ["alpha"], environ=environ))
    assert [match.path for match in result.matches] == ["a/one.md", "a/two.md"]
    assert not backend.indexed
    assert reads == []
    assert builders == [str(built)]
    assert build.build(str(built), os.path.realpath(vault), str(vault.parent), catch_up=True) == len(PAGES)
    assert sorted(reads) == sorted(PAGES)
    assert fts_writes == []
    reads.clear()
    answer(backend, vault, "alpha")
    assert reads == []


# --- what a served call reads: counts kept, watched pages by their partial index ---


def _counted(opened: NoteIndex) -> tuple[int, int]:
    """(pages, pages not text) as the table holds them, counted."""
    rows = opened.connection.execute("SELECT count(*), coalesce(sum(not_text), 0) FROM pages").fetchone()
    return int(rows[0]), int(rows[1])


def test_page_counts_are_kept_across_writes_and_removals(vault: Path, built: Path) -> None:
    """``page_count`` and ``not_text_count`` read ``meta``, which the schema's triggers keep
    in each write's transaction: equal to a count of the table after a build, a new page,
    a page rewritten as not text and back, a removal, and a rolled-back write."""
    (vault / "a" / "bin.md").write_bytes(b"bin\0ary\n")
    (vault / "a" / "new.md").write_text("new\n", encoding="utf-8")
    with NoteIndex.open(str(built)) as opened:
        assert (opened.page_count(), opened.not_text_count()) == _counted(opened) == (len(PAGES), 0)

        def write(*rel_paths: str) -> None:
            read = [page.read_page(str(vault / rel_path), rel_path) for rel_path in rel_paths]

            def write_them(into: NoteIndex) -> None:
                into.write(read)

            index.written_by(write_them, opened)

        write("a/bin.md", "a/new.md")
        assert (opened.page_count(), opened.not_text_count()) == _counted(opened) == (len(PAGES) + 2, 1)
        (vault / "a" / "new.md").write_bytes(b"now\0binary\n")
        write("a/new.md")
        assert (opened.page_count(), opened.not_text_count()) == _counted(opened) == (len(PAGES) + 2, 2)
        (vault / "a" / "new.md").write_text("text again\n", encoding="utf-8")
        write("a/new.md")
        assert (opened.page_count(), opened.not_text_count()) == _counted(opened) == (len(PAGES) + 2, 1)
        index.written_by(lambda opened: opened.remove(["a/bin.md", "a/no-such.md"]), opened)
        assert (opened.page_count(), opened.not_text_count()) == _counted(opened) == (len(PAGES) + 1, 0)
        opened.begin_write()
        opened.remove(["a/new.md"])
        opened.rollback()
        assert (opened.page_count(), opened.not_text_count()) == _counted(opened) == (len(PAGES) + 1, 0)


def test_shared_digests_are_counted_across_copies_rewrites_and_removals(
    vault: Path, built: Path, backend: cache.IndexedScan
) -> None:
    """``digests_shared`` reads a count the schema's triggers keep: equal to the rows less
    the distinct digests after a copy is added, a second copy, a copy rewritten, removals."""

    def counted() -> tuple[bool, int]:
        with NoteIndex.open(str(built)) as opened:
            kept = int(opened.meta("shared_digests"))  # type: ignore[call-overload]
            rows, distinct = opened.connection.execute(
                "SELECT count(*), count(DISTINCT digest) FROM copy_digests"
            ).fetchone()
            assert kept == rows - distinct
            # Exactly the distinct digests of each page's row: none left behind by a rewrite or removal.
            held = sorted(opened.connection.execute("SELECT digest, page_id FROM copy_digests"))
            made = {
                (digest, page_id) for page_id, _path, pair in opened.digests() for digest in pair if digest is not None
            }
            assert held == sorted(made)
            return opened.digests_shared(), kept

    assert counted() == (False, 0)
    original = (vault / "a" / "one.md").read_bytes()
    for copy, text in (("a/copy.md", original), ("b/copy.md", original), ("a/copy.md", b"other\n")):
        (vault / copy).write_bytes(text)
        answer(backend, vault, "alpha")
    assert counted() == (True, 2)  # one.md and b/copy.md share both their digests
    (vault / "b" / "copy.md").unlink()
    answer(backend, vault, "alpha")
    assert counted() == (False, 0)


def test_the_watched_pages_are_read_through_their_partial_index(built: Path) -> None:
    """A served call's one query over pages that are not named to it reads the rows of
    racy or hard-linked pages alone, never the whole table."""
    with NoteIndex.open(str(built)) as opened:
        plan = " ".join(str(row[-1]) for row in opened.connection.execute("EXPLAIN QUERY PLAN " + index.WATCHED_SQL))
    assert "USING INDEX pages_watched" in plan, plan


@pytest.mark.parametrize("package", ["yaml", "pathspec"])
def test_another_install_of_a_package_the_index_depends_on_changes_its_code_key(
    package: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML parses every frontmatter the index keeps, and pathspec decides what the kept
    ignore rules left out: an index written under another install of either is rebuilt."""
    before = index.code_key()
    shadow = tmp_path / package / "__init__.py"
    shadow.parent.mkdir()
    shadow.write_text("# another release\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    other = index.code_key()
    assert other != before
    shadow.write_text("# another release, upgraded\n", encoding="utf-8")
    assert index.code_key() not in (before, other)
    monkeypatch.setattr(sys, "path", sys.path[1:])
    assert index.code_key() == before


def test_a_dirs_digest_is_of_its_values_alone() -> None:
    """A dir is taken as unchanged when its digest is the one kept: equal names and stat
    keys digest alike however the objects came to be (interned or not, shared or not), and
    any change of a name, its order or a stat key digests apart."""
    names = [sys.intern("a.md"), "".join(["b", ".md"]), "\udcff.md"]
    key = (10, 1_733_500_000_000_000_000, 1_733_500_000_000_000_000, 2**40, 2049)
    keys = [key, key, (0, 0, 0, 0, 0)]
    rebuilt_names = ["".join(["a", ".md"]), sys.intern("b.md"), "\udcff" + ".md"]
    rebuilt_keys = [(key[0], *key[1:]), (10, *key[1:]), (0, 0, 0, 0, 0)]
    digest = freshness._dir_digest(names, keys)
    assert freshness._dir_digest(rebuilt_names, rebuilt_keys) == digest
    assert freshness._dir_digest(names[::-1], keys[::-1]) != digest
    assert freshness._dir_digest(["a.md", "b.md", "c.md"], keys) != digest
    assert freshness._dir_digest(names, [key, key, (0, 0, 0, 0, 1)]) != digest


def test_a_kept_dir_stats_a_symlinked_page_at_its_target_and_a_page_swapped_for_a_symlink_anew(
    vault: Path, backend: cache.IndexedScan, reads: list[str], monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]
) -> None:
    """A dir whose digest is kept is stat'ed name by name in the open dir, but a page that is
    a symlink at its target: the target's edit is seen. A page swapped for a symlink since
    is no regular file there, so its dir is compared row by row and the page read anew."""
    (vault / "a" / "link.md").symlink_to("../b/three.md")
    monkeypatch.setattr(page, "RACY_NS", 0)
    build_index(vault, environ)
    assert answer(backend, vault, "gamma") == ["a/link.md", "b/three.md"]
    reads.clear()
    assert answer(backend, vault, "gamma") == ["a/link.md", "b/three.md"]
    assert reads == []  # every dir kept: nothing read
    (vault / "b" / "three.md").write_text("---\ntitle: Three\n---\ngamma delta\n", encoding="utf-8")
    assert answer(backend, vault, "delta") == ["a/link.md", "b/three.md"]
    assert sorted(reads) == ["a/link.md", "b/three.md"]
    reads.clear()
    (vault / "a" / "one.md").unlink()
    (vault / "a" / "one.md").symlink_to("../b/three.md")
    assert answer(backend, vault, "delta") == ["a/link.md", "a/one.md", "b/three.md"]
    assert reads == ["a/one.md"]


def _lint_findings(built: Path) -> list[tuple[str, str, str]]:
    """Every (path, code, message) the index keeps of the pages alone, sorted."""
    with NoteIndex.open(str(built)) as opened:
        return sorted(opened.lint_findings(None))


def test_a_pages_own_findings_follow_it_through_rewrites_renames_and_removal(
    vault: Path, built: Path, backend: cache.IndexedScan
) -> None:
    """page_findings holds each page's findings under its path: a rewrite replaces them,
    a rename moves them, a removal drops them; none is left behind for lint to say."""

    def findings() -> list[tuple[str, str]]:
        """The findings but the fixture's own (its pages carry no ``updated``)."""
        return [(path, code) for path, code, _message in _lint_findings(built) if code != "missing-updated"]

    (vault / "a" / "one.md").write_text("alpha, no frontmatter\n", encoding="utf-8")
    answer(backend, vault, "alpha")
    assert findings() == [("a/one.md", "no-frontmatter")]
    (vault / "a" / "one.md").rename(vault / "a" / "uno.md")
    answer(backend, vault, "alpha")
    assert findings() == [("a/uno.md", "no-frontmatter")]
    (vault / "a" / "uno.md").write_text("---\ntitle: Uno\nupdated: 2024-01-01\n---\nalpha\n", encoding="utf-8")
    answer(backend, vault, "alpha")
    assert findings() == []
    (vault / "b" / "three.md").write_text("no frontmatter\n", encoding="utf-8")
    answer(backend, vault, "frontmatter")
    assert findings() == [("b/three.md", "no-frontmatter")]
    (vault / "b" / "three.md").unlink()
    answer(backend, vault, "alpha")
    assert findings() == []


def test_findings_read_back_as_text_by_sqlite_or_python_are_the_pages_own(
    vault: Path, built: Path, backend: cache.IndexedScan
) -> None:
    """A finding whose path and message are UTF-8 comes back as SQLite's text, one whose
    file name holds an undecodable byte as Python decodes it: both exactly as the page's
    own read gives them."""
    names = ["a/café ☃.md", os.fsdecode(b"a/caf\xe9.md")]
    for rel_path in names:
        (vault / rel_path).write_bytes("---\ntitle: [ünclosed\n---\nalpha\n".encode())
    answer(backend, vault, "alpha")
    found = [row for row in _lint_findings(built) if row[0] in names]
    expected = sorted(
        (rel_path, code, message)
        for rel_path in names
        for code, message in page.read_page(str(vault / rel_path), rel_path).lint
    )
    assert found == expected
    assert {row[0] for row in found} == {"a/café ☃.md", "a/caf\udce9.md"}


def test_a_small_vaults_index_is_made_of_small_pages(
    vault: Path, environ: dict[str, str], backend: cache.IndexedScan, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index built for a vault of fewer than SMALL_VAULT_PAGES pages has 1 KiB pages (a
    fifth smaller on a vault of a hundred notes); one built for a vault of that many, SQLite's
    default. A build into an index of the other size (the vault grew or shrank past it)
    makes a new file. Either answers as the scan does."""
    path = build_index(vault, environ)
    assert _page_size(path) == build.SMALL_PAGE_SIZE == 1024
    assert sorted(answer(backend, vault, "alpha")) == ["a/one.md", "a/two.md"]
    made = path.stat().st_ino
    assert build_index(vault, environ) == path
    assert path.stat().st_ino == made  # the same size: built in place
    monkeypatch.setattr(build, "SMALL_VAULT_PAGES", len(PAGES))
    assert build_index(vault, environ) == path
    assert _page_size(path) == build.LARGE_PAGE_SIZE == 4096
    assert sorted(answer(backend, vault, "alpha")) == ["a/one.md", "a/two.md"]
    monkeypatch.setattr(build, "SMALL_VAULT_PAGES", len(PAGES) + 1)
    assert build_index(vault, environ) == path
    assert _page_size(path) == 1024
    assert sorted(answer(backend, vault, "alpha")) == ["a/one.md", "a/two.md"]


def _page_size(path: Path) -> int:
    with NoteIndex.open(str(path), read_only=True) as opened:
        return int(opened.connection.execute("PRAGMA page_size").fetchone()[0])


def test_recall_counts_the_pages_it_cannot_see_in_its_scope_as_the_plain_recall_does(
    vault: Path, built: Path, backend: cache.IndexedScan
) -> None:
    """The pages with no title, slug or tag recall's hint counts: of every page from the
    index's kept count, of a --dir's pages in SQL; both as the plain recall counts them,
    through a page that loses its title, one that gains it back and one removed."""
    from mnemosyne_core.recall import recall

    def unseen(dirs: list[str] | None) -> int:
        result = backend.recall(RecallRequest(str(vault), "zyzzyva", dirs=dirs, environ=backend.environ))
        assert backend.indexed
        assert result.unseen == recall(str(vault), "zyzzyva", dirs=dirs).unseen
        return result.unseen

    (vault / "b" / "four.md").write_text("no title\n", encoding="utf-8")
    assert [unseen(None), unseen(["a"]), unseen(["b"])] == [1, 0, 1]
    (vault / "a" / "one.md").write_text("alpha, no title now\n", encoding="utf-8")
    assert [unseen(None), unseen(["a"]), unseen(["b"])] == [2, 1, 1]
    (vault / "a" / "one.md").write_text("---\ntitle: One\n---\nalpha\n", encoding="utf-8")
    (vault / "b" / "four.md").unlink()
    assert [unseen(None), unseen(["a"]), unseen(["b"])] == [0, 0, 0]
