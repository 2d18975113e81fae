"""`python -m models.importer SOURCE_URL [--logs] [--dry-run]`: see models.importer."""
from __future__ import annotations

import argparse
import asyncio
import sys

from models.db import close_database, init_database
from models.settings import Settings

from . import run


async def main(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    await init_database(settings.database_url)  # migrated already (`python -m models.migrate`, or `make run`)
    try:
        report = await run(args.source, logs=args.logs, dry=args.dry_run)
    except ValueError as exc:
        print(f"import refused: {exc}", file=sys.stderr)
        return 2
    finally:
        await close_database()
    print(report.render(args.dry_run))
    if not args.dry_run:
        await refresh_live_state(settings)
        print("live balances, key caches and options in Redis dropped: every process reloads them")
    return 0


async def refresh_live_state(settings: Settings) -> None:
    """What Redis holds of the imported rows is reloaded from the database on next use."""
    from api.services.events import EventBus
    from api.services.options import OptionsService
    from api.services.redis_keys import every_user
    from api.services.store import Store

    store = Store.from_settings(settings)
    try:
        doomed: list[str] = []
        for pattern in (every_user(store, "quota"), every_user(store, "gen"), every_user(store, "tq", "*"),
                        every_user(store, "tgen", "*"), f"{store.prefix}relay:*"):
            doomed += [key async for key in store.redis.scan_iter(match=pattern, count=1000)]
        for i in range(0, len(doomed), 500):
            for key in doomed[i:i + 500]:
                await store.redis.delete(key)
        await init_database(settings.database_url)
        try:
            await OptionsService(store).reload_from_db()
        finally:
            await close_database()
        events = EventBus(store)
        for kind in ("option", "channel", "token", "user"):
            await events.publish(kind, reset=True)
        await events.publish("*reset")
    finally:
        await store.close()


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m models.importer",
                                     description="Import a one-api or new-api database into this gateway.")
    parser.add_argument("source", help="the old database: a SQLite file path, postgres://… or mysql://…")
    parser.add_argument("--logs", action="store_true", help="also import logs and dashboard aggregates (resumable)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be imported, change nothing")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
