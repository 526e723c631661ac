"""The benchmark's baseline: the wiki find seed implemented plainly.

Read every page whole, parse every frontmatter with ``yaml.safe_load``, casefold, and keep
the pages whose title, stem or text holds every keyword. Same answers and output lines as
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
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def frontmatter(text: str) -> dict[Any, Any] | None:
    lines = text.split("\n")
    if lines[0].rstrip("\r") != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            try:
                value = yaml.safe_load("\n".join(lines[1:index]))
            except (yaml.YAMLError, ValueError):
                return None
            return value if isinstance(value, dict) else None
    return None


def find(vault: str, keywords: list[str]) -> list[tuple[bool, str, str]]:
    """(title or stem holds every keyword, path, title) of each matching page."""
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
            stem = name[:-3]
            title = metadata.get("title") if metadata else None
            title = " ".join(title.split()) if isinstance(title, str) else ""
            title = title or stem
            folded_title, folded_stem, folded_text = fold(title), fold(stem), fold(text)
            in_title = all(keyword in folded_title or keyword in folded_stem for keyword in folded)
            if all(keyword in folded_title or keyword in folded_stem or keyword in folded_text for keyword in folded):
                found.append((in_title, f"{dir_name}/{name}", title))
    found.sort(key=lambda page: (not page[0], page[1]))
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
