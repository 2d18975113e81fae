"""The database timeouts: read from the environment, applied to each dialect's connection, and
their expiry (or a lock that did not come) told apart from a wrong statement."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg
import pytest
from asyncmy import errors as mysql_errors
from tortoise.exceptions import OperationalError

from models.db import database_gave_up_on_a_row, database_unreachable
from models.settings import DatabaseTimeouts, Settings, tortoise_config

TIMEOUTS = DatabaseTimeouts(connect=2, statement=3, transaction=20)


def connection(url: str, timeouts: DatabaseTimeouts | None = TIMEOUTS) -> dict:
    return tortoise_config(url, with_aerich=False, timeouts=timeouts)["connections"]["default"]


def test_the_timeouts_come_from_the_environment_with_defaults() -> None:
    assert DatabaseTimeouts.from_env({}) == DatabaseTimeouts(5.0, 10.0, 30.0)
    env = {"DB_CONNECT_TIMEOUT": "1.5", "DB_STATEMENT_TIMEOUT": "4", "DB_TRANSACTION_TIMEOUT": "9"}
    assert DatabaseTimeouts.from_env(env) == DatabaseTimeouts(1.5, 4.0, 9.0)
    settings = Settings.from_env({**env, "SESSION_SECRET": "s"})
    assert settings.database_timeouts == DatabaseTimeouts(1.5, 4.0, 9.0)
    for bad in ("0", "-1", "soon"):
        with pytest.raises(ValueError, match="DB_STATEMENT_TIMEOUT"):
            DatabaseTimeouts.from_env({"DB_STATEMENT_TIMEOUT": bad})


def test_postgres_bounds_connecting_waiting_statements_and_idle_transactions() -> None:
    db = connection("postgres://gw:secret@db.example:5433/gateway")
    assert db["engine"] == "models.backends.postgres"
    credentials = db["credentials"]
    assert credentials["timeout"] == 2 and credentials["acquire_timeout"] == 2
    assert credentials["command_timeout"] == 3 + 1  # the server's own limit first, the client's a second later
    assert credentials["server_settings"] == {"statement_timeout": "3000",
                                              "idle_in_transaction_session_timeout": "20000"}
    assert (credentials["host"], credentials["port"], credentials["password"]) == ("db.example", 5433, "secret")
    # What the URL sets itself is kept.
    assert connection("postgres://gw@db/gateway?command_timeout=60")["credentials"]["command_timeout"] == "60"


def test_sqlite_bounds_the_write_lock_and_the_connection() -> None:
    credentials = connection("sqlite:///data/gateway.sqlite3")["credentials"]
    assert credentials["busy_timeout"] == 3000 and credentials["acquire_timeout"] == 2


def test_mysql_bounds_connecting_replies_and_row_locks() -> None:
    db = connection("mysql://gw:secret@db:3306/gateway")
    assert db["engine"] == "models.backends.mysql"
    credentials = db["credentials"]
    assert (credentials["connect_timeout"], credentials["read_timeout"], credentials["acquire_timeout"]) == (2, 4, 2)
    assert credentials["init_command"] == "SET SESSION innodb_lock_wait_timeout = 3"


def test_migrations_keep_tortoise_own_connection() -> None:
    assert connection("postgres://gw@db/gateway", timeouts=None) == "postgres://gw@db/gateway"


async def test_the_bounded_clients_open_and_answer(tmp_path: Path) -> None:
    from tortoise import Tortoise

    from models.db import close_database, init_database

    await init_database(f"sqlite://{tmp_path / 'x.sqlite3'}", timeouts=TIMEOUTS)
    try:
        conn = Tortoise.get_connection("default")
        assert type(conn).__name__ == "BoundedSqliteClient"
        assert (await conn.execute_query_dict("PRAGMA busy_timeout")) == [{"timeout": 3000}]
    finally:
        await close_database()


def sqlite_busy(path: Path) -> sqlite3.OperationalError:
    holder = sqlite3.connect(path, isolation_level=None)
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        holder.execute("CREATE TABLE t (x)")
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlite3.OperationalError) as caught:
            other.execute("INSERT INTO t VALUES (1)")
        return caught.value
    finally:
        holder.close()
        other.close()


def test_a_timeout_or_a_lock_not_granted_is_unreachable_a_wrong_statement_is_not(tmp_path: Path) -> None:
    busy = sqlite_busy(tmp_path / "busy.sqlite3")
    wrapped = OperationalError(busy)
    wrapped.__context__ = busy  # as Tortoise raises it
    canceled = asyncpg.exceptions.QueryCanceledError("canceling statement due to statement timeout")
    lock_wait = mysql_errors.OperationalError(1205, "Lock wait timeout exceeded")
    for exc in (TimeoutError(), wrapped, canceled, lock_wait, mysql_errors.OperationalError(2013, "Lost connection")):
        assert database_unreachable(exc), exc
    syntax = asyncpg.exceptions.PostgresSyntaxError("syntax error")
    for exc in (syntax, sqlite3.OperationalError("no such table: t"), mysql_errors.OperationalError(1054, "column")):
        assert not database_unreachable(exc), exc
    # Billing goes on with other users after a row it could not have, not after the database went.
    assert database_gave_up_on_a_row(canceled) and database_gave_up_on_a_row(lock_wait)
    assert not database_gave_up_on_a_row(TimeoutError()) and not database_gave_up_on_a_row(wrapped)
