"""``wiki serve`` on a layout searched as a whole tree: every dir the walk enters is
watched, and watched before it is listed; ignore files are followed; out of watches, the
server answers nothing rather than answer from part of the tree."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from server_harness import (
    ThreadServer,
    caller_listings,
    make_vault,
    out_of_watches_at,
    run_cli,
    served_and_scanned,
)

from mnemosyne_cli import client
from mnemosyne_cli.environment import Environment
from mnemosyne_core import inotify
from mnemosyne_core.changes import VaultWatch

pytestmark = pytest.mark.usefixtures("runtime_dir")  # conftest: a private runtime dir per test


#: An Obsidian-like vault: no config and no default dir, so its whole tree is searched.
TREE = {
    "Home.md": "alpha home\n",
    "notes/alpha one.md": "---\ntitle: Alpha one\n---\nalpha\n",
    "notes/deep/er/alpha two.mdx": "alpha two\n",
    "n o/three.markdown": "alpha three\n",
    "drafts/alpha draft.md": "alpha draft\n",
    "build/out/alpha built.md": "alpha built\n",
    ".obsidian/alpha.md": "hidden alpha\n",
    ".gitignore": "build/\n",
}


#: What the server says while it is out of watches (this machine's limit in it).
OUT_OF_WATCHES = f"cannot watch the vault: {inotify.out_of_watches_reason()}"


def find(vault: Path, *keywords: str) -> list[str]:
    return ["wiki", "find", *keywords, "--vault", str(vault)]


def test_every_dir_the_walk_enters_is_watched_and_no_other(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", TREE)
    watch = VaultWatch(str(vault.resolve()))
    try:
        watch.rebuild()
        assert watch.doubt is None
        # Not .obsidian (hidden) nor build/ and below (.gitignore leaves it out).
        listed = sorted(rel for rels in watch._dir_wds.values() for rel in rels)
        assert listed == ["", "drafts", "n o", "notes", "notes/deep", "notes/deep/er"]
        assert watch.watched_dirs == 6
    finally:
        watch.close()


@pytest.mark.parametrize("how", ["mkdir -p", "moved in"])
def test_a_page_written_into_a_new_dir_just_before_its_watch_is_served(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The race a new dir opens: a page written into it after the rebuild met it and before
    the dir is listed. Watched first, then listed, the listing holds that page; listed
    first and watched after, it would be lost until some later rebuild."""
    vault = make_vault(tmp_path / "v", TREE)
    new_dir = vault / "notes" / "new" / "sub"
    real_add_watch = inotify.Inotify.add_watch

    def add_watch_after_a_write(self: inotify.Inotify, path: str, mask: int) -> int:
        if path == str(new_dir.resolve()) and not (new_dir / "late.md").exists():
            (new_dir / "late.md").write_text("zeta late\n", encoding="utf-8")
        return real_add_watch(self, path, mask)

    with ThreadServer(vault) as running:
        assert served_and_scanned(capsysbinary, running, find(vault, "zeta"))[0][0] == 1
        monkeypatch.setattr(inotify.Inotify, "add_watch", add_watch_after_a_write)
        # Counted before the dir is made: the server's thread may rebuild as soon as it is.
        rebuilds = running.watch.rebuilds
        if how == "mkdir -p":
            new_dir.mkdir(parents=True)
        else:
            (tmp_path / "staged" / "sub").mkdir(parents=True)
            os.rename(tmp_path / "staged", vault / "notes" / "new")
        # The server's thread meets the new dir when it takes the event; the page is written
        # as it watches it. Each call before that answers for the vault as it was then.
        deadline = time.monotonic() + 120
        while not (new_dir / "late.md").exists() and time.monotonic() < deadline:
            assert run_cli(capsysbinary, find(vault, "zeta"))[0] in (0, 1)
        served, scanned = served_and_scanned(capsysbinary, running, find(vault, "zeta"))
        assert served == scanned == (0, b"notes/new/sub/late.md \xe2\x80\x94 late\n", "")
        assert running.watch.rebuilds > rebuilds  # a dir made: listed anew


