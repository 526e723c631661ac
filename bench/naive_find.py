"""The benchmark's baseline: the wiki find seed implemented plainly.

Read every page whole, parse every frontmatter with ``yaml.safe_load``, casefold, and keep
the pages whose title, path or text holds every keyword. Same answers and output lines as
``mnemosyne wiki find`` (the benchmark checks that), none of its shortcuts.

    python bench/naive_find.py --vault VAULT KEYWORD [KEYWORD ...] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import sys
import unicodedata
from typing import Any

import yaml

from mnemosyne_core.config import DEFAULT_SCANNED_DIRS


def fold(text: str) -> str:
    """docs/spec.md rule 6: NFC, the four Turkish i's (İ, I, ı, i) as one i, casefold, NFC."""
    dotless = unicodedata.normalize("NFC", text).replace("\u0130", "i").replace("\u0131", "i")
    return unicodedata.normalize("NFC", dotless.casefold())


def frontmatter(text: str) -> dict[Any, Any] | None:
    lines = text.split("\n")
    if lines[0].rstrip(" \t\r") != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip(" \t\r") == "---":
            try:
                value = yaml.safe_load("\n".join(lines[1:index]))
            except (yaml.YAMLError, ValueError):
                return None
            return value if isinstance(value, dict) else None
    return None


def starts_word(keyword: str, text: str) -> bool:
    """Whether ``keyword`` occurs in ``text`` at its start or after a character that is not
    a letter or digit."""
    return any(
        text.startswith(keyword, position) and (position == 0 or not text[position - 1].isalnum())
        for position in range(len(text))
    )


def find(vault: str, keywords: list[str]) -> list[tuple[tuple[int, int, int, int, int, str], str, str]]:
    """(sort key, path, title) of each matching page, in find's order (docs/spec.md rule 8):
    the page a keyword is the whole path of, then pages whose title, stem, an alias or path
    holds every keyword (every keyword starting a word, then a name alone holding them, then
    the shorter name or path, then title before stem before alias, then the path), the rest
    by how soon their text holds every keyword, then by path."""
    folded = [fold(keyword) for keyword in keywords]
    found = []
    for dir_name in DEFAULT_SCANNED_DIRS:
        dir_path = os.path.join(vault, dir_name)
        if not os.path.isdir(dir_path):
            continue
        for name in os.listdir(dir_path):
            path = os.path.join(dir_path, name)
            if not name.endswith(".md") or name.startswith(".") or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace").removeprefix("\ufeff")
            metadata = frontmatter(text)
            rel_path = f"{dir_name}/{name}"
            title = metadata.get("title") if metadata else None
            title = " ".join(title.split()) if isinstance(title, str) else ""
            title = title or name[:-3]
            folded_title, folded_path, folded_text = fold(title), fold(rel_path), fold(text)
            given = metadata.get("aliases") if metadata else None
            aliases = [given] if isinstance(given, str) else given if isinstance(given, list) else []
            # The title, then the file name's stem, then the aliases: rule 8's key 4.
            names = [(0, folded_title), (1, fold(name[:-3]))]
            names += [(2, fold(" ".join(alias.split()))) for alias in aliases if isinstance(alias, str)]
            names = [(kind, candidate) for kind, candidate in names if candidate]
            surfaces = [*(candidate for _, candidate in names), folded_path, folded_text]
            if not all(any(keyword in surface for surface in surfaces) for keyword in folded):
                continue
            named = [
                (
                    0,
                    int(not all(starts_word(keyword, candidate) for keyword in folded)),
                    0,
                    len(candidate),
                    kind,
                    rel_path,
                )
                for kind, candidate in names
                if all(keyword in candidate for keyword in folded)
            ]
            if folded_path in folded:  # a keyword that is the page's whole path names it first
                key = (-1, 0, 0, 0, 0, rel_path)
            elif named:
                key = min(named)
            elif all(keyword in folded_title or keyword in folded_path for keyword in folded):
                words_start = all(
                    starts_word(keyword, folded_title if keyword in folded_title else folded_path) for keyword in folded
                )
                key = (0, int(not words_start), 1, len(folded_path), 0, rel_path)
            else:
                # Pages that only mention the keywords: the text holding them all on the
                # earliest line (then column) first.
                ends = []
                for keyword in folded:
                    if keyword in folded_text:
                        lines = folded_text[: folded_text.index(keyword)].split("\n")
                        ends.append((len(lines) - 1, len(lines[-1]) + len(keyword)))
                key = (1, 0, 0, *max(ends, default=(0, 0)), rel_path)
            found.append((key, rel_path, title))
    found.sort()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("keywords", nargs="+")
    parser.add_argument("--vault", required=True)
    parser.add_argument("--limit", type=int, default=20)
    args = parser.parse_args(argv)
    found = find(args.vault, args.keywords)
    if not found:
        print(f"no wiki page matches '{' '.join(args.keywords)}'", file=sys.stderr)
        return 1
    shown = found[: args.limit] if args.limit else found
    sys.stdout.write("".join(f"{path} — {title}\n" for _, path, title in shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
