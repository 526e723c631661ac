"""The contract of ``mnemosyne wiki``: exit codes and the JSON Schemas of ``--json`` output."""

from mnemosyne_contract import exit_status
from mnemosyne_contract.schemas import SCHEMA_NAMES, load_schema

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_contract.exit_codes import ExitCode

__version__ = "0.1.0"
__all__ = ["SCHEMA_NAMES", "ExitCode", "exit_status", "load_schema"]


def __getattr__(name: str) -> object:
    """``ExitCode``, imported on first use: its ``enum`` import would cost every call of
    the command, which returns ``exit_status``'s plain ints, 7 ms."""
    if name != "ExitCode":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from mnemosyne_contract.exit_codes import ExitCode

    return ExitCode
