"""Settlement records: from the relay (through Redis) to the database (by the workers), idempotently.

The relay's settle script (api.services.billing.quota) stores each record in the user's `{u<id>}:pend` hash,
atomically with the balance correction; `SettlementSender` (settlement_sender.py) then tells the
workers which users have new records (one `billing.apply` message per ~250 ms per process, sent off
the event loop). The scheduler's `billing.sweep` catches users whose message was lost (a process or
worker that died).

`apply_pending` (in a worker) moves a user's records into the database in ONE transaction: a
models.Settlement row per request id (unique: a record applied twice changes nothing), user quota /
used_quota / request_count, key remain_quota / used_quota, channel used_quota, the consume logs
(settlement_logs.py) and the hourly QuotaData rows; then removes the records from Redis. A worker
killed between the commit and the removal leaves records that the next run finds already applied and
only removes.

One record never holds up its user's others: the records' free text is cut to the log columns as
the rows are made (api.services.row_insert, api.services.columns), and a transaction that fails
on a value the database refuses (row_insert.row_refused, not the database being away) is done
again one record at a time; a record refused on its own, or that cannot be read, is moved from
the pending hash to `set-aside:settlement` (api.services.set_aside: logged, kept, and applied
again once put back in the hash).

No user waits on another (`apply_users`): a user whose billing lock is held elsewhere is left for a
retry at once, the transaction is bounded (DB_TRANSACTION_TIMEOUT; the lock is no longer renewed
past it), and a failure leaves the records in Redis for the retry.

Durability: the records live in Redis until a worker has committed them. With AOF persistence
(`appendonly yes`, fsync every second) a Redis restart loses at most the last second of records
and balance changes; without persistence a restart loses every record not yet applied (typically
the last ~250 ms of traffic, more while the workers are down): those requests stay unbilled in the
database, and the live balances reload from the database (consistent with it, so the invariant
still holds, in the users' favour).
"""
from __future__ import annotations

import asyncio
import html
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from tortoise.expressions import F
from tortoise.transactions import in_transaction

from api.services import redis_keys
from api.services.billing.records import SettlementRecord
from api.services.billing.settlement_logs import (
    cache_saving,
    consume_content,
    consume_other,
    refund_content,
    refund_other,
)
from api.services.budgets import durable
from api.services.columns import cut
from api.services.configuration.options import OptionsService
from api.services.locks import LockBusy, lease_lock
from api.services.row_insert import insert_each, insert_rows
from api.services.set_aside import set_aside
from api.services.store import Store
from models import Channel, Log, QuotaData, Settlement, Token, User
from models.db import database_gave_up_on_a_row
from models.enums import LogType

log = logging.getLogger(__name__)
REMIND_THROTTLE = 3600  # seconds between two low-balance mails to one user
TRANSACTION_TIMEOUT = 30.0  # seconds a settlement's transaction may take (DB_TRANSACTION_TIMEOUT in the workers)
WRITER = "settlement"  # the name its refused records are set aside under
# send_mail(to, subject, html): the workers' mail.send
MailSender = Callable[[str, str, str], Awaitable[None]]

pending_key = redis_keys.pending


@dataclass(slots=True)
class Applied:
    count: int = 0
    quota: int = 0
    quota_before: int = 0
    email: str = ""
    username: str = ""

    def add(self, other: Applied) -> None:
        """Another transaction's records of the same user, applied after these."""
        if not other.count:
            return
        if not self.count:
            self.quota_before, self.email, self.username = other.quota_before, other.email, other.username
        self.count += other.count
        self.quota += other.quota


