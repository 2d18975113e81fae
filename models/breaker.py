"""The database's circuit breaker: a process that has seen its database gone answers at once.

Without it, every request that needs the database during an outage waits its own timeouts
(DB_CONNECT_TIMEOUT to open or get a connection, DB_STATEMENT_TIMEOUT + 1 s for an answer on a
network that swallows packets) before its 503, longer than many clients wait. The breaker opens on
the first sign that the database is gone (a connection that does not open or come free in time, a
statement with no answer, a connection lost: `database_gone`), not on a statement the server gave
up on (its statement timeout, a row lock: the database answers). While it is open every statement
fails at once with DatabaseDown (a DBConnectionError: the console and the relay answer 503 with
Retry-After) and a probe — `SELECT 1` on a connection of its own, under PROBE_TIMEOUT — runs at
once, then every PROBE_INTERVAL; the first one answered closes it. What needs no database (a key
and balance already in Redis) is served as before.

One breaker per database client, so one per process (Tortoise opens one client per process): the
PostgreSQL client of models.backends holds it. SQLite, a file on this machine, has none: its only
waits are for a lock another process holds, which is not an outage.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from tortoise.exceptions import DBConnectionError

from models.db import database_gone

log = logging.getLogger("models.breaker")
PROBE_INTERVAL = 1.0  # seconds from one probe's start to the next one's while the database is away
PROBE_TIMEOUT = 1.0  # seconds a probe waits to connect and for its answer

Probe = Callable[[], Awaitable[None]]


class DatabaseDown(DBConnectionError):
    """The database was seen gone and no probe has reached it since: nothing was sent to it."""


class Breaker:
    """Closed (statements go through) until `failed` sees the database gone; then open until `probe`
    returns. `on_close` runs once the probe is answered, before statements go through again (the
    pool drops the connections it had: a network cut may have left them silent for good)."""

    def __init__(self, probe: Probe, on_close: Probe | None = None) -> None:
        self._probe = probe
        self._on_close = on_close
        self.opened_at: float | None = None  # time.monotonic() of the opening; None when closed
        self.reason = ""
        self._task: asyncio.Task[None] | None = None

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None

    def check(self) -> None:
        """Before a statement: DatabaseDown at once while the database is known to be away."""
        if self.opened_at is not None:
            raise DatabaseDown(f"the database is unreachable ({self.reason}); waiting for it to answer a probe")

    def failed(self, exc: BaseException) -> None:
        """After a statement or a connection failed: open when `exc` says the database is gone."""
        if self.opened_at is not None or isinstance(exc, asyncio.CancelledError) or not database_gone(exc):
            return
        self.opened_at = time.monotonic()
        self.reason = type(exc).__name__
        log.warning("database unreachable (%r): statements fail at once until it answers a probe", exc)
        self._task = asyncio.get_running_loop().create_task(self._probe_until_answered(), name="database-probe")

    async def _probe_until_answered(self) -> None:
        tries = 0
        while True:
            tries += 1
            started = time.monotonic()
            try:
                async with asyncio.timeout(PROBE_TIMEOUT):
                    await self._probe()
                break
            except Exception as exc:
                if tries == 1 or tries % 60 == 0:
                    log.info("database probe %d failed: %r", tries, exc)
            await asyncio.sleep(max(0.0, started + PROBE_INTERVAL - time.monotonic()))
        if self._on_close is not None:
            try:
                await self._on_close()
            except Exception:
                log.exception("database back, but its pool could not drop its old connections")
        opened_at, self.opened_at = self.opened_at, None
        log.warning("database answers again after %.1f s (probe %d): statements go through",
                    time.monotonic() - (opened_at or time.monotonic()), tries)

    async def close(self) -> None:
        """The client closes: no more probes."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
