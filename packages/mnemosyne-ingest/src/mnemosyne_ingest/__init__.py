"""Land a source document in a markdown wiki vault as a page. Pure: returns values,
raises typed errors, never prints or exits."""

from mnemosyne_ingest.errors import (
    BadSourceError,
    IngestArgumentError,
    IngestError,
    IngestUnverifiedError,
    TargetExistsError,
    WriteFailedError,
)
from mnemosyne_ingest.landing import (
    MAX_STDIN_BYTES,
    STATUS_ALREADY_INGESTED,
    STATUS_DRY_RUN,
    STATUS_INGESTED,
    STATUS_REPLACED,
    STDIN_SOURCE_NAME,
    IngestResult,
    ingest,
    read_stdin,
    stdin_slug,
)
from mnemosyne_ingest.page import DEFAULT_DIR, Page, SourceDocument, build_page, split_source

__version__ = "0.1.0"
__all__ = [
    "DEFAULT_DIR",
    "MAX_STDIN_BYTES",
    "STATUS_ALREADY_INGESTED",
    "STATUS_DRY_RUN",
    "STATUS_INGESTED",
    "STATUS_REPLACED",
    "STDIN_SOURCE_NAME",
    "BadSourceError",
    "IngestArgumentError",
    "IngestError",
    "IngestResult",
    "IngestUnverifiedError",
    "Page",
    "SourceDocument",
    "TargetExistsError",
    "WriteFailedError",
    "build_page",
    "ingest",
    "read_stdin",
    "split_source",
    "stdin_slug",
]
