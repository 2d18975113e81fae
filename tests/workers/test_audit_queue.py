"""The audit queue's writer in the worker's own code: an entry leaves Redis only once its row is
committed, a row committed but not trimmed (the writer died in between) is not written twice, a
writer whose lease lapsed trims nothing, a poisoned entry is set aside without holding up the
others, and the retention job deletes by AuditRetentionDays."""
from __future__ import annotations

import time

import pytest
from tortoise.exceptions import DBConnectionError

from api import keys
from api.errors import ApiError
from api.services import audit_queue, redis_keys
from api.services.audit import Entry, make_entry, push
from api.services.audit_queue import LeaseLost, write_pending
from api.services.set_aside import kept
from models import AuditEntry
from tests.helpers import both_databases


def entry(n: int, **fields) -> Entry:
    return make_entry("option.set", "option", f"Key{n}", {"value": "a"}, {"value": str(n)}, actor_id=1,
                      actor_name="root", actor_role=100, actor_ip="127.0.0.1", **fields)


async def queued(store) -> int:
    return int(await store.redis.llen(redis_keys.audit_rows(store)))


@both_databases
async def test_entries_are_written_once_and_leave_redis_after_the_commit(client) -> None:
    store = client.server.app[keys.STORE]
    entries = [entry(n) for n in range(7)]
    for e in entries:
        assert await push(store, None, e)
    # A writer that died after its commit, before its trim: the first three rows are in, still queued.
    await audit_queue._write_batch(store, await store.redis.lrange(redis_keys.audit_rows(store), 0, 2))
    assert await AuditEntry.all().count() == 3 and await queued(store) == 7
    assert await write_pending(store, batch=2) == (4, False)  # the next writer: the other four only
    assert await queued(store) == 0
    rows = await AuditEntry.all().order_by("id")
    assert [r.entry_id for r in rows] == [e.entry_id for e in entries]
    assert [r.target_id for r in rows] == [f"Key{n}" for n in range(7)]


async def test_a_database_away_leaves_every_entry_queued(client, monkeypatch) -> None:
    store = client.server.app[keys.STORE]
    for n in range(3):
        await push(store, None, entry(n))

    async def away(entries):
        raise DBConnectionError("connection refused")

    monkeypatch.setattr(audit_queue, "_insert", away)
    with pytest.raises(DBConnectionError):
        await write_pending(store)
    assert await queued(store) == 3 and await kept(store, audit_queue.WRITER) == []
    monkeypatch.undo()
    assert await write_pending(store) == (3, False)


async def test_a_writer_whose_lease_lapsed_trims_nothing(client, monkeypatch) -> None:
    store = client.server.app[keys.STORE]
    for n in range(2):
        await push(store, None, entry(n))
    real = audit_queue._write_batch

    async def stalled(store_, raw):
        written = await real(store_, raw)
        await store.redis.set(redis_keys.audit_lock(store), "another-writer")  # the lease lapsed and was taken
        return written

    monkeypatch.setattr(audit_queue, "_write_batch", stalled)
    with pytest.raises(LeaseLost):
        await write_pending(store)
    assert await queued(store) == 2  # left for the lease's holder
    assert await store.redis.get(redis_keys.audit_lock(store)) == "another-writer"  # not released by the loser
    await store.redis.delete(redis_keys.audit_lock(store))
    monkeypatch.undo()
    assert await write_pending(store) == (0, False)  # both were committed: nothing written twice
    assert await AuditEntry.all().count() == 2 and await queued(store) == 0


@both_databases
async def test_a_poisoned_entry_is_set_aside_and_the_others_written(client) -> None:
    store = client.server.app[keys.STORE]
    good = [entry(0), entry(1)]
    too_long_id = entry(2, entry_id="x" * 40)  # beyond the unique column: refused, never cut
    rows = redis_keys.audit_rows(store)
    await push(store, None, good[0])
    await store.redis.rpush(rows, "{not json", b'{"action": 1}', too_long_id.encode())
    await push(store, None, good[1])
    assert await write_pending(store) == (2, False)
    assert await AuditEntry.all().order_by("id").values_list("entry_id", flat=True) == [e.entry_id for e in good]
    aside = await kept(store, audit_queue.WRITER)
    assert sorted(e["id"] for e in aside) == ["", "", "x" * 40] and all(e["error"] for e in aside)
    assert await queued(store) == 0


async def test_retention_deletes_entries_older_than_the_cutoff(client) -> None:
    store = client.server.app[keys.STORE]
    now = int(time.time())
    await push(store, None, entry(0, created_at=now - 10 * 86400))
    await push(store, None, entry(1, created_at=now - 86400))
    await push(store, None, entry(2))
    await write_pending(store)
    assert await audit_queue.purge_before(now - 5 * 86400) == 1
    assert sorted(await AuditEntry.all().values_list("target_id", flat=True)) == ["Key1", "Key2"]
    options = client.server.app[keys.OPTIONS]
    assert await options.update("AuditRetentionDays", "30") == "30"
    with pytest.raises(ApiError) as refused:
        await options.update("AuditRetentionDays", "-1")
    assert refused.value.message == "option_min"
