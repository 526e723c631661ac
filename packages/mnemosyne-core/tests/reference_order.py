"""find's order (docs/spec.md rule 8) written as plainly as the spec words it, for the
property tests to hold ``mnemosyne_core.find.judge`` to. Shared by the core's and the CLI's
references, so the two cannot drift apart."""

from __future__ import annotations

import unicodedata


def plain_fold(text: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def begins_a_word(keyword: str, text: str) -> bool:
    """The keyword occurs at the very beginning, or right after a non-alphanumeric character."""
    return any(
        text[index:].startswith(keyword) and (index == 0 or not text[index - 1].isalnum()) for index in range(len(text))
    )


def reference_sort_key(folded_keywords: list[str], title: str, rel_path: str) -> tuple[object, ...]:
    """The spec's keys in order; a smaller tuple sorts first."""
    folded_title, folded_path = plain_fold(title), plain_fold(rel_path)
    named = all(keyword in folded_title or keyword in folded_path for keyword in folded_keywords)
    if not named:
        return (1, rel_path)
    title_has_all = all(keyword in folded_title for keyword in folded_keywords)
    every_word_starts = all(
        begins_a_word(keyword, folded_title if keyword in folded_title else folded_path) for keyword in folded_keywords
    )
    return (0, 0 if title_has_all else 1, 0 if every_word_starts else 1, len(folded_title), rel_path)
