"""The known-item benchmark's metrics and queries on hand-made rankings, and its vault
generator's determinism (the benchmark itself runs in ``nox -s retrieval``)."""

from __future__ import annotations

import os
from pathlib import Path

import generate_known_item_vaults as generator
import known_item
import pytest
from known_item import Page

# --- metrics ---------------------------------------------------------------------------


def test_rank_of_is_the_first_relevant_position_counted_from_one() -> None:
    ranking = ["a.md", "b.md", "c.md", "d.md"]
    assert known_item.rank_of(ranking, {"a.md"}) == 1
    assert known_item.rank_of(ranking, {"c.md"}) == 3
    assert known_item.rank_of(ranking, {"d.md", "b.md"}) == 2
    assert known_item.rank_of(ranking, {"z.md"}) is None
    assert known_item.rank_of([], {"a.md"}) is None


def test_hit_at_k_counts_ranks_up_to_k_and_never_a_missing_page() -> None:
    ranks = [1, 2, 3, None, 25]
    assert known_item.hit_at(ranks, 1) == pytest.approx(1 / 5)
    assert known_item.hit_at(ranks, 3) == pytest.approx(3 / 5)
    assert known_item.hit_at(ranks, 20) == pytest.approx(3 / 5)
    assert known_item.hit_at(ranks, 25) == pytest.approx(4 / 5)
    assert known_item.hit_at([1, 1], 1) == 1.0


def test_mean_reciprocal_rank_counts_a_missing_page_as_zero() -> None:
    assert known_item.mean_reciprocal_rank([1, 2, 4, None]) == pytest.approx((1 + 0.5 + 0.25 + 0) / 4)
    assert known_item.mean_reciprocal_rank([1]) == 1.0
    assert known_item.mean_reciprocal_rank([None]) == 0.0


def test_metrics_of_no_queries_are_an_error_not_a_perfect_score() -> None:
    with pytest.raises(ValueError, match="no ranks"):
        known_item.hit_at([], 1)
    with pytest.raises(ValueError, match="no ranks"):
        known_item.mean_reciprocal_rank([])


# --- queries ---------------------------------------------------------------------------


def test_title_words_are_lower_cased_words_without_the_punctuation_around_them() -> None:
    assert known_item.title_words(Page("a/x.md", "Shortcode templates")) == ["shortcode", "templates"]
    assert known_item.title_words(Page("a/x.md", "strings.ContainsAny")) == ["strings.containsany"]
    assert known_item.title_words(Page("a/x.md", "ADR-004: Stay on (Hetzner) — now")) == [
        "adr-004",
        "stay",
        "on",
        "hetzner",
        "now",
    ]
    assert known_item.title_words(Page("a/x.md", "— …")) == []
    assert known_item.title_words(Page("c/-v.md", "-v")) == ["-v"]
    assert known_item.title_words(Page("m/title.md", "“.Title” & more")) == [".title", "more"]


def test_file_name_query_is_the_file_name_with_its_suffix() -> None:
    assert known_item.file_name_words(Page("common/tar-split.md", "tar-split")) == ["tar-split.md"]


def test_pages_with_the_same_folded_keyword_set_make_one_ambiguous_query() -> None:
    pages = [
        Page("docs/b__introduction.md", "Introduction"),
        Page("docs/a__introduction.md", "INTRODUCTION"),
        Page("docs/menus-and-taxonomies.md", "Menus and taxonomies"),
        Page("docs/taxonomies-and-menus.md", "Taxonomies and menus"),
        Page("docs/shortcodes.md", "Shortcodes"),
    ]
    by_words = {tuple(query.keywords): query for query in known_item.queries(pages, "title words")}
    assert set(by_words) == {("introduction",), ("menus", "and", "taxonomies"), ("shortcodes",)}
    introduction = by_words[("introduction",)]
    # Made from the first page by path; both pages count as the intended one.
    assert introduction.intended.path == "docs/a__introduction.md"
    assert introduction.relevant == {"docs/a__introduction.md", "docs/b__introduction.md"}
    assert introduction.ambiguous
    assert by_words[("menus", "and", "taxonomies")].relevant == {
        "docs/menus-and-taxonomies.md",
        "docs/taxonomies-and-menus.md",
    }
    assert not by_words[("shortcodes",)].ambiguous
    by_name = known_item.queries(pages, "file name")
    assert len(by_name) == 5
    assert not any(query.ambiguous for query in by_name)


