"""Errors of the memory stores. Each message names the file, what went wrong and what to do.

All derive from ``StoreError`` (a ``zagent.ZagentError``), so a caller can
catch every storage failure in one place. Nothing here imports sqlite3.
"""

from __future__ import annotations

from zagent import ZagentError


class StoreError(ZagentError):
    """A memory or checkpoint store could not read or write its file.

    :ivar path: the database file concerned
    """

    def __init__(self, message: str, *, path: str = ""):
        super().__init__(message)
        self.path = path


class NotADatabase(StoreError):
    """The file exists but is not an SQLite database; it was left untouched."""


class ForeignDatabase(StoreError):
    """The file is an SQLite database of another application (its tables, no zagent schema); left untouched.

    :ivar tables: the tables found in it
    """

    def __init__(self, message: str, *, path: str = "", tables: tuple[str, ...] = ()):
        super().__init__(message, path=path)
        self.tables = tables


class SchemaTooNew(StoreError):
    """The file was written by a newer zagent (a higher schema version); it was left untouched.

    :ivar found: the schema version in the file
    :ivar supported: the newest version this zagent understands
    """

    def __init__(self, message: str, *, path: str = "", found: int = 0, supported: int = 0):
        super().__init__(message, path=path)
        self.found = found
        self.supported = supported


class StoreFull(StoreError):
    """The disk or the configured size limit is full; the write was rolled back, nothing committed was lost."""


class StoreBusy(StoreError):
    """Other writers kept the file locked longer than the busy timeout, retries included."""
