"""The installed versions of the four packages, for ``--version`` and ``wiki info``: a bug
report should show what is installed, not only the CLI's own number."""

from __future__ import annotations

from mnemosyne_cli import __version__

#: The distributions ``mnemosyne`` is made of, as pip and uv name them.
DISTRIBUTIONS: tuple[str, ...] = (
    "mnemosyne-wiki-cli",
    "mnemosyne-wiki-contract",
    "mnemosyne-wiki-core",
    "mnemosyne-wiki-ingest",
)


def installed_versions() -> dict[str, str | None]:
    """Each of DISTRIBUTIONS and its installed version (None: not installed, e.g. imported
    from a source tree on PYTHONPATH). Read from the installed metadata, so only callers
    pay for importlib.metadata."""
    from importlib.metadata import PackageNotFoundError, version

    versions: dict[str, str | None] = {}
    for name in DISTRIBUTIONS:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    return versions


def package_version(name: str, installed: str | None) -> str:
    """One package as --version and ``wiki info`` name it: ``<name> <version>``."""
    return f"{name} {installed or 'not installed'}"


def version_report() -> str:
    """``mnemosyne --version``: the command's version, then one line per package and the
    Python running it."""
    import platform
    import sys

    lines = [f"mnemosyne {__version__}"]
    for name, installed in installed_versions().items():
        lines.append(f"  {package_version(name, installed)}")
    lines.append(f"  Python {platform.python_version()} ({sys.executable})")
    return "\n".join(lines)
