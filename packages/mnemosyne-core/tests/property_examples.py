"""How many examples a property test tries (importable from every package's tests: the
pytest config puts this dir on sys.path).

A test states its count for the default run, ``nox`` as CI runs it; the hypothesis profile in
force scales it (the root conftest.py registers them). The default run stays short because a
CI runs it four times (each Python, then the acceptance gate against the wheels), with the
same examples every time (CI=true derandomizes): new examples are found by ``nox -s
properties``, whose "thorough" profile tries ten times as many, drawn anew on every run.
"""

from __future__ import annotations

from hypothesis import settings

#: The profile max_examples that a stated count is for: hypothesis's own default, which the
#: "default" and "ci" profiles keep.
STATED_FOR = 100


def examples(stated: int) -> int:
    """``stated`` under the default and CI profiles; in proportion to the loaded profile's
    max_examples under another (read when the test module is imported, after the profile
    is loaded)."""
    return max(1, stated * settings().max_examples // STATED_FOR)
