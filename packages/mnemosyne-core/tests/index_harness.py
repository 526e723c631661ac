"""The vault's index for tests: where it is for an environment, and a whole build of it made
in the foreground, as ``wiki init`` makes it, so a test's next call reads it (a call that
finds no index answers by the scan and leaves the build to a detached builder)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from mnemosyne_core import build, cache
from mnemosyne_core.config import home_dir
from mnemosyne_core.index import NoteIndex, code_key


def index_file(vault: str | Path, environ: Mapping[str, str] = os.environ) -> Path:
    """Where the index of ``vault`` lives for a caller with ``environ`` and our rights."""
    cache_dir = cache.cache_dir_path(environ)
    assert cache_dir is not None
    return Path(cache.index_path(cache_dir, os.path.realpath(vault)))


def build_index(vault: str | Path, environ: Mapping[str, str] = os.environ) -> Path:
    """Build the whole index of ``vault`` now, for a caller with ``environ``; its path."""
    cache_dir, why_not = cache.usable_cache_dir(environ, create=True)
    assert cache_dir is not None, why_not
    path = cache.index_path(cache_dir, os.path.realpath(vault))
    assert build.build(path, os.path.realpath(vault), home_dir(environ), wait=True) is not None
    return Path(path)


def index_is_complete(vault: str | Path, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a whole build by this code is in the index of ``vault``."""
    path = index_file(vault, environ)
    if not path.exists():
        return False
    with NoteIndex.open(str(path)) as index:
        return index.usable(code_key())
