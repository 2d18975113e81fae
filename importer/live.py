"""Has this gateway served traffic since the last import? (A run that would overwrite rows then asks first.)

The signal is the money. Every import that leaves the database equal to what it copied records, in the
option row LAST_IMPORT, when it ran and a fingerprint (SHA-256) of every user's and key's balance
columns (BALANCE_COLUMNS, with the row ids) as it left them, plus the highest settlement and log ids
then. A later run computes the fingerprint again: whatever moved money here since (a relayed request
settled, a task refunded, a top-up, a redemption, a Stripe credit, an admin edit, an aff transfer, a
user or key created here) changes it; what the source did since does not (only this database is
read). Charges not in the database yet count too: settlement records waiting in Redis for the
workers, and requests still running (open reservations). With no LAST_IMPORT row (no import yet, or
one by an importer before this check) the target counts as live when it has settled any request
(settlement rows are written by this gateway's workers only, never imported) or has charges in Redis.

A `--new-only` import into a live target keeps the changes made here, so its LAST_IMPORT row says so
(`kept`): the target stays live for every later run until an `--overwrite-live` import makes it equal
to the source again. The settlements and logs written since the last import (ids past the recorded
ones: imported rows keep the source's ids, and the import moves the id sequences past them) are only
reported, to say what was found.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from tortoise import Model

from api.services import redis_keys
from api.services.store import Store
from models import Log, Option, Settlement, Token, User
from models.enums import LogType

LAST_IMPORT = "_importer_last_import"  # an option row: {at, fingerprint, settlement_id, log_id, kept}
# What a request, a top-up or an edit of a balance changes, per table (the ids are hashed too).
BALANCE_COLUMNS: dict[type[Model], tuple[str, ...]] = {
    User: ("quota", "used_quota", "request_count", "aff_quota", "aff_history_quota"),
    Token: ("user_id", "remain_quota", "used_quota", "unlimited_quota"),
}
_LOG_NAMES = {LogType.CONSUME: "consume", LogType.TOPUP: "top-up", LogType.MANAGE: "management",
              LogType.SYSTEM: "system", LogType.ERROR: "error", LogType.UNKNOWN: "other"}


@dataclass
class Marker:
    at: int
    fingerprint: str
    settlement_id: int = 0
    log_id: int = 0
    kept: bool = False  # a --new-only import kept changes made here

    @property
    def when(self) -> str:
        return dt.datetime.fromtimestamp(self.at, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass
class Activity:
    """What the target shows of traffic served since the last import."""

    marker: Marker | None = None
    balances_changed: bool = False  # the fingerprint differs from the one recorded
    settlements: int = 0  # requests settled in the database since
    logs: dict[str, int] = field(default_factory=dict)  # log rows written here since, by type
    pending: int = 0  # settlement records in Redis not yet in the database
    running: int = 0  # requests pre-charged and not settled yet

    @property
    def live(self) -> bool:
        if self.pending or self.running:
            return True
        if self.marker is None:
            return self.settlements > 0
        return self.marker.kept or self.balances_changed

    def describe(self) -> str:
        found: list[str] = []
        if self.marker is not None and self.marker.kept:
            found.append("the last import (--new-only) kept balances changed here")
        if self.balances_changed:
            found.append("balances of users or keys changed here")
        if self.settlements:
            found.append(f"{self.settlements} request(s) settled")
        if self.logs:
            found.append("logs written here: " + ", ".join(f"{n} {kind}" for kind, n in self.logs.items()))
        if self.pending:
            found.append(f"{self.pending} charge(s) waiting in Redis for the workers")
        if self.running:
            found.append(f"{self.running} request(s) running")
        return f"{self.since}: " + ("; ".join(found) or "nothing")

    @property
    def since(self) -> str:
        return f"since the last import ({self.marker.when})" if self.marker else "(no import recorded here)"


async def fingerprint() -> str:
    digest = hashlib.sha256()
    for model, columns in BALANCE_COLUMNS.items():
        digest.update(model._meta.db_table.encode() + b"\n")
        last = 0
        while True:
            rows = await model.filter(id__gt=last).order_by("id").limit(5000).values_list("id", *columns)
            if not rows:
                break
            for row in rows:
                digest.update(",".join(str(int(value or 0)) for value in row).encode() + b"\n")
            last = int(rows[-1][0])
    return digest.hexdigest()


async def _max_id(model: Any) -> int:
    ids = await model.all().order_by("-id").limit(1).values_list("id", flat=True)
    return int(ids[0]) if ids else 0


async def read_marker() -> Marker | None:
    row = await Option.filter(key=LAST_IMPORT).first()
    if row is None:
        return None
    data = orjson.loads(row.value or "{}")
    return Marker(int(data["at"]), str(data["fingerprint"]), int(data.get("settlement_id", 0)),
                  int(data.get("log_id", 0)), bool(data.get("kept", False)))


async def record_import(kept: bool) -> None:
    """After an import: the target as it left it (`kept`: it still holds changes made here)."""
    marker = Marker(int(time.time()), await fingerprint(), await _max_id(Settlement), await _max_id(Log), kept)
    value = orjson.dumps(marker.__dict__).decode()
    await Option.update_or_create(key=LAST_IMPORT, defaults={"value": value})


async def inspect(store: Store) -> Activity:
    activity = Activity(marker=await read_marker())
    marker = activity.marker
    activity.settlements = await Settlement.filter(id__gt=marker.settlement_id if marker else 0).count()
    if marker is not None:
        activity.balances_changed = await fingerprint() != marker.fingerprint
        for kind in LogType:
            count = await Log.filter(id__gt=marker.log_id, type=int(kind)).count()
            if count:
                activity.logs[_LOG_NAMES.get(kind, kind.name.lower())] = count
    async for key in store.redis.scan_iter(match=redis_keys.every_user(store, "pend"), count=1000):
        activity.pending += int(await store.redis.hlen(key))
    async for key in store.redis.scan_iter(match=redis_keys.every_user(store, "resv"), count=1000):
        # `<request id>` is an open reservation; `…#` its checkpoint, `…!` a settled one's tombstone
        fields = await store.redis.hkeys(key)
        activity.running += sum(1 for f in fields if not str(f).endswith(("#", "!")))
    return activity
