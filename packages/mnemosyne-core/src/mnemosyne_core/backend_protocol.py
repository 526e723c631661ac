"""The one interface find and recall ask (``backend``'s docstring): a runtime-checkable
``typing.Protocol``, in a module of its own because typing's import costs start-up time
that a find does not pay; ``backend.Backend`` imports it on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from mnemosyne_core.backend import FindRequest, RecallRequest
    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.results import FindResult


@runtime_checkable
class Backend(Protocol):
    """Answers find's and recall's questions about one vault, as the scan would; raises
    only ``backend.BACKEND_ERRORS``."""

    def search(self, request: FindRequest) -> FindResult:
        """``find.search``'s answer for the request."""
        ...

    def recall(self, request: RecallRequest) -> RecallResult:
        """``recall.recall``'s answer for the request."""
        ...
