"""MySQL and MariaDB through asyncmy, every wait bounded (see models.backends).

asyncmy closes a connection whose reply does not come within `read_timeout` (and one cancelled
mid-read), so a rollback after it fails at once; what Tortoise leaves unbounded is the wait for a
pooled connection, and a failed BEGIN keeps its connection checked out for good.
"""
from __future__ import annotations

import asyncio
from typing import Any

import asyncmy
from tortoise.backends.base.client import PoolConnectionWrapper, TransactionContext, TransactionContextPooled
from tortoise.backends.mysql.client import MySQLClient, TransactionWrapper
from tortoise.connection import get_connections

from . import acquire_timeout


class _Acquired(PoolConnectionWrapper[asyncmy.Connection]):
    __slots__ = ()

    async def __aenter__(self) -> Any:
        async with asyncio.timeout(acquire_timeout(self.client)):
            await self.ensure_connection()
            self.connection = await self.client._pool.acquire()
        return self.connection


class _Transaction(TransactionContextPooled):
    __slots__ = ()

    async def __aenter__(self) -> Any:
        parent = self.client._parent
        async with asyncio.timeout(acquire_timeout(parent)):
            await self.ensure_connection()
            self.client._connection = await parent._pool.acquire()
        self.token = get_connections().set(self.connection_name, self.client)
        try:
            await self.client.begin()
        except BaseException:
            get_connections().reset(self.token)
            self.client._connection.close()  # its state is unknown: the pool drops a closed connection
            await parent._pool.release(self.client._connection)
            raise
        return self.client


class BoundedMySQLClient(MySQLClient):
    def __init__(self, *, acquire_timeout: float = 5.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.acquire_timeout = float(acquire_timeout)

    def acquire_connection(self) -> Any:
        return _Acquired(self, self._pool_init_lock)

    def _in_transaction(self) -> TransactionContext:
        return _Transaction(TransactionWrapper(self), self._pool_init_lock)


client_class = BoundedMySQLClient
