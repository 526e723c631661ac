"""Every fast path of find against the plain, obviously correct path it stands in for.

- fast_string_fields and fast_mapping against PyYAML's safe loader, with the subset checked
  either way (one regex, or Python over bytes before the regex pays), and the two checks
  against each other; locate against the regexes of its definition;
- TextMatcher (bytes, folding needles) against fold(decode(data)), with the folding
  characters searched either way (one regex, or one pass per needle);
- search() (text before title, the no-backslash title shortcut, the two-process split,
  the bounded list of kept matches) against a plain reference that reads every page whole,
  parses every frontmatter with YAML and folds everything.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from property_examples import examples
from reference_order import matched, plain_aliases, plain_fold, reference_sort_key

import mnemosyne_core.find as find_module
from mnemosyne_core import frontmatter
from mnemosyne_core.cache import read_page, record_position
from mnemosyne_core.config import CONSTELLATIONS
from mnemosyne_core.find import search
from mnemosyne_core.fold import (
    _LOWER_MARKING,
    ASCII_FOLDING_CHARS,
    FOLDING_MARK,
    TextMatcher,
    _FoldingSearch,
    as_utf8,
    decode,
    fold,
    folding_needles,
    folding_search,
)
from mnemosyne_core.frontmatter import (
    _FAST_BLOCK,
    _lines_in_subset,
    _outside_subset,
    compiled,
    fast_mapping,
    fast_string_fields,
    locate,
    parse_block,
    parse_block_bytes,
    string_field,
    title_of,
    unescaped,
)
from mnemosyne_core.vault import scan

# --- the two ways of each check -------------------------------------------------------------


@pytest.fixture(params=["without regex", "by regex"])
def subset_check(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test taking it runs with the fast subset checked each way: by Python over bytes
    (the first checks of a call) and by the regex (once it pays)."""
    monkeypatch.setattr(frontmatter._SUBSET_REGEX, "left", 10**9 if request.param == "without regex" else 0)


