"""The context line of a page that only mentions the keywords (mnemosyne_core.context):
which line, how it is trimmed, where the keywords are marked; and its fast paths (the
early stop, the piecewise fold) against the plain path."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from property_examples import examples
from reference_order import plain_fold
from vault_pages import MakeVault

from mnemosyne_core.context import ELLIPSIS, WIDTH, Context, best_line, context_of, keyword_spans, trimmed
from mnemosyne_core.fold import decode, fold


def plain_best(data: bytes, keywords: list[str]) -> tuple[int, str] | None:
    """The rule read plainly: decode the whole page, fold each line, the line holding the
    most distinct keywords, the earliest of them."""
    best: tuple[int, str] | None = None
    most = 0
    for number, line in enumerate(decode(data).split("\n"), start=1):
        count = sum(keyword in plain_fold(line) for keyword in dict.fromkeys(keywords))
        if count > most:
            best, most = (number, line), count
    return best


def test_the_line_holding_most_keywords_wins_over_an_earlier_one_holding_fewer() -> None:
    data = b"---\ntitle: x\n---\nthe mark comes first\nthe question mark operator, at last\nquestion mark\n"
    assert best_line(data, ["question", "mark", "operator"]) == Context(
        5, "the question mark operator, at last", ((4, 12), (13, 17), (18, 26))
    )


def test_the_earliest_of_equal_lines_wins() -> None:
    assert best_line(b"alpha\nbeta gamma\ngamma beta\n", ["beta", "gamma"]) == Context(
        2, "beta gamma", ((0, 4), (5, 10))
    )


def test_no_line_holds_a_keyword_only_the_path_holds() -> None:
    assert best_line(b"nothing here\n", ["rfcs"]) is None
    # One keyword in the text, the other only in the path: the line with the one.
    assert best_line(b"nothing\nnon-lexical lifetimes\n", ["rfcs", "non-lexical"]) == Context(
        2, "non-lexical lifetimes", ((0, 11),)
    )


def test_case_and_unicode_fold_as_find_does() -> None:
    data = "Die STRASSE\nheißt Straße hier\n".encode()
    # Both lines hold "strasse"; the first does, so it wins; the mark covers "Straße" whole.
    assert best_line(data, [fold("straße")]) == Context(1, "Die STRASSE", ((4, 11),))
    assert best_line("x\nheißt Straße hier\n".encode(), ["strasse"]) == Context(2, "heißt Straße hier", ((6, 12),))


def test_crlf_bom_tabs_and_surrounding_whitespace_are_not_shown() -> None:
    assert best_line(b"\xef\xbb\xbf\tfound\there  \r\nnext\r\n", ["found"]) == Context(1, "found here", ((0, 5),))


def test_invalid_bytes_show_as_replacement_characters() -> None:
    assert best_line(b"caf\xe9 latin-1 legacy\n", ["legacy"]) == Context(1, "caf\ufffd latin-1 legacy", ((13, 19),))


def test_a_long_line_is_cut_around_the_keywords() -> None:
    line = "word " * 40 + "the needle is here " + "tail " * 40
    context = best_line(line.encode(), ["needle"])
    assert context is not None
    assert context.text.startswith(ELLIPSIS)
    assert context.text.endswith(ELLIPSIS)
    assert len(context.text) == WIDTH + 2
    ((start, end),) = context.marks
    assert context.text[start:end] == "needle"
    # Centred: as much line before the keyword as after it, within one character.
    assert abs(start - (len(context.text) - end)) <= 1


def test_a_line_starting_with_the_keyword_is_cut_only_at_its_end() -> None:
    line = "needle " + "x" * 200
    context = trimmed(3, line, ["needle"])
    assert context == Context(3, line[:WIDTH] + ELLIPSIS, ((0, 6),))


def test_keywords_wider_than_the_context_start_a_little_before_the_first() -> None:
    line = "y" * 50 + " alpha " + "z" * 150 + " omega " + "w" * 50
    context = trimmed(1, line, ["alpha", "omega"])
    assert context.text == ELLIPSIS + line[31 : 31 + WIDTH] + ELLIPSIS
    assert context.marks == ((21, 26),)  # after the ellipsis


def test_marks_cover_text_whose_fold_holds_the_keyword() -> None:
    line = "Ǆ ﬁle Kelvin \u212aelvin cafe\u0301"
    spans = keyword_spans(line, ["file", "kelvin", "caf\u00e9"])
    assert [line[start:end] for start, end in spans] == ["ﬁle", "Kelvin", "\u212aelvin", "cafe\u0301"]


def test_marks_of_turkish_is_cover_the_word_as_written() -> None:
    """İ folds to one character now (it folded to two, i and a combining dot): each mark
    still covers the characters of the line that hold the keyword, no more, no fewer."""
    line = "DEĞİŞTİRİLEMEZ ALTYAPI, değiştirilemez altyapı"
    spans = keyword_spans(line, ["değiştirilemez", "altyapi"])
    assert [line[start:end] for start, end in spans] == ["DEĞİŞTİRİLEMEZ", "ALTYAPI", "değiştirilemez", "altyapı"]
    assert best_line(f"---\ntitle: T\n---\n{line}\n".encode(), ["altyapi"]) == Context(4, line, spans[1::2])


def test_overlapping_occurrences_are_one_mark() -> None:
    assert keyword_spans("aaaa banana", ["aa", "ana"]) == ((0, 4), (6, 11))


def test_to_dict_is_the_json_field() -> None:
    assert Context(4, "text", ((0, 1),)).to_dict() == {"line": 4, "text": "text"}


def test_context_of_reads_the_page_by_the_scans_rules(make_vault: MakeVault) -> None:
    vault = make_vault({"rfcs/a.md": "---\ntitle: A\n---\nsee the try operator\n"})
    assert context_of(vault, "rfcs/a.md", ["operator"]) == Context(4, "see the try operator", ((12, 20),))
    with pytest.raises(FileNotFoundError):
        context_of(vault, "rfcs/gone.md", ["operator"])
    with pytest.raises(FileNotFoundError, match="not a page of the vault"):
        context_of(vault, "../outside.md", ["operator"])


TEXT = st.lists(
    st.sampled_from(["a", "b", "A", "ß", "ss", "\u212a", "k", "e\u0301", "é", "\n", "\r\n", " ", "\t", "x", "\ufb01"]),
    max_size=30,
).map("".join)
KEYWORDS = st.lists(st.sampled_from(["a", "b", "ss", "k", "é", "ab", "fi", "x", "e"]), min_size=1, max_size=3)


@hypothesis_settings(max_examples=examples(200))
@given(text=TEXT, keywords=KEYWORDS, bom=st.booleans())
def test_best_line_equals_the_plain_rule(text: str, keywords: list[str], bom: bool) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    expected = plain_best(data, keywords)
    context = best_line(data, keywords)
    if expected is None:
        assert context is None
        return
    assert context is not None
    number, line = expected
    assert context.line == number
    assert context.text == line.rstrip("\r").replace("\t", " ").strip()
    for start, end in context.marks:
        assert any(keyword in plain_fold(context.text[start:end]) for keyword in keywords)
    if context.text.isascii():
        # Every occurrence is marked: each keyword's every position lies inside a mark.
        lowered = context.text.lower()
        for keyword in keywords:
            position = lowered.find(keyword)
            while position >= 0:
                assert any(start <= position and position + len(keyword) <= end for start, end in context.marks)
                position = lowered.find(keyword, position + 1)


def test_a_page_the_fixture_ships_gets_its_line() -> None:
    vault = os.path.realpath(os.path.join(os.path.dirname(__file__), *[".."] * 3, "fixtures", "vaults", "mentions"))
    context = context_of(vault, "rfcs/0243-trait-based-exception-handling.md", ["question", "mark", "operator"])
    assert context == Context(
        3,
        "Add a question mark operator, written `?`, that returns early with the error of a failed",
        ((6, 14), (15, 19), (20, 28)),
    )
