"""The edge-case vault of the reliability tests, made whole.

fixtures/vaults/edge/ is committed; what git cannot hold well is added here to a copy:
symlinks that stay inside the vault, escape it or are broken, a scanned dir that is a
symlink, file names with undecodable bytes and control characters, a 50 MB page and a
100k-deep YAML nesting bomb.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
EDGE_VAULT = REPO_ROOT / "fixtures" / "vaults" / "edge"
GOLDEN_ROOT = REPO_ROOT / "fixtures" / "golden"
#: Committed as it is: the shapes of docs/spec.md rule 8's known-item order (command pages without
#: frontmatter, docs-site sections flattened into file names, near-duplicate titles).
KNOWN_ITEM_VAULT = REPO_ROOT / "fixtures" / "vaults" / "known-item"
#: Proposals named by number and docs in several languages, where keywords are often only
#: mentioned in the text: where each match was found, and the order of the mentions.
MENTIONS_VAULT = REPO_ROOT / "fixtures" / "vaults" / "mentions"

#: The keyword only the last line of the 50 MB page holds.
BIG_PAGE_NEEDLE = "needle-at-the-end-of-fifty-megabytes"
BIG_PAGE_BYTES = 50 * 1024 * 1024
#: Every file outside the vault, and every file the scan must skip, holds this word.
UNREACHABLE = "unreachable"
NESTING_DEPTH = 100_000


def build_edge_vault(base: Path, *, big_page: bool = True) -> Path:
    """Copy the committed edge vault to ``base/vault``, add what git cannot hold, and
    return the vault root. ``big_page=False`` leaves out the 50 MB page, which every
    query whose keywords are not in its title reads whole."""
    vault = base / "vault"
    shutil.copytree(EDGE_VAULT, vault, symlinks=True)
    outside = base / "outside-of-vault"
    outside.mkdir()
    secret = b"---\ntitle: Secret Outside The Vault\n---\nsecret unreachable\n"
    (base / "outside-secret.md").write_bytes(secret)
    (outside / "escaped-dir-page.md").write_bytes(secret)

    apollo = vault / "apollo"
    apollo.mkdir()
    (apollo / "regular.md").write_bytes(b"---\ntitle: Apollo Regular Page\n---\nA plain page beside the symlinks.\n")
    links = {
        "link-inside.md": "../atlas/crlf.md",  # followed: the target is inside the vault
        "link-to-hidden.md": "../atlas/.hidden.md",  # followed: inside the vault, though not a page itself
        "link-escape.md": str(base / "outside-secret.md"),  # absolute, leaves the vault
        "link-dotdot.md": "../../outside-secret.md",  # relative, leaves the vault
        "link-broken.md": "../atlas/does-not-exist.md",
        "link-loop.md": "link-loop.md",
        "link-to-dir.md": "../atlas",  # a dir, not a page: skipped silently
        ".hidden-link.md": "../atlas/crlf.md",  # hidden: never listed
    }
    for name, target in links.items():
        os.symlink(target, apollo / name)
    # A scanned dir that is a symlink out of the vault, and one that stays inside.
    os.symlink(outside, vault / "hephaistos")
    big_pages = vault / "big-pages"
    big_pages.mkdir()
    os.symlink("big-pages", vault / "athena")
    if big_page:
        _write_big_page(big_pages / "fifty-megabytes.md")

    # Names that git and some file systems cannot hold.
    proteus = os.fsencode(vault / "proteus")
    for raw_name in (b"bad-\xff-name.md", b"evil\n\x1b[2Jname.md"):
        with open(os.path.join(proteus, raw_name), "wb") as handle:
            handle.write(b"A hostile file name.\n")
    deep = "[" * NESTING_DEPTH + "]" * NESTING_DEPTH
    (vault / "mnemosyne" / "deep-nesting.md").write_text(
        f"---\ntitle: {deep}\n---\nA YAML bomb of nesting: parsing it must stay bounded.\n", encoding="utf-8"
    )
    return vault


def _write_big_page(path: Path) -> None:
    line = b"Filler line of the fifty-megabyte page: plain ASCII prose, repeated.\n"
    head = b"---\ntitle: Fifty Megabytes\n---\n"
    tail = f"The last line holds the {BIG_PAGE_NEEDLE}.\n".encode()
    count = (BIG_PAGE_BYTES - len(head) - len(tail)) // len(line)
    with open(path, "wb") as handle:
        handle.write(head)
        block = line * 10_000
        for _ in range(count // 10_000):
            handle.write(block)
        handle.write(line * (count % 10_000))
        handle.write(tail)
