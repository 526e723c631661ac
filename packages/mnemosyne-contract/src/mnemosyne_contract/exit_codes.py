"""The exit codes of ``exit_status`` as an ``IntEnum``, for Python callers (names,
iteration, ``ExitCode(3)``); the command itself returns the plain ints."""

from enum import IntEnum

from mnemosyne_contract import exit_status


class ExitCode(IntEnum):
    """Every exit code a ``mnemosyne`` command can return (``exit_status`` says what each means)."""

    OK = exit_status.OK
    NO_MATCH = exit_status.NO_MATCH
    CAT_NEEDS_ONE_MATCH = exit_status.CAT_NEEDS_ONE_MATCH
    VAULT_ERROR = exit_status.VAULT_ERROR
    TARGET_EXISTS = exit_status.TARGET_EXISTS
    INGEST_UNVERIFIED = exit_status.INGEST_UNVERIFIED
    SERVER_RUNNING = exit_status.SERVER_RUNNING
    USAGE = exit_status.USAGE
    BAD_SOURCE = exit_status.BAD_SOURCE
    WRITE_FAILED = exit_status.WRITE_FAILED
    INTERRUPTED = exit_status.INTERRUPTED
