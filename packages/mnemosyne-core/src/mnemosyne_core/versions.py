"""Versions and translations of a page, and the copies among them.

A published collection keeps one page several times: once per release
(``reference/7.4/a/b.md``, ``reference/7.6/a/b.md``) or per language (``content/en/x.md``,
``content/it/x.md``). Such pages lie at the same relative path under *sibling* dirs (dirs
with one parent) named as versions or as languages, and are *versions of one page*,
whatever their content: recall reads one of them and lint says a finding about them once.
A page is a *copy* of another, whatever the dirs are named, when both lie at the same
relative path under sibling dirs and hold the same bytes, or the same text after their
frontmatter: lint and info advise leaving out a dir only when every page in it is one.

Imported by lint, info, recall and ``wiki init``; never by find's scan.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

#: A dir named as a release: ``7.4``, ``1.x``, ``v2``, ``v1.0``, ``version-30.4`` (Docusaurus),
#: ``release-2.1``. A bare number is not one: ``2024/`` is a blog's year, not a release.
_VERSION_NAME = r"(?:v|version[-_]?|release[-_]?)(?:\d+(?:\.(?:\d+|x))*)|\d+(?:\.(?:\d+|x))+"

#: ISO 639-1's two-letter language codes: a dir named by one (``en``, ``it``), or by one
#: with a region or script (``pt-br``, ``zh_TW``, ``zh-Hans``), holds a translation.
_ISO_639_1 = (
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee "
    "el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is "
    "it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms "
    "mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk "
    "sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi "
    "yo za zh zu"
)
_LANGUAGE_CODES = frozenset(_ISO_639_1.split())
_LANGUAGE_NAME = r"([a-z]{2})(?:[-_](?:[a-z]{2}|[a-z]{4}|[0-9]{3}))?"

VERSION = "version"
LANGUAGE = "language"


def dir_kind(name: str) -> str | None:
    """VERSION or LANGUAGE when the dir name ``name`` names a release or a language, else None."""
    # A vault's few dir names recur in every path lint's findings name: asked once each.
    if name in _KINDS:
        return _KINDS[name]
    kind = None
    # Each pattern is asked only of a name that meets a condition it cannot match without
    # (a digit; two characters, or a separator third): most dir names meet neither, and a
    # recall or lint that meets only those imports no re (and no enum with it).
    if any(char.isdecimal() for char in name) and _fullmatch(_VERSION_NAME, name):
        kind = VERSION
    elif len(name) == 2 or (len(name) in (5, 6, 7) and name[2] in "-_"):
        match = _fullmatch(_LANGUAGE_NAME, name)
        if match is not None and match.group(1).lower() in _LANGUAGE_CODES:
            kind = LANGUAGE
    if len(_KINDS) < _MOST_KINDS:
        _KINDS[name] = kind
    return kind


def _fullmatch(pattern: str, name: str) -> re.Match[str] | None:
    """``pattern`` matched case-insensitively against the whole of ``name`` (re keeps the
    compiled pattern)."""
    import re

    return re.fullmatch(pattern, name, re.IGNORECASE)


#: ``dir_kind``'s answers so far, at most ``_MOST_KINDS`` of them (a long-lived server's
#: names must not grow it without end).
_KINDS: dict[str, str | None] = {}
_MOST_KINDS = 4096


def natural_key(name: str) -> tuple[tuple[int, int, str], ...]:
    """``name`` compared as people count: its digit runs by value, so 7.10 > 7.9 > 5.1."""
    import re  # only releases are compared so: most calls need no re

    return tuple((1, int(part), "") if part.isdigit() else (0, 0, part.lower()) for part in re.split(r"(\d+)", name))


def page_key(rel_path: str, docusaurus: bool = False) -> str:
    """What the versions of one page share: ``rel_path`` with each dir named as a release
    or a language (``dir_kind``) replaced by its kind. Two pages with one key lie at the
    same relative path under sibling dirs of one kind (or under such dirs at several
    depths: a translation of a release). In a Docusaurus site (``docusaurus``: the pages
    include ``versioned_docs/version-X/``, ``page_keys``), the next release lives in
    ``docs/`` (at the root, or in ``website/``) and each published one in
    ``versioned_docs/version-X/``, not a sibling of it: a page of either is a version of
    the page at the same path below the other (``_docusaurus_page``)."""
    parts = rel_path.split("/")
    below = _docusaurus_page(parts) if docusaurus else None
    if below is not None:
        parts = ["\0docusaurus", *below]
    for index, part in enumerate(parts[:-1]):
        kind = dir_kind(part)
        if kind is not None:
            parts[index] = f"\0{kind}"
    return "/".join(parts)


def page_keys(paths: Iterable[str]) -> dict[str, str]:
    """``page_key`` of each of ``paths``, a vault's pages (or the ones a command met): a
    Docusaurus site's when one of them lies in ``versioned_docs/version-X/``."""
    paths = list(paths)
    docusaurus = is_docusaurus(paths)
    # A page's key is its dir's key and its own name: each dir is keyed once, not once a
    # page (lint keys every page a finding names, 100,000 on a large vault).
    dir_keys: dict[str, str] = {}
    keys = {}
    for path in paths:
        dir_name, slash, name = path.rpartition("/")
        dir_key = dir_keys.get(dir_name)
        if dir_key is None:
            dir_key = dir_keys[dir_name] = page_key(dir_name + slash, docusaurus) if slash else ""
        keys[path] = dir_key + name
    return keys


