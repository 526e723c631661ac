"""The release gate: the eight acceptance criteria (README.md) against the installed wheels."""
