"""Database clients whose every wait is bounded: Tortoise's own, each with the few changes that keep
a database that stops answering (a network that swallows packets, a hung failover) from holding a
request or a settlement for the whole outage. `bounded_connection` turns DATABASE_URL and the
process's DatabaseTimeouts into the Tortoise connection that uses them.

What each dialect bounds, and where (connect C, statement S, transaction X; DatabaseTimeouts):

- PostgreSQL (asyncpg): connecting C (asyncpg `timeout`); a free pooled connection C (Tortoise asks
  asyncpg's pool without a timeout); a statement S on the server (`statement_timeout`) and S + 1 s
  on the client (`command_timeout`); a session idle inside a transaction X on the server
  (`idle_in_transaction_session_timeout`: a client gone silent mid-transaction no longer holds its
  row locks for the rest of the outage). A connection whose statement timed out or was cancelled
  is discarded at once rather than cancelled, rolled back and reset: on such a network each of
  those waits as long again.
- SQLite: the write lock of the file S (`busy_timeout`); the process's one connection C (Tortoise
  queues every caller on it).
- MySQL / MariaDB (asyncmy): connecting C (`connect_timeout`); a free pooled connection C; a reply
  S + 1 s (`read_timeout`: the connection is closed); a row lock S (`innodb_lock_wait_timeout`).
"""
from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING, Any, Literal

from tortoise.backends.base.config_generator import expand_db_url

if TYPE_CHECKING:  # read, never built, here: models.settings builds it and calls bounded_connection
    from ..settings import DatabaseTimeouts

ENGINES = {
    "tortoise.backends.asyncpg": "models.backends.postgres",
    "tortoise.backends.sqlite": "models.backends.sqlite",
    "tortoise.backends.mysql": "models.backends.mysql",
}


def bounded_connection(database_url: str, timeouts: DatabaseTimeouts) -> dict[str, Any]:
    """The Tortoise connection for this URL with the timeouts applied (a value the URL's query
    already sets, such as `?command_timeout=30`, is kept)."""
    db = expand_db_url(database_url)
    engine = db["engine"]
    if engine not in ENGINES:
        return db  # another driver (psycopg): Tortoise's own client, unbounded
    credentials: dict[str, Any] = dict(db["credentials"])
    credentials.setdefault("acquire_timeout", timeouts.connect)
    statement_ms = max(1, round(timeouts.statement * 1000))
    if engine == "tortoise.backends.asyncpg":
        credentials.setdefault("timeout", timeouts.connect)
        credentials.setdefault("command_timeout", timeouts.client_statement)
        server = dict(credentials.get("server_settings") or {})
        server.setdefault("statement_timeout", str(statement_ms))
        server.setdefault("idle_in_transaction_session_timeout", str(max(1, round(timeouts.transaction * 1000))))
        credentials["server_settings"] = server
    elif engine == "tortoise.backends.sqlite":
        credentials.setdefault("busy_timeout", statement_ms)
    else:
        credentials.setdefault("connect_timeout", timeouts.connect)
        credentials.setdefault("read_timeout", timeouts.client_statement)
        credentials.setdefault("init_command",
                               f"SET SESSION innodb_lock_wait_timeout = {max(1, math.ceil(timeouts.statement))}")
    return {"engine": ENGINES[engine], "credentials": credentials}


class BoundedLock(asyncio.Lock):
    """An asyncio.Lock whose acquire gives up after `timeout` seconds (TimeoutError)."""

    def __init__(self, timeout: float) -> None:
        super().__init__()
        self.timeout = timeout

    async def acquire(self) -> Literal[True]:
        async with asyncio.timeout(self.timeout):
            return await super().acquire()


def acquire_timeout(client: Any) -> float:
    """The bound on waiting for a connection of one of these clients."""
    return float(client.acquire_timeout)
