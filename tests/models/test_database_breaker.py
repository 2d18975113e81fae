"""The database's circuit breaker (models.breaker): what opens it, what it answers while open, and
the probe that closes it; on PostgreSQL, a statement the server gave up on leaves it closed."""
from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest
from asyncmy import errors as mysql_errors
from tortoise import Tortoise
from tortoise.exceptions import OperationalError

from models import breaker as breaker_module
from models.breaker import Breaker, DatabaseDown
from models.db import close_database, database_gone, database_unreachable, init_database
from models.settings import DatabaseTimeouts
from tests.helpers import eventually
from tests.models.test_database_timeouts import sqlite_busy


def test_only_a_database_out_of_reach_opens_it(tmp_path: Path) -> None:
    lost = asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of operation")
    for exc in (TimeoutError(), ConnectionRefusedError(111, "refused"), lost, DatabaseDown("down"),
                mysql_errors.OperationalError(2003, "Can't connect")):
        assert database_gone(exc), exc
    busy = sqlite_busy(tmp_path / "busy.sqlite3")
    wrapped = OperationalError(busy)
    wrapped.__context__ = busy
    for exc in (asyncpg.exceptions.QueryCanceledError("statement timeout"), asyncpg.exceptions.LockNotAvailableError(
            "lock timeout"), mysql_errors.OperationalError(1205, "Lock wait timeout exceeded"), wrapped,
                asyncpg.exceptions.PostgresSyntaxError("syntax error")):
        assert not database_gone(exc), exc
    assert database_unreachable(DatabaseDown("down"))  # the console and the relay answer it 503


async def test_open_until_a_probe_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(breaker_module, "PROBE_INTERVAL", 0.01)
    answers = [ConnectionRefusedError(111, "refused"), TimeoutError(), None]
    probes: list[int] = []
    closed = asyncio.Event()

    async def probe() -> None:
        probes.append(1)
        answer = answers.pop(0)
        if answer is not None:
            raise answer

    async def on_close() -> None:
        closed.set()

    breaker = Breaker(probe, on_close)
    breaker.check()  # closed: goes through
    breaker.failed(asyncpg.exceptions.QueryCanceledError("statement timeout"))
    breaker.failed(asyncio.CancelledError())
    assert not breaker.is_open  # the database answered; a cancelled caller says nothing about it
    breaker.failed(TimeoutError())
    assert breaker.is_open
    with pytest.raises(DatabaseDown):
        breaker.check()
    await asyncio.wait_for(closed.wait(), 10)
    assert len(probes) == 3 and not breaker.is_open
    breaker.check()
    await breaker.close()


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_statement_the_server_gave_up_on_leaves_it_closed(database_url: str) -> None:
    await init_database(database_url, timeouts=DatabaseTimeouts(connect=2, statement=0.3, transaction=5))
    try:
        conn = Tortoise.get_connection("default")
        with pytest.raises(Exception) as caught:
            await conn.execute_query("SELECT pg_sleep(2)")
        assert not database_gone(caught.value), caught.value
        assert not conn.breaker.is_open
        assert (await conn.execute_query_dict("SELECT 1 AS one")) == [{"one": 1}]
    finally:
        await close_database()


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_full_pool_leaves_it_closed(database_url: str) -> None:
    """Every pooled connection busy with a slow statement: the next one's wait for a connection times
    out, and the breaker stays closed (the database answers; its statements see their own timeouts)."""
    await init_database(database_url + ("&" if "?" in database_url else "?") + "minsize=1&maxsize=2",
                        timeouts=DatabaseTimeouts(connect=0.3, statement=20, transaction=30))
    try:
        conn = Tortoise.get_connection("default")
        await conn.execute_query("SELECT 1")  # the pool made
        sleepers = [asyncio.create_task(conn.execute_query("SELECT pg_sleep(4)")) for _ in range(2)]
        pool = conn._pool.pool

        async def full() -> bool:
            return bool(pool.get_size() == 2 and pool.get_idle_size() == 0)
        await eventually(full)
        with pytest.raises(TimeoutError):
            await conn.execute_query("SELECT 1")
        assert not conn.breaker.is_open
        await asyncio.gather(*sleepers)
        assert (await conn.execute_query_dict("SELECT 1 AS one")) == [{"one": 1}]
    finally:
        await close_database()