def test_an_edited_ignore_file_changes_what_is_served(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", TREE)
    argv = find(vault, "alpha", "draft")
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"drafts/alpha draft.md \xe2\x80\x94 alpha draft\n", "")
        (vault / "drafts" / ".ignore").write_text("*.md\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert served[0] == 1
        (vault / "drafts" / ".ignore").unlink()
        (vault / ".gitignore").write_text("build/\ndrafts/\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert served[0] == 1
        (vault / ".gitignore").write_text("build/\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"drafts/alpha draft.md \xe2\x80\x94 alpha draft\n", "")
        # And a dir the ignore file let in is watched from then on.
        (vault / "build" / "out" / "zeta.md").write_text("zeta\n", encoding="utf-8")
        (vault / ".gitignore").unlink()
        served = served_and_scanned(capsysbinary, running, find(vault, "zeta"))[0]
        assert served == (0, b"build/out/zeta.md \xe2\x80\x94 zeta\n", "")
        (vault / "build" / "out" / "zeta.md").unlink()
        assert served_and_scanned(capsysbinary, running, find(vault, "zeta"))[0][0] == 1


def test_a_subtree_removed_or_moved_out_is_gone_from_the_answers(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", TREE)
    argv = find(vault, "alpha")
    with ThreadServer(vault) as running:
        assert served_and_scanned(capsysbinary, running, argv)[0][1].count(b"\n") == 5
        os.rename(vault / "notes" / "deep", tmp_path / "deep")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert b"alpha two" not in served[1]
        shutil.rmtree(vault / "notes")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert served[1].count(b"\n") == 3
        # Moved back in: its pages, and a page written into it afterwards.
        os.rename(tmp_path / "deep", vault / "deep")
        (vault / "deep" / "er" / "zeta.md").write_text("zeta\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, find(vault, "zeta"))
        assert served == scanned == (0, b"deep/er/zeta.md \xe2\x80\x94 zeta\n", "")


def test_a_nested_searched_dir_made_after_the_start_is_served(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Its parent is not searched but is watched for it: its arrival rebuilds."""
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["docs/en"]\ndepth = "tree"\n', "docs/x.md": "x\n"})
    argv = find(vault, "zeta")
    with ThreadServer(vault) as running:
        (vault / "docs" / "en" / "guides").mkdir(parents=True)
        (vault / "docs" / "en" / "guides" / "zeta.md").write_text("zeta\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"docs/en/guides/zeta.md \xe2\x80\x94 zeta\n", "")
        # Renamed away: a vault without its one searched dir is left to the scan's error.
        os.rename(vault / "docs", vault / "documents")
        served = run_cli(capsysbinary, argv)
        assert served == run_cli(capsysbinary, [*argv, "--no-cache"])
        assert served[0] == 3
        os.rename(vault / "documents", vault / "docs")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"docs/en/guides/zeta.md \xe2\x80\x94 zeta\n", "")


def test_out_of_watches_the_server_answers_nothing_until_a_rebuild_succeeds(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree the server cannot watch whole is never answered from in part."""
    vault = make_vault(tmp_path / "v", TREE)
    give_back = out_of_watches_at(monkeypatch, "/many")
    argv = find(vault, "zeta")
    with ThreadServer(vault) as running:
        assert served_and_scanned(capsysbinary, running, argv)[0][0] == 1
        (vault / "notes" / "many").mkdir()
        (vault / "notes" / "many" / "zeta.md").write_text("zeta\n", encoding="utf-8")
        for _ in range(2):  # each call retries the rebuild, and scans while it fails
            answered = running.answered
            served = run_cli(capsysbinary, argv)
            scanned = run_cli(capsysbinary, [*argv, "--no-server"])
            assert served == scanned == (0, b"notes/many/zeta.md \xe2\x80\x94 zeta\n", "")
            assert running.answered == answered
        status = client.status(str(vault.resolve()), Environment())
        assert status is not None
        assert status.failure == OUT_OF_WATCHES
        give_back()
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"notes/many/zeta.md \xe2\x80\x94 zeta\n", "")


def test_the_docs_tree_with_mdx_pages_is_served(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    vault = make_vault(
        tmp_path / "docs",
        {
            "src/content/docs/en/guides/images.mdx": "---\ntitle: Images\n---\nimages\n",
            "src/content/docs/fr/guides/images.mdx": "---\ntitle: Images (fr)\n---\nimages\n",
            "node_modules/pkg/readme.md": "images dependency\n",
            ".gitignore": "node_modules/\n",
        },
    )
    for argv in (
        find(vault, "images"),
        ["wiki", "find", "images", "--json", "--vault", str(vault / "src/content/docs/en")],
        ["wiki", "recall", "images", "--vault", str(vault)],
    ):
        with ThreadServer(argv[-1]) as running:
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned
            assert served[0] == 0


def test_out_of_watches_at_the_start_the_server_says_so_and_the_fix(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server starts, answers nothing, and says why (with the limit and how to raise
    it) in its log, in --status and in wiki info; every call scans meanwhile."""
    vault = make_vault(tmp_path / "v", TREE)
    give_back = out_of_watches_at(monkeypatch, "/er")
    argv = find(vault, "alpha", "two")
    harness = ThreadServer(vault)
    with harness as running:
        served = run_cli(capsysbinary, argv)
        assert served == run_cli(capsysbinary, [*argv, "--no-server"])
        assert served == (0, b"notes/deep/er/alpha two.mdx \xe2\x80\x94 alpha two\n", "")
        assert running.answered == 0
        code, out, err = run_cli(capsysbinary, ["wiki", "serve", "--status", "--vault", str(vault)])
        assert (code, err) == (0, "")
        assert out.decode().endswith(f"; every caller lists the vault: {OUT_OF_WATCHES}\n")
        code, out, _err = run_cli(capsysbinary, ["wiki", "info", "--vault", str(vault)])
        assert f"; every caller lists the vault: {OUT_OF_WATCHES}\n" in out.decode()
        give_back()
        assert served_and_scanned(capsysbinary, running, argv)[0] == served
    log = harness.log.getvalue()
    assert (
        f"mnemosyne serve: every caller lists the vault: {OUT_OF_WATCHES}\nmnemosyne serve: watching; answering\n"
        in log
    )


def test_the_out_of_watches_reason_gives_the_limit_and_the_fix(tmp_path: Path) -> None:
    limit = tmp_path / "max_user_watches"
    limit.write_text("8192\n", encoding="ascii")
    assert inotify.out_of_watches_reason(str(limit)) == (
        "out of inotify watches: the user's limit fs.inotify.max_user_watches=8192 is reached; "
        "raise it, e.g. sudo sysctl fs.inotify.max_user_watches=524288"
    )
    assert inotify.out_of_watches_reason(str(tmp_path / "absent")) == (
        "out of inotify watches: the user's limit fs.inotify.max_user_watches is reached; "
        "raise it, e.g. sudo sysctl fs.inotify.max_user_watches=524288"
    )


def test_an_ignore_file_above_a_searched_dir_is_followed(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The ignore files of the dirs above a searched dir apply to its tree too (as in rg):
    those dirs are watched for them, though nothing in them is searched."""
    vault = make_vault(
        tmp_path / "v",
        {
            ".mnemosyne.toml": 'dirs = ["docs/en"]\ndepth = "tree"\n',
            "docs/en/guides/zeta.md": "zeta\n",
            "docs/en/index.md": "index\n",  # a page left when guides/ is ignored: a miss, not "no page"
        },
    )
    argv = find(vault, "zeta")
    with ThreadServer(vault) as running:
        for where in (vault, vault / "docs"):
            (where / ".gitignore").write_text("guides/\n", encoding="utf-8")
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned
            assert served[0] == 1
            (where / ".gitignore").unlink()
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned == (0, b"docs/en/guides/zeta.md \xe2\x80\x94 zeta\n", "")


# --- a miss's note: the markdown files the layout leaves out, kept by the server ---


def miss(vault: Path, note: str | None) -> tuple[int, bytes, str]:
    """find's answer to a keyword no page holds, with the miss note ``note``."""
    return 1, b"", "no wiki page matches 'zyzzyva'\n" + (f"{note}\n" if note else "")


def test_a_served_miss_on_a_tree_notes_what_the_scan_notes(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A miss takes the listing path though the server answers: its note is made from the
    caller's own listing, once (hidden files are left out on purpose, ignored ones counted
    by their ignore file), the same note as the scan's."""
    vault = make_vault(
        tmp_path / "v",
        {**TREE, "notes/Upper.MD": "x\n", "n o/old.MARKDOWN": "x\n", ".obsidian/hid.MD": "x\n", "build/b.MD": "x\n"},
    )
    note = (
        "not searched: 4 markdown files in the searched dirs: 2 ending in .MARKDOWN or .MD "
        '(set suffixes = [".md", ".markdown", ".mdx", ".MARKDOWN", ".MD"] in .mnemosyne.toml), '
        "2 excluded by .gitignore (find skips them, as rg does; a '!' rule there takes one back); wiki lint lists them"
    )
    with ThreadServer(vault) as running:
        for argv, expected in (
            (find(vault, "zyzzyva"), miss(vault, note)),
            ([*find(vault, "zyzzyva"), "--cat"], (2, b"", miss(vault, note)[2] + "--cat needs exactly one match\n")),
            (
                ["wiki", "recall", "zyzzyva", "--vault", str(vault)],
                (
                    0,
                    b"No wiki entries matched zyzzyva\n",
                    "hint: 4 pages have no frontmatter title, slug or tags, so recall cannot see them; "
                    f"find searches them too: mnemosyne wiki find --vault {vault} zyzzyva\n{note}\n",
                ),
            ),
            (["wiki", "recall", "zyzzyva", "--json", "--vault", str(vault)], None),
        ):
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned
            assert expected is None or served == expected
            assert f"{note}\n" in served[2]
            with caller_listings() as walks:
                assert run_cli(capsysbinary, argv) == served
            assert walks == [str(vault.resolve())]  # listed once, the note from that listing


def test_a_file_the_tree_leaves_out_made_renamed_or_removed_is_noted_at_once(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each such change answers at once, the served note the scan's."""
    shape = {path: text for path, text in TREE.items() if path != ".gitignore"}
    vault = make_vault(tmp_path / "v", {**shape, ".mnemosyne.toml": 'depth = "tree"\nsuffixes = [".md"]\n'})
    argv = find(vault, "zyzzyva")

    def note(count: int, endings: str, suffixes: str) -> str:
        files = "file" if count == 1 else "files"
        return (
            f"not searched: {count} markdown {files} in the searched dirs: {count} ending in {endings} "
            f"(set suffixes = [{suffixes}] in .mnemosyne.toml); wiki lint lists them"
        )

    with ThreadServer(vault) as running:
        # The tree's own .mdx and .markdown pages are left out under [".md"].
        before = note(2, ".markdown or .mdx", '".md", ".markdown", ".mdx"')
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == miss(vault, before)

        def answers(expected: str) -> None:
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned == miss(vault, expected)

        upper = '".md", ".MD", ".markdown", ".mdx"'
        (vault / "notes" / "Note.MD").write_text("x\n")
        answers(note(3, ".MD or .markdown or .mdx", upper))
        (vault / "x.markdown").write_text("x\n")
        answers(note(4, ".MD or .markdown or .mdx", upper))
        os.rename(vault / "notes" / "Note.MD", vault / "notes" / "Note.md")  # a page now
        answers(note(3, ".markdown or .mdx", '".md", ".markdown", ".mdx"'))
        os.rename(vault / "x.markdown", vault / "n o" / "y.MARKDOWN")
        answers(note(3, ".MARKDOWN or .markdown or .mdx", '".md", ".MARKDOWN", ".markdown", ".mdx"'))
        (vault / "n o" / "y.MARKDOWN").unlink()
        answers(before)
        os.symlink("nowhere", vault / "link.MDX")  # any entry but a dir counts, as in the scan
        answers(note(3, ".MDX or .markdown or .mdx", '".md", ".MDX", ".markdown", ".mdx"'))
        (vault / "link.MDX").unlink()
        answers(before)
        (vault / "notes" / ".hidden.MD").write_text("x\n")
        answers(before)
        # A dir with such a name is not a file left out: the walk enters it (a rebuild).
        (vault / "d.MD").mkdir()
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == miss(vault, before)
        (vault / "notes" / "deep" / "Z.MD").write_text("x\n")
        (vault / ".gitignore").write_text("*.MD\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert "1 excluded by .gitignore (" in served[2]


def test_a_served_miss_on_a_flat_layout_walks_for_its_note(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flat layout's sub-dirs are not watched, so the server cannot vouch for the files
    in them: the caller lists the vault for its note, once, as the scan does."""
    vault = make_vault(tmp_path / "v", {"atlas/a.md": "alpha\n", "atlas/sub/b.md": "x\n", "atlas/C.MD": "x\n"})
    note = (
        "not searched: 2 markdown files in the searched dirs: 1 in sub-dirs "
        '(set depth = "tree" in .mnemosyne.toml), 1 ending in .MD (set suffixes = [".md", ".MD"] in '
        ".mnemosyne.toml); wiki lint lists them"
    )
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, find(vault, "zyzzyva"))
        assert served == scanned == miss(vault, note)
        with caller_listings() as walks:
            assert run_cli(capsysbinary, find(vault, "zyzzyva")) == served
        assert walks == [str(vault.resolve())]


def _with_listings(
    capsysbinary: pytest.CaptureFixture[bytes], argv: list[str]
) -> tuple[tuple[int, bytes, str], list[str]]:
    """The call's answer, and the vaults it listed."""
    with caller_listings() as walks:
        answer = run_cli(capsysbinary, argv)
    return answer, walks


def _aged(*dirs: Path) -> None:
    """Give ``dirs`` an mtime an hour old: a stat that recent may still change within its
    tick (the racy rule), so only an older one lets a kept note stand for a listing's."""
    old = time.time_ns() - 3600 * 10**9
    for path in dirs:
        os.utime(path, ns=(old, old))


def test_a_served_miss_takes_its_note_from_the_last_listing_while_the_stats_vouch_for_it(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing that kept the server's token kept the miss's note with the stat of each
    dir it listed for it: a served miss lists nothing while they are as they were, and a
    file made where no watch sees (a flat dir's sub-dir), or one no page could be in a
    watched dir, is noted at once, through a listing, as the scan notes it."""
    vault = make_vault(tmp_path / "v", {"atlas/a.md": "alpha\n", "atlas/sub/b.md": "x\n", "atlas/C.MD": "x\n"})
    argv = find(vault, "zyzzyva")

    def note(nested: int, upper: int) -> str:
        count = nested + upper
        return (
            f"not searched: {count} markdown files in the searched dirs: {nested} in sub-dirs "
            f'(set depth = "tree" in .mnemosyne.toml), {upper} ending in .MD (set suffixes = [".md", ".MD"] in '
            ".mnemosyne.toml); wiki lint lists them"
        )

    _aged(vault, vault / "atlas", vault / "atlas" / "sub")
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv, skips_listing=True)
        assert served == scanned == miss(vault, note(1, 1))
        assert _with_listings(capsysbinary, argv) == (miss(vault, note(1, 1)), [])
        (vault / "atlas" / "sub" / "c.md").write_text("x\n")
        assert _with_listings(capsysbinary, argv) == (miss(vault, note(2, 1)), [str(vault.resolve())])
        assert run_cli(capsysbinary, [*argv, "--no-cache"]) == miss(vault, note(2, 1))
        _aged(vault / "atlas" / "sub")
        # This listing keeps the aged stats; the next call takes its note from them.
        assert _with_listings(capsysbinary, argv) == (miss(vault, note(2, 1)), [str(vault.resolve())])
        assert _with_listings(capsysbinary, argv) == (miss(vault, note(2, 1)), [])
        (vault / "atlas" / "D.MD").write_text("x\n")
        assert _with_listings(capsysbinary, argv) == (miss(vault, note(2, 2)), [str(vault.resolve())])
        assert run_cli(capsysbinary, [*argv, "--no-cache"]) == miss(vault, note(2, 2))


def test_a_served_recall_miss_takes_its_note_from_the_last_listing_as_finds_does(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """recall misses as find does: served, its note comes from the last listing while the
    stats vouch for it, and its count of the pages it cannot see from the index, with no
    listing; a file made where no watch sees is noted at once, through a listing, as the
    scan notes it, and a page that gains a title leaves the count as the server reports it."""
    vault = make_vault(tmp_path / "v", {"atlas/a.md": "alpha\n", "atlas/sub/b.md": "x\n", "atlas/C.MD": "x\n"})
    argv = ["wiki", "recall", "zyzzyva", "--vault", str(vault)]

    def recall_miss(nested: int) -> tuple[int, bytes, str]:
        return (
            0,
            b"No wiki entries matched zyzzyva\n",
            "hint: 1 page has no frontmatter title, slug or tags, so recall cannot see it; find searches it "
            f"too: mnemosyne wiki find --vault {vault} zyzzyva\n"
            f"not searched: {nested + 1} markdown files in the searched dirs: {nested} in sub-dirs "
            '(set depth = "tree" in .mnemosyne.toml), 1 ending in .MD (set suffixes = [".md", ".MD"] in '
            ".mnemosyne.toml); wiki lint lists them\n",
        )

    _aged(vault, vault / "atlas", vault / "atlas" / "sub")
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv, skips_listing=True)
        assert served == scanned == recall_miss(1)
        assert _with_listings(capsysbinary, argv) == (recall_miss(1), [])
        (vault / "atlas" / "sub" / "c.md").write_text("x\n")
        assert _with_listings(capsysbinary, argv) == (recall_miss(2), [str(vault.resolve())])
        assert run_cli(capsysbinary, [*argv, "--no-cache"]) == recall_miss(2)
        _aged(vault / "atlas" / "sub")
        assert _with_listings(capsysbinary, argv) == (recall_miss(2), [str(vault.resolve())])
        (vault / "atlas" / "a.md").write_text("---\ntitle: Alpha\n---\nalpha\n")  # its dir's stat stays
        titled = _with_listings(capsysbinary, argv)
        assert titled == (run_cli(capsysbinary, [*argv, "--no-cache"]), [])
        assert titled[0][2] == recall_miss(2)[2].partition("\n")[2]  # no page recall cannot see
