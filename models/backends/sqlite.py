"""SQLite, every wait bounded (see models.backends).

Tortoise gives a process one SQLite connection behind one asyncio lock: a caller waits for the
lock (here at most `acquire_timeout`), then its statement waits for the file's write lock (at most
the `busy_timeout` pragma) when another process holds it. A transaction that cannot begin releases
the process's lock instead of keeping it for good.
"""
from __future__ import annotations

from typing import Any

import aiosqlite
from tortoise.backends.base.client import ConnectionWrapper, TransactionContext
from tortoise.backends.sqlite.client import SqliteClient, SqliteTransactionContext, SqliteTransactionWrapper
from tortoise.connection import get_connections

from . import BoundedLock


class _Acquired(ConnectionWrapper[aiosqlite.Connection]):
    __slots__ = ()

    async def __aenter__(self) -> Any:
        await self._lock.acquire()
        try:
            await self.ensure_connection()
        except BaseException:
            self._lock.release()
            raise
        return self.connection


class _Transaction(SqliteTransactionContext):
    __slots__ = ()

    async def __aenter__(self) -> Any:
        await self._trxlock.acquire()
        try:
            await self.ensure_connection()
            self.token = get_connections().set(self.connection_name, self.connection)
            try:
                await self.connection.begin()
            except BaseException:
                get_connections().reset(self.token)
                raise
        except BaseException:
            self._trxlock.release()
            raise
        return self.connection


class BoundedSqliteClient(SqliteClient):
    def __init__(self, file_path: str, acquire_timeout: float = 5.0, **kwargs: Any) -> None:
        super().__init__(file_path, **kwargs)
        self._lock = BoundedLock(float(acquire_timeout))

    def acquire_connection(self) -> Any:
        return _Acquired(self._lock, self)

    def _in_transaction(self) -> TransactionContext:
        return _Transaction(SqliteTransactionWrapper(self), self._lock)


client_class = BoundedSqliteClient