def test_the_same_file_name_in_two_dirs_is_one_ambiguous_query() -> None:
    pages = [Page("common/date.md", "date"), Page("osx/date.md", "date")]
    (query,) = known_item.queries(pages, "file name")
    assert query.keywords == ["date.md"]
    assert query.relevant == {"common/date.md", "osx/date.md"}


def test_sample_is_a_seeded_subset_in_order_and_all_when_size_is_zero_or_larger() -> None:
    items = known_item.queries([Page(f"d/p{n:03d}.md", f"Page {n:03d}") for n in range(100)], "title words")
    first = known_item.sample(items, 10, seed=3)
    assert len(first) == 10
    assert [query.keywords for query in first] == [query.keywords for query in known_item.sample(items, 10, seed=3)]
    assert [query.keywords for query in first] != [query.keywords for query in known_item.sample(items, 10, seed=4)]
    positions = [items.index(query) for query in first]
    assert positions == sorted(positions)
    assert known_item.sample(items, 0, seed=3) == items
    assert known_item.sample(items, 1000, seed=3) == items


def test_most_rivalled_file_names_count_names_ending_with_it_at_a_word_start() -> None:
    pages = [
        Page("docs/images.md", "Images"),
        Page("docs/caching__images.md", "Images"),
        Page("docs/b__images.md", "Images"),
        Page("docs/teximages.md", "teximages"),  # not at a word start: no rival
        Page("docs/menus.md", "Menus"),
        Page("docs/a__menus.md", "Menus"),
        Page("docs/solo.md", "Solo"),
    ]
    items = known_item.queries(pages, "file name")
    chosen = known_item.most_rivalled_file_names(items, 5)
    # images.md has 2 rivals, menus.md 1; the rest none, so they are left out.
    assert [query.keywords for query in chosen] == [["images.md"], ["menus.md"]]
    assert [query.keywords for query in known_item.most_rivalled_file_names(items, 1)] == [["images.md"]]


# --- the known-item order (docs/spec.md rule 8), used to explain a miss -----------------


def test_spec_order_matches_the_known_item_examples() -> None:
    pages = {
        page.path: page
        for page in [
            Page("common/impacket-getarch.md", "impacket-getarch"),
            Page("common/setarch.md", "setarch"),
            Page("common/tar-split.md", "tar-split"),
            Page("common/tar.md", "tar"),
            Page("docs/a.md", "Highlight shortcode"),
            Page("docs/b.md", "Shortcode templates"),
            Page("docs/c.md", "Shortcodes"),
            Page("ref/any.md", "strings.ContainsAny"),
            Page("ref/contains.md", "strings.Contains"),
            Page("docs/content-management.md", "Content management"),
            Page("docs/content-management__shortcodes.md", "Shortcodes"),
        ]
    }
    tar = ["common/impacket-getarch.md", "common/setarch.md", "common/tar-split.md", "common/tar.md"]
    assert known_item.spec_order(tar, pages, ["tar"])[:2] == ["common/tar.md", "common/tar-split.md"]
    shortcode = ["docs/a.md", "docs/b.md", "docs/c.md"]
    assert known_item.spec_order(shortcode, pages, ["shortcode"])[0] == "docs/c.md"
    contains = ["ref/any.md", "ref/contains.md"]
    assert known_item.spec_order(contains, pages, ["strings.contains"]) == ["ref/contains.md", "ref/any.md"]
    section = ["docs/content-management__shortcodes.md", "docs/content-management.md"]
    assert known_item.spec_order(section, pages, ["content", "management"])[0] == "docs/content-management.md"


def test_why_behind_names_the_first_key_that_differs() -> None:
    tar, gtar = Page("common/tar.md", "tar"), Page("common/gtar.md", "gtar")
    assert "key 1" in known_item.why_behind(gtar, tar, ["tar"])
    npm, npm_clean = Page("common/npm.md", "npm"), Page("common/npm-clean.md", "npm-clean")
    assert "key 3" in known_item.why_behind(npm_clean, npm, ["npm"])
    in_path = Page("menus/x.md", "X")
    assert "key 2" in known_item.why_behind(in_path, Page("docs/y.md", "Menus"), ["menus"])
    in_text = Page("docs/z.md", "Z")
    assert "text (group)" in known_item.why_behind(in_text, Page("docs/y.md", "Menus"), ["menus"])
    english, translation = Page("en/embed.md", "Embed"), Page("ar/x.md", "X", aliases=["Embed"])
    assert "key 4" in known_item.why_behind(translation, english, ["embed"])
    assert "key 6" in known_item.why_behind(Page("b/ab.md", "ab"), Page("a/ab.md", "ab"), ["ab"])
    assert known_item.why_behind(Page("b/z.md", "Z"), Page("a/y.md", "Y"), ["menus"]) == known_item.BOTH_IN_TEXT


