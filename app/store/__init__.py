"""The session store: SQLite (WAL) with schema migrations, buffered sample writing and sharing."""

from app.store.csv_export import export_csv
from app.store.errors import (
    DamagedDatabaseError,
    DamagedSessionFileError,
    ForeignDatabaseError,
    ImportFailedError,
    InvalidTransitionError,
    LockedDatabaseError,
    MissingDatabaseError,
    NotFoundError,
    ReadOnlyDatabaseError,
    SchemaTooNewError,
    StoreError,
    UnopenableDatabaseError,
)
from app.store.records import (
    HostFactsRecord,
    JournalEntry,
    PlanRecord,
    RecommendationRecord,
    SessionRecord,
    TelemetryArrays,
    TrialRecord,
)
from app.store.sample_blocks import SAMPLE_DTYPE, SampleArrays
from app.store.schema import MIGRATIONS, Migration
from app.store.states import OPEN_JOURNAL_STATES, JournalState, SessionState, TrialState
from app.store.store import Store
from app.store.transfer import Imported, export_session, import_sessions
from app.store.writer import SampleWriter

__all__ = [
    "MIGRATIONS",
    "OPEN_JOURNAL_STATES",
    "SAMPLE_DTYPE",
    "DamagedDatabaseError",
    "DamagedSessionFileError",
    "ForeignDatabaseError",
    "HostFactsRecord",
    "ImportFailedError",
    "Imported",
    "InvalidTransitionError",
    "LockedDatabaseError",
    "JournalEntry",
    "JournalState",
    "Migration",
    "MissingDatabaseError",
    "NotFoundError",
    "PlanRecord",
    "ReadOnlyDatabaseError",
    "RecommendationRecord",
    "SampleArrays",
    "SampleWriter",
    "SchemaTooNewError",
    "SessionRecord",
    "SessionState",
    "Store",
    "StoreError",
    "TelemetryArrays",
    "TrialRecord",
    "TrialState",
    "UnopenableDatabaseError",
    "export_csv",
    "export_session",
    "import_sessions",
]