def holds_versions(dirs: Collection[str]) -> bool:
    """Whether a page in one of ``dirs`` (vault-relative, "" the root) may be a version of
    another: its ``page_key`` is not its path (``page_keys`` keys each page by its dir's)."""
    dir_paths = [f"{dir_name}/" for dir_name in dirs if dir_name]
    docusaurus = is_docusaurus(dir_paths)  # a dir's path with a trailing "/" stands for its pages'
    return any(page_key(dir_path, docusaurus) != dir_path for dir_path in dir_paths)


def is_docusaurus(paths: Iterable[str]) -> bool:
    """Whether ``paths`` are a Docusaurus site's: one of them lies in ``versioned_docs/version-X/``."""
    return any("versioned_docs/" in path and _docusaurus_page(path.split("/")) is not None for path in paths)


def _docusaurus_page(parts: Sequence[str]) -> list[str] | None:
    """The path below a Docusaurus docs dir (``docs/``, ``website/docs/`` or
    ``…/versioned_docs/version-X/``) of the page whose path is ``parts``, else None."""
    for index in range(len(parts) - 2):
        if parts[index] == "versioned_docs" and dir_kind(parts[index + 1]) == VERSION:
            return list(parts[index + 2 :])
    if len(parts) > 1 and parts[0] == "docs":
        return list(parts[1:])
    if len(parts) > 2 and parts[0] == "website" and parts[1] == "docs":
        return list(parts[2:])
    return None


def version_dirs(paths: Sequence[str]) -> list[str]:
    """The version dir of each of ``paths`` (versions of one page, ``page_key``): its path
    without the dirs and name all of them end with, with a trailing '/'."""
    split = [path.split("/") for path in paths]
    shared = 1
    while shared < min(map(len, split)) and len({tuple(parts[-shared - 1 :]) for parts in split}) == 1:
        shared += 1
    return ["/".join(parts[:-shared]) + "/" for parts in split]


def chosen_version(paths: Sequence[str], prefer: Sequence[str]) -> int:
    """Which of ``paths``, the versions of one page in their listed order, stands for them
    (recall reads it): the first that ``[order] prefer`` ranks best (``find.preferred_rank``)
    when it ranks them apart; else, when they differ by release dirs, the highest release by
    ``natural_key``; else (translations) the first listed."""
    if prefer:
        from mnemosyne_core.find import preferred_rank

        ranks = [preferred_rank(path, prefer) for path in paths]
        if len(set(ranks)) > 1:
            return ranks.index(min(ranks))
    dirs = version_dirs(paths)
    names = [path.rstrip("/").rpartition("/")[2] for path in dirs]
    releases = [index for index, name in enumerate(names) if dir_kind(name) == VERSION]
    # Docusaurus's docs/ is its next, unpublished release: the highest published one stands
    # for the page, as the site shows it by default.
    if releases and all(dir_kind(name) == VERSION or name == "docs" for name in names):
        return max(releases, key=lambda index: natural_key(names[index]))
    return 0


# --- copies ---


