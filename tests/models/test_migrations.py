"""The aerich migrations build the schema from an empty database, and match the models."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tortoise import Tortoise

from models.db import close_database, init_database
from tests.conftest import PG_ADMIN_URL, ROOT

EXPECTED_TABLES = {"user", "token", "channel", "ability", "option", "redemption", "log", "midjourney", "task",
                   "top_up", "quota_data", "settlement", "aerich"}


def _migrate(url: str, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": url}
    return subprocess.run([sys.executable, "-m", "models.migrate", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _psql(sql: str) -> None:
    subprocess.run(["psql", PG_ADMIN_URL + "/postgres", "-qc", sql], check=True, capture_output=True)


@pytest.fixture(params=["sqlite", "postgres"])
def empty_database(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "sqlite":
        yield f"sqlite://{tmp_path / 'migrated.sqlite3'}"
        return
    name = f"gw_mig_test_{abs(hash(str(tmp_path))) % 10**8}"
    _psql(f"DROP DATABASE IF EXISTS {name}")
    _psql(f"CREATE DATABASE {name}")
    yield f"{PG_ADMIN_URL}/{name}"
    _psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_upgrade_from_empty_then_idempotent(empty_database: str) -> None:
    first = _migrate(empty_database)
    assert first.returncode == 0, first.stderr
    assert "schema upgraded" in first.stderr
    second = _migrate(empty_database)
    assert second.returncode == 0, second.stderr
    assert "up to date" in second.stderr

    await init_database(empty_database)
    try:
        conn = Tortoise.get_connection("default")
        if empty_database.startswith("sqlite"):
            _, rows = await conn.execute_query("SELECT name FROM sqlite_master WHERE type='table'")
            tables = {r["name"] for r in rows}
        else:
            _, rows = await conn.execute_query(
                "SELECT tablename FROM pg_tables WHERE schemaname='public'")
            tables = {r["tablename"] for r in rows}
        assert EXPECTED_TABLES <= tables
        # The migrated schema serves the ORM: write and read a row of each main table.
        from models import Channel, Log, Option, User

        user = await User.create(username="migrated", password="x")
        await Option.create(key="SystemName", value="M")
        await Channel.create(key="k", name="c", models="gpt-4o")
        await Log.create(user_id=user.id, type=2, other="{}")
        assert await User.filter(username="migrated").count() == 1
    finally:
        await close_database()


def test_models_match_the_migrations(tmp_path: Path) -> None:
    """Generating a migration against the migrated schema finds nothing to do (SQLite)."""
    url = f"sqlite://{tmp_path / 'check.sqlite3'}"
    result = _migrate(url, "check")
    assert result.returncode == 0, result.stderr + result.stdout
