"""find's rules (docs/spec.md, rules 1-11), on pyfakefs vaults. The plain matches every rule builds on first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from vault_pages import VAULT, MakeVault, no_vault_message, page

from mnemosyne_core import InvalidQueryError, VaultError, find_pages, search
from mnemosyne_core import find as find_module
from mnemosyne_core.diagnostics import BROKEN_SYMLINK, CANNOT_READ, SYMLINK_ESCAPES, Diagnostic
from mnemosyne_core.page import open_page, read_to_end


def paths(vault: str, *keywords: str, limit: int = 0) -> list[str]:
    return [match.path for match in search(vault, keywords, limit=limit).matches]


# --- the plain matches ----------------------------------------------------------------


def test_title_match(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/one.md": page("Mastra Decision"), "atlas/two.md": page("Other")})
    assert paths(vault, "mastra") == ["atlas/one.md"]


def test_filename_match(make_vault: MakeVault) -> None:
    vault = make_vault({"hermes/mastra-notes.md": page("Changelog Notes"), "hermes/b.md": page("B")})
    assert paths(vault, "mastra") == ["hermes/mastra-notes.md"]


def test_body_match(make_vault: MakeVault) -> None:
    vault = make_vault({"metis/plan.md": page("Plan", "We weighed Mastra workflows."), "metis/x.md": page("X")})
    assert paths(vault, "mastra") == ["metis/plan.md"]


def test_and_semantics_needs_every_keyword(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/both.md": page("Mastra", "posts to slack"),
            "atlas/mastra-only.md": page("Mastra only"),
            "atlas/slack-only.md": page("Slack only"),
        }
    )
    assert paths(vault, "mastra", "slack") == ["atlas/both.md"]
    assert set(paths(vault, "mastra", "slack")) <= set(paths(vault, "mastra")) & set(paths(vault, "slack"))


def test_zero_match_is_an_empty_result(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": page("A", "text")})
    result = search(vault, ["nonexistent"])
    assert (result.matches, result.total, result.incomplete) == ([], 0, False)


def test_limit_caps_the_list_but_total_counts_all(make_vault: MakeVault) -> None:
    vault = make_vault({f"atlas/p{n:02}.md": page(f"Mastra {n}") for n in range(25)})
    result = search(vault, ["mastra"])
    assert [match.path for match in result.matches] == [f"atlas/p{n:02}.md" for n in range(20)]
    assert result.total == 25
    assert len(search(vault, ["mastra"], limit=3).matches) == 3
    assert len(search(vault, ["mastra"], limit=0).matches) == 25


def test_title_falls_back_to_stem_without_frontmatter_title(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/no-frontmatter.md": "# Heading\nmastra\n",
            "atlas/no-title-key.md": page(None, "mastra", type="runbook"),
        }
    )
    titles = {match.path: match.title for match in search(vault, ["mastra"]).matches}
    assert titles == {"atlas/no-frontmatter.md": "no-frontmatter", "atlas/no-title-key.md": "no-title-key"}


# --- rule 1: the vault ------------------------------------------------------------------


def test_vault_unset_is_a_vault_error(fs: FakeFilesystem, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AION_VAULT", raising=False)
    with pytest.raises(VaultError) as raised:
        search(None, ["x"])
    assert str(raised.value) == no_vault_message()


def test_vault_from_environment(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault({"atlas/a.md": page("Alpha")})
    monkeypatch.setenv("AION_VAULT", vault)
    assert find_pages(["alpha"]) == [{"path": "atlas/a.md", "title": "Alpha", "constellation": "atlas", "type": None}]


def test_missing_vault_is_a_vault_error(fs: FakeFilesystem) -> None:
    with pytest.raises(VaultError, match="'/nowhere' does not exist"):
        search("/nowhere", ["x"])


def test_vault_that_is_a_file_is_a_vault_error(fs: FakeFilesystem) -> None:
    fs.create_file("/vault.md")
    with pytest.raises(VaultError, match="is not a directory"):
        search("/vault.md", ["x"])


def test_vault_without_any_configured_dir_is_a_vault_error_naming_a_file(make_vault: MakeVault) -> None:
    vault = make_vault(
        {"notes/a.md": page("A"), "atlas": "not a dir", ".mnemosyne.toml": 'dirs = ["atlas", "hades"]\n'}
    )
    message = r"has none of the scanned dirs \(atlas, hades\) \('atlas' is a file, not a dir\); its dirs are notes: "
    with pytest.raises(VaultError, match=message):
        search(vault, ["a"])


def test_vault_without_any_default_dir_is_searched_as_a_whole_tree(make_vault: MakeVault) -> None:
    vault = make_vault({"notes/a.md": page("Alpha"), "notes/deep/b.mdx": page("Alpha b"), "atlas": "a file"})
    assert [(match.path, match.title) for match in search(vault, ["alpha"]).matches] == [
        ("notes/a.md", "Alpha"),
        ("notes/deep/b.mdx", "Alpha b"),
    ]


# --- rule 2: which files are pages -----------------------------------------------------


def test_only_md_files_directly_inside_scanned_dirs(make_vault: MakeVault, fs: FakeFilesystem) -> None:
    vault = make_vault(
        {
            "atlas/page.md": "kw",
            "atlas/nested/deep.md": "kw",
            "atlas/upper.MD": "kw",
            "atlas/.hidden.md": "kw",
            "atlas/notes.txt": "kw",
            "atlas/page.md.bak": "kw",
            "elsewhere/page.md": "kw",
            "root.md": "kw",
        }
    )
    fs.create_dir(f"{VAULT}/analyses/dir.md")
    assert paths(vault, "kw") == ["atlas/page.md"]


def test_missing_scanned_dirs_are_skipped_and_dirs_come_from_config(make_vault: MakeVault) -> None:
    vault = make_vault({"analyses/a.md": "kw", "athena/b.md": "kw"})
    assert paths(vault, "kw") == ["analyses/a.md", "athena/b.md"]


def test_symlink_inside_vault_is_followed(make_vault: MakeVault, fs: FakeFilesystem) -> None:
    vault = make_vault({"atlas/real.md": page("Real", "kw")})
    fs.create_symlink(f"{VAULT}/hades/alias.md", f"{VAULT}/atlas/real.md")
    result = search(vault, ["kw"])
    assert [match.path for match in result.matches] == ["atlas/real.md", "hades/alias.md"]
    assert result.warnings == []


def test_escaping_and_broken_symlinks_are_skipped_with_a_warning(make_vault: MakeVault, fs: FakeFilesystem) -> None:
    vault = make_vault({"atlas/ok.md": "kw"})
    fs.create_file("/secret/outside.md", contents="kw")
    fs.create_symlink(f"{VAULT}/atlas/escape.md", "/secret/outside.md")
    fs.create_symlink(f"{VAULT}/atlas/broken.md", f"{VAULT}/atlas/missing.md")
    result = search(vault, ["kw"])
    assert [match.path for match in result.matches] == ["atlas/ok.md"]
    assert result.warnings == [
        Diagnostic("atlas/broken.md", BROKEN_SYMLINK),
        Diagnostic("atlas/escape.md", SYMLINK_ESCAPES),
    ]
    assert not result.incomplete


# --- rule 3: reading --------------------------------------------------------------------


def test_invalid_utf8_is_replaced_not_fatal(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/latin1.md": b"caf\xe9 mastra\n"})
    assert paths(vault, "caf\ufffd") == ["atlas/latin1.md"]
    assert paths(vault, "mastra") == ["atlas/latin1.md"]


def test_bom_and_crlf_frontmatter_are_read(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/win.md": b"\xef\xbb\xbf---\r\ntitle: Windows Page\r\n---\r\nbody\r\n"})
    assert search(vault, ["windows"]).matches[0].title == "Windows Page"


# --- rule 4: frontmatter ----------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "---\ntitle: [unclosed\n---\nkw\n",  # invalid YAML
        "---\n- a list\n---\nkw\n",  # not a mapping
        "---\ntitle: Never Closed\nkw\n",  # no closing line
        "--- x\ntitle: Not Frontmatter\n---\nkw\n",  # first line is not a fence
        "\n---\ntitle: Late\n---\nkw\n",  # not on the first line
        "---\ntitle: Closing With Text\n--- x\nkw\n",  # closing line not a fence
    ],
)
def test_unusable_frontmatter_still_searches_the_page_under_its_stem(make_vault: MakeVault, content: str) -> None:
    vault = make_vault({"atlas/odd-page.md": content})
    assert [(m.path, m.title) for m in search(vault, ["kw"]).matches] == [("atlas/odd-page.md", "odd-page")]


@pytest.mark.parametrize(
    "content",
    [
        "---\ntitle: Kept Title\n--- \nkw\n",  # Jekyll's `---\s*$`: a space after the fence
        "--- \ntitle: Kept Title\n---\t\nkw\n",
        "---\r\ntitle: Kept Title\r\n...  \r\nkw\r\n",
    ],
)
def test_fences_with_trailing_spaces_or_tabs_keep_the_title(make_vault: MakeVault, content: str) -> None:
    vault = make_vault({"atlas/odd-page.md": content})
    assert [(m.path, m.title) for m in search(vault, ["kw"]).matches] == [("atlas/odd-page.md", "Kept Title")]


def test_frontmatter_is_searched_as_text(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": page("A", tags="[kestrel]")})
    assert paths(vault, "kestrel") == ["atlas/a.md"]


# --- rule 5: the title ------------------------------------------------------------------


def test_title_whitespace_is_collapsed(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": "---\ntitle: |\n  Two\n  \tLines  \n---\n"})
    assert search(vault, ["two lines"]).matches[0].title == "Two Lines"


@pytest.mark.parametrize("title", ['""', "'   '", "~", "42", "[a, b]", "2026-01-01", "yes"])
def test_non_string_or_blank_title_falls_back_to_stem(make_vault: MakeVault, title: str) -> None:
    vault = make_vault({"atlas/the-stem.md": f"---\ntitle: {title}\n---\n"})
    assert search(vault, ["the-stem"]).matches[0].title == "the-stem"


# --- rule 6: matching -------------------------------------------------------------------


def test_matching_is_unicode_case_insensitive(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/de.md": page("Straße der Dinge"), "atlas/k.md": page("\u212aelvin Scale")})
    assert paths(vault, "STRASSE") == ["atlas/de.md"]
    assert paths(vault, "kelvin") == ["atlas/k.md"]


@pytest.mark.parametrize("keyword", ["DEĞİŞTİRİLEMEZ", "değiştirilemez", "ALTYAPI", "altyapı", "Altyapi", "İ"])
def test_the_four_turkish_is_are_one_letter(make_vault: MakeVault, keyword: str) -> None:
    vault = make_vault(
        {
            "atlas/immutable-infrastructure.md": page("Değiştirilemez Altyapı"),
            "atlas/other.md": page("Other", "no dotted or dotless letter here, but in these words"),
        }
    )
    assert [(m.path, m.title, m.matched) for m in search(vault, [keyword]).matches][:1] == [
        ("atlas/immutable-infrastructure.md", "Değiştirilemez Altyapı", "title")
    ]


def test_a_dotted_capital_i_in_the_text_is_found_by_an_ascii_keyword(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/city.md": page("City", "İSTANBUL, with its dotted capital")})
    assert paths(vault, "istanbul") == ["atlas/city.md"]


def test_a_dotted_capital_i_is_one_character_of_the_mention_depth(make_vault: MakeVault) -> None:
    """The column of a mention counts the folded line's characters: İ folds to one (it
    folded to two), so "İİ kestrel" mentions the keyword before "abc kestrel" does."""
    vault = make_vault({"atlas/a-latin.md": "abc kestrel\n", "atlas/b-turkish.md": "İİ kestrel\n"})
    assert paths(vault, "kestrel") == ["atlas/b-turkish.md", "atlas/a-latin.md"]


def test_nfd_file_name_is_found_by_nfc_keyword(make_vault: MakeVault) -> None:
    nfd_name = "cafe\u0301"
    vault = make_vault({f"atlas/{nfd_name}.md": "no title here"})
    assert paths(vault, "caf\u00e9") == [f"atlas/{nfd_name}.md"]


def test_keywords_are_literal_not_regex_or_glob(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": "abc", "atlas/b.md": "a.c a*c"})
    assert paths(vault, "a.c") == ["atlas/b.md"]
    assert paths(vault, "a*c") == ["atlas/b.md"]
    assert paths(vault, "[ab]c") == []


@pytest.mark.parametrize("keywords", [[], [""], ["ok", "   "], ["\t\n"]])
def test_missing_empty_or_blank_keywords_are_rejected(make_vault: MakeVault, keywords: list[str]) -> None:
    vault = make_vault({"atlas/a.md": "x"})
    with pytest.raises(InvalidQueryError):
        search(vault, keywords)


def test_keyword_may_match_title_stem_and_text_separately(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/alpha-file.md": page("Beta Title", "gamma body")})
    assert paths(vault, "alpha", "beta", "gamma") == ["atlas/alpha-file.md"]


# --- rule 7: I/O --------------------------------------------------------------------------


def test_each_page_is_read_whole_in_one_read(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault({"atlas/mastra.md": page("Slack Bridge", "x" * 100_000)})
    reads: list[int] = []

    def counted_read_to_end(fd: int) -> bytes:
        data = read_to_end(fd)
        reads.append(len(data))
        return data

    monkeypatch.setattr(find_module, "read_to_end", counted_read_to_end)
    assert paths(vault, "mastra", "slack") == ["atlas/mastra.md"]
    assert paths(vault, "mastra", "body-word") == []
    whole = len(page("Slack Bridge", "x" * 100_000).encode())
    # The miss's keyword in no page reads the page once more, whole, for its suggestion.
    assert reads == [whole, whole, whole]


def test_no_file_is_opened_twice(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault({f"atlas/p{n}.md": page(f"P{n}", "mastra " * 5000) for n in range(5)})
    opened: list[str] = []

    def counted_open_page(path: str) -> int:
        opened.append(path)
        return open_page(path)

    monkeypatch.setattr(find_module, "open_page", counted_open_page)
    search(vault, ["mastra", "absent"])
    # The search opens each page once; the miss's suggestion ("absent" is in no page) opens
    # each once more, after the search, in the same order.
    assert len(set(opened[:5])) == 5
    assert opened[5:] == opened[:5]


def test_long_frontmatter_past_the_first_read_is_found(make_vault: MakeVault) -> None:
    filler = "\n".join(f"k{n}: value" for n in range(5000))
    vault = make_vault({"atlas/big.md": f"---\n{filler}\ntitle: Far Down\n---\nbody\n"})
    assert search(vault, ["far down"]).matches[0].title == "Far Down"


# --- rule 8: order --------------------------------------------------------------------------


def test_group_1_title_or_path_holds_every_keyword_before_text_only(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "analyses/b-body.md": page("B", "mastra"),
            "analyses/a-body.md": page("A", "mastra"),
            "hermes/zeta.md": page("Zeta Mastra"),
            "atlas/mastra-stem.md": page("Stem"),
        }
    )
    # Group 2 (text only) ties on how soon the text holds it, then goes by path; group 1
    # sorts by the keys below (a file name is a name: "mastra-stem" ties "zeta mastra" but
    # for key 4, a title before a stem).
    assert paths(vault, "mastra") == [
        "hermes/zeta.md",
        "atlas/mastra-stem.md",
        "analyses/a-body.md",
        "analyses/b-body.md",
    ]


def test_key_2_title_alone_holding_every_keyword_comes_next(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/mastra.md": page("Framework"), "atlas/x.md": page("Mastra Framework Decision Trail")})
    # Both start the words; the other page's title and file name hold them only together
    # (both shorter), yet the one name holding both wins.
    assert paths(vault, "mastra", "framework") == ["atlas/x.md", "atlas/mastra.md"]


def test_key_1_every_keyword_starting_a_word_comes_first(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/setarch.md": "set architecture\n",
            "atlas/impacket-getarch.md": "get arch\n",
            "atlas/npm-restart.md": "restart\n",
            "atlas/tar-split.md": "split archives\n",
            "atlas/tar.md": "the tape archiver\n",
        }
    )
    assert paths(vault, "tar") == [
        "atlas/tar.md",
        "atlas/tar-split.md",
        "atlas/setarch.md",
        "atlas/npm-restart.md",
        "atlas/impacket-getarch.md",
    ]


def test_key_1_counts_in_the_title_when_the_title_holds_the_keyword(make_vault: MakeVault) -> None:
    # "tar" starts a word in the path "atlas/tar.md" but not in the title "Bsdtar", which
    # holds it: the title decides ("atlas" is in the path alone, so no one name holds both
    # keywords). "Tar notes" starts the word in its title.
    vault = make_vault({"atlas/tar.md": page("Bsdtar"), "atlas/notes.md": page("Tar notes")})
    assert paths(vault, "tar", "atlas") == ["atlas/notes.md", "atlas/tar.md"]


def test_key_1_word_start_is_after_any_character_that_is_not_a_letter_or_digit(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/a.md": page("x2shortcode"),  # after a digit: inside a word
            "atlas/b.md": page("x_shortcode"),  # after "_": a word starts
            "atlas/c.md": page("éshortcode"),  # after a letter outside ASCII: inside a word
        }
    )
    # b starts a word; a and c do not, and go by title length (c's is one shorter).
    assert paths(vault, "shortcode") == ["atlas/b.md", "atlas/c.md", "atlas/a.md"]


def test_key_3_shorter_folded_title_first(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "go/strings-containsany.md": page("strings.ContainsAny"),
            "go/strings-contains.md": page("strings.Contains"),
            "go/strings-containsrune.md": page("strings.ContainsRune"),
        }
    )
    assert [m.title for m in search(vault, ["strings.contains"], dirs=["go"]).matches] == [
        "strings.Contains",
        "strings.ContainsAny",
        "strings.ContainsRune",
    ]


def test_key_3_counts_the_folded_title(make_vault: MakeVault) -> None:
    # "ß" folds to "ss": its folded title is as long as "strasse", longer than "strass".
    vault = make_vault({"atlas/a.md": page("Straße"), "atlas/b.md": page("Strass")})
    assert paths(vault, "stras") == ["atlas/b.md", "atlas/a.md"]


def test_key_4_path_breaks_ties(make_vault: MakeVault) -> None:
    vault = make_vault({"hermes/b.md": page("Shortcodes"), "atlas/a.md": page("Shortcodes")})
    assert paths(vault, "shortcodes") == ["atlas/a.md", "hermes/b.md"]


def test_shortcodes_before_highlight_shortcode_and_shortcode_templates(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/templates__shortcode-templates.md": page("Shortcode templates"),
            "atlas/functions__highlight.md": page("Highlight shortcode"),
            "atlas/content-management__shortcodes.md": page("Shortcodes"),
        }
    )
    assert paths(vault, "shortcode") == [
        "atlas/content-management__shortcodes.md",
        "atlas/functions__highlight.md",
        "atlas/templates__shortcode-templates.md",
    ]


def test_content_management_finds_the_section_page_among_flattened_names(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/content-management__shortcodes.md": page("Shortcodes"),
            "atlas/content-management__organization.md": page("Content organization"),
            "atlas/content-management.md": page("Content management"),
            "atlas/content-management__page-bundles.md": page("Page bundles"),
        }
    )
    assert paths(vault, "content", "management")[0] == "atlas/content-management.md"


def test_a_path_pasted_from_finds_output_finds_its_page(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "analyses/mastra-framework-decision-trail.md": page("Mastra Framework Decision Trail"),
            "hermes/mastra-framework-notes.md": page("Notes"),
        }
    )
    assert paths(vault, "mastra-framework-decision-trail.md") == ["analyses/mastra-framework-decision-trail.md"]
    assert paths(vault, "analyses/mastra-framework-decision-trail") == ["analyses/mastra-framework-decision-trail.md"]
    assert paths(vault, "ANALYSES/Mastra") == ["analyses/mastra-framework-decision-trail.md"]


def test_the_path_is_searched_folded_like_everything_else(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/Straße.md": page("Street")})
    assert paths(vault, "atlas/STRASSE.MD") == ["atlas/Straße.md"]


def test_the_readmes_example_order_holds_on_the_fixture_vault() -> None:
    fixture = Path(__file__).resolve().parents[3] / "fixtures" / "vaults" / "aion"
    titles = [match.title for match in search(fixture, ["mastra"]).matches]
    assert titles[:2] == ["Mastra Framework Decision Trail", "Hermes Mastra Changelog Safety Analysis"]


def test_the_limit_keeps_the_best_of_the_order(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a-setarch.md": "x\n", "atlas/z-tar.md": page("tar")})
    assert paths(vault, "tar", limit=1) == ["atlas/z-tar.md"]


# --- rules 10-11: limit and JSON fields -----------------------------------------------------


def test_negative_limit_is_rejected(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": "x"})
    with pytest.raises(InvalidQueryError, match="negative"):
        search(vault, ["x"], limit=-1)


def test_constellation_and_type_fields(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/own.md": page("Own", constellation="hermes", type="runbook"),
            "atlas/dir.md": page("Dir", type="[not, a, string]"),
            "analyses/cross.md": page("Cross"),
            "analyses/owned.md": page("Owned", constellation="metis", type="analysis"),
        }
    )
    records = {m.path: m.to_dict() for m in search(vault, ["o", "n"], limit=0).matches}
    assert records == {
        "atlas/own.md": {"path": "atlas/own.md", "title": "Own", "constellation": "hermes", "type": "runbook"},
        "analyses/owned.md": {
            "path": "analyses/owned.md",
            "title": "Owned",
            "constellation": "metis",
            "type": "analysis",
        },
    } | {k: v for k, v in records.items() if k not in ("atlas/own.md", "analyses/owned.md")}
    assert search(vault, ["dir"]).matches[0].to_dict() == {
        "path": "atlas/dir.md",
        "title": "Dir",
        "constellation": "atlas",
        "type": None,
    }
    assert search(vault, ["cross"]).matches[0].to_dict()["constellation"] is None


# --- per-file failures and per-keyword counts ----------------------------------------------


def test_unreadable_page_warns_and_the_search_goes_on(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault({"atlas/locked.md": "kw", "atlas/open.md": "kw"})

    def open_or_deny(path: str) -> int:
        if path.endswith("locked.md"):
            raise PermissionError(13, "Permission denied")
        return open_page(path)

    monkeypatch.setattr(find_module, "open_page", open_or_deny)
    result = search(vault, ["kw"])
    assert [m.path for m in result.matches] == ["atlas/open.md"]
    assert result.warnings == [Diagnostic("atlas/locked.md", CANNOT_READ, "Permission denied")]
    assert result.incomplete
    assert search(vault, ["absent"]).incomplete


def test_keyword_counts_show_which_keyword_emptied_the_and(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": "mastra slack", "atlas/b.md": "mastra", "atlas/c.md": "other"})
    result = search(vault, ["Mastra", "slack", "xyzzy"])
    assert result.keyword_counts == {"Mastra": 2, "slack": 1, "xyzzy": 0}


def test_broken_symlink_scanned_dir_is_skipped_with_a_warning(make_vault: MakeVault, fs: FakeFilesystem) -> None:
    vault = make_vault({"atlas/a.md": "kw"})
    fs.create_symlink(f"{VAULT}/hades", f"{VAULT}/nowhere")
    result = search(vault, ["kw"])
    expected_warning = Diagnostic("hades", BROKEN_SYMLINK, is_dir=True)
    assert ([m.path for m in result.matches], result.warnings) == (["atlas/a.md"], [expected_warning])


def test_cat_keeps_bytes_only_while_a_single_match_is_possible(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/one.md": "unique kw", "atlas/a.md": "kw", "atlas/b.md": "kw", "atlas/c.md": "kw"})
    single = search(vault, ["unique"], keep_content=True, limit=0)
    assert [m.content for m in single.matches] == [b"unique kw"]
    several = search(vault, ["kw"], keep_content=True, limit=0)
    assert several.total == 4
    assert [m.content for m in several.matches] == [None] * 4


def test_vault_config_file_that_is_not_a_regular_file_is_a_vault_error(tmp_path: Path) -> None:
    (tmp_path / "atlas").mkdir()
    os.mkfifo(tmp_path / ".mnemosyne.toml")  # opened non-blocking: must not hang
    with pytest.raises(VaultError, match="is not a regular file"):
        search(str(tmp_path), ["x"])


@pytest.mark.parametrize(
    "config",
    ["dirs = [" + "[" * 3000 + "]" * 3000 + "]\n", "dirs = ['atlas']\n" + "# pad\n" * 20_000],
)
def test_hostile_vault_config_is_a_vault_error(tmp_path: Path, config: str) -> None:
    (tmp_path / "atlas").mkdir()
    (tmp_path / ".mnemosyne.toml").write_text(config)
    with pytest.raises(VaultError):
        search(str(tmp_path), ["x"])


# --- group 2: the pages that only mention the keywords ------------------------------------


def test_group_2_the_text_holding_every_keyword_soonest_comes_first(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/a-roadmap.md": "Goals.\n\nMuch later the borrow checker gets non-lexical scopes.\n",
            "atlas/b-nll.md": "Non-lexical lifetimes: a borrow ends at its last use.\n",
            "atlas/c-mir.md": "A graph, then borrow checking that is non-lexical.\n",
        }
    )
    assert paths(vault, "non-lexical") == ["atlas/b-nll.md", "atlas/c-mir.md", "atlas/a-roadmap.md"]
    # Every keyword counts: the depth is where the last of them is first held.
    assert paths(vault, "non-lexical", "borrow") == ["atlas/b-nll.md", "atlas/c-mir.md", "atlas/a-roadmap.md"]
    assert paths(vault, "borrow", "goals") == ["atlas/a-roadmap.md"]


def test_group_2_depth_counts_the_frontmatter_and_ties_go_by_path(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/z-tagged.md": page("Z", "body", tags="[kestrel]"),
            "atlas/y-body.md": page("Y", "x" * 40 + " kestrel"),
            "atlas/b-same.md": page("Q", "a few words, then kestrel"),
            "atlas/a-same.md": page("Q", "a few words, then kestrel"),
        }
    )
    assert paths(vault, "kestrel") == ["atlas/z-tagged.md", "atlas/a-same.md", "atlas/b-same.md", "atlas/y-body.md"]


def test_group_2_a_keyword_only_the_path_holds_adds_no_depth(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/kestrel-b.md": page("B", "y" * 30 + " cache"),
            "atlas/a.md": page("A", "y" * 10 + " cache " + "z" * 40 + " kestrel"),
        }
    )
    # kestrel-b holds "kestrel" in its path only: its depth is where "cache" ends.
    assert paths(vault, "kestrel", "cache") == ["atlas/kestrel-b.md", "atlas/a.md"]


def test_group_2_depth_is_counted_in_characters_of_the_folded_text(make_vault: MakeVault) -> None:
    # "ß" is one character in the page but two once folded ("ss"): the depth counts the
    # folded text, as the index does, whatever the bytes.
    vault = make_vault({"atlas/a.md": "ßßßß kestrel\n", "atlas/b.md": "ééééé kestrel\n"})
    assert paths(vault, "kestrel") == ["atlas/b.md", "atlas/a.md"]


# --- aliases (Obsidian's other names) --------------------------------------------------------


def test_an_alias_holding_every_keyword_counts_as_the_title(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/command-line.md": page("Command-line interface", aliases="[CLI, tool command]"),
            "atlas/cli-notes.md": page("Notes"),
            "atlas/deploy.md": page("Deploy", "the cli prints it"),
        }
    )
    result = search(vault, ["cli"])
    assert [(match.path, match.title, match.matched) for match in result.matches] == [
        ("atlas/command-line.md", "Command-line interface", "title"),
        ("atlas/cli-notes.md", "Notes", "title"),
        ("atlas/deploy.md", "Deploy", "text"),
    ]
    assert result.named == 2


def test_the_best_name_places_the_page_word_starts_then_length(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/a.md": page("Setarch", aliases="[tar archive tool]"),
            "atlas/b.md": page("Tar archives and more"),
            "atlas/c.md": page("Setarch"),
        }
    )
    # a: its title holds "tar" inside a word, its alias at a word start and shorter than b's
    # title; c has only the title.
    assert paths(vault, "tar") == ["atlas/a.md", "atlas/b.md", "atlas/c.md"]


def test_a_title_outranks_another_pages_alias_of_equal_weight(make_vault: MakeVault) -> None:
    # Translations carry the English name as an alias; "ar" and "bn" sort before "en" by path.
    vault = make_vault(
        {
            "atlas/ar.md": page("تضمين الملفات", aliases="[Embed files]"),
            "atlas/bn.md": page("ফাইল এম্বেড করা", aliases="[Embed files]"),
            "atlas/en.md": page("Embed files"),
            "atlas/embed.md": page("Embed", aliases="[Embed files everywhere]"),
        }
    )
    assert paths(vault, "embed", "files") == ["atlas/en.md", "atlas/ar.md", "atlas/bn.md", "atlas/embed.md"]
    # The weights before it still come first: a shorter name beats a longer title.
    assert paths(vault, "embed") == ["atlas/embed.md", "atlas/en.md", "atlas/ar.md", "atlas/bn.md"]


def test_one_alias_string_and_items_that_are_not_strings(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/a.md": page("Editor setup", aliases="Tooling for editors"),
            "atlas/b.md": page("B", aliases="[3, null, '  ', editors  guide]"),
            "atlas/c.md": page("C", "editors"),
        }
    )
    assert [(match.path, match.matched) for match in search(vault, ["editors"]).matches] == [
        ("atlas/b.md", "title"),
        ("atlas/a.md", "title"),
        ("atlas/c.md", "text"),
    ]


def test_an_alias_does_not_combine_with_the_path(make_vault: MakeVault) -> None:
    # "kestrel" is in the path, "cache" only in an alias: no one name holds both, and the
    # title does not hold "cache": the page only mentions them.
    vault = make_vault({"atlas/kestrel.md": page("Bird", aliases="[cache]")})
    assert [match.matched for match in search(vault, ["kestrel", "cache"]).matches] == ["text"]


def test_aliases_only_yaml_reads_still_name_the_page(make_vault: MakeVault) -> None:
    # An escape: the raw text lacks "mastra", so only the alias holds it.
    vault = make_vault({"atlas/x.md": page("X", aliases='["m\\x61str\\x61"]')})
    result = search(vault, ["mastra"])
    assert [(match.path, match.matched) for match in result.matches] == [("atlas/x.md", "title")]
    assert search(vault, ["mastra", "absent"]).keyword_counts == {"mastra": 1, "absent": 0}


def test_word_starts_in_the_path_outrank_a_title_holding_the_keywords_inside_words(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/fr__charger.md": page("Charger dynamiquement des images"),
            "atlas/en__images.md": page("Images"),
            "atlas/en__fonts.md": page("Fonts", "images"),
        }
    )
    # "en" starts a word in the English page's file name; in the French title it sits
    # inside "dynamiquement". Word starts (key 1) come first.
    result = search(vault, ["en", "images"])
    assert [(match.path, match.matched) for match in result.matches] == [
        ("atlas/en__images.md", "title"),
        ("atlas/fr__charger.md", "title"),
        ("atlas/en__fonts.md", "text"),
    ]


def test_group_2_an_earlier_line_beats_an_earlier_column(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": "x\nkestrel\n", "atlas/b.md": "y" * 200 + " kestrel\n"})
    assert paths(vault, "kestrel") == ["atlas/b.md", "atlas/a.md"]