async def _apply_records(user_id: int, records: Mapping[str, SettlementRecord], log_consume: bool) -> Applied:
    """One transaction: everything the records change, or nothing (already applied ones skipped)."""
    result = Applied()
    async with in_transaction() as conn:
        # Lock the user row first: balance loaders (api.services.billing.quota) lock it too.
        user = await User.filter(id=user_id).using_db(conn).select_for_update().first()
        done = set(cast(list[str], await Settlement.filter(request_id__in=list(records)).using_db(conn)
                        .values_list("request_id", flat=True)))
        new = sorted(((rid, r) for rid, r in records.items() if rid not in done),
                     key=lambda item: (item[1].at, item[0]))
        if not new:
            return result
        total = sum(r.quota for _, r in new)
        result.count, result.quota = len(new), total
        if user is not None:
            result.quota_before, result.email, result.username = user.quota, user.email, user.username
        await insert_rows(conn, Settlement, [
            {"request_id": rid, "user_id": user_id, "token_id": r.token_id, "quota": r.quota, "created_at": int(r.at)}
            for rid, r in new])
        requests = sum(1 for _, r in new if not r.is_refund)  # a task's refund is not a request
        await User.filter(id=user_id).using_db(conn).update(
            quota=F("quota") - total, used_quota=F("used_quota") + total, request_count=F("request_count") + requests)
        tokens: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # token → [used, taken from remain]
        channels: dict[int, int] = defaultdict(int)
        # count, quota, tokens, input tokens, cached input tokens, what the cache saved
        hours: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
        for _, r in new:
            if r.token_id:
                tokens[r.token_id][0] += r.quota
                if r.token_limited:
                    tokens[r.token_id][1] += r.quota
            if r.channel_id:
                channels[r.channel_id] += r.quota
            ts = (r.charged_at if r.is_refund else 0) or int(r.at)  # a refund counts against the hour of its charge
            bucket = hours[(cut(QuotaData, "model_name", r.model), ts - ts % 3600)]
            bucket[0] += 0 if r.is_refund else 1
            bucket[1] += r.quota
            bucket[2] += r.usage.total_tokens
            if not r.is_refund:
                bucket[3] += r.usage.prompt_tokens
                bucket[4] += r.usage.cached_tokens
                bucket[5] += cache_saving(r)
        for token_id, (used, taken) in sorted(tokens.items()):
            await Token.filter(id=token_id).using_db(conn).update(
                remain_quota=F("remain_quota") - taken, used_quota=F("used_quota") + used)
        for channel_id, used in sorted(channels.items()):
            await Channel.filter(id=channel_id).using_db(conn).update(used_quota=F("used_quota") + used)
        # the budget windows: in this transaction, so a record applied once counts once there too
        await durable.add_usage(conn, user_id, (r.window_charge() for _, r in new if r.windows))
        await insert_rows(conn, Log, [{
            "user_id": user_id, "created_at": int(r.at), "type": int(LogType.SYSTEM), "content": refund_content(r),
            "username": r.username, "token_name": r.token_name, "token_id": r.token_id, "model_name": r.model,
            "quota": -r.quota, "channel_id": r.channel_id, "group": r.group, "other": refund_other(r),
            "request_id": rid} for rid, r in new if r.is_refund])
        if log_consume:
            consume = int(LogType.CONSUME)
            await insert_rows(conn, Log, [{
                "user_id": user_id, "created_at": int(r.at), "type": consume, "content": consume_content(r),
                "username": r.username, "token_name": r.token_name, "token_id": r.token_id, "model_name": r.model,
                "quota": r.quota, "prompt_tokens": r.usage.prompt_tokens,
                "completion_tokens": r.usage.completion_tokens, "use_time": r.use_time, "is_stream": r.is_stream,
                "channel_id": r.channel_id, "group": r.group, "other": consume_other(r), "request_id": rid}
                for rid, r in new if not r.is_refund])
        username = cut(QuotaData, "username", result.username or next((r.username for _, r in new), ""))
        for (model, hour), (count, quota, used_tokens, prompt, cached, saved) in sorted(hours.items()):
            updated = await QuotaData.filter(user_id=user_id, model_name=model, created_at=hour).using_db(conn).update(
                count=F("count") + count, quota=F("quota") + quota, token_used=F("token_used") + used_tokens,
                prompt_tokens=F("prompt_tokens") + prompt, cache_tokens=F("cache_tokens") + cached,
                saved_quota=F("saved_quota") + saved)
            if not updated:
                await QuotaData.create(user_id=user_id, username=username, model_name=model, created_at=hour,
                                       count=count, quota=quota, token_used=used_tokens, prompt_tokens=prompt,
                                       cache_tokens=cached, saved_quota=saved, using_db=conn)
    return result


async def apply_pending(store: Store, options: OptionsService, user_id: int, send_mail: MailSender | None = None, *,
                        wait: float = 60.0, timeout: float = TRANSACTION_TIMEOUT) -> int:
    """Move the user's pending records into the database; returns how many were new there.

    Waits up to `wait` seconds for the user's billing lock (LockBusy after); the transaction gets
    `timeout` seconds (TimeoutError after: cancelled, its connection discarded, nothing applied),
    and the lock is renewed no longer than that, so a block stuck in a call that ignores the
    cancellation holds the user's lock one lease past it at most."""
    key = pending_key(store, user_id)
    async with lease_lock(store, redis_keys.billing_lock(store, user_id), wait=wait, max_hold=timeout):
        raw = await store.redis.hgetall(key)
        if not raw:
            return 0
        records, refused = _decode(raw)
        async with asyncio.timeout(timeout):
            result, failed = await _apply_each(user_id, records, options.get_bool("LogConsumeEnabled"))
        refused += [(rid, raw[rid], exc) for rid, exc in failed]
        await set_aside(store, WRITER, refused)
        await store.redis.hdel(key, *raw)
    if result.count and send_mail is not None:
        await _remind(store, options, user_id, result, send_mail)
    return result.count


