"""Apply (or generate) the aerich migrations of the configured database.

aerich writes dialect-specific SQL, so each supported database has its own folder:
models/migrations/{sqlite,postgres,mysql}. `python -m models.migrate` upgrades the database named by
DATABASE_URL to the newest migration of its dialect; `python -m models.migrate make NAME` generates a
new migration for the current dialect (run it once per dialect against a scratch database).
"""
from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

from aerich import Command
from tortoise import Tortoise

from .settings import database_url_from_env, dialect_of, tortoise_config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
log = logging.getLogger(__name__)


def location_for(dialect: str) -> Path:
    return MIGRATIONS / dialect


async def upgrade(database_url: str, dialect: str) -> list[str]:
    """Bring the schema up to date; returns the migrations applied (empty when already current)."""
    command = Command(tortoise_config=tortoise_config(database_url), app="models",
                      location=str(location_for(dialect)))
    try:
        await command.init()
        applied = await command.upgrade(run_in_transaction=True)
    finally:
        await Tortoise.close_connections()
    return applied


async def make(database_url: str, dialect: str, name: str) -> str | None:
    """Generate a migration from the difference between the models and the newest migration."""
    command = Command(tortoise_config=tortoise_config(database_url), app="models",
                      location=str(location_for(dialect)))
    try:
        if not (location_for(dialect) / "models").exists():
            await command.init_db(safe=True)
            return "init"
        await command.init()  # aerich reads the last applied version at init: upgrade first
        return await command.migrate(name=name, no_input=True)
    finally:
        await Tortoise.close_connections()


async def check(database_url: str, dialect: str) -> int:
    """Exit status 1 when the models differ from the newest migration (a migration is missing).

    The database must be at the newest migration (main() upgrades it first, in its own event loop:
    Tortoise keeps its context per loop)."""
    command = Command(tortoise_config=tortoise_config(database_url), app="models",
                      location=str(location_for(dialect)))
    try:
        await command.init()
        from aerich import migrate as aerich_migrate
        from aerich.utils import get_models_describe

        # The same diff `aerich migrate` computes, without writing a file.
        migrator = aerich_migrate.Migrate
        new = get_models_describe("models")
        last, new = migrator._exclude_model_name_changes(migrator._last_version_content or {}, new)
        migrator.diff_models(last, new, no_input=True)
        migrator.diff_models(new, last, False, no_input=True)
        migrator._merge_operators()
        pending = list(migrator.upgrade_operators)
    finally:
        await Tortoise.close_connections()
    if pending:
        log.error("models differ from the newest %s migration: %s", dialect, pending)
        return 1
    log.info("models match the %s migrations", dialect)
    return 0


SCRATCH_URLS = {
    "sqlite": "sqlite://{tmp}/scratch.sqlite3",
    "postgres": "postgres://postgres@127.0.0.1:5432/{name}",
    "mysql": "mysql://root:@127.0.0.1:3306/{name}",
}


def _admin(dialect: str, sql: str) -> None:
    import subprocess

    if dialect == "postgres":
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", sql], check=True)
    elif dialect == "mysql":
        subprocess.run(["mysql", "-uroot", "-h127.0.0.1", "-e", sql], check=True)


def make_all(name: str) -> int:
    """Generate migration NAME for every dialect, each against a scratch database at the current head.

    Needs the local PostgreSQL and MySQL/MariaDB servers (trust / empty-password root), as on the
    development machines.
    """
    import subprocess
    import tempfile

    scratch = f"gw_make_{os.getpid()}"
    for dialect, template in SCRATCH_URLS.items():
        with tempfile.TemporaryDirectory() as tmp:
            url = template.format(tmp=tmp, name=scratch)
            _admin(dialect, f"create database {scratch}")
            try:
                # One process per dialect: Tortoise caches SQL per model class with the first dialect.
                env = {**os.environ, "DATABASE_URL": url}
                subprocess.run([sys.executable, "-m", "models.migrate", "make", name], env=env, check=True)
            finally:
                _admin(dialect, f"drop database {scratch}")
    return 0


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s migrate: %(message)s")
    url = database_url_from_env(dict(os.environ))
    dialect = dialect_of(url)
    if argv and argv[0] == "check":
        asyncio.run(upgrade(url, dialect))
        return asyncio.run(check(url, dialect))
    if argv and argv[0] == "make-all":
        return make_all(argv[1] if len(argv) > 1 else "update")
    if argv and argv[0] == "make":
        asyncio.run(upgrade(url, dialect))
        result = asyncio.run(make(url, dialect, argv[1] if len(argv) > 1 else "update"))
        log.info("%s: %s", dialect, result or "no changes")
        return 0
    if dialect == "sqlite":
        path = url.split("://", 1)[1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
    applied = asyncio.run(upgrade(url, dialect))
    log.info("%s schema %s", dialect, f"upgraded: {', '.join(applied)}" if applied else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
