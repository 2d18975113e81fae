"""`python -m importer SOURCE_URL [--logs] [--dry-run] [--new-only | --overwrite-live]`: see importer.

Into a gateway that has served traffic since the last import (importer.live), a plain run is
refused (exit code 2) with what was found and the two ways on: `--new-only` creates only the rows
whose id is not here and leaves every existing row (balances, keys, channels) as it is here;
`--overwrite-live` sets the rows that differ to the source's values, balances included, and
says so. Into a gateway that has not, a plain run copies the source over what the last import wrote.
`--dry-run` says which of these a run would do, and how many rows it would create, leave or overwrite.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from urllib.parse import urlsplit

from redis.exceptions import RedisError

from api.resources import Resources, open_resources
from api.services import audit, redis_keys
from api.services.redis_keys import every_user, pending_version, quota, token_quota, user_key, user_of
from api.services.store import Store
from models.enums import Role
from models.settings import Settings
from workers.broker import send

from . import Report, live, run


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def money(report: Report) -> str:
    """The balances a run would set, said in full."""
    return f"the balances of {plural(report.balances('user'), 'user')} and {plural(report.balances('token'), 'key')}"


def refusal(activity: live.Activity, report: Report) -> str:
    created, differing = report.totals()
    return "\n".join([
        f"this gateway has served traffic {activity.describe()}.",
        f"Importing over it would set {plural(differing, 'existing row')} to the source's values, among them "
        f"{money(report)}: what was charged and credited here since would be lost.",
        "Two ways on:",
        f"  --new-only        create only the {plural(created, 'row')} new in the source (ids not here) and leave "
        f"the {plural(differing, 'existing row')} as they are here",
        f"  --overwrite-live  the source wins: set the {plural(differing, 'existing row')} to the source's "
        "values, balances included",
    ])


def decision(activity: live.Activity, report: Report, *, new_only: bool, overwrite: bool, dry: bool) -> str:
    created, differing = report.totals()
    would = "would be" if dry else "were"
    if new_only:
        why = f"the gateway has served traffic {activity.describe()}" if activity.live else "as asked"
        return (f"--new-only ({why}): {plural(created, 'row')} new in the source {would} created, "
                f"{plural(differing, 'existing row')} that differ from the source left as they are here")
    if overwrite and activity.live:
        return (f"--overwrite-live: the gateway has served traffic {activity.describe()}; "
                f"{plural(created, 'row')} {would} created and {plural(differing, 'existing row')} set to the "
                f"source's values, among them {money(report)}")
    if activity.live:  # only a dry run gets here
        return (f"a run would be refused: the gateway has served traffic {activity.describe()}. With --new-only "
                f"{plural(created, 'row')} would be created and {plural(differing, 'existing row')} left as they "
                f"are here; with --overwrite-live the {plural(differing, 'existing row')} would be set to the "
                f"source's values, among them {money(report)}")
    return (f"the gateway has served no traffic {activity.since}: {plural(created, 'row')} "
            f"{would} created and {plural(differing, 'existing row')} set to the source's values")


async def main(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    # The database is migrated already (`python -m models.migrate`, or `make run`). No events listened
    # to: this process only publishes the reloads.
    async with open_resources(settings, send=send) as resources:
        return await import_into(resources, args)


async def import_into(resources: Resources, args: argparse.Namespace) -> int:
    store = resources.store
    try:
        activity = await live.inspect(store)
    except RedisError as exc:
        print(f"import refused: Redis did not answer ({exc}): charges waiting there cannot be checked",
              file=sys.stderr)
        return 2
    refuse = activity.live and not (args.new_only or args.overwrite_live)
    if args.overwrite_live and activity.live and not args.dry_run:
        print(f"WARNING --overwrite-live: this gateway has served traffic {activity.describe()}. Rows here that "
              "differ from the source are set to the source's values, balances included.", file=sys.stderr)
    try:
        report = await run(args.source, logs=args.logs, dry=args.dry_run or refuse, new_only=args.new_only)
    except ValueError as exc:
        print(f"import refused: {exc}", file=sys.stderr)
        return 2
    if refuse and not args.dry_run:
        print(f"import refused: {refusal(activity, report)}", file=sys.stderr)
        return 2
    print(report.render(args.dry_run))
    print(decision(activity, report, new_only=args.new_only, overwrite=args.overwrite_live, dry=args.dry_run))
    if args.dry_run:
        return 0
    if args.overwrite_live and activity.live:
        print(f"WARNING --overwrite-live: {plural(report.totals()[1], 'existing row')} set to the source's "
              f"values, among them {money(report)}", file=sys.stderr)
    # A --new-only import into a live gateway keeps what changed here: later runs still ask.
    await live.record_import(kept=args.new_only and activity.live)
    await audit.push(store, resources.jobs, import_entry(args, report))
    if args.new_only:
        await refresh_new_rows(resources, report)
        print("live balances of the new users and keys and the caches in Redis reloaded; "
              "existing balances untouched")
    else:
        await refresh_live_state(resources, report)
        print("live balances, key caches and options in Redis dropped: every process reloads them")
    return 0


def import_entry(args: argparse.Namespace, report: Report) -> audit.Entry:
    """The audit entry of an import that changed the database: by the importer (root's to read), the
    source named without its credentials, what each table got."""
    parts = urlsplit(args.source if "://" in args.source else f"sqlite://{args.source}")
    host = parts.hostname or ""
    source = f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"
    # a list, not a dict keyed by table: a table's name ("tokens") is no field name to mask
    tables = [{"table": name, "created": t.created, "updated": t.updated, "left": t.left}
              for name, t in report.tables.items() if t.created or t.updated or t.left]
    return audit.make_entry("import.run", "import", report.flavour or "new-api", None,
                            {"source": source, "tables": tables, "logs": bool(args.logs),
                             "new_only": bool(args.new_only), "overwrite_live": bool(args.overwrite_live)},
                            actor_name="importer", actor_role=int(Role.ROOT), actor_ip="command line")


async def forget_balances(store: Store, users: dict[int, list[str]]) -> None:
    """Drop these users' balance keys, each user's with its change counter moved in the same step, so
    that a reload that read the database before the import does not write what it read (quota._LOAD);
    a charge pre-charged against a dropped balance settles against the reloaded one (its gen differs)."""
    for user_id, doomed in users.items():
        async with store.redis.pipeline(transaction=True) as pipe:
            pipe.incr(pending_version(store, user_id))
            if doomed:
                pipe.delete(*doomed)
            await pipe.execute()


async def refresh_new_rows(resources: Resources, report: Report) -> None:
    """After a --new-only import: what Redis may hold under the new users' and keys' ids is dropped;
    the balances of existing users and keys, unchanged in the database, stay as they are."""
    store = resources.store
    users: dict[int, list[str]] = {}
    for user_id in report.new_users:
        users.setdefault(user_id, []).extend([quota(store, user_id), user_key(store, user_id, "gen")])
    for user_id, token_id in report.new_tokens:
        users.setdefault(user_id, []).extend([token_quota(store, user_id, token_id),
                                              user_key(store, user_id, "tgen", token_id)])
    await forget_balances(store, users)
    await reload_caches(resources)


async def refresh_live_state(resources: Resources, report: Report) -> None:
    """What Redis holds of the imported rows is reloaded from the database on next use."""
    store = resources.store
    users: dict[int, list[str]] = {user_id: [] for user_id in report.changed_users + report.new_users}
    users.update({user_id: [] for user_id, _ in report.changed_tokens + report.new_tokens if user_id})
    for pattern in (every_user(store, "quota"), every_user(store, "gen"), every_user(store, "tq", "*"),
                    every_user(store, "tgen", "*")):
        async for key in store.redis.scan_iter(match=pattern, count=1000):
            user_id = user_of(store, key)
            if user_id is not None:
                users.setdefault(user_id, []).append(key)
    await forget_balances(store, users)
    await reload_caches(resources)


async def reload_caches(resources: Resources) -> None:
    """Key and user caches and options: dropped and reloaded by every process (they hold no money)."""
    store = resources.store
    doomed = [key async for key in store.redis.scan_iter(match=redis_keys.every_relay_key(store), count=1000)]
    for i in range(0, len(doomed), 500):
        for key in doomed[i:i + 500]:
            await store.redis.delete(key)
    await resources.options.reload_from_db()
    for kind in ("option", "channel", "token", "user"):
        await resources.events.publish(kind, reset=True)
    await resources.events.publish("*reset")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m importer",
                                     description="Import a one-api or new-api database into this gateway.")
    parser.add_argument("source", help="the old database: a SQLite file path, postgres://… or mysql://…")
    parser.add_argument("--logs", action="store_true", help="also import logs and dashboard aggregates (resumable)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be imported, change nothing")
    way = parser.add_mutually_exclusive_group()
    way.add_argument("--new-only", action="store_true",
                     help="create only rows whose id is not here; leave existing rows (balances too) as they are")
    way.add_argument("--overwrite-live", action="store_true",
                     help="into a gateway that has served traffic since the last import: the source's values "
                          "replace rows changed here, balances included (charges and top-ups made here are lost)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