def _decode(raw: Mapping[str, str]) -> tuple[dict[str, SettlementRecord], list[tuple[str, str, BaseException]]]:
    """The pending records that can be read, and (id, record, why) for those that cannot."""
    records: dict[str, SettlementRecord] = {}
    unreadable: list[tuple[str, str, BaseException]] = []
    for rid, value in raw.items():
        try:
            records[rid] = SettlementRecord.decode(value)
        except (ValueError, TypeError, AttributeError) as exc:  # not JSON, not an object, a field of another type
            unreadable.append((rid, value, exc))
    return records, unreadable


async def _apply_each(user_id: int, records: Mapping[str, SettlementRecord],
                      log_consume: bool) -> tuple[Applied, list[tuple[str, BaseException]]]:
    """_apply_records in one transaction; when it fails on a value the database refuses, one
    transaction per record → (what was applied, (id, why) of each record refused on its own)."""
    result = Applied()

    async def apply(some: Sequence[str]) -> int:
        applied = await _apply_records(user_id, {rid: records[rid] for rid in some}, log_consume)
        result.add(applied)
        return applied.count

    _, failed = await insert_each(apply, sorted(records, key=lambda rid: (records[rid].at, rid)))
    return result, failed


@dataclass(slots=True)
class Outcome:
    applied: int = 0  # records new in the database
    later: list[int] = field(default_factory=list)  # users to try again: locked elsewhere, or failed


async def apply_users(store: Store, options: OptionsService, user_ids: Iterable[int],
                      send_mail: MailSender | None = None, *,
                      timeout: float = TRANSACTION_TIMEOUT, gate: asyncio.Semaphore | None = None) -> Outcome:
    """apply_pending for each of these users, as many at a time as `gate` lets through (a worker
    process shares one among its messages, below its connection pool; 4 when not given), none
    waiting for another: a user whose billing lock is held elsewhere is left for later at once (its
    holder is applying it, or lapses within a lease), and one whose transaction fails does not hold
    up the others. A failure that says the database is away (not merely one of its rows locked)
    leaves the users not yet started for later too: each would only wait out the same timeouts."""
    outcome = Outcome()
    gate = gate or asyncio.Semaphore(4)
    database_away = False

    async def one(user_id: int) -> None:
        nonlocal database_away
        async with gate:
            if database_away:
                outcome.later.append(user_id)
                return
            try:
                outcome.applied += await apply_pending(store, options, user_id, send_mail, wait=0, timeout=timeout)
            except LockBusy:
                outcome.later.append(user_id)
            except Exception as exc:
                outcome.later.append(user_id)
                if not database_gave_up_on_a_row(exc):
                    database_away = True
                log.warning("settlements of user %d not applied (retried later): %r", user_id, exc)

    await asyncio.gather(*(one(user_id) for user_id in dict.fromkeys(user_ids)))
    return outcome


async def _remind(store: Store, options: OptionsService, user_id: int, result: Applied,
                  send_mail: MailSender) -> None:
    """A low-balance mail when this batch took the user across QuotaRemindThreshold (or to zero)."""
    threshold = options.get_int("QuotaRemindThreshold")
    before, after = result.quota_before, result.quota_before - result.quota
    crossed = (before >= threshold > after) or (before > 0 >= after)
    if not crossed or not result.email:
        return
    if not await store.redis.set(redis_keys.billing_remind(store, user_id), "1", nx=True, ex=REMIND_THROTTLE):
        return
    name = options.get("SystemName") or "AI Gateway"
    per_unit = max(options.get_float("QuotaPerUnit"), 1)
    balance = f"${after / per_unit:.2f}" if options.get_bool("DisplayInCurrencyEnabled") else str(after)
    subject = f"{name}: your balance is low / 您的额度即将用尽"
    who = html.escape(result.username)
    body = (f"<p>Hello {who}, your remaining balance is {balance}. Top up to keep using the API.</p>"
            f"<p>{who} 您好，您的剩余额度为 {balance}，请及时充值以免影响使用。</p>")
    await send_mail(result.email, subject, body)


async def users_with_pending(store: Store) -> list[int]:
    """Every user that has records waiting (for the sweep)."""
    users: set[int] = set()
    async for key in store.redis.scan_iter(match=redis_keys.every_user(store, "pend"), count=500):
        user_id = redis_keys.user_of(store, key)
        if user_id is not None:
            users.add(user_id)
    return sorted(users)


async def pending_for(store: Store, user_ids: Iterable[int]) -> dict[int, int]:
    """How many records each user has waiting (tests and the metrics' queue depth)."""
    async with store.redis.pipeline(transaction=False) as pipe:
        ids = list(user_ids)
        for user_id in ids:
            pipe.hlen(pending_key(store, user_id))
        counts = await pipe.execute()
    return dict(zip(ids, (int(c) for c in counts), strict=True))
