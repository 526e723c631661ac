"""The contract of ``mnemosyne wiki``: exit codes and the JSON Schemas of ``--json`` output."""

from mnemosyne_contract.exit_codes import ExitCode
from mnemosyne_contract.schemas import SCHEMA_NAMES, load_schema

__version__ = "0.1.0"
__all__ = ["SCHEMA_NAMES", "ExitCode", "load_schema"]
