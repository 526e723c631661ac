"""find's order (docs/spec.md rule 8) written as plainly as the spec words it, for the
property tests to hold ``mnemosyne_core.find.judge`` to. Shared by the core's and the CLI's
references, so the two cannot drift apart."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def plain_fold(text: str) -> str:
    """docs/spec.md rule 6: NFC, the four Turkish i's (İ, I, ı, i) as one i, casefold, NFC."""
    dotless = unicodedata.normalize("NFC", text).replace("\u0130", "i").replace("\u0131", "i")
    return unicodedata.normalize("NFC", dotless.casefold())


def begins_a_word(keyword: str, text: str) -> bool:
    """The keyword occurs at the very beginning, or right after a non-alphanumeric character."""
    return any(
        text[index:].startswith(keyword) and (index == 0 or not text[index - 1].isalnum()) for index in range(len(text))
    )


def reference_sort_key(
    folded_keywords: list[str],
    title: str,
    rel_path: str,
    text: str = "",
    aliases: Sequence[str] = (),
    prefer: Sequence[str] = (),
) -> tuple[object, ...]:
    """The spec's keys in order; a smaller tuple sorts first. ``text`` is the page's decoded
    text, ``aliases`` its frontmatter aliases, ``prefer`` the vault's ``[order] prefer``
    (each only matters where the spec says)."""
    folded_title, folded_path = plain_fold(title), plain_fold(rel_path)
    # The file name without its suffix: a name too.
    folded_stem = folded_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    preferred = next((index for index, name in enumerate(prefer) if rel_path.startswith(name)), len(prefer))
    for_names = []
    if folded_path in folded_keywords:
        return (-1, 0, 0, 0, 0, preferred, rel_path)
    names = [(0, folded_title), (1, folded_stem)] + [(2, plain_fold(alias)) for alias in aliases]
    for is_alias, name in names:
        if all(keyword in name for keyword in folded_keywords):
            every_word_starts = all(begins_a_word(keyword, name) for keyword in folded_keywords)
            for_names.append((0, 0 if every_word_starts else 1, 0, len(name), is_alias, preferred, rel_path))
    if for_names:
        return min(for_names)
    named = all(keyword in folded_title or keyword in folded_path for keyword in folded_keywords)
    if not named:
        return (1, 0, 0, *mention_depth(folded_keywords, plain_fold(text)), preferred, rel_path)
    every_word_starts = all(
        begins_a_word(keyword, folded_title if keyword in folded_title else folded_path) for keyword in folded_keywords
    )
    return (0, 0 if every_word_starts else 1, 1, len(folded_path), 0, preferred, rel_path)


def mention_depth(folded_keywords: list[str], folded_text: str) -> tuple[int, int]:
    """(line, column) of the end of the shortest start of ``folded_text`` holding every
    keyword it holds, both from 0, the column in characters."""
    ends = []
    for keyword in folded_keywords:
        if keyword in folded_text:
            lines = folded_text[: folded_text.index(keyword)].split("\n")
            ends.append((len(lines) - 1, len(lines[-1]) + len(keyword)))
    return max(ends, default=(0, 0))


def matched(key: tuple[object, ...]) -> str:
    """find --json's "matched" for a page of this key."""
    return "text" if key[0] else "path" if key[2] else "title"


def plain_aliases(fields: object) -> list[str]:
    """A frontmatter mapping's aliases as the spec words them: a list of strings, or one
    string; each with its whitespace collapsed, the empty ones dropped."""
    value = fields.get("aliases") if isinstance(fields, dict) else None
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [" ".join(item.split()) for item in items if isinstance(item, str) and item.split()]
