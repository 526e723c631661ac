"""A missed keyword's suggestions: the words one or two edits from it, the nearest and
the most held first, from the index exactly as from the scan."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core import index, page
from mnemosyne_core.fold import words_of
from mnemosyne_core.index import NoteIndex
from mnemosyne_core.suggest import choose, edits, index_suggestions, near_words, pieces, scan_suggestions


def test_words_are_runs_of_letters_and_digits() -> None:
    assert sorted(words_of("book/coming_from_bash.md\n# dataframes, 2 ways: é-x ’s a\u2014b\u00a0c")) == [
        *("2", "a", "b", "bash", "book", "c", "coming", "dataframes", "from", "md", "s", "ways", "x", "é"),
    ]


def test_edits_count_insertions_deletions_and_substitutions_up_to_the_band() -> None:
    assert [edits("dataframs", word, 2) for word in ("dataframes", "dataframe", "datafrom", "frames")] == [1, 1, 2, 3]
    assert edits("kitten", "sitting", 3) == 3
    assert edits("kitten", "sitting", 2) == 3


def test_one_edit_under_six_characters_two_from_six_none_under_four() -> None:
    words = ["here", "hero", "hermes", "her", "datafram", "dataframes", "datafrom", "dataframe", "dataframs"]
    assert sorted(near_words("herr", words)) == [(1, "her"), (1, "here"), (1, "hero")]
    assert sorted(near_words("dataframs", words)) == [
        (1, "datafram"),
        (1, "dataframe"),
        (1, "dataframes"),
        (2, "datafrom"),
    ]
    assert near_words("her", words) == []


def test_the_nearest_then_the_most_pages_then_code_point_order_three_at_most() -> None:
    pages = {"datafram": 12, "dataframe": 4, "dataframes": 12, "datagrams": 12, "dataframz": 0, "datafrom": 50}
    near = near_words("dataframs", pages)
    assert choose(near, pages.__getitem__, lambda _word: True) == [
        ("datafram", 12),
        ("dataframes", 12),
        ("datagrams", 12),
    ]
    # A word no searched page holds whole is passed over for the next, one in no page
    # ("dataframz") is never named, and a farther one comes last, whatever its pages.
    assert choose(near, pages.__getitem__, lambda word: word not in ("dataframes", "datagrams")) == [
        ("datafram", 12),
        ("dataframe", 4),
        ("datafrom", 50),
    ]


def test_a_word_within_the_edits_keeps_a_piece_where_the_index_looks() -> None:
    assert pieces("data") == ("da", "", "ta")
    assert pieces("dataframs") == ("dat", "afr", "ams")
    assert pieces("tables") == ("t", "abl", "es")


def test_the_scan_counts_the_pages_holding_each_word_as_find_would() -> None:
    # A page holds a word wherever find would find it: "dataframeset" holds "dataframes".
    texts = [("a.md", "dataframes here"), ("b.md", "dataframe, data"), ("c.md", "a dataframeset")]
    found = scan_suggestions(["dataframs", "zzzzzzzz"], lambda: iter(texts))
    assert found == {"dataframs": [("dataframe", 3), ("dataframes", 2)], "zzzzzzzz": []}


#: Few letters, so that random words lie within an edit or two of each other; a digit, a
#: letter beyond ASCII, and separators of both kinds.
_CHARS = [*"abcd1 -_", "é", "\u2014", "\n"]
_WORD = st.text(st.sampled_from([*"abcd1", "é"]), min_size=1, max_size=9)
_TEXT = st.lists(st.tuples(_WORD, st.sampled_from([*" -_\n", "\u2014", "é-"])), max_size=8).map(
    lambda pairs: "".join(word + between for word, between in pairs)
)


@st.composite
def _pages(draw: st.DrawFn) -> list[page.Page]:
    pages = []
    for number in range(draw(st.integers(1, 8))):
        made = page.Page(f"{draw(st.sampled_from(['', 'a/', 'b/']))}{draw(_WORD)}-{number}.md")
        made.folded_path = made.path
        made.folded_title = draw(_TEXT)
        made.title = made.folded_title
        made.folded_aliases = tuple(draw(st.lists(_WORD, max_size=2)))
        made.folded_text = draw(_TEXT)
        pages.append(made)
    return pages


@settings(max_examples=examples(300), deadline=None)
@given(pages=_pages(), rewritten=st.lists(st.tuples(st.integers(0, 7), _TEXT), max_size=3), data=st.data())
def test_the_index_names_the_words_the_scan_names(
    pages: list[page.Page], rewritten: list[tuple[int, str]], data: st.DataObject
) -> None:
    """The index against the scan, for random pages and keywords near their words: the
    same words, counts and order. Pages rewritten after the first write leave words in the
    index's vocabulary that no page holds any more (or holds inside a longer word); a
    scope leaves out pages whose words it still holds."""
    import tempfile

    words = sorted({word for made in pages for word in words_of(made.folded_text) | words_of(made.folded_title)})
    from_page: bool = data.draw(st.booleans())
    source: str = data.draw(st.sampled_from(words)) if words and from_page else data.draw(_WORD)
    # A word of the pages with an edit or two: the misses a suggestion is for.
    keyword = source
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(keyword)))
        keyword = keyword[:at] + data.draw(st.sampled_from(["", *"abcd"])) + keyword[at + 1 :]
    keyword += data.draw(st.sampled_from(["", "a", "ab", "abc"]))
    assume(keyword and index.answerable([keyword]))
    scoped = data.draw(st.booleans())
    with tempfile.TemporaryDirectory() as directory, NoteIndex.open(f"{directory}/index.sqlite", create=True) as opened:
        written: dict[str, int] = {}

        def write(into: NoteIndex) -> None:
            into.reset("code")
            written.update(into.write(pages))
            for step, (at, text) in enumerate(rewritten):
                if at < len(pages):
                    pages[at].folded_text = text
                    # A digest of its own each time: a page written again with the digest it
                    # has is taken as the same bytes, its rows kept (NoteIndex.write).
                    pages[at].digest = f"changed {step}".encode()
                    into.write([pages[at]])

        index.written_by(write, opened)
        scope = sorted(written.values())[::2] if scoped else None
        ranked = opened.top((keyword,), 0, (), scope)
        assume(ranked.total == 0)  # a miss: the only call that suggests
        from_index = index_suggestions(opened, keyword)
    searched = [made for made in pages if scope is None or written[made.path] in scope]
    held = [
        ("\n".join((made.folded_title, made.folded_path, *made.folded_aliases)), made.folded_text) for made in searched
    ]
    assert from_index == scan_suggestions([keyword], lambda: iter(held)).get(keyword, [])


def test_a_word_the_index_keeps_but_no_searched_page_holds_whole_is_not_named() -> None:
    """The vocabulary keeps "dataframe" after its page changed; another page holds it only
    inside "dataframes", as the scan's words never do: the index names "dataframes" alone."""
    import tempfile

    pages = []
    for number, text in enumerate(("one dataframe", "dataframes here")):
        made = page.Page(f"p{number}.md")
        made.folded_path, made.folded_title, made.title, made.folded_text = made.path, "t", "t", text
        pages.append(made)
    with tempfile.TemporaryDirectory() as directory, NoteIndex.open(f"{directory}/index.sqlite", create=True) as opened:

        def write(into: NoteIndex) -> None:
            into.reset("code")
            into.write(pages)
            pages[0].folded_text, pages[0].digest = "nothing", b"changed"
            into.write([pages[0]])

        index.written_by(write, opened)
        assert opened.top(("dataframs",), 0).total == 0
        assert index_suggestions(opened, "dataframs") == [("dataframes", 1)]
