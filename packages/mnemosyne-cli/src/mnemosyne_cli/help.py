"""What every --help ends with: a few real examples, then the exit codes that apply."""

from __future__ import annotations

from mnemosyne_contract import ExitCode

EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.NO_MATCH: "no match (find: stdout empty, or [] with --json; lint: findings)",
    ExitCode.CAT_NEEDS_ONE_MATCH: "--cat matched zero pages or more than one",
    ExitCode.VAULT_ERROR: "no vault found, or it is missing, not a directory, without scanned dirs or badly "
    "configured; "
    "or a page could not be read and nothing matched",
    ExitCode.TARGET_EXISTS: "the target page exists with other content (--force replaces it)",
    ExitCode.INGEST_UNVERIFIED: "the page was written but find cannot locate it",
    ExitCode.USAGE: "usage error: unknown flag, bad value, no command or keyword",
    ExitCode.BAD_SOURCE: "the source is missing, not a regular file, empty, not UTF-8 or has broken frontmatter",
    ExitCode.WRITE_FAILED: "stdout could not take the results, or the page could not be written",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
}


def epilog(examples: list[str], codes: list[tuple[ExitCode, str]] | None = None) -> str:
    """The end of a --help: ``examples`` (shell lines), then each exit code with its
    meaning (``codes`` overrides the general wording per command)."""
    meanings = codes if codes is not None else list(EXIT_CODE_MEANINGS.items())
    lines = ["examples:"]
    lines += [f"  {example}" for example in examples]
    lines += ["", "exit codes:"]
    lines += [f"  {int(code):>3}  {meaning}" for code, meaning in meanings]
    return "\n".join(lines)
