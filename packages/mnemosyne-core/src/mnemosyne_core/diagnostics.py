"""What a search met along the way that it could not use, as data: a path, a code and a
detail. The core never words them; the CLI renders each as one ``warning:`` line, and lint
maps each code to a finding, so no caller parses a sentence to learn what happened.
A server sends them as they are (``as_fields``) and its client renders them as the scan's.
"""

from __future__ import annotations

from mnemosyne_core.record import HashableRecord

#: A page-named symlink (or a scanned dir that is one) whose target does not exist.
BROKEN_SYMLINK = "broken-symlink"
#: A page-named symlink (or a scanned dir that is one) whose target is outside the vault.
SYMLINK_ESCAPES = "symlink-escapes"
#: A scanned dir that could not be listed; ``detail`` is the system's reason.
CANNOT_LIST = "cannot-list"
#: A listed page that could not be read; ``detail`` is the reason.
CANNOT_READ = "cannot-read"
#: An ignore file (.gitignore, .ignore) of a tree that could not be read or is too large:
#: its rules are not applied; ``detail`` is the reason.
IGNORE_FILE_UNUSED = "ignore-file-unused"
#: A dir named on the command line (--dir) that the vault does not have; ``path`` is the
#: name as given, ``detail`` lists the vault's dirs.
UNKNOWN_DIR = "unknown-dir"

#: The reason a page that vanished between listing and reading gives.
VANISHED = "vanished during the search"


class Diagnostic(HashableRecord):
    """One thing a search skipped, and why. ``path`` is vault-relative (``is_dir``: it
    names a dir); for UNKNOWN_DIR it is the dir name as the command line gave it."""

    __slots__ = ("code", "detail", "is_dir", "path")

    def __init__(self, path: str, code: str, detail: str = "", *, is_dir: bool = False):
        self.path = path
        self.code = code
        self.detail = detail
        self.is_dir = is_dir

    def as_fields(self) -> tuple[str, str, str, bool]:
        """The diagnostic as plain values (marshal and a server's reply carry these)."""
        return (self.path, self.code, self.detail, self.is_dir)

    @classmethod
    def from_fields(cls, fields: tuple[str, str, str, bool]) -> Diagnostic:
        path, code, detail, is_dir = fields
        return cls(path, code, detail, is_dir=is_dir)

    def sort_key(self) -> tuple[str, str, str]:
        """Diagnostics go by what they are about, as their line names it first: a dir as
        ``name/``, a --dir as the flag, so that no file system's listing order shows."""
        if self.code == UNKNOWN_DIR:
            subject = f"--dir {self.path!r} "
        else:
            subject = f"{self.path}/: " if self.is_dir else f"{self.path}: "
        return (subject, self.code, self.detail)
