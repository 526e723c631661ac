"""Loaded for every test run from this repository.

The core imports PyYAML, datetime and tomllib lazily (start-up time). pyfakefs unloads the
modules first imported during a test; PyYAML's C extension then keeps references to the
unloaded module's classes and every later load fails ("could not determine a constructor
for the tag None"). Importing them here, before any fake filesystem, keeps them loaded.
"""

import datetime  # noqa: F401
import tomllib  # noqa: F401

import yaml  # noqa: F401
