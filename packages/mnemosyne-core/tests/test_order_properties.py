"""The known-item order (docs/spec.md rule 8) as properties over random vaults: it equals
a plain sort by the spec's keys (reference_order.py), and it does not depend on the order
in which directories list their files."""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_examples import examples
from reference_order import plain_fold, reference_sort_key

from mnemosyne_core import search
from mnemosyne_core.frontmatter import logseq_page_name, title_of

#: Word parts that make every key of the order matter: words that start or sit inside
#: other words ("tar", "setarch", "tar-split"), case and folding ("Straße", "STRASSE"),
#: separators and digits around them.
PARTS = ["tar", "setarch", "tar-split", "Shortcode", "shortcodes", "Straße", "STRASSE", "x2", "_", ".", " ", "é"]
TEXTS = st.lists(st.sampled_from(PARTS), min_size=1, max_size=4).map("".join)
PAGES = st.lists(
    st.fixed_dictionaries(
        {
            "dir": st.sampled_from(["atlas", "hermes", "analyses"]),
            "name": TEXTS.map(lambda text: text.replace("/", "").strip() or "page"),
            "title": st.one_of(st.none(), TEXTS),
            "body": st.one_of(st.just(""), TEXTS),
        }
    ),
    min_size=1,
    max_size=12,
)
KEYWORDS = st.lists(st.sampled_from(["tar", "shortcode", "strasse", "ar", "x2", "e", "s"]), min_size=1, max_size=2)


def write_vault(vault: str, pages: list[dict[str, Any]]) -> None:
    for spec in pages:
        os.makedirs(os.path.join(vault, spec["dir"]), exist_ok=True)
        name = spec["name"] if not spec["name"].startswith(".") else "p" + spec["name"]
        front = f"---\ntitle: '{spec['title']}'\n---\n" if spec["title"] and spec["title"].strip() else ""
        with open(os.path.join(vault, spec["dir"], f"{name}.md"), "w", encoding="utf-8") as handle:
            handle.write(front + spec["body"] + "\n")


def reference_order(vault: str, keywords: list[str]) -> list[str]:
    """Every matching page, sorted by the spec's keys, read plainly."""
    folded = [plain_fold(keyword) for keyword in keywords]
    found = []
    for dir_name in sorted(os.listdir(vault)):
        for name in os.listdir(os.path.join(vault, dir_name)):
            with open(os.path.join(vault, dir_name, name), encoding="utf-8") as handle:
                text = handle.read()
            stem = name[: -len(".md")]
            title_line = text.split("\n")[1] if text.startswith("---\n") else None
            # Rule 5: a frontmatter title has its whitespace collapsed; a stem is kept as it is,
            # but for Logseq's ``A___B`` that names the page ``A/B``.
            name_of_stem = logseq_page_name(stem)
            title = title_of({"title": title_line[len("title: '") : -1]}, name_of_stem) if title_line else name_of_stem
            rel_path = f"{dir_name}/{name}"
            surface = plain_fold(title) + "\0" + plain_fold(rel_path) + "\0" + plain_fold(text)
            if all(keyword in surface for keyword in folded):
                found.append((reference_sort_key(folded, title, rel_path, text), rel_path))
    return [rel_path for _, rel_path in sorted(found)]


@settings(max_examples=examples(35), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pages=PAGES, keywords=KEYWORDS)
def test_order_equals_a_plain_sort_by_the_specs_keys(pages: list[dict[str, Any]], keywords: list[str]) -> None:
    with tempfile.TemporaryDirectory() as vault:
        write_vault(vault, pages)
        assert [match.path for match in search(vault, keywords, limit=0).matches] == reference_order(vault, keywords)


class _ShuffledScandir:
    """os.scandir's entries in another order, as another file system would list them."""

    real = os.scandir

    def __init__(self, path: str, rng: random.Random):
        with _ShuffledScandir.real(path) as entries:
            self.entries = list(entries)
        rng.shuffle(self.entries)

    def __enter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self.entries)

    def __exit__(self, *exc: object) -> None:
        return None


@settings(max_examples=examples(15), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pages=PAGES, keywords=KEYWORDS, seeds=st.lists(st.integers(0, 2**32), min_size=2, max_size=2))
def test_output_does_not_depend_on_the_listing_order(
    monkeypatch: pytest.MonkeyPatch, pages: list[dict[str, Any]], keywords: list[str], seeds: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as vault:
        write_vault(vault, pages)
        answers = []
        for seed in seeds:
            rng = random.Random(seed)
            with monkeypatch.context() as patch:
                patch.setattr(os, "scandir", lambda path, rng=rng: _ShuffledScandir(path, rng))
                for limit in (0, 1, 3):
                    result = search(vault, keywords, limit=limit)
                    answers.append((limit, [(m.path, m.title) for m in result.matches], result.keyword_counts))
        half = len(answers) // 2
        assert answers[:half] == answers[half:]
