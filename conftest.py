"""Loaded for every test run from this repository: module imports and hypothesis settings.

The core imports PyYAML, datetime and tomllib lazily (start-up time). pyfakefs unloads the
modules first imported during a test; PyYAML's C extension then keeps references to the
unloaded module's classes and every later load fails ("could not determine a constructor
for the tag None"). Importing them here, before any fake filesystem, keeps them loaded.
"""

import datetime  # noqa: F401
import os
import tomllib  # noqa: F401

import yaml  # noqa: F401
from hypothesis import settings

# No per-example deadline: a loaded CI machine must not turn a slow example into a failure.
# In CI (CI=true, as .ci/run is run), the same examples every time: a red run is
# reproducible, never a new random draw.
settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
