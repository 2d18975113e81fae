"""Opening and closing the database connection of a process."""
from __future__ import annotations

import os
from collections.abc import Collection

from tortoise import Tortoise
from tortoise.backends.base import executor

from .settings import DatabaseTimeouts, tortoise_config


async def init_database(database_url: str, generate_schemas: bool = False,
                        timeouts: DatabaseTimeouts | None = None) -> None:
    """Open the process's connection; every wait on it bounded by `timeouts` (the defaults of
    DB_CONNECT_TIMEOUT, DB_STATEMENT_TIMEOUT and DB_TRANSACTION_TIMEOUT when not given)."""
    # Tortoise caches each model's INSERT/UPDATE SQL per connection *name*; a process (a test run)
    # that opens another dialect under the same name must start from an empty cache.
    executor.EXECUTOR_CACHE.clear()
    timeouts = timeouts or DatabaseTimeouts.from_env(os.environ)
    config = tortoise_config(database_url, with_aerich=False, timeouts=timeouts)
    await Tortoise.init(config=config, _enable_global_fallback=True)
    if generate_schemas:
        await Tortoise.generate_schemas(safe=True)


async def close_database() -> None:
    await Tortoise.close_connections()


_MYSQL_GONE = {2002, 2003, 2006, 2013}  # can't connect, server gone away, lost connection (or no reply in time)
_PG_GONE = {"ConnectionDoesNotExistError", "CannotConnectNowError", "ConnectionFailureError", "InterfaceError",
            "AdminShutdownError", "CrashShutdownError", "IdleInTransactionSessionTimeoutError"}
# The server gave up on a statement: its statement timeout, or a lock that did not come in time.
_PG_GAVE_UP = {"QueryCanceledError", "LockNotAvailableError"}
_MYSQL_GAVE_UP = {1205, 3024, 1969}  # lock wait timeout; MySQL's and MariaDB's statement time limits
_SQLITE_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED (primary codes): the file's lock did not come in time
_MYSQL_BAD_VALUE = {1264, 1366, 1406}  # out of range, incorrect string value, data too long
_PG_BAD_VALUE = {"NumericValueOutOfRangeError", "CharacterNotInRepertoireError", "UntranslatableCharacterError",
                 "InvalidTextRepresentationError", "StringDataRightTruncationError", "DataError"}


def _driver_says(exc: BaseException, python: tuple[type[BaseException], ...], pg: set[str],
                 mysql: set[int], sqlite: Collection[int] = ()) -> bool:
    """Whether `exc` or what caused it (five links at most) is one of these: a Python exception
    type, an asyncpg exception class name, a MySQL error number, a SQLite primary result code."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        module = type(seen).__module__
        if isinstance(seen, python) or (module.startswith("asyncpg") and type(seen).__name__ in pg) or (
                module.startswith(("asyncmy", "pymysql")) and seen.args and seen.args[0] in mysql) or (
                module == "sqlite3" and ((getattr(seen, "sqlite_errorcode", 0) or 0) & 0xFF) in sqlite):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def database_unreachable(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the database cannot be reached or did not answer in
    time (a timeout of models.backends, a lock that did not come), rather than that a statement was
    wrong: the caller answers 503 and the client tries again."""
    from tortoise.exceptions import DBConnectionError

    return _driver_says(exc, (ConnectionError, TimeoutError, DBConnectionError), _PG_GONE | _PG_GAVE_UP,
                        _MYSQL_GONE | _MYSQL_GAVE_UP, _SQLITE_BUSY)


def database_gone(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the database itself is out of reach: no connection
    opened or came free in time, no answer to a statement, a connection lost or refused. Not when a
    database that answers gave up on one statement (database_gave_up_on_a_row) or SQLite's file
    lock did not come: models.breaker opens on this one only."""
    from tortoise.exceptions import DBConnectionError

    return _driver_says(exc, (ConnectionError, TimeoutError, DBConnectionError), _PG_GONE, _MYSQL_GONE)


def database_gave_up_on_a_row(exc: BaseException) -> bool:
    """True when a database that answers gave up on one statement (a row lock held elsewhere, the
    statement timeout): other statements, on other rows, may well go through. Not SQLite's busy
    timeout: its lock is the whole file's."""
    return _driver_says(exc, (), _PG_GAVE_UP, _MYSQL_GAVE_UP)


def database_refused_value(exc: BaseException) -> bool:
    """True when the database refused a value the caller sent (a number beyond the column's range,
    a NUL byte, text too long): the caller answers 400, nothing was written. (OverflowError: SQLite
    and an integer beyond 64 bits.)"""
    return _driver_says(exc, (OverflowError,), _PG_BAD_VALUE, _MYSQL_BAD_VALUE)
