"""Where the pages come from: one interface, ``Backend``, that find and recall ask with a
typed request.

A command resolves its call once, at its boundary, into a ``FindRequest`` or a
``RecallRequest`` (the vault as named, the dirs, the query, the environment) and hands it
to the Backend it was given; it never asks how it answers. ``cache.IndexedScan`` does:
through the vault's index (told by a ``wiki serve`` what changed when one runs), or with
``use_index`` false (--no-cache) by the plain scan, which reads every page on every call;
the two must answer alike. A Backend raises only InvalidQueryError and VaultError; a page
that cannot be read is a warning in the result, never an exception.

``Backend`` is a ``typing.Protocol`` that only mypy sees: typing's import costs
milliseconds that a find's start-up does not pay.
"""

from __future__ import annotations

import os

from mnemosyne_core.results import DEFAULT_LIMIT

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Protocol

    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.results import FindResult

    class Backend(Protocol):
        """Answers find's and recall's questions about one vault, as the scan would."""

        def search(self, request: FindRequest) -> FindResult: ...

        def recall(self, request: RecallRequest) -> RecallResult: ...


class FindRequest:
    """One find: the vault as named (None: found as ``location.locate_vault`` says, from
    ``environ``, ``cwd`` and ``home``, by default this process's), the keywords, the cap
    (0: none), the --dir override, whether the one match's bytes are wanted (--cat)."""

    __slots__ = ("cwd", "dirs", "environ", "home", "keep_content", "keywords", "limit", "vault")

    def __init__(
        self,
        vault: str | os.PathLike[str] | None,
        keywords: Sequence[str],
        *,
        limit: int = DEFAULT_LIMIT,
        dirs: Sequence[str] | None = None,
        keep_content: bool = False,
        environ: Mapping[str, str] = os.environ,
        cwd: str | None = None,
        home: str | None = None,
    ):
        self.vault = vault
        self.keywords = tuple(keywords)
        self.limit = limit
        self.dirs = tuple(dirs) if dirs else None
        self.keep_content = keep_content
        self.environ = environ
        self.cwd = cwd
        self.home = home


class RecallRequest:
    """One recall: the vault as named (as in ``FindRequest``), the topic, the --dir override."""

    __slots__ = ("cwd", "dirs", "environ", "home", "topic", "vault")

    def __init__(
        self,
        vault: str | os.PathLike[str] | None,
        topic: str | Sequence[str],
        *,
        dirs: Sequence[str] | None = None,
        environ: Mapping[str, str] = os.environ,
        cwd: str | None = None,
        home: str | None = None,
    ):
        self.vault = vault
        self.topic = topic
        self.dirs = tuple(dirs) if dirs else None
        self.environ = environ
        self.cwd = cwd
        self.home = home
