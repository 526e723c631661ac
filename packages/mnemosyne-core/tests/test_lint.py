"""lint: one test per reason code on pyfakefs vaults, a clean vault, and the
rules the findings share (same scan as find, ordering, hidden dirs, the memory dir)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from vault_pages import VAULT, MakeVault, page

from mnemosyne_contract import load_schema
from mnemosyne_core import VaultError, frontmatter, page_recall, search
from mnemosyne_core import lint as lint_module
from mnemosyne_core.diagnostics import Diagnostic
from mnemosyne_core.lint import REASON_CODES, lint_report
from mnemosyne_core.page_lint import Finding
from mnemosyne_core.vault import Scan

UPDATED = "2026-03-01"
#: A dir that cannot be listed (no read bit). Not 0o000: pyfakefs then fails even to stat it.
WRITE_ONLY_DIR = 0o300


def good(title: str, **fields: str) -> str:
    """A page lint has nothing to say about."""
    return page(title, updated=UPDATED, **fields)


def findings(vault: str, dirs: list[str] | None = None) -> list[tuple[str, str]]:
    return [(finding.path, finding.code) for finding in lint_report(vault, dirs=dirs).findings]


def messages(vault: str) -> dict[tuple[str, str], str]:
    return {(finding.path, finding.code): finding.message for finding in lint_report(vault).findings}


@pytest.fixture(autouse=True)
def _no_ambient_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AION_VAULT", raising=False)
    monkeypatch.delenv("MNEMOSYNE_MEMORY_DIR", raising=False)


# --- a clean vault ----------------------------------------------------------------------


def test_clean_vault_has_no_findings(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/a.md": good("Alpha", constellation="atlas"),
            "hermes/b.md": good("Beta"),
            "analyses/c.md": page("Gamma", updated="'2026-02-28'"),
            "analyses/d.md": page("Delta", updated="2026-02-28T10:30:00"),
            "atlas/notes.txt": "not markdown, not lint's business",
            ".mnemosyne.toml": "",
            ".git/HEAD.md": "hidden dirs are tool state",
        }
    )
    assert findings(vault) == []


# --- pages find searches, but degraded ------------------------------------------------------


def test_no_frontmatter(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/plain.md": "# Plain\n\ntext\n", "atlas/ok.md": good("Ok")})
    assert findings(vault) == [("atlas/plain.md", "no-frontmatter")]


def test_unclosed_frontmatter(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/open.md": "---\ntitle: Open\nupdated: 2026-03-01\n\nbody\n"})
    assert findings(vault) == [("atlas/open.md", "unclosed-frontmatter")]


def test_invalid_yaml(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/bad.md": "---\ntitle: [unclosed\nupdated: 2026-03-01\n---\nbody\n"})
    assert findings(vault) == [("atlas/bad.md", "invalid-frontmatter")]


def test_frontmatter_that_is_not_a_mapping(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/list.md": "---\n- one\n- two\n---\nbody\n", "atlas/empty.md": "---\n---\nbody\n"})
    assert findings(vault) == [
        ("atlas/empty.md", "frontmatter-not-mapping"),
        ("atlas/list.md", "frontmatter-not-mapping"),
    ]


def test_unusable_frontmatter_is_one_finding_not_a_cascade(make_vault: MakeVault) -> None:
    # No title and no updated follow from no frontmatter; repeating them adds nothing.
    vault = make_vault({"atlas/plain.md": "no frontmatter at all\n"})
    assert [code for _, code in findings(vault)] == ["no-frontmatter"]


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        (f"updated: {UPDATED}", "no title; find shows the file name stem"),
        (f"title:\nupdated: {UPDATED}", "no title; find shows the file name stem"),
        (f"title: '  '\nupdated: {UPDATED}", "the title is blank; find shows the file name stem"),
        (f"title: [a, b]\nupdated: {UPDATED}", "the title is a list, not a string; find shows the file name stem"),
        (f"title: 2024\nupdated: {UPDATED}", "the title is a number, not a string; find shows the file name stem"),
        (f"title: {{a: 1}}\nupdated: {UPDATED}", "the title is a mapping, not a string; find shows the file name stem"),
    ],
)
def test_missing_title(make_vault: MakeVault, frontmatter: str, message: str) -> None:
    vault = make_vault({"atlas/untitled.md": f"---\n{frontmatter}\n---\nbody\n"})
    assert findings(vault) == [("atlas/untitled.md", "missing-title")]
    assert messages(vault) == {("atlas/untitled.md", "missing-title"): message}
    # The finding is true: find really shows the stem.
    assert [match.title for match in search(vault, ["untitled"]).matches] == ["untitled"]


@pytest.mark.parametrize("frontmatter", ["title: T", "title: T\nupdated:", "title: T\nupdated: null"])
def test_missing_updated(make_vault: MakeVault, frontmatter: str) -> None:
    vault = make_vault({"atlas/t.md": f"---\n{frontmatter}\n---\n"})
    assert findings(vault) == [("atlas/t.md", "missing-updated")]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("March 2026", "'March 2026'"),
        ("'2026-13-45'", "'2026-13-45'"),
        ("'2026-3-1'", "'2026-3-1'"),
        ("'20260301'", "'20260301'"),
        ("20260301", "20260301"),
        ("[2026-03-01]", "[datetime.date(2026, 3, 1)]"),
    ],
)
def test_invalid_updated(make_vault: MakeVault, value: str, shown: str) -> None:
    vault = make_vault({"atlas/t.md": page("T", updated=value)})
    assert findings(vault) == [("atlas/t.md", "invalid-updated")]
    assert messages(vault)[("atlas/t.md", "invalid-updated")] == (
        f"updated {shown} is not a YYYY-MM-DD date; recall ranks the page last"
    )


@pytest.mark.parametrize(
    "value",
    ["2026-03-01", "'2026-03-01 10:30'", "'2026-02-30'", "' 2026-03-01 '", "'2026-03-01T25:00'", "2026", "'soon'"],
)
def test_lint_flags_updated_exactly_when_recall_ranks_it_last(make_vault: MakeVault, value: str) -> None:
    vault = make_vault({"atlas/t.md": page("T", updated=value)})
    metadata = frontmatter.loads_bytes(page("T", updated=value).encode()).metadata
    assert metadata is not None
    recall_ranks_last = page_recall.updated_date(metadata["updated"]) is None
    assert findings(vault) == ([("atlas/t.md", "invalid-updated")] if recall_ranks_last else [])


@pytest.mark.parametrize(
    "value", ["2026-03-01", "'2026-03-01'", "2026-03-01T10:30:00", "'2026-03-01 10:30'", "1653409628830"]
)
def test_valid_updated_is_not_a_finding(make_vault: MakeVault, value: str) -> None:
    vault = make_vault({"atlas/t.md": page("T", updated=value)})
    assert findings(vault) == []


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        # Hugo's and Jekyll's dates stand in for a missing updated, as recall takes them.
        ("title: T\nlastmod: 2026-03-01", {}),
        ("title: T\ndate: 2026-03-01 10:00:00 +0100", {}),
        ("title: T\nupdated:\ndate: '2026-03-01'", {}),
        # The first key set decides what is flagged; recall's fallback is named.
        (
            "title: T\nupdated: soon\ndate: 2026-03-01",
            {"invalid-updated": "updated 'soon' is not a YYYY-MM-DD date; recall ranks the page by 2026-03-01"},
        ),
        ("title: T\ndate: 2024", {"invalid-updated": "date 2024 is not a YYYY-MM-DD date; recall ranks the page last"}),
        (
            "title: T\npublished: 2026-03-01",
            {"missing-updated": "no updated, lastmod or date; recall ranks the page last"},
        ),
    ],
)
def test_dates_other_tools_write(make_vault: MakeVault, frontmatter: str, expected: dict[str, str]) -> None:
    vault = make_vault({"atlas/t.md": f"---\n{frontmatter}\n---\n"})
    assert messages(vault) == {("atlas/t.md", code): message for code, message in expected.items()}


def test_not_utf8(make_vault: MakeVault) -> None:
    data = good("Latin").encode() + b"caf\xe9\n"
    vault = make_vault({"atlas/latin1.md": data})
    assert findings(vault) == [("atlas/latin1.md", "not-utf8")]
    offset = data.index(b"\xe9")
    assert messages(vault)[("atlas/latin1.md", "not-utf8")] == (
        f"byte {offset} is not valid UTF-8; find reads such bytes as U+FFFD"
    )


@pytest.mark.parametrize(
    ("data", "nul"),
    [
        ("Sixteen without a mark\n".encode("utf-16-le"), 1),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 8),
        (b"\x00\x00\xfe", 0),
    ],
)
def test_not_text(make_vault: MakeVault, data: bytes, nul: int) -> None:
    vault = make_vault({"atlas/binary.md": data})
    assert messages(vault)[("atlas/binary.md", "not-text")] == (
        f"byte {nul} is NUL: not text (a binary file, or UTF-16 or UTF-32 without a byte order mark);"
        " find cannot match its words"
    )


def test_wide_pages_with_a_mark_are_read_as_their_text(make_vault: MakeVault) -> None:
    text = f"---\ntitle: Wide\nupdated: {UPDATED}\n---\ncafé\n"
    vault = make_vault({f"atlas/{codec}.md": text.encode(codec) for codec in ("utf-16", "utf-32")})
    # Neither not-text nor not-utf8, and both have their title: one duplicate-title each.
    assert findings(vault) == [("atlas/utf-16.md", "duplicate-title"), ("atlas/utf-32.md", "duplicate-title")]


def test_not_utf8_is_reported_beside_a_frontmatter_finding(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/x.md": b"\xff# no frontmatter\n"})
    assert findings(vault) == [("atlas/x.md", "no-frontmatter"), ("atlas/x.md", "not-utf8")]


def test_bom_and_crlf_are_not_findings(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/bom.md": b"\xef\xbb\xbf" + good("Bom").replace("\n", "\r\n").encode()})
    assert findings(vault) == []


def test_duplicate_title(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/one.md": good("Kestrel Design"),
            "hermes/two.md": good("'kestrel   DESIGN'"),
            "metis/three.md": good("KESTREL DESIGN"),
            "metis/other.md": good("Kestrel Design Notes"),
            "metis/kestrel design.md": page(None, updated=UPDATED),  # a stem is not a title
        }
    )
    assert findings(vault) == [
        ("atlas/one.md", "duplicate-title"),
        ("hermes/two.md", "duplicate-title"),
        ("metis/kestrel design.md", "missing-title"),
        ("metis/three.md", "duplicate-title"),
    ]
    assert messages(vault)[("hermes/two.md", "duplicate-title")] == (
        "title 'kestrel DESIGN' is also the title of atlas/one.md, metis/three.md"
    )


def test_heading_titles_are_titles_to_lint_outside_the_default_layout(make_vault: MakeVault) -> None:
    """Where find titles a page by its opening heading (a configured layout here), lint
    names the heading instead of the stem, and two pages so titled alike are duplicates."""
    vault = make_vault(
        {
            ".mnemosyne.toml": 'dirs = ["notes"]\n',
            "notes/one.md": "# Kestrel Design\n\nbody\n",
            "notes/two.md": f"---\nupdated: {UPDATED}\n---\n# KESTREL   design\n",
            "notes/three.md": good("Kestrel Design"),
            "notes/plain.md": "no heading\n",
        }
    )
    assert messages(vault) == {
        ("notes/one.md", "duplicate-title"): "title 'Kestrel Design' is also the title of notes/three.md, notes/two.md",
        ("notes/one.md", "no-frontmatter"): (
            "no frontmatter (first line is not ---); find shows its opening heading 'Kestrel Design'"
        ),
        ("notes/plain.md", "no-frontmatter"): "no frontmatter (first line is not ---); find shows the file name stem",
        ("notes/three.md", "duplicate-title"): "title 'Kestrel Design' is also the title of notes/one.md, notes/two.md",
        ("notes/two.md", "duplicate-title"): "title 'KESTREL design' is also the title of notes/one.md, notes/three.md",
        ("notes/two.md", "missing-title"): "no title; find shows its opening heading 'KESTREL design'",
    }


def test_the_default_layout_keeps_file_names_for_lint_too(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/one.md": "# Kestrel Design\n", "atlas/two.md": "# Kestrel Design\n"})
    assert messages(vault)[("atlas/one.md", "no-frontmatter")] == (
        "no frontmatter (first line is not ---); find shows the file name stem"
    )
    assert ("atlas/one.md", "duplicate-title") not in messages(vault)


def test_duplicate_title_folds_unicode(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": good("Straße"), "atlas/b.md": good("STRASSE")})
    assert findings(vault) == [("atlas/a.md", "duplicate-title"), ("atlas/b.md", "duplicate-title")]


TREE = 'dirs = ["."]\ndepth = "tree"\n'
WHERE = "(the same bytes, or the same text after the frontmatter)"


def test_copies_are_equal_pages_at_one_path_under_sibling_dirs(make_vault: MakeVault) -> None:
    # it/ repeats en/ page for page; the same bytes under dirs that are no siblings (docs/)
    # or under another name are no copy.
    files: dict[str, str | bytes] = {".mnemosyne.toml": TREE}
    for name in ("a", "b", "c"):
        files[f"site/en/{name}.md"] = good(name.upper()) + f"Text of {name}.\n"
        files[f"site/it/{name}.md"] = good(name.upper()) + f"Text of {name}.\n"
    files["docs/a.md"] = files["site/en/a.md"]
    files["site/en/other.md"] = files["site/en/b.md"]
    vault = make_vault(files)
    assert messages(vault) == {
        ("site/it", "duplicate-title"): (
            f"all 3 pages here are copies of the pages at the same path in site/en/ {WHERE}; find lists every "
            'copy: to leave them out, set exclude = ["site/it/"] in .mnemosyne.toml'
        ),
        ("docs/a.md", "duplicate-title"): "title 'A' is also the title of site/en/a.md, site/it/a.md",
        ("site/en/a.md", "duplicate-title"): (
            "title 'A' is also the title of docs/a.md; the same in its versions in site/it/"
        ),
        ("site/en/b.md", "duplicate-title"): (
            "title 'B' is also the title of site/en/other.md; the same in its versions in site/it/"
        ),
        ("site/en/other.md", "duplicate-title"): "title 'B' is also the title of site/en/b.md, site/it/b.md",
    }


def test_a_dir_only_partly_copies_is_named_with_what_an_exclude_would_drop(make_vault: MakeVault) -> None:
    # 7.4/ keeps two pages of 7.6/ as they are (one with other frontmatter: the text after
    # it decides) and changed one: the highest release is the original, no exclude is offered.
    files: dict[str, str | bytes] = {".mnemosyne.toml": TREE}
    for name in ("install", "usage", "api"):
        files[f"reference/7.6/{name}.md"] = good(name.title()) + f"About {name}.\n"
    files["reference/7.4/install.md"] = files["reference/7.6/install.md"]
    files["reference/7.4/usage.md"] = good("Usage (7.4)") + "About usage.\n"
    files["reference/7.4/api.md"] = good("Api") + "About the old api.\n"
    vault = make_vault(files)
    assert messages(vault) == {
        ("reference/7.4", "duplicate-title"): (
            f"2 of the 3 pages here are copies of the pages at the same path in reference/7.6/ {WHERE}: "
            "install.md, usage.md; an exclude of reference/7.4/ would also drop the 1 that is no copy, so none is "
            "suggested: to leave out the copies alone, exclude them by name"
        )
    }


def test_the_preferred_dir_is_the_original_and_a_bare_name_is_anchored(make_vault: MakeVault) -> None:
    files: dict[str, str | bytes] = {
        ".mnemosyne.toml": TREE + 'exclude = ["drafts/"]\n[order]\nprefer = ["v1/"]\n',
        "v1/a.md": good("A") + "x\n",
        "v2/a.md": good("A") + "x\n",
        "notes/v2/readme.md": good("Readme"),
    }
    vault = make_vault(files)
    assert messages(vault) == {
        ("v2", "duplicate-title"): (
            f"the one page here is a copy of the page at the same path in v1/ {WHERE}; find lists every copy: to "
            'leave them out, set exclude = ["drafts/", "/v2/"] in .mnemosyne.toml'
        )
    }


def test_a_finding_repeated_across_versions_is_one_line_naming_the_dirs(make_vault: MakeVault) -> None:
    # The same title in every translation is no duplicate, and one missing date is said once,
    # at the preferred version.
    files: dict[str, str | bytes] = {".mnemosyne.toml": TREE + '[order]\nprefer = ["content/it/"]\n'}
    for language in ("en", "fr", "it"):
        files[f"content/{language}/guide.md"] = page("Guide") + f"In {language}.\n"
        files[f"content/{language}/faq.md"] = good("FAQ") + f"Asked in {language}.\n"
    vault = make_vault(files)
    assert [(finding.path, finding.code, finding.message) for finding in lint_report(vault).findings] == [
        (
            "content/it/guide.md",
            "missing-updated",
            "no updated, lastmod or date; recall ranks the page last; the same in its versions in content/en/, "
            "content/fr/",
        )
    ]


def test_unknown_constellation(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/zeus.md": good("Zeus", constellation="zeus"),
            "atlas/upper.md": good("Upper", constellation="Atlas"),
            "atlas/list.md": good("List", constellation="[atlas]"),
            "atlas/known.md": good("Known", constellation="hermes"),
            "atlas/none.md": good("None"),
        }
    )
    assert findings(vault) == [
        ("atlas/list.md", "unknown-constellation"),
        ("atlas/upper.md", "unknown-constellation"),
        ("atlas/zeus.md", "unknown-constellation"),
    ]
    assert messages(vault)[("atlas/zeus.md", "unknown-constellation")] == (
        "constellation 'zeus' is not one of atlas, hades, mnemosyne, proteus, metis, apollo, hermes, hephaistos, athena"
    )


def test_unreadable_page(fs: FakeFilesystem, as_non_root: None) -> None:
    fs.create_file(f"{VAULT}/atlas/ok.md", contents=good("Ok"))
    fs.create_file(f"{VAULT}/atlas/locked.md", contents=good("Locked"), st_mode=0o100000)
    assert findings(VAULT) == [("atlas/locked.md", "unreadable")]
    assert messages(VAULT)[("atlas/locked.md", "unreadable")] == (
        "cannot read the page (Permission denied); find skips it"
    )


def test_unlistable_scanned_dir_is_reported_once(fs: FakeFilesystem, as_non_root: None) -> None:
    fs.create_file(f"{VAULT}/atlas/ok.md", contents=good("Ok"))
    fs.create_file(f"{VAULT}/hermes/hidden-from-us.md", contents=good("H"))
    fs.chmod(f"{VAULT}/hermes", WRITE_ONLY_DIR)
    assert findings(VAULT) == [("hermes", "unreadable")]
    assert messages(VAULT)[("hermes", "unreadable")] == (
        "cannot list this scanned dir (Permission denied); its pages were not searched"
    )


def test_unlistable_unscanned_dir(fs: FakeFilesystem, as_non_root: None) -> None:
    fs.create_file(f"{VAULT}/atlas/ok.md", contents=good("Ok"))
    fs.create_file(f"{VAULT}/notes/deep/x.md", contents=good("X"))
    fs.chmod(f"{VAULT}/notes/deep", WRITE_ONLY_DIR)
    assert findings(VAULT) == [("notes/deep", "unreadable")]


# --- files find never searches ------------------------------------------------------------


def test_nested_file(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/top.md": good("Top"),
            "atlas/sub/child.md": good("Child"),
            "atlas/sub/deeper/grandchild.md": good("Grandchild"),
            "atlas/x.md/inside.md": good("Inside a dir named x.md"),
            "atlas/sub/readme.txt": "not markdown",
        }
    )
    assert findings(vault) == [
        ("atlas/sub/child.md", "nested-file"),
        ("atlas/sub/deeper/grandchild.md", "nested-file"),
        ("atlas/x.md/inside.md", "nested-file"),
    ]
    assert messages(vault)[("atlas/sub/child.md", "nested-file")] == (
        'in a sub-dir; find reads only files directly in atlas/: set depth = "tree" in .mnemosyne.toml '
        "to search sub-dirs too"
    )
    # The point of the finding: find really cannot see it.
    assert search(vault, ["child"]).total == 0


def test_unscanned_dir(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": good("A"), "notes/idea.md": good("Idea"), "notes/deep/more.md": good("More")})
    assert findings(vault) == [("notes/deep/more.md", "unscanned-dir"), ("notes/idea.md", "unscanned-dir")]
    assert messages(vault)[("notes/idea.md", "unscanned-dir")] == (
        "in notes/, which is not scanned; to scan it, set dirs = "
        '["atlas", "hades", "mnemosyne", "proteus", "metis", "apollo", "hermes", "hephaistos", "athena", '
        '"analyses", "notes"] in .mnemosyne.toml, or move it'
    )


def dirs_line(message: str) -> str:
    return message.partition("set ")[2].partition(" in .mnemosyne.toml")[0]


@pytest.mark.parametrize("config", ["", 'dirs = ["wiki", "atlas"]\nmemory_dir = "memory"\n'])
def test_unscanned_dir_hint_is_a_config_line_that_keeps_the_scanned_dirs(make_vault: MakeVault, config: str) -> None:
    """Following the hint scans the dir and every dir scanned before: lint then has
    nothing left to say."""
    import tomllib

    from mnemosyne_core.config import load_vault_config
    from mnemosyne_core.vault import scan

    vault = make_vault(
        {".mnemosyne.toml": config, "atlas/a.md": good("A"), "wiki/w.md": good("W"), 'no"tes/idea.md': good("Idea")}
    )
    before = scan(vault).dirs
    message = messages(vault)[('no"tes/idea.md', "unscanned-dir")]
    line = dirs_line(message)
    assert tomllib.loads(line)["dirs"] == [*before, 'no"tes']
    Path(vault, ".mnemosyne.toml").write_text(f"{line}\n" + config.partition("\n")[2] if config else f"{line}\n")
    assert load_vault_config(vault).dirs == (*before, 'no"tes')
    assert [code for _, code in findings(vault)] == (["unscanned-dir"] if not config else [])


def test_unscanned_dir_hint_when_only_dir_flag_left_it_out(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": good("A"), "notes/idea.md": good("Idea")})
    assert {f.path: f.message for f in lint_report(vault, dirs=["notes"]).findings} == {
        "atlas/a.md": "in atlas/, which this run's --dir leaves out; add --dir atlas"
    }


def test_unscanned_dir_hint_escapes_what_toml_must() -> None:
    import tomllib

    name = 'q"b\\t\tdel\x7f'
    line = dirs_line(lint_module.unscanned_dir_message(name, ("atlas",)))
    assert tomllib.loads(line)["dirs"] == ["atlas", name]


def test_dir_override_changes_what_is_scanned(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": good("A"), "notes/idea.md": good("Idea")})
    assert findings(vault, dirs=["notes"]) == [("atlas/a.md", "unscanned-dir")]


def test_vault_config_dirs_are_the_scanned_dirs(make_vault: MakeVault) -> None:
    vault = make_vault({".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": good("A"), "atlas/b.md": good("B")})
    assert findings(vault) == [("atlas/b.md", "unscanned-dir")]


def test_vault_root_file(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": good("A"), "README.md": "# Readme\n", "notes.txt": "ignored"})
    assert findings(vault) == [("README.md", "vault-root-file")]


def test_suffix_case(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/UPPER.MD": good("Upper"), "atlas/mixed.Md": good("Mixed"), "atlas/a.md": good("A")})
    assert findings(vault) == [("atlas/UPPER.MD", "suffix-case"), ("atlas/mixed.Md", "suffix-case")]
    assert messages(vault)[("atlas/UPPER.MD", "suffix-case")] == "ends in '.MD'; find reads only names ending in '.md'"
    assert search(vault, ["upper"]).total == 0


def test_unsearched_suffix(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "atlas/a.md": good("A"),
            "atlas/guide.mdx": good("Guide"),
            "atlas/old.markdown": good("Old"),
            "atlas/sub/deep.mdx": good("Deep"),
            "notes/n.mdx": good("N"),
        }
    )
    assert findings(vault) == [
        ("atlas/guide.mdx", "unsearched-suffix"),
        ("atlas/old.markdown", "unsearched-suffix"),
        ("atlas/sub/deep.mdx", "nested-file"),
        ("atlas/sub/deep.mdx", "unsearched-suffix"),
        ("notes/n.mdx", "unscanned-dir"),
        ("notes/n.mdx", "unsearched-suffix"),
    ]
    assert messages(vault)[("atlas/guide.mdx", "unsearched-suffix")] == (
        "ends in '.mdx', which the layout does not search; "
        'set suffixes = [".md", ".mdx"] in .mnemosyne.toml to search it'
    )
    assert search(vault, ["guide"]).total == 0


def test_unsearched_suffix_follows_the_configured_suffixes(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            ".mnemosyne.toml": 'dirs = ["docs"]\ndepth = "tree"\nsuffixes = [".mdx"]\n',
            "docs/a.mdx": good("A"),
            "docs/sub/b.md": good("B"),
            "docs/sub/c.MDX": good("C"),
        }
    )
    assert findings(vault) == [("docs/sub/b.md", "unsearched-suffix"), ("docs/sub/c.MDX", "suffix-case")]
    assert (
        messages(vault)[("docs/sub/c.MDX", "suffix-case")] == "ends in '.MDX'; find reads only names ending in '.mdx'"
    )


@pytest.mark.parametrize("dirs", ['["docs", "docs/sub"]', '["docs/sub", "docs"]', '[".", "docs"]'])
def test_a_searched_dir_inside_another_of_a_tree_is_walked_with_it(make_vault: MakeVault, dirs: str) -> None:
    """scan lists such a dir as part of the one above it; lint walks it there, not passing
    it over as a searched dir walked on its own."""
    vault = make_vault(
        {".mnemosyne.toml": f'dirs = {dirs}\ndepth = "tree"\n', "docs/a.md": good("A"), "docs/sub/C.MD": good("C")}
    )
    assert findings(vault) == [("docs/sub/C.MD", "suffix-case")]


def test_hidden_file(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/.draft.md": good("Draft"), "atlas/a.md": good("A")})
    assert findings(vault) == [("atlas/.draft.md", "hidden-file")]
    assert search(vault, ["draft"]).total == 0


def test_every_reason_a_file_has_is_reported_in_code_order(make_vault: MakeVault) -> None:
    vault = make_vault({"atlas/a.md": good("A"), ".Secret.MD": "x", "notes/sub/.x.mD": "x"})
    assert findings(vault) == [
        (".Secret.MD", "hidden-file"),
        (".Secret.MD", "suffix-case"),
        (".Secret.MD", "vault-root-file"),
        ("notes/sub/.x.mD", "hidden-file"),
        ("notes/sub/.x.mD", "suffix-case"),
        ("notes/sub/.x.mD", "unscanned-dir"),
    ]


def test_hidden_dirs_and_the_memory_dir_are_not_walked(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            ".mnemosyne.toml": 'memory_dir = "memory"\n',
            "atlas/a.md": good("A"),
            ".git/x.md": "x",
            ".obsidian/workspace.md": "x",
            "atlas/.drafts/wip.md": "x",
            "memory/2026-03-01/log.md": "## 10:00\n",
            "memories/log.md": "not the memory dir",
        }
    )
    assert findings(vault) == [("memories/log.md", "unscanned-dir")]


def test_memory_dir_from_the_environment_is_not_walked(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault({"atlas/a.md": good("A"), "logs/2026-03-01/log.md": "## 10:00\n"})
    assert findings(vault) == [("logs/2026-03-01/log.md", "unscanned-dir")]
    monkeypatch.setenv("MNEMOSYNE_MEMORY_DIR", f"{VAULT}/logs")
    assert findings(vault) == []


def test_symlink_that_escapes_the_vault(fs: FakeFilesystem) -> None:
    fs.create_file("/outside/secret.md", contents=good("Secret"))
    fs.create_file(f"{VAULT}/atlas/a.md", contents=good("A"))
    fs.create_symlink(f"{VAULT}/atlas/leak.md", "/outside/secret.md")
    assert findings(VAULT) == [("atlas/leak.md", "symlink-escapes")]
    assert messages(VAULT)[("atlas/leak.md", "symlink-escapes")] == "symlink leaves the vault; find skips it"


def test_scanned_dir_symlink_that_escapes_the_vault(fs: FakeFilesystem) -> None:
    fs.create_file("/outside/hermes/x.md", contents=good("X"))
    fs.create_file(f"{VAULT}/atlas/a.md", contents=good("A"))
    fs.create_symlink(f"{VAULT}/hermes", "/outside/hermes")
    assert findings(VAULT) == [("hermes", "symlink-escapes")]
    assert messages(VAULT)[("hermes", "symlink-escapes")] == (
        "this scanned dir is a symlink that leaves the vault; find skips it"
    )


def test_broken_symlink(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/atlas/a.md", contents=good("A"))
    fs.create_symlink(f"{VAULT}/atlas/gone.md", f"{VAULT}/atlas/deleted.md")
    assert findings(VAULT) == [("atlas/gone.md", "broken-symlink")]


def test_symlink_inside_the_vault_is_a_page(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/atlas/a.md", contents=good("A"))
    fs.create_symlink(f"{VAULT}/hermes/alias.md", f"{VAULT}/atlas/a.md")
    # Same file twice under two paths: find lists both, so its title is on two pages.
    assert findings(VAULT) == [("atlas/a.md", "duplicate-title"), ("hermes/alias.md", "duplicate-title")]


def test_scanned_dir_symlinked_inside_the_vault_is_walked_under_its_scanned_name(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/store/atlas/a.md", contents=good("A"))
    fs.create_file(f"{VAULT}/store/atlas/sub/n.md", contents=good("N"))
    fs.create_file(f"{VAULT}/store/loose.md", contents=good("Loose"))
    fs.create_symlink(f"{VAULT}/atlas", f"{VAULT}/store/atlas")
    assert findings(VAULT) == [("atlas/sub/n.md", "nested-file"), ("store/loose.md", "unscanned-dir")]


def test_symlinked_dirs_are_not_followed(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/atlas/a.md", contents=good("A"))
    fs.create_file("/outside/many/x.md", contents="x")
    fs.create_symlink(f"{VAULT}/atlas/linked", "/outside/many")
    fs.create_symlink(f"{VAULT}/atlas/loop", f"{VAULT}/atlas")
    assert findings(VAULT) == []


def test_not_regular_file(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/atlas/a.md", contents=good("A"))
    fs.create_dir(f"{VAULT}/hermes/real-dir")
    fs.create_symlink(f"{VAULT}/atlas/dir-link.md", f"{VAULT}/hermes/real-dir")
    assert findings(VAULT) == [("atlas/dir-link.md", "not-regular-file")]


def test_scan_warning_of_an_unknown_kind(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault({"atlas/a.md": good("A")})
    from mnemosyne_core.vault import scan as real_scan

    def scan_with_new_warning(vault: str, dirs: Sequence[str] | None = None, home: str | None = None) -> Scan:
        result = real_scan(vault, dirs, home=home)
        result.warnings.append(Diagnostic("atlas/odd.md", "some-future-reason", "why"))
        return result

    monkeypatch.setattr(lint_module, "scan", scan_with_new_warning)
    assert findings(vault) == [("atlas/odd.md", "skipped-by-find")]
    assert messages(vault) == {("atlas/odd.md", "skipped-by-find"): "find skipped it: some-future-reason (why)"}


# --- leftovers ------------------------------------------------------------------------------

#: Names with exactly ingest's temp-name shape (vault.new_ingest_temp_name).
STALE_TEMP = ".mnemosyne-ingest-0123456789abcdef.tmp"
FRESH_TEMP = ".mnemosyne-ingest-fedcba9876543210.tmp"


def test_leftover_temp_file(make_vault: MakeVault) -> None:
    """Only ingest's own temp names, older than an hour, regular files; a fresh one may
    belong to an ingest still running."""
    look_alikes = [
        ".mnemosyne-ingest-notes.tmp",
        ".mnemosyne-ingest-0123456789ABCDEF.tmp",
        ".mnemosyne-ingest-0123456789abcdef.tmp.bak",
        "mnemosyne-ingest-0123456789abcdef.tmp",
    ]
    vault = make_vault(
        {
            "atlas/a.md": good("A"),
            f"atlas/{STALE_TEMP}": "---\ntitle: half a pa",
            f"analyses/{FRESH_TEMP}": "---\ntitle: being written",
            **{f"atlas/{name}": "a user's file" for name in look_alikes},
        }
    )
    os.symlink(f"{vault}/atlas/a.md", f"{vault}/atlas/.mnemosyne-ingest-00000000000000aa.tmp")
    hour_and_a_minute_ago = time.time() - 3660
    for name in [STALE_TEMP, *look_alikes]:
        os.utime(f"{vault}/atlas/{name}", (hour_and_a_minute_ago, hour_and_a_minute_ago))
    os.utime(f"{vault}/atlas/a.md", (hour_and_a_minute_ago, hour_and_a_minute_ago))  # the symlink's target
    assert messages(vault) == {
        (f"atlas/{STALE_TEMP}", "leftover-temp-file"): (
            "a temp file a killed ingest left behind over an hour ago; no page needs it: "
            "remove it (the next ingest into this dir also does)"
        )
    }


# --- shared rules ---------------------------------------------------------------------------


def test_lint_uses_finds_scan(make_vault: MakeVault) -> None:
    """Every page find searches is checked, and nothing lint calls unsearched is found."""
    vault = make_vault(
        {
            "atlas/a.md": good("Zebra A"),
            "atlas/sub/b.md": good("Zebra B"),
            "atlas/C.MD": good("Zebra C"),
            "notes/d.md": good("Zebra D"),
            "atlas/.e.md": good("Zebra E"),
        }
    )
    found = {match.path for match in search(vault, ["zebra"], limit=0).matches}
    unsearched = {path for path, _ in findings(vault)}
    assert found == {"atlas/a.md"}
    assert unsearched == {"atlas/sub/b.md", "atlas/C.MD", "notes/d.md", "atlas/.e.md"}


def test_findings_are_sorted_by_path_then_code(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "metis/z.md": page("Z", updated="never", constellation="zeus"),
            "atlas/b.md": page(None, updated="never"),
            "atlas/a.md": "plain",
        }
    )
    result = findings(vault)
    assert result == [
        ("atlas/a.md", "no-frontmatter"),
        ("atlas/b.md", "invalid-updated"),
        ("atlas/b.md", "missing-title"),
        ("metis/z.md", "invalid-updated"),
        ("metis/z.md", "unknown-constellation"),
    ]
    assert result == sorted(result)


def test_vault_errors_are_finds(make_vault: MakeVault) -> None:
    vault = make_vault({"notes/a.md": good("A"), ".mnemosyne.toml": 'dirs = ["wiki"]\n'})
    with pytest.raises(VaultError, match="has none of the scanned dirs"):
        lint_report(vault)
    with pytest.raises(VaultError, match="does not exist"):
        lint_report("/no/such/vault")


def test_finding_to_dict_matches_the_schema_fields() -> None:
    finding = Finding("atlas/a.md", "no-frontmatter", "m")
    properties = load_schema("lint")["items"]["properties"]
    assert set(finding.to_dict()) == set(properties)
    assert finding.to_dict() == {"path": "atlas/a.md", "code": "no-frontmatter", "message": "m"}


def test_schema_enumerates_exactly_the_reason_codes() -> None:
    assert load_schema("lint")["items"]["properties"]["code"]["enum"] == list(REASON_CODES)
    assert all(code == code.lower() and " " not in code for code in REASON_CODES)
    assert len(set(lint_module.REASON_CODES.values())) == len(REASON_CODES)


#: The test that makes a real vault produce each reason code.
TEST_OF_CODE = {
    "no-frontmatter": test_no_frontmatter,
    "unclosed-frontmatter": test_unclosed_frontmatter,
    "invalid-frontmatter": test_invalid_yaml,
    "frontmatter-not-mapping": test_frontmatter_that_is_not_a_mapping,
    "missing-title": test_missing_title,
    "missing-updated": test_missing_updated,
    "invalid-updated": test_invalid_updated,
    "not-utf8": test_not_utf8,
    "not-text": test_not_text,
    "duplicate-title": test_duplicate_title,
    "unknown-constellation": test_unknown_constellation,
    "nested-file": test_nested_file,
    "unscanned-dir": test_unscanned_dir,
    "vault-root-file": test_vault_root_file,
    "suffix-case": test_suffix_case,
    "unsearched-suffix": test_unsearched_suffix,
    "hidden-file": test_hidden_file,
    "symlink-escapes": test_symlink_that_escapes_the_vault,
    "broken-symlink": test_broken_symlink,
    "not-regular-file": test_not_regular_file,
    "unreadable": test_unreadable_page,
    "skipped-by-find": test_scan_warning_of_an_unknown_kind,
    "leftover-temp-file": test_leftover_temp_file,
}


def test_every_reason_code_has_a_test() -> None:
    assert list(TEST_OF_CODE) == list(REASON_CODES)


def test_a_tree_nested_deeper_than_the_walk_limit_is_one_finding(tmp_path: Path) -> None:
    from mnemosyne_core.lint import MAX_WALK_DEPTH

    page_dir = tmp_path / "atlas"
    page_dir.mkdir()
    (page_dir / "a.md").write_text("---\ntitle: A\nupdated: 2026-01-01\n---\n")
    deep = page_dir.joinpath(*["d"] * (MAX_WALK_DEPTH + 5))
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("x")
    findings = lint_report(str(tmp_path)).findings
    assert [(f.path.count("/"), f.code) for f in findings] == [(MAX_WALK_DEPTH, "unreadable")]


# --- choosing the codes: select, ignore, [lint] ignore ----------------------------------

#: One page with no updated date, one with no title and no date, one unscanned file.
SELECTION_VAULT: dict[str, str | bytes] = {
    "atlas/a.md": page("A"),
    "atlas/b.md": "---\nupdated: 2026-03-01\n---\n",
    "notes/n.md": good("N"),
}
ALL_SELECTION_FINDINGS = [
    ("atlas/a.md", "missing-updated"),
    ("atlas/b.md", "missing-title"),
    ("notes/n.md", "unscanned-dir"),
]


def selected(
    vault: str, *, select: list[str] | None = None, ignore: list[str] | None = None
) -> tuple[list[tuple[str, str]], int]:
    report = lint_module.lint_report(vault, select=select, ignore=ignore)
    return [(finding.path, finding.code) for finding in report.findings], report.ignored


def with_config(config: str) -> dict[str, str | bytes]:
    return {**SELECTION_VAULT, ".mnemosyne.toml": config}


def test_selection_is_a_filter_over_every_finding(make_vault: MakeVault) -> None:
    """Whatever the selection, the reported findings are exactly the full list's with a
    reported code, and ignored counts the rest."""
    vault = make_vault(SELECTION_VAULT)
    assert selected(vault) == (ALL_SELECTION_FINDINGS, 0)
    cases: list[dict[str, list[str]]] = [
        {"select": ["missing-updated"]},
        {"select": ["missing-updated", "unscanned-dir"]},
        {"ignore": ["unscanned-dir"]},
        {"select": ["missing-title", "missing-updated"], "ignore": ["missing-title"]},
        {"select": ["hidden-file"]},
    ]
    for options in cases:
        reported = set(options.get("select") or REASON_CODES) - set(options.get("ignore", []))
        expected = [item for item in ALL_SELECTION_FINDINGS if item[1] in reported]
        assert selected(vault, **options) == (expected, len(ALL_SELECTION_FINDINGS) - len(expected)), options


def test_config_ignore(make_vault: MakeVault) -> None:
    vault = make_vault(with_config('[lint]\nignore = ["missing-updated", "unscanned-dir"]\n'))
    assert selected(vault) == ([("atlas/b.md", "missing-title")], 2)
    # --ignore adds to it; --select names a code back in, the more specific wish.
    assert selected(vault, ignore=["missing-title"]) == ([], 3)
    assert selected(vault, select=["missing-updated", "missing-title"]) == (
        [("atlas/a.md", "missing-updated"), ("atlas/b.md", "missing-title")],
        1,
    )
    # lint_report().findings is the same list without the count.
    assert [(f.path, f.code) for f in lint_report(vault).findings] == [("atlas/b.md", "missing-title")]


@pytest.mark.parametrize("config", ["[lint]\nignore = []\n", "[lint]\n"])
def test_config_empty_lint_table_ignores_nothing(make_vault: MakeVault, config: str) -> None:
    vault = make_vault(with_config(config))
    assert selected(vault) == (ALL_SELECTION_FINDINGS, 0)


@pytest.mark.parametrize("option", ["select", "ignore"])
def test_unknown_code_lists_the_known_codes(make_vault: MakeVault, option: str) -> None:
    from mnemosyne_core.errors import UnknownLintCodeError

    vault = make_vault(SELECTION_VAULT)
    codes: dict[str, list[str]] = {"select": [], "ignore": []}
    codes[option] = ["missing-updated", "bogus"]
    with pytest.raises(UnknownLintCodeError) as raised:
        lint_module.lint_report(vault, select=codes["select"], ignore=codes["ignore"])
    assert str(raised.value) == f"--{option}: unknown lint code 'bogus'; known codes: {', '.join(REASON_CODES)}"


def test_unknown_code_is_checked_before_the_vault() -> None:
    from mnemosyne_core.errors import UnknownLintCodeError

    with pytest.raises(UnknownLintCodeError):
        lint_report("/no/such/vault", select=["bogus"])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[lint]\nignore = ["bogus", "zz"]\n', "lint.ignore has unknown lint codes 'bogus', 'zz'; known codes: "),
        ('[lint]\nignore = "missing-updated"\n', "lint.ignore must be a list of lint codes"),
        ("[lint]\nignore = [1]\n", "lint.ignore must be a list of lint codes"),
        ('[lint]\nselect = ["x"]\n', "has unknown key(s) lint.select; allowed: lint.ignore"),
        ('lint = "x"\n', "lint must be a table"),
        (
            '[lints]\nignore = ["x"]\n',
            "has unknown key(s) lints; allowed: dirs, depth, suffixes, exclude, memory_dir, [lint], [serve], [cache], "
            "[order]",
        ),
    ],
)
def test_bad_lint_config_is_a_vault_error(make_vault: MakeVault, config: str, message: str) -> None:
    vault = make_vault(with_config(config))
    with pytest.raises(VaultError) as raised:
        lint_report(vault)
    assert str(raised.value).startswith(f"{vault}/.mnemosyne.toml")
    assert message in str(raised.value)


def test_find_ignores_the_lint_table(make_vault: MakeVault) -> None:
    vault = make_vault(with_config('[lint]\nignore = ["missing-updated"]\n'))
    assert search(vault, ["a"]).total >= 1
