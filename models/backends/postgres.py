"""PostgreSQL through asyncpg, every wait bounded (see models.backends).

Tortoise's asyncpg client acquires pooled connections without a timeout, and a failed BEGIN leaves
its connection checked out for good (after a few, the pool is empty even once the database is
back). Here: the pool answers within `acquire_timeout`, a transaction that cannot begin gives its
connection back, and a connection whose statement timed out or was cancelled is discarded at once.
"""
from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
from tortoise.backends.asyncpg.client import AsyncpgDBClient, TransactionWrapper
from tortoise.backends.base.client import PoolConnectionWrapper, TransactionContext, TransactionContextPooled
from tortoise.connection import get_connections

from . import acquire_timeout


def discard_if_stuck(proxy: Any) -> bool:
    """Terminate a pooled connection that is waiting for the server to acknowledge a cancelled
    statement (or is already closed): the server rolls back what it had; the pool makes a new one.
    True when it was discarded."""
    raw = getattr(proxy, "_con", None)  # None once the proxy went back to the pool
    if raw is None:
        return False
    if raw.is_closed() or raw._protocol._is_cancelling():
        raw.terminate()  # the pool takes its holder back (asyncpg's _release_on_close)
        return True
    return False


class BoundedPool:
    """asyncpg's pool with a default timeout on acquire (which asyncpg also applies to release)."""

    __slots__ = ("pool", "timeout")

    def __init__(self, pool: asyncpg.Pool, timeout: float) -> None:
        self.pool = pool
        self.timeout = timeout

    def acquire(self) -> Any:
        return self.pool.acquire(timeout=self.timeout)

    async def release(self, connection: Any) -> None:
        await self.pool.release(connection)

    def __getattr__(self, name: str) -> Any:  # close, terminate, expire_connections…
        return getattr(self.pool, name)


class _Acquired(PoolConnectionWrapper[asyncpg.pool.PoolConnectionProxy]):
    """One statement's pooled connection: the pool made within the bound, a stuck one discarded."""

    __slots__ = ()

    async def ensure_connection(self) -> None:
        async with asyncio.timeout(acquire_timeout(self.client)):  # the first pool, made under a lock
            await super().ensure_connection()

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        if exc_type is not None:
            discard_if_stuck(self.connection)
        await super().__aexit__(exc_type, exc_val, exc_tb)


class _Transaction(TransactionContextPooled):
    __slots__ = ()

    async def ensure_connection(self) -> None:
        async with asyncio.timeout(acquire_timeout(self.client._parent)):
            await super().ensure_connection()

    async def __aenter__(self) -> Any:
        await self.ensure_connection()
        pool = self.client._parent._pool
        self.client._connection = await pool.acquire()
        self.token = get_connections().set(self.connection_name, self.client)
        try:
            await self.client.begin()
        except BaseException:  # Tortoise would keep the connection checked out forever
            get_connections().reset(self.token)
            discard_if_stuck(self.client._connection)
            await pool.release(self.client._connection)
            raise
        return self.client

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        if exc_type is not None and not self.client._finalized and discard_if_stuck(self.client._connection):
            self.client._finalized = True  # no ROLLBACK: it would wait for the cancel; the server rolls back
        await super().__aexit__(exc_type, exc_val, exc_tb)


class BoundedAsyncpgClient(AsyncpgDBClient):
    def __init__(self, *args: Any, acquire_timeout: float = 5.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.acquire_timeout = float(acquire_timeout)

    async def create_pool(self, **kwargs: Any) -> Any:
        return BoundedPool(await asyncpg.create_pool(None, **kwargs), self.acquire_timeout)

    def acquire_connection(self) -> Any:
        return _Acquired(self, self._pool_init_lock)

    def _in_transaction(self) -> TransactionContext:
        return _Transaction(TransactionWrapper(self), self._pool_init_lock)


client_class = BoundedAsyncpgClient