@pytest.fixture(params=["without regex", "by regex"])
def folding_check(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test taking it runs with the folding characters searched each way."""
    searches = _FoldingSearch.regex_once_it_pays
    monkeypatch.setattr(searches, "left", 10**9 if request.param == "without regex" else 0)


# --- the character set of the YAML-free paths -----------------------------------------------

#: What the subset leaves out of a block, spelled as in its definition (frontmatter.py): the
#: characters YAML either rejects (controls), treats as line breaks or reads differently by
#: build (U+FEFF), and what the subset does not handle (tab, lone CR).
OUTSIDE_SUBSET = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def test_outside_subset_is_the_complement_of_what_the_subset_allows() -> None:
    allowed = re.compile("[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
    every_character = "".join(map(chr, range(sys.maxunicode + 1)))
    outside = {match.start() for match in OUTSIDE_SUBSET.finditer(every_character)}
    not_allowed = set(range(sys.maxunicode + 1)) - {match.start() for match in allowed.finditer(every_character)}
    assert outside == not_allowed


@pytest.mark.slow
def test_the_bytes_check_finds_every_character_outside_the_subset() -> None:
    """The subset's lines hold no control byte; past ASCII, the bytes check answers for
    every code point as the character set does on the decoded text (a surrogate's bytes
    decode to replacement characters, which the subset takes)."""
    for code_point in range(0x80, sys.maxunicode + 1):
        data = chr(code_point).encode("utf-8", "surrogatepass") + b"\n"
        assert _outside_subset(data) is (OUTSIDE_SUBSET.search(data.decode("utf-8", "replace")) is not None)


#: Bytes without controls, as a block of the subset holds them: pieces of the characters the
#: subset leaves out, cut and whole, among others that share their bytes.
UTF8_PIECES = st.lists(
    st.sampled_from(
        [
            *[b"a", b" ", b"\xc2", b"\x80", b"\x9f", b"\xa0", b"\xe2", b"\xa8", b"\xa9", b"\xef", b"\xbb", b"\xbf"],
            *[b"\xbe", b"\xff", "\x85".encode(), "\u2028".encode(), "\ufeff".encode(), "—".encode(), "é".encode()],
        ]
    ),
    max_size=10,
).map(b"".join)


@settings(max_examples=examples(250), deadline=None)
@given(UTF8_PIECES)
def test_the_bytes_check_equals_the_character_set_on_any_bytes(data: bytes) -> None:
    block = data + b"\n"
    assert _outside_subset(block) is (OUTSIDE_SUBSET.search(block.decode("utf-8", "replace")) is not None)


# --- fast_string_fields against YAML ---------------------------------------------------------

TRICKY_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            *"aZk -_.,:#'\"[]{}!&*?|>%@`\\/09",
            *["\t", "\xa0", "\x85", "\u2028", "\ufeff", "\x7f", "\x9f", "é", "—", "ß", "\u212a", "\ufffe"],
        ]
    ),
    max_size=12,
)
KEYS = st.sampled_from(["title", "type", "constellation", "tags", "yes", "Off", "null", "_k", "a-b", "Title"])
VALUES = st.one_of(
    TRICKY_TEXT,
    TRICKY_TEXT.map(lambda text: f'"{text}"'),
    TRICKY_TEXT.map(lambda text: f"'{text}'"),
    st.sampled_from(["yes", "No", "null", "~", "2026-02-14", "2026-02-29", "2025-02-29", "2026-04-31", "2026-13-01"]),
    st.sampled_from(["0000-01-01", "1999-12-31", "12", "3.5", "[]", "[a, b]", "[a,b]", "[yes, x.y]", "[a, 1]"]),
    # Items of several words (Obsidian's aliases), and near misses: spaces doubled or at an
    # end, a word that does not start with a letter, boolean words inside an item.
    st.lists(
        st.sampled_from(["x", "b-c", "yes", "q.r", "No as", "yes no", "a  b", "a b ", " a", "x 1", "a -b", "a b.c"]),
        min_size=1,
        max_size=3,
    ).map(lambda items: "[" + ", ".join(items) + "]"),
)
LINES = st.one_of(
    st.tuples(KEYS, VALUES).map(lambda pair: f"{pair[0]}: {pair[1]}"),
    st.tuples(
        KEYS,
        st.sampled_from(["", " ", "  "]),
        st.lists(st.sampled_from(["a", "b-c", "yes", "1", "Off on", "a b", "a  b", "a "]), min_size=1, max_size=3),
    ).map(lambda triple: f"{triple[0]}:\n" + "\n".join(f"{triple[1]}- {item}" for item in triple[2])),
    st.sampled_from(["# comment", "", "  - stray", "key:", "key:value", "title: a: b", "title: a #b"]),
)
BLOCKS = st.lists(LINES, min_size=1, max_size=6).map(lambda lines: "".join(line + "\n" for line in lines))


def yaml_string_fields(block: str) -> dict[str, str] | None:
    mapping, _ = parse_block(block)
    if mapping is None:
        return None
    return {key: value for key, value in mapping.items() if isinstance(value, str)}


@pytest.mark.parametrize(
    "block",
    [
        "title: Plain Title\nconstellation: atlas\ntype: decision\n",
        'title: "ADR-004: Stay on Hetzner"\ncreated: 2025-09-02\nupdated: 2025-09-30\n',
        "title: It's fine — café\ntags: [a, b-c]\n",
        "title: 'single'\ntags:\n  - one\n  - two\nupdated: 2026-01-31\n",
        "title: First\ntitle: [not, a, string]\n",
        "title: [a]\ntitle: Second\n",
        "title: yes\n",
    ],
)
def test_fast_fields_of_common_blocks_equal_yamls(block: str, subset_check: None) -> None:
    fields = fast_string_fields(block.encode())
    assert fields is not None, "the fast path should read this block"
    assert fields == yaml_string_fields(block)


@pytest.mark.parametrize(
    "block",
    ["title: 2026-02-29\n", "title: a: b\n", "title: x\r\n", 'title: "a\\"b"\n', "yes: key\n", "title: a\u2028b\n"],
)
def test_fast_fields_leave_the_rest_to_yaml(block: str, subset_check: None) -> None:
    assert fast_string_fields(block.encode()) is None


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(BLOCKS)
def test_fast_fields_equal_yamls_whenever_they_answer(subset_check: None, block: str) -> None:
    fields = fast_string_fields(block.encode("utf-8", "surrogatepass"))
    if fields is not None:
        assert fields == yaml_string_fields(block)


def weighted(*choices: tuple[st.SearchStrategy[bytes], int]) -> st.SearchStrategy[bytes]:
    """One of the strategies, each drawn as often as its weight says."""
    return st.sampled_from([strategy for strategy, weight in choices for _ in range(weight)]).flatmap(
        lambda strategy: strategy
    )


#: Pieces of a value as bytes: the subset's own, what ends or nests a plain scalar,
#: characters YAML treats apart (NEL, LINE SEPARATOR, BOM), and bytes that are not UTF-8
#: (a lone continuation byte, 0xff, an encoded surrogate).
VALUE_PIECES = st.lists(
    st.sampled_from(
        [
            *[b"a", b"Zk", b" ", b"-", b"."] * 8,
            *(bytes([byte]) for byte in b",'\":#[]{}\\\t\r`/09"),
            "é".encode(),
            "—".encode(),
            "\x85".encode(),
            "\u2028".encode(),
            "\ufeff".encode(),
            b"\xff",
            b"\x80",
            b"\xed\xa0\x80",
        ]
    ),
    max_size=6,
).map(b"".join)
#: A value: plain (starting with a letter), quoted, or any pieces (a date, a word YAML
#: reads as a boolean or null, a list).
VALUE_BYTES = st.one_of(
    VALUE_PIECES.map(lambda rest: b"T" + rest),
    VALUE_PIECES.map(lambda inside: b'"' + inside + b'"'),
    VALUE_PIECES.map(lambda inside: b"'" + inside + b"'"),
    st.sampled_from([b"2026-01-31", b"yes", b"null", b"[a, b]", b"12"]),
    VALUE_PIECES,
)
#: Keys the subset takes, then keys YAML reads as booleans or null and ones it does not take.
KEY_NAMES = st.sampled_from([b"title", b"type", b"Title", b"a-b", b"_x", b"k9"])
KEY_BYTES = weighted((KEY_NAMES, 6), (st.sampled_from([b"yes", b"null", b"1x", b""]), 1), (st.binary(max_size=4), 1))
LINE_BYTES = st.tuples(KEY_BYTES, VALUE_BYTES).map(lambda pair: pair[0] + b": " + pair[1] + b"\n")
#: Bytes shaped like a frontmatter block, a line at a time, with any bytes mixed in: random
#: bytes alone almost never form a `key: value` line, so the fast path would never answer.
BLOCKS_OF_LINES = st.lists(weighted((LINE_BYTES, 6), (st.binary(max_size=8), 1)), min_size=1, max_size=3).map(b"".join)
BLOCK_BYTES = weighted((BLOCKS_OF_LINES, 3), (st.binary(max_size=80), 1))


def test_fast_fields_on_any_bytes_equal_yamls_whenever_they_answer(subset_check: None) -> None:
    """Whenever the fast path answers on bytes, YAML answers the same; and it answers on
    a good share of the examples, so the comparison is really made (derandomized: the
    share is the same on every run)."""
    answered: list[bool] = []

    @settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @given(BLOCK_BYTES)
    def fast_equals_yaml(data: bytes) -> None:
        fields = fast_string_fields(data)
        answered.append(fields is not None)
        if fields is not None:
            assert fields == yaml_string_fields(data.decode("utf-8", "replace"))

    fast_equals_yaml()
    assert len(answered) >= 400
    assert sum(answered) >= len(answered) // 4, f"the fast path answered {sum(answered)} of {len(answered)}"


@pytest.mark.parametrize(
    "block",
    [
        "title: Plain Title\nconstellation: atlas\ntype: decision\n",
        'title: "ADR-004: Stay on Hetzner"\ncreated: 2025-09-02\nupdated: 2025-09-30\n',
        "title: It's fine — café\ntags: [a, b-c, yes]\ndraft: no\nowner: null\n",
        "title: 'single'\ntags:\n  - one\n  - two\nupdated: 2026-01-31\n",
        "tags:\n- off\n- x.y\ntags: []\n",
        "title: Plain\naliases: [No as, For with, Other name]\ncreated: 2026-03-05\n",
        "aliases:\n  - Two words\n  - yes no\n",
        "title: First\ntitle: [not, a, string]\n",
    ],
)
def test_fast_mapping_of_common_blocks_equals_yamls(block: str, subset_check: None) -> None:
    mapping = fast_mapping(block.encode())
    assert mapping is not None, "the fast path should read this block"
    assert mapping == parse_block(block)[0]


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(BLOCKS)
def test_fast_mapping_equals_yamls_whenever_it_answers(subset_check: None, block: str) -> None:
    mapping = fast_mapping(block.encode("utf-8", "surrogatepass"))
    if mapping is not None:
        expected = parse_block(block)[0]
        assert expected is not None
        assert mapping == expected
        # Equal and of the same types: True == 1 and a date is not a string.
        assert {key: type(value) for key, value in mapping.items()} == {
            key: type(value) for key, value in expected.items()
        }
        assert [type(item) for value in mapping.values() if isinstance(value, list) for item in value] == [
            type(item) for value in expected.values() if isinstance(value, list) for item in value
        ]


#: Key sets lint and recall read, and others.
KEY_SETS = st.sampled_from(
    [
        frozenset(("title", "slug", "tags", "updated")),
        frozenset(("title", "updated", "constellation")),
        *[frozenset(), frozenset(("tags",)), frozenset(("yes", "title"))],
    ]
)


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(BLOCKS, KEY_SETS)
def test_the_fast_mapping_of_some_keys_equals_yamls_entries_of_them(
    subset_check: None, block: str, keys: frozenset[str]
) -> None:
    """lint and recall ask for the keys they read: the entries of those keys are YAML's, of
    the same types, and the block is answered exactly when the whole one would be."""
    data = block.encode("utf-8", "surrogatepass")
    mapping = fast_mapping(data, keys)
    assert (mapping is None) == (fast_mapping(data) is None)
    if mapping is not None:
        expected = parse_block(block)[0]
        assert expected is not None
        some = {key: value for key, value in expected.items() if key in keys}
        assert mapping == some
        assert {key: type(value) for key, value in mapping.items()} == {key: type(value) for key, value in some.items()}


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=80))
def test_parse_block_bytes_on_any_bytes_equals_yamls(subset_check: None, data: bytes) -> None:
    assert parse_block_bytes(data) == parse_block(data.decode("utf-8", "replace"))


#: Blocks near the subset's edges: block lists at one and at changing indentations, a key
#: over no item, stray items, lines without their LF.
LIST_BLOCKS = st.lists(
    st.sampled_from(
        [
            *[b"tags:\n", b"- a\n", b"  - b-c\n", b" - x\n", b"  - \n", b"-  a\n", b"  -a\n", b"title: T\n"],
            *[b"t: [a]\n", b"t: [a, b]\n", b"t: [No as, b c]\n", b"t: [a  b]\n", b"t: [a ]\n", b"t: [a 1]\n"],
            *[b"  - a b\n", b"- a  b\n", b"  - a \n"],
            *[b"k:\n", b"k: \n", b"k:x\n", b"_k: 2026-02-28\n", b"\n", b"  - a", b"k: x", b"k: [a,b]\n", b"k: [a, ]\n"],
        ]
    ),
    min_size=1,
    max_size=6,
).map(b"".join)


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(BLOCKS.map(lambda block: block.encode("utf-8", "surrogatepass")), BLOCK_BYTES, LIST_BLOCKS))
@example(b"title: a\n")
@example(b'title: "\n')  # a lone quote is no quoted string
@example(b"title: [\n")
@example(b"title: 2026-02-29\n")
@example(b"title: 0999-01-01\n")
def test_the_subset_checked_without_regex_equals_the_regex(block: bytes) -> None:
    by_regex = block[:-1].split(b"\n") if compiled(_FAST_BLOCK).fullmatch(block) is not None else None
    assert _lines_in_subset(block) == by_regex


#: Pieces of a page's start: frontmatter lines, their near misses, CRs, a BOM.
PAGE_PIECES = st.lists(
    st.sampled_from([b"---", b"----", b"--", b"\n", b"\r", b"\r\n", b" ", b"x", b"title: a", b"\xef\xbb\xbf"]),
    max_size=12,
).map(b"".join)
#: locate's definition, as two regexes: the opening line, then the first line that is
#: exactly `---` (a trailing CR ignored).
OPENING_LINE = re.compile(rb"---\r?\n")
CLOSING_LINE = re.compile(rb"(?m)^---\r?$")


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


# --- TextMatcher against fold(decode(data)) -----------------------------------------------

TEXT_ALPHABET = st.sampled_from(
    list("aAeEsSkKfFiItTlLn ;`-")
    + list(ASCII_FOLDING_CHARS)
    + ["\u0301", "\u0307", "é", "É", "—", "ʼ", "ʾ", "ı", "ǅ"]
    # Scripts of the multi-language vault: their UTF-8 shares lead and continuation bytes
    # with the folding characters' (ſ is C5 BF, ﬀ is EF AC 80).
    + ["設", "定", "Ж", "ж", "ſ", "ก", "ह", "ع", "ễ", "\uff0c", "\U0001f600"]
    # Keywords outside ASCII and the characters that fold into theirs without sharing their
    # bytes (fold.text_needles): Cyrillic capitals and the old forms of U+1C80, a CJK
    # compatibility ideograph, Greek letters too common a target to prefilter, Hangul and its
    # conjoining jamo, the replacement character.
    + ["в", "В", "\u1c80", "с", "\u1c83", "豈", "\uf900", "α", "ά", "Ά", "가", "\u1100", "\u1161", "\ufffd"]
)


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(TEXT_ALPHABET, max_size=20),
    st.binary(max_size=4),
    st.text(TEXT_ALPHABET, max_size=8),
    st.text(TEXT_ALPHABET, min_size=1, max_size=4),
)
@example("Ma\u017fs", b"", "", "mass")
@example("\u0130", b"", "", "i")
@example("x", b"\xc5", "\u00bf", "s")  # half of ſ, then a character whose UTF-8 ends like it
@example("\ufb00", b"", "", "ff")
@example("\u212a", b"\xff", "elvin", "kelvin")
@example("stra\u00dfe", b"", "", "asse")  # ß folds into part of the keyword
@example("\u00df", b"", "", "es")  # but never between two letters it cannot give
@example("e\u00dft", b"", "", "est")
@example("\ufb05", b"", "rel", "strel")
@example("\u0130x", b"", "", "ix")  # İ folds to i and a mark: i must end the keyword
@example("x\u0130", b"", "", "xi")
@example("\uf900", b"", "", "\u8c48")  # a compatibility ideograph folds to its unified one
@example("\u1c80", b"", "", "В")
@example("\u1100\u1161", b"", "", "가")  # conjoining jamo compose into the syllable
@example("", b"\xff", "", "\ufffd")  # replacement characters stand for invalid bytes
def test_text_matcher_equals_the_plain_path(
    folding_check: None, text: str, junk: bytes, tail: str, keyword: str
) -> None:
    data = text.encode() + junk + tail.encode()  # junk: invalid UTF-8 as well, mid-page
    folded_keyword = fold(keyword)
    assert TextMatcher(as_utf8(data)).contains(folded_keyword) is (folded_keyword in plain_fold(decode(data)))


#: Few letters, the characters folding into them, marks: ASCII keywords of several letters
#: that a folding character makes part of (or cannot) come up often.
FOLDING_ALPHABET = st.sampled_from([*"aeskntilf ", *ASCII_FOLDING_CHARS, "\u0301", "\u0307", "\u02bc", "\u02be"])


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(FOLDING_ALPHABET, max_size=14), st.text(st.sampled_from("aeskntilf"), min_size=2, max_size=5))
@example("ta\u00dfe", "asse")
@example("e\u00dft", "est")
def test_an_ascii_keyword_beside_folding_characters_is_matched_as_by_the_plain_fold(
    folding_check: None, text: str, keyword: str
) -> None:
    """Only the folding characters whose fold can make part of the keyword send a page to
    the plain fold (``fold_overlaps``): the others cannot change the answer."""
    data = text.encode()
    assert TextMatcher(data).contains(keyword) is (keyword in plain_fold(text))
    found = plain_fold(text).find(keyword)
    lines = plain_fold(text)[:found].split("\n")
    assert TextMatcher(data).position(keyword) == ((len(lines) - 1, len(lines[-1])) if found >= 0 else None)


#: The text alphabet with line ends and a BOM: a match's position is (line, column).
LINE_ALPHABET = TEXT_ALPHABET | st.sampled_from(["\n", "\r", "\ufeff"])


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(LINE_ALPHABET, max_size=20),
    st.binary(max_size=4),
    st.text(LINE_ALPHABET, max_size=8),
    st.text(TEXT_ALPHABET, min_size=1, max_size=4),
)
@example("\u00df\u00df x", b"", "", "x")  # folding lengthens the text before the keyword
@example("\ufeffab", b"", "", "b")  # a BOM is not text
@example("cafe\u0301 e", b"", "", "e")  # the first e in the bytes composes into é
@example("\u017f s", b"", "", "s")  # the long s folds into the keyword before its first byte
@example("\u00e9 x", b"\xc3", "x", "x")  # invalid bytes right before the keyword
@example("x\n\ufeffab", b"", "", "b")  # but it is past the start
@example("\u00e9\n\u00df b", b"", "", "b")  # a line outside ASCII before the match
@example("e\u0301 cafe\u0301 cafe", b"", "", "cafe")  # a mark composes with the first match
def test_text_position_of_the_scan_and_the_index_equal_the_plain_path(
    folding_check: None, text: str, junk: bytes, tail: str, keyword: str
) -> None:
    data = text.encode() + junk + tail.encode()
    folded_keyword = fold(keyword)
    folded_text = plain_fold(decode(data))
    found = folded_text.find(folded_keyword)
    lines = folded_text[:found].split("\n")
    plain = (len(lines) - 1, len(lines[-1])) if found >= 0 else None
    # The scan hands TextMatcher a page's bytes as every reader takes them (a wide page
    # transcoded first: junk may begin with a byte order mark).
    assert TextMatcher(as_utf8(data)).position(folded_keyword) == plain
    with tempfile.NamedTemporaryFile(suffix=".md") as handle:
        handle.write(data)
        handle.flush()
        page = read_page(handle.name, "atlas/page.md")
    assert page.record is not None
    assert record_position(page.record, page.text_start, folded_keyword) == plain


@settings(max_examples=examples(200), deadline=None)
@given(st.text(TEXT_ALPHABET, max_size=20), st.binary(max_size=4), st.text(TEXT_ALPHABET, min_size=1, max_size=3))
def test_the_folding_search_by_needles_equals_the_regex(text: str, junk: bytes, keyword: str) -> None:
    search = folding_search(fold(keyword))
    assume(search is not None)
    assert isinstance(search, _FoldingSearch)
    marked = (text.encode() + junk).translate(_LOWER_MARKING)
    assert search.by_needles(marked) is (search.regex().search(marked) is not None)
    assert all(needle[0] == FOLDING_MARK for needle in search.needles)


def test_folding_needles_name_every_character_that_can_fold_into_the_keyword() -> None:
    for letter in map(chr, range(0x20, 0x7F)):
        expected = {char.encode() for char in ASCII_FOLDING_CHARS if letter in plain_fold(char)}
        assert expected <= set(folding_needles(letter.lower()))


def test_a_folding_character_is_a_needle_only_where_its_fold_fits_the_keyword() -> None:
    """ß folds to ``ss``: it can make part of ``mass`` and ``st``, never of ``kestrel``,
    whose one ``s`` stands between ``e`` and ``t``; so a German page is not folded whole for
    a ``kestrel`` find, as it was when any shared letter counted."""
    sharp_s = "ß".encode()
    assert sharp_s in folding_needles("mass")
    assert sharp_s in folding_needles("st")
    assert sharp_s not in folding_needles("kestrel")


# --- unescaped against YAML's double-quoted strings -------------------------------------------

ESCAPE_PIECES = st.sampled_from(
    [
        *["a", "B", "é", " ", "'", "\n  ", "\\q", "\\x6", "\\u12"],
        *["\\x61", "\\u0073", "\\U0000006C", "\\U00110000", '\\"', "\\\\", "\\/", "\\N", "\\_", "\\t", "\\ "],
        *["\\\n  ", "\\\n\t", "\\\r\n ", "\\\r  ", "\\\x85 ", "\\\u2028"],  # escaped line breaks
    ]
)


@settings(max_examples=examples(250), deadline=None)
@given(st.lists(ESCAPE_PIECES, max_size=10), st.sampled_from(["", "path: C:\\dir\\\n", "x: a\\\n", "x: \\\\\n"]))
def test_unescaped_holds_every_word_of_a_double_quoted_string(pieces: list[str], before: str) -> None:
    block = f'{before}title: "{"".join(pieces)}"\n'
    mapping, _ = parse_block(block)
    title = mapping.get("title") if mapping else None
    assume(isinstance(title, str))
    decoded = unescaped(block)
    for word in str(title).split():
        assert word in decoded


# --- search against a plain reference -----------------------------------------------------


def reference(
    vault: str, keywords: list[str], limit: int
) -> tuple[list[tuple[str, str, str | None, str | None, str]], dict[str, int]]:
    """find's rules done plainly: every page read whole, YAML for every frontmatter. Each
    match as (path, title, constellation, type, where it matched)."""
    folded = [plain_fold(keyword) for keyword in keywords]
    found = []
    counts = dict.fromkeys(keywords, 0)
    for page in scan(os.path.realpath(vault)).pages:
        with open(page.read_path, "rb") as handle:
            data = handle.read()
        span = locate(data)
        fields = parse_block(data[span[0] : span[1]].decode("utf-8", "replace"))[0] if span else None
        title = title_of(fields, page.stem)
        aliases = plain_aliases(fields)
        surfaces = (plain_fold(title), plain_fold(page.rel_path), plain_fold(decode(data)), *map(plain_fold, aliases))
        holds = [any(keyword in surface for surface in surfaces) for keyword in folded]
        for keyword in counts:
            counts[keyword] += any(plain_fold(keyword) in surface for surface in surfaces)
        if all(holds):
            constellation = string_field(fields, "constellation")
            if constellation is None and page.dir in CONSTELLATIONS:
                constellation = page.dir
            key = reference_sort_key(folded, title, page.rel_path, decode(data), aliases)
            found.append((key, page.rel_path, title, constellation, string_field(fields, "type"), matched(key)))
    found.sort(key=lambda entry: entry[0])
    shown = found[:limit] if limit else found
    return [entry[1:] for entry in shown], counts


TITLE_WORDS = st.sampled_from(
    [
        "Mastra",
        "slack",
        "Straße",
        "café",
        "cafe\u0301",
        "\u212aelvin",
        "it's",
        "a  b",
        "x",
        "İstanbul",
        "\ufb01le",
        "設定",
    ]
)
TITLES = st.lists(TITLE_WORDS, min_size=1, max_size=3).map(" ".join)
TITLE_LINES = st.one_of(
    TITLES.map(lambda title: f"title: {title}"),
    TITLES.map(lambda title: f'title: "{title}"'),
    TITLES.map(lambda title: "title: '" + title.replace("'", "''") + "'"),
    TITLES.map(lambda title: "title: >\n  " + title.replace(" ", "\n  ")),  # folded: words join with spaces
    TITLES.map(lambda title: 'title: "' + title.replace("a", "\\x61").replace("s", "\\u0073") + '"'),  # escapes
    TITLES.map(lambda title: 'title: "' + title.replace("t", "\\\n  t").replace("l", "\\U0000006C") + '"'),
    TITLES.map(lambda title: 'title: "\\"' + title.replace("e", "\\x65\\\\") + '\\q"'),  # an escape YAML rejects
    TITLES.map(lambda title: f'path: C:\\dir\\\n"title": "{title}\\_\\N"'),  # literal backslashes first
    TITLES.map(lambda title: f'title: "{title}"\nnote: a\\u0073lack \\x6dastra'),  # escapes in a plain scalar
    TITLES.map(lambda title: "title: " + title.replace(" ", "\n  ")),  # a plain scalar over lines
    TITLES.map(lambda title: f"name: &t {title}\ntitle: *t"),  # an alias of an anchor
    TITLES.map(lambda title: "title: |\n  " + title.replace(" ", "\n  ")),  # literal: a title over lines
    TITLES.map(lambda title: f"# title: mastra slack\ntitle: {title}"),  # keywords in a comment
)
PAGES = st.fixed_dictionaries(
    {
        "dir": st.sampled_from(["atlas", "hermes", "analyses"]),
        "stem": st.sampled_from(
            ["mastra-notes", "slack", "Straße", "plain", "kelvin-log", "x", "cafe\u0301", "Ma\u017fs"]
        ),
        "frontmatter": st.one_of(st.none(), TITLE_LINES, st.just("title: [a, list]"), st.just("title: a: b")),
        "extra": st.sampled_from(
            [
                "",
                "constellation: metis\ntype: runbook\n",
                "type: [x]\n",
                # Obsidian's other names: a flow list, a block list, one string, an escape
                # only YAML reads, and a value that is no list of strings.
                "aliases: [slack, Mastra notes]\n",
                "aliases:\n  - kelvin\n  - x\n",
                "aliases: Straße it's\n",
                'aliases: ["m\\x61str\\x61 body"]\n',
                "aliases: 3\n",
            ]
        ),
        "body": st.lists(TITLE_WORDS | st.sampled_from(["body", "\\", "—", "ſ"]), max_size=6).map(" ".join),
        "big": st.booleans(),
    }
)
KEYWORD_LISTS = st.lists(
    st.sampled_from(
        [
            "mastra",
            "SLACK",
            "strasse",
            "café",
            "kelvin",
            "it's",
            "a b",
            "a  b",
            "x",
            "s",
            "body",
            "zzz",
            "ß",
            "fi",
            "istanbul",
            "設定",
            "mass",
        ]
    ),
    min_size=1,
    max_size=3,
)


def write_vault(root: str, pages: list[dict[str, object]]) -> None:
    for number, page in enumerate(pages):
        os.makedirs(os.path.join(root, str(page["dir"])), exist_ok=True)
        text = ""
        if page["frontmatter"] is not None:
            text = f"---\n{page['frontmatter']}\n{page['extra']}---\n"
        text += f"{page['body']}\n"
        if page["big"]:
            text += "filler line\n" * 2000  # past the first read
        with open(os.path.join(root, str(page["dir"]), f"{page['stem']}-{number}.md"), "w", encoding="utf-8") as handle:
            handle.write(text)


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(PAGES, min_size=1, max_size=8), KEYWORD_LISTS, st.sampled_from([0, 1, 3]), st.booleans())
# A title that holds the keyword only once its escapes are read, with the keyword in the text:
# the page is named by its title, which the raw frontmatter does not show.
@example(
    [
        {
            "dir": "atlas",
            "stem": "x",
            "frontmatter": 'title: "m\\x61str\\x61"',
            "extra": "",
            "body": "Mastra",
            "big": False,
        }
    ],
    ["mastra"],
    0,
    False,
)
# A keyword with a space, held by a title folded over lines and by the text.
@example(
    [
        {
            "dir": "atlas",
            "stem": "x",
            "frontmatter": "title: >\n  it's\n  x",
            "extra": "",
            "body": "it's x",
            "big": False,
        }
    ],
    ["it's x"],
    0,
    False,
)
def test_search_equals_the_plain_reference(
    monkeypatch: pytest.MonkeyPatch, pages: list[dict[str, object]], keywords: list[str], limit: int, split: bool
) -> None:
    # split: the two-process path even on a small vault (it is the same code on a big one).
    monkeypatch.setattr(find_module, "PARALLEL_MIN_PAGES", 1 if split else 10**9)
    with tempfile.TemporaryDirectory() as vault:
        write_vault(vault, pages)
        result = search(vault, keywords, limit=limit)
        expected, counts = reference(vault, keywords, limit)
        got = [(match.path, match.title, match.constellation, match.type, match.matched) for match in result.matches]
        assert got == expected
        assert result.keyword_counts == counts
        assert result.total == len(reference(vault, keywords, 0)[0])


def test_a_match_placed_without_its_title_is_parsed_only_when_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages matched by their text alone sort by path: their frontmatter is read only for
    the pages shown (the equivalence of the answers is the test above)."""
    parsed: list[bytes] = []
    block_fields = find_module._block_fields

    def counting(block: bytes) -> dict[object, object] | None:
        parsed.append(block)
        return block_fields(block)

    monkeypatch.setattr(find_module, "_block_fields", counting)
    monkeypatch.setattr(find_module, "PARALLEL_MIN_PAGES", 10**9)
    with tempfile.TemporaryDirectory() as vault:
        os.makedirs(os.path.join(vault, "atlas"))
        for number in range(30):
            with open(os.path.join(vault, "atlas", f"p{number:02d}.md"), "w", encoding="utf-8") as handle:
                handle.write(f"---\ntitle: Page {number}\ntype: runbook\n---\nthe needle is here\n")
        result = search(vault, ["needle"], limit=3)
    assert [(match.path, match.title, match.type) for match in result.matches] == [
        (f"atlas/p0{number}.md", f"Page {number}", "runbook") for number in range(3)
    ]
    assert result.total == 30
    assert len(parsed) == 3


def test_bounded_kept_matches_equal_a_full_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    """More matches than the kept list holds before it trims itself, in both processes."""
    monkeypatch.setattr(find_module, "PARALLEL_MIN_PAGES", 1)
    with tempfile.TemporaryDirectory() as vault:
        for number in range(700):
            os.makedirs(os.path.join(vault, "atlas"), exist_ok=True)
            title = "Needle" if number % 7 == 0 else "Other"
            with open(os.path.join(vault, "atlas", f"p{(number * 37) % 700:03d}.md"), "w", encoding="utf-8") as handle:
                handle.write(f"---\ntitle: {title} {number}\n---\nneedle\n")
        for limit in (0, 1, 20):
            result = search(vault, ["needle"], limit=limit)
            expected, _ = reference(vault, ["needle"], limit)
            assert [match.path for match in result.matches] == [entry[0] for entry in expected]
            assert result.total == 700


@pytest.mark.parametrize("payload", [b"not marshal data", b""])
def test_a_failed_child_leaves_the_answer_whole(monkeypatch: pytest.MonkeyPatch, payload: bytes) -> None:
    monkeypatch.setattr(find_module, "PARALLEL_MIN_PAGES", 1)
    monkeypatch.setattr(find_module.Tally, "dump", lambda self: payload)
    with tempfile.TemporaryDirectory() as vault:
        os.makedirs(os.path.join(vault, "atlas"))
        for name in ("a", "b", "c", "d"):
            with open(os.path.join(vault, "atlas", f"{name}.md"), "w", encoding="utf-8") as handle:
                handle.write("needle\n")
        result = search(vault, ["needle"])
        assert [match.path for match in result.matches] == ["atlas/a.md", "atlas/b.md", "atlas/c.md", "atlas/d.md"]
        assert result.total == 4
        assert result.keyword_counts == {"needle": 4}
