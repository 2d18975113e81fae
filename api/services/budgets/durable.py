"""Budget windows in the database (models.BudgetUsage): what makes them survive a Redis that lost them.

The worker that applies a user's settlement records (api.services.billing.settlement) adds each
record's charge to every window it counted in, in the transaction that inserts the records'
Settlement rows: a record already applied (a redelivery, a worker killed after its commit) is
skipped there, so it never counts twice. A charge counts (quota, 1 request, its tokens); a task's
refund takes back (its quota, 1 request).

When a user's balance is loaded into Redis (it was not there: a restart of a Redis without
persistence, a flush), the open windows are loaded with it: the rows whose window has not ended,
plus the charges of the records still pending (in Redis, not yet applied), in the transaction that
reads the balance — so an empty Redis never opens a fresh allowance.

A window's soft alerts (api.services.budgets.alerts) are claimed in its row, one per limit, by a
conditional UPDATE (`claim_soft_alert`); inside `watching()`, `add_usage` notes the windows it
added to, for the settlement worker to look at once its transaction is committed.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.expressions import F

from api.services import redis_keys
from api.services.budgets.plan import grace, owner_kind, owner_ref, rolling_seconds, window_key
from models import BudgetUsage

# (windows [owner, identity, start, end], quota, requests, tokens) of one record
Charge = tuple[Sequence[Sequence[Any]], int, int, int]
Key = tuple[str, str, int]  # owner, identity, start
# A window as its row names it: user, owner kind, owner id, identity, start, end
Window = tuple[int, str, str, str, int, int]
CLAIM_ATTEMPTS = 64  # conditional UPDATEs of a claim; each one lost means another limit's claim was written

_watched: ContextVar[set[Window] | None] = ContextVar("budget_windows_watched", default=None)


class ClaimContended(Exception):
    """A row's soft alerts changed under every attempt of a claim (retry it)."""


@contextmanager
def watching() -> Iterator[set[Window]]:
    """The windows `add_usage` adds to within this context (the tasks it starts included)."""
    touched: set[Window] = set()
    token = _watched.set(touched)
    try:
        yield touched
    finally:
        _watched.reset(token)


def totals(charges: Iterable[Charge]) -> dict[Key, list[int]]:
    """Per window: [quota, requests, tokens, end]."""
    out: dict[Key, list[int]] = {}
    for windows, quota, requests, tokens in charges:
        for part, identity, start, end in windows:
            acc = out.setdefault((str(part), str(identity), int(start)), [0, 0, 0, int(end)])
            acc[0] += quota
            acc[1] += requests
            acc[2] += tokens
    return out


async def add_usage(conn: BaseDBAsyncClient, user_id: int, charges: Iterable[Charge]) -> None:
    """Add the records' charges to their windows' rows (within the caller's transaction, which holds
    the user's row lock: no other transaction writes this user's rows meanwhile)."""
    touched = _watched.get()
    for (part, identity, start), (quota, requests, tokens, end) in sorted(totals(charges).items()):
        kind, ref = owner_kind(part), owner_ref(part, user_id)
        if touched is not None:
            touched.add((user_id, kind, ref, identity, start, end))
        updated = await BudgetUsage.filter(user_id=user_id, owner_kind=kind, owner_id=ref, identity=identity,
                                           window_start=start).using_db(conn).update(
            quota=F("quota") + quota, requests=F("requests") + requests, tokens=F("tokens") + tokens)
        if not updated:
            window, _, model = identity.partition("@")
            await BudgetUsage.create(user_id=user_id, owner_kind=kind, owner_id=ref, identity=identity,
                                     window=window, model=model, window_start=start, window_end=end, quota=quota,
                                     requests=requests, tokens=tokens, using_db=conn)


async def open_rows(conn: BaseDBAsyncClient, user_id: int, now: int) -> list[dict[str, Any]]:
    return await BudgetUsage.filter(user_id=user_id, window_end__gt=now).using_db(conn).values(
        "owner_kind", "owner_id", "identity", "window_start", "window_end", "quota", "requests", "tokens")


def part_of(kind: str, ref: str) -> str:
    return f"k{ref}" if kind == "key" else f"g:{ref}" if kind == "group" else "u"


def load_arguments(store: redis_keys.Prefixed, user_id: int, rows: Sequence[dict[str, Any]],
                   pending: Iterable[Charge], now: int) -> tuple[list[str], list[object]]:
    """The window keys and their values (start, quota, requests, tokens, expiry) for the balance's
    load script: the open rows plus the pending charges of open windows; of a rolling identity, the
    latest open window (one is open at a time)."""
    found: dict[Key, list[int]] = {}
    for row in rows:
        key = (part_of(row["owner_kind"], row["owner_id"]), row["identity"], int(row["window_start"]))
        found[key] = [int(row["quota"]), int(row["requests"]), int(row["tokens"]), int(row["window_end"])]
    for key, (quota, requests, tokens, end) in totals(pending).items():
        if end <= now:
            continue
        acc = found.setdefault(key, [0, 0, 0, end])
        acc[0] += quota
        acc[1] += requests
        acc[2] += tokens
    chosen: dict[str, tuple[Key, list[int]]] = {}
    for key, values in found.items():
        part, identity, start = key
        name = window_key(store, user_id, part, identity, start)
        if rolling_seconds(identity) and name in chosen and chosen[name][0][2] > start:
            continue
        chosen[name] = (key, values)
    keys: list[str] = []
    args: list[object] = []
    for name, ((_, identity, start), (quota, requests, tokens, end)) in sorted(chosen.items()):
        length = rolling_seconds(identity) or max(end - start, 60)
        keys.append(name)
        args += (start, quota, requests, tokens, end + grace(length))
    return keys, args


async def claim_soft_alert(user_id: int, owner_kind_: str, owner_id: str, identity: str, window_start: int,
                           mark: str, claim: str) -> bool:
    """Claim the soft alert `mark` (a limit's `<measure>:<amount>`) of a window for `claim`: True when
    this claim holds it (it was free, or this very claim took it before: a retried message), False when
    another claim holds it or the window has no row yet (its first records not applied)."""
    where = {"user_id": user_id, "owner_kind": owner_kind_, "owner_id": owner_id, "identity": identity,
             "window_start": window_start}
    for _ in range(CLAIM_ATTEMPTS):
        found = await BudgetUsage.filter(**where).values_list("soft_alerts", flat=True)
        if not found:
            return False
        current = str(found[0])
        entries = current.split()
        for entry in entries:
            name, _, holder = entry.partition("=")
            if name == mark:
                return holder == claim
        if await BudgetUsage.filter(**where, soft_alerts=current).update(
                soft_alerts=" ".join([*entries, f"{mark}={claim}"])):
            return True
    raise ClaimContended(f"soft alert {mark} of {owner_kind_} {owner_id} {identity}@{window_start}")


def claimed(soft_alerts: str) -> frozenset[str]:
    """The marks already claimed in a row's `soft_alerts`."""
    return frozenset(entry.partition("=")[0] for entry in soft_alerts.split())
