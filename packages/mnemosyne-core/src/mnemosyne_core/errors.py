"""Typed errors. Callers map them to exit codes; the core never exits or prints."""


class MnemosyneError(Exception):
    """Base of every error the core raises on purpose. ``str(error)`` is one line: the
    problem and the fix."""


class VaultError(MnemosyneError):
    """The vault is unset, missing, not a directory, has no scanned dir, or its config is
    invalid."""


class UnknownDirError(VaultError):
    """None of the dirs given on the command line (--dir) is a dir of the vault: a mistake
    in the call (a typo, a dir of another vault), which the CLI reports as a usage error,
    not as a vault it cannot search. A VaultError still, as it was before it had its own
    class, for callers that catch that."""


class InvalidQueryError(MnemosyneError, ValueError):
    """The query itself is wrong: no keyword, an empty or whitespace-only keyword, or a
    negative limit."""


class PathOutsideVaultError(InvalidQueryError):
    """A keyword pasted as a page's path (``pasted.page_keywords``) names a file outside
    the vault: no page of it, so "no match" would be a false answer."""


class UnknownLintCodeError(MnemosyneError, ValueError):
    """A lint code to select or ignore that lint does not have; the message lists the
    known codes."""


class ConfigExistsError(MnemosyneError):
    """``wiki init`` found a ``.mnemosyne.toml`` already: it never overwrites one."""


class ConfigWriteError(MnemosyneError):
    """``wiki init`` could not write the ``.mnemosyne.toml``; nothing was left behind."""
