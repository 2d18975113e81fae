"""Writing the converted rows: each table copied from the source in batches, one transaction per batch,
rows keeping their ids; what is missing is created, what differs is updated (or, `new_only`, left as
it is), and a row colliding with a different one here on a unique column is skipped."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from tortoise import Model, Tortoise
from tortoise.transactions import in_transaction

from models import Option, Redemption, Token, TopUp, User

from .live import BALANCE_COLUMNS
from .report import Report, TableReport
from .source import Source

BATCH = 500
LOG_CURSOR = "_importer_log_cursor"  # an option row: the last log id imported (resumable --logs)
UNIQUE: dict[Any, tuple[str, ...]] = {User: ("username",), Token: ("key",), Redemption: ("key",),
                                     TopUp: ("trade_no",)}


async def upsert(model: Any, rows: list[dict[str, Any]], report: TableReport, dry: bool,
                 new_only: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Create what is missing (keeping ids), update what differs (`new_only`: leave it), in one
    transaction; returns the rows created and the rows updated."""
    ids = [r["id"] for r in rows]
    existing = {o.id: o for o in await model.filter(id__in=ids)}
    for name in UNIQUE.get(model, ()):
        values = [r[name] for r in rows if name in r]
        taken = {getattr(o, name): o.id for o in await model.filter(**{f"{name}__in": values})}
        kept = []
        for r in rows:
            owner = taken.get(r.get(name))
            if owner is not None and owner != r["id"]:
                report.skipped.append(f"id {r['id']}: {name} {r.get(name)!r} belongs to row {owner} here")
            else:
                kept.append(r)
        rows = kept
    balance_columns = BALANCE_COLUMNS.get(model, ())
    creates: list[dict[str, Any]] = []
    updates: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for r in rows:
        row = existing.get(r["id"])
        if row is None:
            creates.append(r)
            continue
        changed = {k: v for k, v in r.items() if k != "id" and getattr(row, k) != v}
        if not changed:
            report.unchanged += 1
            continue
        money = [k for k in balance_columns if k in changed]
        if money:
            report.balances += 1
        if not new_only:
            updates.append((r, changed))
            continue
        report.left += 1
        if money:
            report.kept.append(f"id {r['id']}: " + ", ".join(f"{k} {getattr(row, k)} here, {changed[k]} in the source"
                                                             for k in money))
    report.created += len(creates)
    report.updated += len(updates)
    if not dry:
        async with in_transaction():
            if creates:
                await model.bulk_create([model(**r) for r in creates], batch_size=BATCH)
            for r, changed in updates:
                await model.filter(id=r["id"]).update(**changed)
    return creates, [r for r, _ in updates]


async def copy_table(source: Source, table: str, model: type[Model], convert: Callable[[dict[str, Any]], Any],
                     report: Report, dry: bool, after_id: int = 0, progress: bool = False,
                     new_only: bool = False) -> int:
    """Every row of `table`; returns the last source id seen."""
    part = report.table(model._meta.db_table)
    total = await source.count(table) if progress else 0
    done, started, last = 0, time.monotonic(), after_id
    async for chunk in source.rows(table, after_id=after_id, batch=BATCH):
        rows = []
        for raw in chunk:
            converted = convert(raw)
            if isinstance(converted, str):
                part.skipped.append(f"id {raw.get('id')}: {converted}")
                continue
            converted["id"] = raw["id"]
            rows.append(converted)
        if rows:
            created, updated = await upsert(model, rows, part, dry, new_only)
            if model is User:
                report.new_users += [r["id"] for r in created]
                report.changed_users += [r["id"] for r in updated]
            elif model is Token:
                report.new_tokens += [(int(r["user_id"]), r["id"]) for r in created]
                report.changed_tokens += [(int(r.get("user_id", 0)), r["id"]) for r in updated]
        last = chunk[-1]["id"]
        done += len(chunk)
        if progress:
            rate = done / max(time.monotonic() - started, 1e-6)
            bar = "#" * int(30 * done / max(total, 1))
            print(f"\r  {table}: [{bar:<30}] {done:,}/{total:,} {rate:,.0f} rows/s", end="", file=sys.stderr)
            if not dry:
                await Option.update_or_create(key=LOG_CURSOR, defaults={"value": str(last)})
    if progress:
        print(file=sys.stderr)
    return last


async def fix_sequences(models: Iterable[type[Model]]) -> None:
    """Rows came with their ids: move PostgreSQL's id sequences past them (MySQL and SQLite do it alone)."""
    conn = Tortoise.get_connection("default")
    if conn.capabilities.dialect != "postgres":
        return
    for model in models:
        table = model._meta.db_table
        await conn.execute_script(
            f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
            f"COALESCE((SELECT MAX(id) FROM \"{table}\"), 0) + 1, false)")
