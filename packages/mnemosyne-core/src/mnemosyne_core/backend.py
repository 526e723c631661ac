"""Where the pages come from: one interface, ``Backend``, that find and recall ask.

The scan (``SCAN``) reads the vault from disk on every call; the scan through the page
cache (``cache.CachedScan``, told by a ``wiki serve`` what changed when one runs)
implements the same interface and must answer exactly as the scan does. The commands take
a Backend as a parameter and never ask which one they were given.
"""

from __future__ import annotations

from mnemosyne_core.results import DEFAULT_LIMIT

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    import os
    from collections.abc import Sequence
    from typing import Protocol

    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.results import FindResult

    class Backend(Protocol):
        """Answers find's and recall's questions about one vault, as the scan would."""

        def search(
            self,
            vault: str | os.PathLike[str] | None,
            keywords: Sequence[str],
            *,
            limit: int = ...,
            dirs: Sequence[str] | None = ...,
            keep_content: bool = ...,
        ) -> FindResult:
            """``find.search``'s answer; raises what it raises."""
            ...

        def recall(
            self,
            vault: str | os.PathLike[str] | None,
            topic: str | Sequence[str],
            *,
            dirs: Sequence[str] | None = ...,
        ) -> RecallResult:
            """``recall.recall``'s answer; raises what it raises."""
            ...


class Scanner:
    """The plain path: every call lists and reads the vault from disk."""

    def search(
        self,
        vault: str | os.PathLike[str] | None,
        keywords: Sequence[str],
        *,
        limit: int = DEFAULT_LIMIT,
        dirs: Sequence[str] | None = None,
        keep_content: bool = False,
    ) -> FindResult:
        from mnemosyne_core.find import search

        return search(vault, keywords, limit=limit, dirs=dirs, keep_content=keep_content)

    def recall(
        self,
        vault: str | os.PathLike[str] | None,
        topic: str | Sequence[str],
        *,
        dirs: Sequence[str] | None = None,
    ) -> RecallResult:
        from mnemosyne_core.recall import recall

        return recall(vault, topic, dirs=dirs)


SCAN = Scanner()

if TYPE_CHECKING:

    def _scan_is_a_backend(scanner: Scanner) -> Backend:
        """mypy --strict holds the scan to the interface here (the index: in index.py)."""
        return scanner
