"""The release gate: the seed's eight acceptance criteria against the installed wheels."""
