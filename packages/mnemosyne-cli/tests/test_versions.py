"""A collection kept per release and per language: ``[order] prefer`` in find's order (the
scan and the page cache alike), recall reading one version of a page, ``wiki init``
choosing the preference, ``wiki info`` showing it, and a bad ``[order]`` refused. Exact
stdout, stderr and exit code through ``main``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemosyne_cli.app import main
from mnemosyne_contract import ExitCode

TREE = 'dirs = ["."]\ndepth = "tree"\n'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(root: Path, files: dict[str, str]) -> str:
    for rel_path, text in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return str(root)


def page(title: str, updated: str, body: str) -> str:
    return f"---\ntitle: {title}\nupdated: {updated}\n---\n\n{body}\n"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test writes its page cache below its own tmp dir."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def releases(root: Path, config: str) -> str:
    """Three releases of an install page (7.10 the newest, by natural order, though 7.9
    sorts after it by path and is dated later) and a guide page."""
    return write(
        root / "vault",
        {
            ".mnemosyne.toml": config,
            "reference/5.1/install.md": page("Install", "2020-01-01", "Install 5.1."),
            "reference/7.9/install.md": page("Install", "2024-01-01", "Install 7.9."),
            "reference/7.10/install.md": page("Install", "2023-06-01", "Install 7.10."),
            "guide/install-notes.md": page("Install notes", "2024-06-01", "Notes."),
        },
    )


INSTALL_BY_PATH = (
    "reference/5.1/install.md — Install\n"
    "reference/7.10/install.md — Install\n"
    "reference/7.9/install.md — Install\n"
    "guide/install-notes.md — Install notes\n"
)
INSTALL_PREFERRED = (
    "reference/7.10/install.md — Install\n"
    "reference/5.1/install.md — Install\n"
    "reference/7.9/install.md — Install\n"
    "guide/install-notes.md — Install notes\n"
)


@pytest.mark.parametrize("cache", ["true", "false"])
def test_a_preferred_dir_puts_its_version_first_among_ties_in_the_scan_and_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cache: str
) -> None:
    config = f'{TREE}[cache]\nenabled = {cache}\n[order]\nprefer = ["reference/7.10/"]\n'
    vault = releases(tmp_path, config)
    # Twice: the first call fills the page cache, the second answers from it.
    for _ in range(2):
        assert run(capsys, "wiki", "find", "install", "--vault", vault) == (ExitCode.OK, INSTALL_PREFERRED, "")
    # Without a preference the tie goes by path, as before.
    Path(vault, ".mnemosyne.toml").write_text(f"{TREE}[cache]\nenabled = {cache}\n", encoding="utf-8")
    assert run(capsys, "wiki", "find", "install", "--vault", vault) == (ExitCode.OK, INSTALL_BY_PATH, "")


def test_the_preference_never_outranks_an_earlier_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The shorter title comes first whatever dir it is in; the preferred dirs go in their
    # order, among the pages that only mention the keyword as well.
    vault = write(
        tmp_path,
        {
            ".mnemosyne.toml": f'{TREE}[order]\nprefer = ["content/it/", "content/en/"]\n',
            "content/en/setup.md": page("Setup", "2024-01-01", "en"),
            "content/it/setup.md": page("Setup guide", "2024-01-01", "it"),
            "content/de/setup.md": page("Setup", "2024-01-01", "de"),
            "content/it/faq.md": page("FAQ", "2024-01-01", "setup"),
            "content/en/faq.md": page("FAQ", "2024-01-01", "setup"),
        },
    )
    assert run(capsys, "wiki", "find", "setup", "--vault", vault) == (
        ExitCode.OK,
        "content/en/setup.md — Setup\n"
        "content/de/setup.md — Setup\n"
        "content/it/setup.md — Setup guide\n"
        "content/it/faq.md — FAQ\n"
        "content/en/faq.md — FAQ\n",
        "",
    )


EXAMPLE = 'e.g. [order] then prefer = ["reference/7.6/", "content/en/"]'


@pytest.mark.parametrize(
    ("order", "problem"),
    [
        ('[order]\nprefer = "reference/7.10/"\n', f"order.prefer must be a list of vault-relative dirs, {EXAMPLE}"),
        ("order = 1\n", f"order must be a table, {EXAMPLE}"),
        (
            '[order]\nprefer = ["../7.10/"]\n',
            "order.prefer has '../7.10/', which has a part starting with '.' (hidden dirs and '..' are never "
            f"searched); {EXAMPLE}",
        ),
    ],
)
def test_a_bad_order_is_a_one_line_vault_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], order: str, problem: str
) -> None:
    vault = releases(tmp_path, TREE + order)
    assert run(capsys, "wiki", "find", "install", "--vault", vault) == (
        ExitCode.VAULT_ERROR,
        "",
        f"mnemosyne: error: {vault}/.mnemosyne.toml: {problem}\n",
    )


def test_an_unknown_order_key_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = releases(tmp_path, TREE + '[order]\nfirst = ["reference/7.10/"]\n')
    assert run(capsys, "wiki", "find", "install", "--vault", vault) == (
        ExitCode.VAULT_ERROR,
        "",
        f"mnemosyne: error: {vault}/.mnemosyne.toml has unknown key(s) order.first; allowed: order.prefer\n",
    )


RECALLED = (
    "guide/install-notes.md\n"
    "reference/7.10/install.md\n"
    "reference/7.9/install.md (another version of reference/7.10/install.md: not read)\n"
    "reference/5.1/install.md (another version of reference/7.10/install.md: not read)\n"
    "\n"
    "==> guide/install-notes.md <==\n" + page("Install notes", "2024-06-01", "Notes.") + "\n"
    "==> reference/7.10/install.md <==\n" + page("Install", "2023-06-01", "Install 7.10.") + "\n"
    "4 matches; read 2: install-notes, install; 2 not read\n"
)


@pytest.mark.parametrize(
    "config",
    [
        f'{TREE}[order]\nprefer = ["reference/7.10/"]\n',
        TREE,  # no preference: the highest release by natural order (7.10 > 7.9)
        f'{TREE}[cache]\nenabled = false\n[order]\nprefer = ["reference/7.10/"]\n',
    ],
)
def test_recall_reads_one_version_of_a_page_and_lists_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str
) -> None:
    vault = releases(tmp_path, config)
    for _ in range(2):  # the scan, then the page cache
        assert run(capsys, "wiki", "recall", "install", "--vault", vault) == (ExitCode.OK, RECALLED, "")
    code, out, _ = run(capsys, "wiki", "recall", "install", "--vault", vault, "--json")
    document = json.loads(out)
    assert (code, document["read_slugs"], document["not_read"]) == (ExitCode.OK, ["install-notes", "install"], 2)
    assert [match.get("version_of") for match in document["matches"]] == [
        None,
        None,
        "reference/7.10/install.md",
        "reference/7.10/install.md",
    ]


def test_recall_reads_the_preferred_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(
        tmp_path,
        {
            ".mnemosyne.toml": f'{TREE}[order]\nprefer = ["content/en/"]\n',
            "content/de/setup.md": page("Setup", "2024-02-01", "de"),
            "content/en/setup.md": page("Setup", "2024-01-01", "en"),
        },
    )
    assert run(capsys, "wiki", "recall", "setup", "--vault", vault) == (
        ExitCode.OK,
        "content/en/setup.md\n"
        "content/de/setup.md (another version of content/en/setup.md: not read)\n"
        "\n"
        "==> content/en/setup.md <==\n" + page("Setup", "2024-01-01", "en") + "\n"
        "2 matches; read 1: setup; 1 not read\n",
        "",
    )


INIT_ORDER = """
[order]
# Versions or translations of a page (the same path under sibling dirs such as 7.4/ and
# 7.6/, or en/ and it/) tie in find's order but for their path: the pages under these dirs
# come first, in this order. wiki init chose the highest release and the language the
# others repeat most.
prefer = ["content/en/", "reference/7.10/"]
"""


def test_init_prefers_the_highest_release_and_the_language_the_others_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it/ left one page untranslated, fr/ another: both copies point to en/, which fr/
    # outnumbers in pages; 7.10 is above 7.9 as people count.
    english = {name: page(name.title(), "2024-01-01", f"{name} in English") for name in ("x", "y")}
    vault = write(
        tmp_path / "site",
        {
            "reference/7.9/a.md": "# A\n",
            "reference/7.10/a.md": "# A, newer\n",
            "reference/5.1/a.md": "# A, older\n",
            "content/en/x.md": english["x"],
            "content/en/y.md": english["y"],
            "content/it/x.md": english["x"],
            "content/it/y.md": page("Y", "2024-01-01", "y in italiano"),
            "content/fr/x.md": page("X", "2024-01-01", "x en français"),
            "content/fr/y.md": english["y"],
            "content/fr/z.md": page("Z", "2024-01-01", "z"),
            "content/fr/w.md": page("W", "2024-01-01", "w"),
        },
    )
    code, out, err = run(capsys, "wiki", "init", vault, "--dry-run")
    assert (code, out.endswith(INIT_ORDER), err) == (
        ExitCode.OK,
        True,
        "versions of a page found: find puts the one under content/en/, reference/7.10/ first (the language the "
        "others repeat most and the highest release); edit [order] prefer to change it\n",
    )
    assert run(capsys, "wiki", "init", vault)[0] == ExitCode.OK
    code, out, _ = run(capsys, "wiki", "info", "--vault", vault)
    assert code == ExitCode.OK
    assert (
        "prefer: content/en/, reference/7.10/ (their pages come first among the versions of a page; [order] "
        "prefer in .mnemosyne.toml)\n"
    ) in out
    code, out, _ = run(capsys, "wiki", "info", "--vault", vault, "--json")
    assert json.loads(out)["prefer"] == ["content/en/", "reference/7.10/"]


ROOT_ORIGINAL = {
    "book/coming_from_bash.md": "# Coming from Bash\n\nbash\n",
    "book/dataframes.md": "# Dataframes\n\nPolars.\n",
    "zh-CN/book/coming_from_bash.md": "# Coming from Bash\n\n从 Bash\n",
    "zh-CN/book/dataframes.md": "# Dataframes\n\n数据帧\n",
    "ja/book/coming_from_bash.md": "# Coming from Bash\n\nBash から\n",
    "blog/2024.md": "# A year\n",
}

ROOT_ORIGINAL_ORDER = """
[order]
# Versions or translations of a page (the same path under sibling dirs such as 7.4/ and
# 7.6/, or en/ and it/) tie in find's order but for their path: the pages under these dirs
# come first, in this order. wiki init chose the highest release and the language the
# others repeat most.
# "./" stands for the pages under none of the other dirs listed: the dirs after it
# translate the pages beside them, which are the original.
prefer = ["./", "ja/", "zh-CN/"]
"""


def test_init_puts_the_original_at_the_root_before_the_translations_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # zh-CN/ and ja/ mirror book/ at the root: the root holds the original, so no language
    # dir is preferred; both follow every page outside them.
    vault = write(tmp_path / "site", ROOT_ORIGINAL)
    code, out, err = run(capsys, "wiki", "init", vault, "--dry-run")
    assert (code, out.endswith(ROOT_ORIGINAL_ORDER), err) == (
        ExitCode.OK,
        True,
        "versions of a page found: find puts the one outside ja/, zh-CN/ first (the original: those dirs "
        "translate the pages beside them); edit [order] prefer to change it\n",
    )
    assert run(capsys, "wiki", "init", vault)[0] == ExitCode.OK
    assert run(capsys, "wiki", "find", "coming", "from", "bash", "--vault", vault) == (
        ExitCode.OK,
        "book/coming_from_bash.md — Coming from Bash\n"
        "ja/book/coming_from_bash.md — Coming from Bash\n"
        "zh-CN/book/coming_from_bash.md — Coming from Bash\n",
        "",
    )
    assert run(capsys, "wiki", "find", "dataframes", "--vault", vault) == (
        ExitCode.OK,
        "book/dataframes.md — Dataframes\nzh-CN/book/dataframes.md — Dataframes\n",
        "",
    )


def test_a_preferred_and_a_root_original_are_said_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(
        tmp_path / "site",
        {**ROOT_ORIGINAL, "reference/7.9/a.md": "# A\n", "reference/7.10/a.md": "# A, newer\n"},
    )
    code, out, err = run(capsys, "wiki", "init", vault, "--dry-run")
    assert (code, out.splitlines()[-1], err) == (
        ExitCode.OK,
        'prefer = ["reference/7.10/", "./", "ja/", "zh-CN/"]',
        "versions of a page found: find puts the one under reference/7.10/ first (the highest release), and the "
        "one outside ja/, zh-CN/ before theirs (the original: those dirs translate the pages beside them); edit "
        "[order] prefer to change it\n",
    )


@pytest.mark.parametrize("unlisted", [".", "./"])
def test_dot_in_prefer_places_the_pages_under_none_of_the_other_dirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unlisted: str
) -> None:
    # Path order alone puts blog/ before the root page: ".", listed before ja/ and zh-CN/,
    # puts every page outside them first, and they follow in the list's order.
    files = {
        **ROOT_ORIGINAL,
        "a/book/dataframes.md": "# Dataframes\n",
        ".mnemosyne.toml": f'{TREE}[order]\nprefer = ["zh-CN/", "{unlisted}", "ja/"]\n',
    }
    vault = write(tmp_path, files)
    assert run(capsys, "wiki", "find", "coming", "from", "bash", "--vault", vault) == (
        ExitCode.OK,
        "zh-CN/book/coming_from_bash.md — Coming from Bash\n"
        "book/coming_from_bash.md — Coming from Bash\n"
        "ja/book/coming_from_bash.md — Coming from Bash\n",
        "",
    )
    assert run(capsys, "wiki", "find", "dataframes", "--vault", vault) == (
        ExitCode.OK,
        "zh-CN/book/dataframes.md — Dataframes\na/book/dataframes.md — Dataframes\nbook/dataframes.md — Dataframes\n",
        "",
    )


def test_init_writes_no_order_without_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = write(tmp_path / "notes", {"a/x.md": "# X\n", "b/x.md": "# X\n", "2023/x.md": "x", "2024/x.md": "x"})
    code, out, err = run(capsys, "wiki", "init", vault, "--dry-run")
    assert (code, "[order]" in out, err) == (ExitCode.OK, False, "")
    assert '"prefer": []' in run(capsys, "wiki", "info", "--vault", vault, "--json")[1]


def test_info_offers_the_exclude_only_for_dirs_that_are_all_copies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it/ is en/ page for page; fr/ translated one page of two: only it/ may be left out.
    english = {name: page(name.upper(), "2024-01-01", f"{name} in English") for name in ("a", "b")}
    vault = write(
        tmp_path,
        {
            ".mnemosyne.toml": TREE,
            "site/en/a.md": english["a"],
            "site/en/b.md": english["b"],
            "site/it/a.md": english["a"],
            "site/it/b.md": english["b"],
            "site/fr/a.md": english["a"],
            "site/fr/b.md": page("B", "2024-01-01", "b en français"),
        },
    )
    code, out, _ = run(capsys, "wiki", "info", "--vault", vault)
    assert code == ExitCode.OK
    assert [line for line in out.splitlines() if line.startswith("copies: ")] == [
        "copies: site/it/ copies site/en/ page for page; site/fr/ copies 1 of its 2 pages from site/en/ (a.md), "
        "and an exclude of it would drop 1 page that is no copy; find lists every copy: to leave out the dirs that "
        'are all copies, set exclude = ["site/it/"] in .mnemosyne.toml'
    ]
    # Done as it says, a miss counts what the exclude leaves out.
    Path(vault, ".mnemosyne.toml").write_text(TREE + 'exclude = ["site/it/"]\n', encoding="utf-8")
    assert run(capsys, "wiki", "find", "zzz", "--vault", vault) == (
        ExitCode.NO_MATCH,
        "",
        "no wiki page matches 'zzz'\nnot searched: 2 markdown files in the searched dirs: 2 left out by exclude in "
        ".mnemosyne.toml (remove a pattern there to search them)\n",
    )
