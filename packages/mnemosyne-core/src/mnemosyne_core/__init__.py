"""Deterministic keyword search over a markdown wiki vault. Pure: returns values, raises
typed errors, never prints or exits."""

from mnemosyne_core.errors import InvalidQueryError, MnemosyneError, VaultError
from mnemosyne_core.find import FindResult, Match, find_pages, search

__version__ = "0.1.0"
__all__ = [
    "FindResult",
    "InvalidQueryError",
    "Match",
    "MnemosyneError",
    "VaultError",
    "find_pages",
    "search",
]