# --- the generator ---------------------------------------------------------------------


@pytest.mark.parametrize("shape", generator.SHAPES)
def test_the_generator_gives_the_same_pages_for_the_same_seed_and_others_for_another(shape: str) -> None:
    once = generator.pages_of(shape, 400, seed=5)
    assert len(once) == 400
    assert generator.pages_of(shape, 400, seed=5) == once
    assert generator.pages_of(shape, 400, seed=6) != once
    assert len({(dir_name, name) for dir_name, name, _ in once}) == 400


def test_the_generator_writes_the_same_bytes_twice(tmp_path: Path) -> None:
    def files(root: Path) -> dict[str, bytes]:
        return {
            os.path.relpath(os.path.join(dir_path, name), root): Path(dir_path, name).read_bytes()
            for dir_path, _, names in os.walk(root)
            for name in names
        }

    generator.generate("commands", 150, str(tmp_path / "one"), seed=2)
    generator.generate("commands", 150, str(tmp_path / "two"), seed=2)
    assert files(tmp_path / "one") == files(tmp_path / "two")
    assert (tmp_path / "one" / ".mnemosyne.toml").read_text() == 'dirs = ["common", "linux", "osx", "windows"]\n'
    assert not (tmp_path / "one.partial").exists()


def test_command_pages_have_no_frontmatter_and_hold_the_known_item_examples() -> None:
    pages = generator.pages_of("commands", 300, seed=1)
    names = {name for _, name, _ in pages}
    assert {f"{command}.md" for command in generator.REQUIRED_COMMANDS} <= names
    assert all(text.startswith("# ") for _, _, text in pages)


def test_docs_pages_flatten_sections_into_names_and_have_near_duplicate_titles() -> None:
    pages = generator.pages_of("docs", 3000, seed=1)
    titles = {text.split("\n", 2)[1] for _, _, text in pages}
    assert all(text.startswith('---\ntitle: "') for _, _, text in pages)
    assert any("__" in name for dir_name, name, _ in pages if dir_name == "docs")
    # A Go-style family: a function and its suffixed variants.
    families = [title for title in titles if title.startswith('title: "strings.')]
    assert len(families) > 3


# --- topic queries and the other orders --------------------------------------------------


def test_the_opening_paragraph_is_the_first_line_of_body_text() -> None:
    text = "---\ntitle: X\n---\n\n# Heading\n\n> Quoted description here.\n> More.\n"
    assert known_item.opening_paragraph(text) == "Quoted description here."
    assert known_item.opening_paragraph("") == ""


def test_topic_words_avoid_the_title_and_path_and_are_seeded_per_page() -> None:
    page = Page("docs/images.md", "Images", "---\ntitle: Images\n---\nStore pictures and images in assets, folders.\n")
    words = known_item.topic_words(page)
    assert len(words) == 2
    assert set(words) <= {"store", "pictures", "assets", "folders"}
    assert known_item.topic_words(page) == words
    assert known_item.topic_words(Page("docs/a.md", "A", "# Only a heading\n")) == []


def test_reorder_mentions_keeps_group_1_and_sorts_group_2_by_the_order() -> None:
    pages = {
        "a/named.md": Page("a/named.md", "Kestrel"),
        "a/late.md": Page("a/late.md", "L", "x" * 50 + " kestrel"),
        "a/soon.md": Page("a/soon.md", "S", "kestrel kestrel kestrel"),
        "a/mid.md": Page("a/mid.md", "M", "# kestrel\n" + "y" * 20),
    }
    ranking = ["a/named.md", "a/late.md", "a/mid.md", "a/soon.md"]

    def reordered(order: str) -> list[str]:
        return known_item.reorder_mentions(ranking, 1, pages, ["Kestrel"], order)

    assert reordered("by path (the old order)") == ["a/named.md", "a/late.md", "a/mid.md", "a/soon.md"]
    assert reordered("mention depth, then path (find's order)") == ["a/named.md", "a/soon.md", "a/mid.md", "a/late.md"]
    assert reordered("most occurrences, then path")[1] == "a/soon.md"
    assert reordered("a heading holds every keyword, then path")[1] == "a/mid.md"


