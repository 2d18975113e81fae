"""PostgreSQL through asyncpg, every wait bounded (see models.backends).

Tortoise's asyncpg client acquires pooled connections without a timeout, and a failed BEGIN leaves
its connection checked out for good (after a few, the pool is empty even once the database is
back). Here: the pool answers within `acquire_timeout`, a transaction that cannot begin gives its
connection back, and a connection whose statement timed out or was cancelled is discarded at once.
The client's circuit breaker (models.breaker) sees every acquire, statement and transaction: once
the database is gone, statements fail at once until a probe on a connection of its own is answered.
Closing waits CLOSE_TIMEOUT at most for the server to say goodbye (a process stopping while the
network swallows packets would otherwise wait Tortoise's 10 s), then cuts the connections.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import asyncpg
from tortoise.backends.asyncpg.client import AsyncpgDBClient, TransactionWrapper
from tortoise.backends.base.client import PoolConnectionWrapper, TransactionContext, TransactionContextPooled
from tortoise.connection import get_connections

from models.breaker import PROBE_TIMEOUT, Breaker

from . import acquire_timeout

log = logging.getLogger("models.backends")
CLOSE_TIMEOUT = 1.0  # seconds the pool's close may wait for the server before its connections are cut
# Keys of the pool's template that asyncpg.connect does not take.
_POOL_ONLY = ("min_size", "max_size", "max_queries", "max_inactive_connection_lifetime", "setup", "init",
              "reset", "loop")


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


def breaker_of(client: Any) -> Breaker:
    """The breaker of this process's client (a BoundedAsyncpgClient)."""
    breaker: Breaker = client.breaker
    return breaker


def pool_busy(client: Any, exc: BaseException) -> bool:
    """Whether `exc` is an acquire that timed out with every connection of a full pool checked out:
    the database answers, slowly, and the statements holding those connections see their own
    timeouts (a database gone opens the breaker through them, not through their queue)."""
    pool = getattr(client, "_pool", None)
    if not isinstance(exc, TimeoutError) or not isinstance(pool, BoundedPool):
        return False
    raw: asyncpg.Pool = pool.pool
    return bool(raw.get_idle_size() == 0 and raw.get_size() >= raw.get_max_size())


def seen_failing(client: Any, exc: BaseException) -> None:
    """Tell the client's breaker of a failure, unless it was only a wait for a busy pool."""
    if not pool_busy(client, exc):
        breaker_of(client).failed(exc)


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

    async def __aenter__(self) -> Any:
        breaker = breaker_of(self.client)
        breaker.check()
        try:
            return await super().__aenter__()
        except BaseException as exc:
            seen_failing(self.client, exc)
            raise

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        if exc_val is not None:
            discard_if_stuck(self.connection)
            breaker_of(self.client).failed(exc_val)
        await super().__aexit__(exc_type, exc_val, exc_tb)


class _Transaction(TransactionContextPooled):
    __slots__ = ()

    async def ensure_connection(self) -> None:
        async with asyncio.timeout(acquire_timeout(self.client._parent)):
            await super().ensure_connection()

    async def __aenter__(self) -> Any:
        breaker = breaker_of(self.client._parent)
        breaker.check()
        try:
            return await self._begin()
        except BaseException as exc:
            seen_failing(self.client._parent, exc)
            raise

    async def _begin(self) -> Any:
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
        breaker = breaker_of(self.client._parent)
        if exc_val is not None:
            breaker.failed(exc_val)
        if exc_type is not None and not self.client._finalized and discard_if_stuck(self.client._connection):
            self.client._finalized = True  # no ROLLBACK: it would wait for the cancel; the server rolls back
        try:
            await super().__aexit__(exc_type, exc_val, exc_tb)
        except BaseException as exc:  # the COMMIT (or ROLLBACK) without an answer
            breaker.failed(exc)
            raise


class BoundedAsyncpgClient(AsyncpgDBClient):
    def __init__(self, *args: Any, acquire_timeout: float = 5.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.acquire_timeout = float(acquire_timeout)
        self.breaker = Breaker(self.probe, self._expire_connections)

    async def create_pool(self, **kwargs: Any) -> Any:
        return BoundedPool(await asyncpg.create_pool(None, **kwargs), self.acquire_timeout)

    async def probe(self) -> None:
        """`SELECT 1` on a new connection of its own (the pool's may have been silenced for good by a
        network cut), each step within PROBE_TIMEOUT."""
        params = {k: v for k, v in self._template.items() if k not in _POOL_ONLY}
        params.update(timeout=PROBE_TIMEOUT, command_timeout=PROBE_TIMEOUT)
        connection = await asyncpg.connect(password=self.password, **params)
        try:
            await connection.fetchval("SELECT 1")
        finally:
            connection.terminate()

    async def _close(self) -> None:
        """The pool's connections closed, the server told within CLOSE_TIMEOUT, else cut; no more
        probes."""
        await self.breaker.close()
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if self.breaker.is_open:
            pool.terminate()  # nothing would answer the goodbye
            return
        try:
            await asyncio.wait_for(pool.close(), CLOSE_TIMEOUT)
        except TimeoutError:
            log.warning("the database did not answer the close of its connections within %.0f s: cut",
                        CLOSE_TIMEOUT)
            pool.terminate()

    def acquire_connection(self) -> Any:
        return _Acquired(self, self._pool_init_lock)

    def _in_transaction(self) -> TransactionContext:
        return _Transaction(TransactionWrapper(self), self._pool_init_lock)


client_class = BoundedAsyncpgClient
