"""What makes pages versions of one page, and copies of one another (mnemosyne_core.versions)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core.pagefields import content_digests
from mnemosyne_core.versions import (
    _LANGUAGE_CODES,
    LANGUAGE,
    VERSION,
    chosen_version,
    dir_kind,
    find_copies,
    is_docusaurus,
    natural_key,
    page_key,
    page_keys,
    version_dirs,
)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("7.4", VERSION),
        ("1.x", VERSION),
        ("v2", VERSION),
        ("version-30.4", VERSION),
        ("release_2.1", VERSION),
        ("2024", None),  # a blog's year, not a release
        ("en", LANGUAGE),
        ("pt-br", LANGUAGE),
        ("zh_TW", LANGUAGE),
        ("zh-Hans", LANGUAGE),
        ("js", None),  # no language's code
        ("docs", None),
    ],
)
def test_dir_kind(name: str, kind: str | None) -> None:
    assert dir_kind(name) == kind


def test_releases_sort_as_people_count() -> None:
    assert sorted(["7.10", "5.1", "7.9", "version-10.0", "version-9.2"], key=natural_key) == [
        "5.1",
        "7.9",
        "7.10",
        "version-9.2",
        "version-10.0",
    ]


def test_versions_of_a_page_share_a_key_and_other_dirs_do_not() -> None:
    assert page_key("reference/7.4/a/b.md") == page_key("reference/7.10/a/b.md")
    assert page_key("content/en/x.md") == page_key("content/pt-br/x.md")
    assert page_key("content/en/x.md") != page_key("content/7.4/x.md")
    assert page_key("blog/2023/x.md") != page_key("blog/2024/x.md")
    assert page_key("guides/x.md") == "guides/x.md"


def test_docusaurus_docs_and_its_versioned_docs_are_versions_of_one_page() -> None:
    """Docusaurus keeps the next release in docs/ (at the root, as Jest does, or in
    website/) and each published one in versioned_docs/version-X/: not siblings, one page."""
    key = page_key("docs/GettingStarted.md", docusaurus=True)
    assert page_key("website/versioned_docs/version-30.4/GettingStarted.md", docusaurus=True) == key
    assert page_key("website/docs/GettingStarted.md", docusaurus=True) == key
    assert page_key("website/versioned_docs/version-29.7/GettingStarted.md", docusaurus=True) == key
    assert page_key("website/blog/GettingStarted.md", docusaurus=True) != key
    # A site's translations inside docs/ stay translations of one page.
    assert page_key("docs/en/x.md", docusaurus=True) == page_key("docs/it/x.md", docusaurus=True)
    keys = page_keys(["docs/a.md", "website/versioned_docs/version-1.0/a.md", "docs/en/b.md", "docs/it/b.md"])
    assert keys["docs/a.md"] == keys["website/versioned_docs/version-1.0/a.md"]
    assert keys["docs/en/b.md"] == keys["docs/it/b.md"]


@pytest.mark.parametrize("docusaurus", [False, True])
def test_page_keys_keys_each_dir_once_and_gives_each_page_its_own_key(docusaurus: bool) -> None:
    """page_keys keys a dir once for all its pages: the same key page_key gives each alone."""
    paths = [
        "a.md",
        "en/a.md",
        "docs/a.md",
        "docs/en/a.md",
        "docs/7.4/en/b.md",
        "website/docs/a.md",
        "website/docs/x/y/7.4/a.md",
        "docs/it/b.md",
        "notes/v2/versioned_docs/c.md",
    ]
    if docusaurus:
        paths.append("website/versioned_docs/version-1.0/a.md")
    assert is_docusaurus(paths) == docusaurus
    assert page_keys(paths) == {path: page_key(path, docusaurus) for path in paths}


def test_docs_dirs_without_released_docs_are_no_docusaurus_site() -> None:
    """A vault with no versioned_docs/: docs/ is a dir like any other, and its language or
    release dirs keep their versions."""
    keys = page_keys(
        ["docs/x.md", "website/docs/x.md", "docs/en/y.md", "docs/it/y.md", "docs/7.4/z.md", "docs/7.6/z.md"]
    )
    assert keys["docs/x.md"] != keys["website/docs/x.md"]
    assert keys["docs/en/y.md"] == keys["docs/it/y.md"]
    assert keys["docs/7.4/z.md"] == keys["docs/7.6/z.md"]
    paths = [
        "docs/GettingStarted.md",
        "website/versioned_docs/version-29.7/GettingStarted.md",
        "website/versioned_docs/version-30.4/GettingStarted.md",
        "website/versioned_docs/version-30.0/GettingStarted.md",
    ]
    assert version_dirs(paths) == [
        "docs/",
        "website/versioned_docs/version-29.7/",
        "website/versioned_docs/version-30.4/",
        "website/versioned_docs/version-30.0/",
    ]
    assert chosen_version(paths, ()) == 2  # the highest published release, as the site shows


def test_the_chosen_version_is_the_preferred_then_the_highest_release_then_the_first() -> None:
    releases = ["r/7.9/a.md", "r/7.10/a.md", "r/5.1/a.md"]
    assert chosen_version(releases, ()) == 1
    assert chosen_version(releases, ("r/5.1/",)) == 2
    assert chosen_version(["c/it/a.md", "c/en/a.md"], ()) == 0
    assert chosen_version(["c/it/a.md", "c/en/a.md"], ("other/", "c/en/")) == 1


def test_a_copy_has_the_same_bytes_or_the_same_text_after_its_frontmatter() -> None:
    digests = {
        "v/1.0/a.md": content_digests(b"---\ntitle: A\n---\nbody\n"),
        "v/2.0/a.md": content_digests(b"---\ntitle: A (2.0)\n---\nbody\n"),  # the same text after it
        "v/1.0/b.md": content_digests(b"---\ntitle: B\n---\n"),  # only frontmatter: no text to copy
        "v/2.0/b.md": content_digests(b"---\ntitle: B, new\n---\n"),
        "w/a.md": content_digests(b"---\ntitle: A\n---\nbody\n"),  # not under a sibling of v/1.0/
    }
    [copy] = find_copies(digests)
    assert (copy.dir, copy.of, copy.copies, copy.pages, copy.whole) == ("v/1.0", "v/2.0", ["a.md"], 2, False)
    assert [copy.dir for copy in find_copies(digests, ("v/1.0/",))] == ["v/2.0"]


def test_unlisted_pages_rank_where_the_dot_stands_and_nothing_else_changes() -> None:
    from mnemosyne_core.find import preferred_rank

    prefer = ("reference/7.6/", "./", "ja/")
    assert [preferred_rank(path, prefer) for path in ("reference/7.6/a.md", "book/a.md", "ja/book/a.md")] == [0, 1, 2]
    assert [preferred_rank(path, ("ja/",)) for path in ("book/a.md", "ja/book/a.md")] == [1, 0]
    assert preferred_rank("book/a.md", ()) == 0
    # recall reads the version outside the translation dirs, and the first listed on a tie.
    assert chosen_version(["ja/a.md", "ko/a.md", "zh/a.md"], ("./", "ja/", "zh/")) == 1
    assert chosen_version(["ko/a.md", "it/a.md"], ("./", "ja/")) == 0


def test_language_dirs_that_mirror_the_pages_beside_them_are_translations() -> None:
    from mnemosyne_core.versions import root_translations

    paths = ["book/x.md", "book/y.md", "zh-CN/book/x.md", "ja/book/x.md", "ja/only.md", "ja/more.md", "de/z.md"]
    # ja/ mirrors 1 of its 3 pages: less than half; de/ none.
    assert root_translations(paths) == ["zh-CN/"]
    assert root_translations([*paths, "ja/book/y.md"]) == ["ja/", "zh-CN/"]
    assert root_translations(["docs/a.md", "docs/it/a.md", "it/b.md"]) == ["docs/it/"]


#: Characters dir names are made of here: digits of two scripts, separators, letters that
#: fold into ASCII under re's IGNORECASE (Kelvin's K, the long s, dotted and dotless i).
NAME_CHARACTERS = st.sampled_from([*"0123456789.-_xXvVrReEsSlLaAiIoOnNzZhHpPtTbBkK", "٣", "\u212a", "ſ", "İ", "ı", "é"])


@settings(max_examples=examples(3000), deadline=None)
@given(name=st.one_of(st.text(NAME_CHARACTERS, max_size=12), st.sampled_from(["version-30.4", "zh-Hans", "Ko"])))
def test_dir_kind_is_its_patterns_asked_of_every_name(name: str) -> None:
    """dir_kind asks its patterns only of names that meet a condition each needs (so most
    calls import no re): its answer is the patterns' answer for every name."""
    version = r"(?:v|version[-_]?|release[-_]?)(?:\d+(?:\.(?:\d+|x))*)|\d+(?:\.(?:\d+|x))+"
    language = re.fullmatch(r"([a-z]{2})(?:[-_](?:[a-z]{2}|[a-z]{4}|[0-9]{3}))?", name, re.IGNORECASE)
    expected = (
        VERSION
        if re.fullmatch(version, name, re.IGNORECASE)
        else LANGUAGE
        if language is not None and language.group(1).lower() in _LANGUAGE_CODES
        else None
    )
    assert dir_kind(name) == expected