def test_alias_ties_by_path_drops_only_key_4() -> None:
    # The English page's title and a translation's alias are the same words: with key 4 the
    # title wins, without it the path (ar/ before en/); a shorter alias wins either way.
    pages = {
        "en/Embed files.md": Page("en/Embed files.md", "Embed files"),
        "ar/x.md": Page("ar/x.md", "تضمين", aliases=["Embed files"]),
        "de/y.md": Page("de/y.md", "Einbetten", aliases=["Embed"]),
    }
    find_order = known_item.spec_order(pages, pages, ["embed"])
    assert find_order == ["de/y.md", "en/Embed files.md", "ar/x.md"]
    assert known_item.alias_ties_by_path(find_order, 3, pages, ["embed"]) == ["de/y.md", "ar/x.md", "en/Embed files.md"]
    mention = Page("a/m.md", "M", "embed")
    assert known_item.alias_ties_by_path_key(mention, ["embed"]) == known_item.order_key(mention, ["embed"])


def test_plain_ranking_matches_names_path_or_text_in_the_spec_order() -> None:
    pages = {
        "pages/A___B.md": Page("pages/A___B.md", "A___B", "- about b"),
        "pages/b.md": Page("pages/b.md", "b"),
        "pages/c.md": Page("pages/c.md", "C", aliases=["a/b"]),
        "pages/d.md": Page("pages/d.md", "D", "nothing"),
    }
    assert known_item.plain_ranking(pages, ["a/b"]) == ["pages/c.md"]
    # The shorter name first: the alias "a/b" before the title "A___B" (key 3).
    assert known_item.plain_ranking(pages, ["b"]) == ["pages/b.md", "pages/c.md", "pages/A___B.md"]


def test_sample_items_is_seeded_and_keeps_the_order() -> None:
    items = list(range(50))
    chosen = known_item.sample_items(items, 10, 11)
    assert chosen == sorted(chosen)
    assert len(set(chosen)) == 10
    assert known_item.sample_items(items, 10, 11) == chosen
    assert known_item.sample_items(items, 0, 11) == items


def test_every_kind_of_vault_generates_the_same_bytes_from_a_seed(tmp_path: Path) -> None:
    for shape in generator.KIND_SHAPES:
        first, second = tmp_path / f"{shape}-1", tmp_path / f"{shape}-2"
        generator.generate(shape, 12, str(first))
        generator.generate(shape, 12, str(second))
        files = sorted(path.relative_to(first) for path in first.rglob("*") if path.is_file())
        assert files, shape
        assert files == sorted(path.relative_to(second) for path in second.rglob("*") if path.is_file())
        assert all((first / name).read_bytes() == (second / name).read_bytes() for name in files)
        assert not (first / ".mnemosyne.toml").exists()  # as the tool writes it, no setup


# --- agent tasks and the candidate context lines ----------------------------------------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vaults"


def test_every_agent_task_names_a_shipped_page_and_keywords_not_from_nowhere() -> None:
    for task in known_item.AGENT_TASKS:
        assert (FIXTURES / task.vault / task.answer).is_file(), task
        assert task.keywords, task
        description = task.description.lower()
        # The keywords come from the description, never from the answer's file name alone.
        assert all(keyword.lower() in description for keyword in task.keywords), task


CONTEXT_PAGE = Page(
    "rfcs/x.md",
    "x",
    "---\ntags: [mark]\n---\nthe mark comes first\nthe question mark operator\nquestion\n",
)


def test_context_choices_on_a_hand_made_page() -> None:
    keywords = ["question", "mark", "operator"]
    assert known_item.most_keywords_earliest(CONTEXT_PAGE, keywords) == 5
    assert known_item.first_line_with_a_keyword(CONTEXT_PAGE, keywords) == 2
    assert known_item.most_keywords_body_first(CONTEXT_PAGE, ["mark"]) == 4
    assert known_item.most_keywords_earliest(CONTEXT_PAGE, ["mark"]) == 2
    assert known_item.most_keywords_earliest(CONTEXT_PAGE, ["absent"]) is None
    assert known_item.line_holds_all(CONTEXT_PAGE, 5, keywords)
    assert not known_item.line_holds_all(CONTEXT_PAGE, 4, keywords)
    assert not known_item.line_holds_all(CONTEXT_PAGE, None, keywords)
    # A keyword the text lacks (one only the path holds) is not asked of the line.
    assert known_item.line_holds_all(CONTEXT_PAGE, 6, ["question", "rfcs"])