class CopyDir:
    """A dir of a family some of whose pages are copies of the pages at the same relative
    path in the family's original: ``copies`` (their paths, relative to the dir, sorted)
    of its ``pages`` pages. Vault-relative, without a trailing '/'."""

    __slots__ = ("copies", "dir", "of", "pages")

    def __init__(self, dir_name: str, of: str, copies: list[str], pages: int):
        self.dir = dir_name
        self.of = of
        self.copies = copies
        self.pages = pages

    @property
    def whole(self) -> bool:
        """Whether every page of the dir is a copy: only then may an exclude drop it."""
        return len(self.copies) == self.pages

    def __repr__(self) -> str:
        return f"CopyDir({self.dir!r}, of={self.of!r}, copies={len(self.copies)}, pages={self.pages})"


def find_copies(digests: Mapping[str, tuple[bytes | None, bytes | None]], prefer: Sequence[str] = ()) -> list[CopyDir]:
    """The dirs some of whose pages are copies, from each page's ``content_digests`` by
    vault-relative path. Pages compare only with the pages at the same relative path under
    the sibling dirs of theirs; of such sibling dirs, each is measured against its family's
    original (``original_of``). Sorted by dir."""
    # (parent parts, tail parts) -> [(the dir between them, the page's digests)]
    slots: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[str, tuple[bytes | None, bytes | None]]]] = {}
    below: dict[tuple[str, ...], int] = {}
    for rel_path, digest in digests.items():
        parts = tuple(rel_path.split("/"))
        for depth in range(len(parts) - 1):
            slots.setdefault((parts[:depth], parts[depth + 1 :]), []).append((parts[depth], digest))
            below[parts[: depth + 1]] = below.get(parts[: depth + 1], 0) + 1
    # parent -> {dir: [(tail, digests of the page there)]} for the slots holding a copy
    families: dict[tuple[str, ...], dict[str, dict[tuple[str, ...], tuple[bytes | None, bytes | None]]]] = {}
    pointed: dict[tuple[str, ...], dict[str, list[int]]] = {}
    for (parent, tail), members in slots.items():
        if len(members) < 2:
            continue
        counts = pointed.setdefault(parent, {})
        for name, _ in members:
            counts.setdefault(name, [0, below[(*parent, name)]])
        equal: dict[bytes, list[str]] = {}
        for name, (whole, body) in members:
            for content in {whole, body}:
                if content is not None:
                    equal.setdefault(content, []).append(name)
        copied = {name for names in equal.values() if len(names) > 1 for name in names}
        if not copied:
            continue
        family = families.setdefault(parent, {})
        for name, digests_there in members:
            family.setdefault(name, {})[tail] = digests_there
        for name in copied:
            others = {other for names in equal.values() if name in names for other in names} - {name}
            counts[name][0] += len(others)
    found: list[CopyDir] = []
    for parent, dirs in families.items():
        original = original_of(parent, sorted(dirs), pointed[parent], prefer)
        kept = dirs[original]
        for name, pages in dirs.items():
            if name == original:
                continue
            copies = sorted(
                "/".join(tail)
                for tail, (whole, body) in pages.items()
                if tail in kept and _same(kept[tail], (whole, body))
            )
            total = below[(*parent, name)]
            if copies:
                found.append(CopyDir("/".join((*parent, name)), "/".join((*parent, original)), copies, total))
    return sorted(found, key=lambda copy: copy.dir)


def _same(first: tuple[bytes | None, bytes | None], second: tuple[bytes | None, bytes | None]) -> bool:
    return any(mine is not None and mine == theirs for mine, theirs in zip(first, second, strict=True))


def original_of(
    parent: Sequence[str], names: Sequence[str], pointed: Mapping[str, Sequence[int]], prefer: Sequence[str]
) -> str:
    """Which of the sibling dirs ``names`` (under ``parent``) the others copy: the one
    ``prefer`` names first; else, when all are named as releases, the highest by
    ``natural_key``; else the one most copies point to (``pointed``: per dir, how many
    pages of the others equal one of its own, then how many pages it holds: translations
    lag behind the language they are made from), then the first by name."""
    prefix = "/".join(parent) + "/" if parent else ""
    for preferred in prefer:
        for name in names:
            if preferred == f"{prefix}{name}/":
                return name
    if all(dir_kind(name) == VERSION for name in names):
        return max(names, key=natural_key)
    return max(names, key=lambda name: (*pointed.get(name, (0, 0)), [-ord(char) for char in name]))


