"""Process exit codes. Agents branch on these, so a value never changes meaning.

Every exit code a ``mnemosyne`` command can return, as plain ints; nothing else ever leaks
out. The command returns these: ``ExitCode`` (``exit_codes``), the same codes as an
``IntEnum`` for Python callers, costs a call the import of ``enum`` (7 ms, a seventh of a
warm find).
"""

#: find: one or more matches written; recall: done (no match included); lint: the vault
#: is clean; ingest: landed.
OK = 0
#: find: no page matches (stdout empty); lint: there are findings.
NO_MATCH = 1
#: find --cat: the match count is not exactly one.
CAT_NEEDS_ONE_MATCH = 2
#: No vault was found, or it is missing, not a directory or has none of the scanned dirs; its
#: config file is invalid; find: its searched dirs hold no page at all (a wrong path, not a
#: miss); or the search was incomplete (a page could not be read and nothing matched).
VAULT_ERROR = 3
#: ingest: the target page exists with different content (use --force to replace it).
TARGET_EXISTS = 4
#: ingest: the page was written but find cannot locate it by its title.
INGEST_UNVERIFIED = 5
#: serve: a server is already running for the vault (it holds the vault's lock).
SERVER_RUNNING = 6
#: Usage error: unknown flag, bad value, no subcommand, no or empty keyword; a --dir that
#: names no dir of the vault (the call is wrong, not the vault); find: a keyword pasted
#: as a page's path that lies outside the vault.
USAGE = 64
#: ingest: the source is missing, not a regular file, empty, not UTF-8, or its
#: frontmatter is broken.
BAD_SOURCE = 65
#: ingest: writing the page failed (disk full, permission denied); nothing was left.
#: Any command: stdout could not take the results (closed, disk full).
WRITE_FAILED = 74
#: Interrupted (Ctrl-C, SIGINT): 128 + 2, as shells report it. Nothing half-written.
INTERRUPTED = 130
