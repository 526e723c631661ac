"""Typed errors of an ingest. Each carries the exit code the CLI returns for it; the
library itself never exits or prints. ``str(error)`` is one line: the problem and the fix.

A missing or unusable vault is the core's ``VaultError`` (exit 3), raised as it is."""

from __future__ import annotations

from typing import ClassVar

from mnemosyne_contract import exit_status
from mnemosyne_core.errors import MnemosyneError


class IngestError(MnemosyneError):
    """Base of every error an ingest raises on purpose."""

    exit_code: ClassVar[int]


class IngestArgumentError(IngestError, ValueError):
    """A bad argument: unknown constellation, a dir that is not scanned, an unsafe slug,
    a blank --title or --type, or no type to give a page outside analyses/."""

    exit_code = exit_status.USAGE


class BadSourceError(IngestError):
    """The source is missing, not a regular file, unreadable, empty, not UTF-8, or its
    frontmatter cannot be read."""

    exit_code = exit_status.BAD_SOURCE


class TargetExistsError(IngestError):
    """The target page exists with other content (and --force was not given), or is not a
    regular file at all."""

    exit_code = exit_status.TARGET_EXISTS


class IngestUnverifiedError(IngestError):
    """The page is in place, but find does not locate it by a keyword of its title."""

    exit_code = exit_status.INGEST_UNVERIFIED


class WriteFailedError(IngestError):
    """Writing the page failed (disk full, permission denied); nothing was left behind."""

    exit_code = exit_status.WRITE_FAILED