def preferred_dirs_of(
    paths: Iterable[str], digests_of: Callable[[str], tuple[bytes | None, bytes | None]]
) -> list[str]:
    """The ``[order] prefer`` that ``wiki init`` writes for a vault whose pages are at
    ``paths``: for each set of sibling dirs named as releases or as languages that hold
    pages at the same relative path, the dir ``original_of`` picks (the highest release;
    the language most copies point to, ``digests_of`` giving a page's ``pagefields.content_digests``
    by its path: asked only about the pages of translations),
    each with a trailing '/', the deepest first: a translation's language within the
    preferred release ranks before the rest of that release.

    Language dirs that translate the pages beside them (``root_translations``) are no
    family with an original among them: the original is the pages under none of them. They
    follow ``UNLISTED_PAGES`` at the end of the list, by path, so that it places every other
    page before them (``find.preferred_rank``)."""
    from mnemosyne_core.config import UNLISTED_PAGES

    paths = list(paths)
    translations = root_translations(paths)
    siblings: dict[tuple[str, ...], dict[tuple[str, ...], set[str]]] = {}
    pages: dict[tuple[str, ...], int] = {}
    for rel_path in paths:
        parts = tuple(rel_path.split("/"))
        for depth in range(len(parts) - 1):
            pages[parts[: depth + 1]] = pages.get(parts[: depth + 1], 0) + 1
            if dir_kind(parts[depth]) is not None:
                siblings.setdefault(parts[:depth], {}).setdefault(parts[depth + 1 :], set()).add(parts[depth])
    preferred = []
    for parent, tails in siblings.items():
        shared = {name for names in tails.values() if len(names) > 1 for name in names}
        kinds = {dir_kind(name) for name in shared}
        if len(shared) < 2 or len(kinds) != 1:
            continue
        if any("/".join((*parent, name)) + "/" in translations for name in shared):
            continue
        pointed = _pointed(parent, tails, digests_of, pages) if kinds == {LANGUAGE} else {}
        original = original_of(parent, sorted(shared), pointed, ())
        preferred.append("/".join((*parent, original)) + "/")
    # A preference inside another preferred dir's family is kept; one below a dir that is
    # not preferred (``reference/7.4/`` when 7.6 is) would rank an old release's pages first.
    kept = [
        name for name in preferred if not any(other != name and _sibling_of_prefix(name, other) for other in preferred)
    ]
    kept.sort(key=lambda name: (-name.count("/"), name))
    if translations:
        kept += [UNLISTED_PAGES, *translations]
    return kept


def root_translations(paths: Iterable[str]) -> list[str]:
    """The language dirs (each with a trailing '/', sorted) that translate the pages lying
    beside them: a dir named as a language (``dir_kind``) at least half of whose pages lie
    at the same relative path under its parent itself, as ``zh-CN/book/x.md`` and
    ``ja/book/x.md`` mirror ``book/x.md`` on a site whose original language is at the
    root: its parent, outside such dirs, then holds the original."""
    present = set(paths)
    mirrored: dict[tuple[str, ...], list[int]] = {}
    for rel_path in present:
        parts = tuple(rel_path.split("/"))
        for depth in range(len(parts) - 1):
            if dir_kind(parts[depth]) == LANGUAGE:
                count = mirrored.setdefault(parts[: depth + 1], [0, 0])
                count[1] += 1
                count[0] += "/".join((*parts[:depth], *parts[depth + 1 :])) in present
    return sorted("/".join(name) + "/" for name, (beside, total) in mirrored.items() if beside and 2 * beside >= total)


def _sibling_of_prefix(name: str, other: str) -> bool:
    """Whether ``name`` lies below a sibling of the preferred dir ``other`` (and so below a
    dir ``other`` is preferred over)."""
    parent = other.rstrip("/").rpartition("/")[0]
    prefix = f"{parent}/" if parent else ""
    return name.startswith(prefix) and not name.startswith(other) and name.count("/") > other.count("/")


def _pointed(
    parent: tuple[str, ...],
    tails: Mapping[tuple[str, ...], set[str]],
    digests_of: Callable[[str], tuple[bytes | None, bytes | None]],
    pages: Mapping[tuple[str, ...], int],
) -> dict[str, list[int]]:
    """Per sibling dir under ``parent``: how many pages of the others equal one of its own,
    and how many pages it holds (``original_of``)."""
    counts: dict[str, list[int]] = {}
    for tail, names in tails.items():
        if len(names) < 2:
            continue
        found = {name: digests_of("/".join((*parent, name, *tail))) for name in names}
        for name, digest in found.items():
            count = counts.setdefault(name, [0, pages[(*parent, name)]])
            count[0] += sum(_same(digest, other) for other_name, other in found.items() if other_name != name)
    return counts
