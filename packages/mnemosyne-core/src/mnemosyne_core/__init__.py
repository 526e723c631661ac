"""Deterministic keyword search over a markdown wiki vault. Pure: returns values, raises
typed errors, never prints or exits."""

from mnemosyne_core.errors import (
    InvalidQueryError,
    MnemosyneError,
    PathOutsideVaultError,
    UnknownDirError,
    VaultError,
)

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_core.find import find_pages, search
    from mnemosyne_core.results import FindResult, Match

__version__ = "0.1.0"
__all__ = [
    "FindResult",
    "InvalidQueryError",
    "Match",
    "MnemosyneError",
    "PathOutsideVaultError",
    "UnknownDirError",
    "VaultError",
    "find_pages",
    "search",
]

# FindResult, Match, find_pages and search are imported on first use: every module of the
# package imports it, and a call answered by ``wiki serve`` never runs the search.


def __getattr__(name: str) -> object:
    if name in ("FindResult", "Match"):
        from mnemosyne_core import results

        return getattr(results, name)
    if name in ("find_pages", "search"):
        from mnemosyne_core import find

        return getattr(find, name)
    raise AttributeError(f"module 'mnemosyne_core' has no attribute {name!r}")
