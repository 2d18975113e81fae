"""A worker killed with SIGKILL in the middle of writing a batch of audit entries (its INSERT
waiting on the table): nothing is lost and nothing written twice; the next worker writes every
entry once the dead one's lease lapses."""
from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest
from tortoise.transactions import in_transaction

from api.services import redis_keys
from api.services.audit import make_entry, push
from api.services.store import Store
from models import AuditEntry
from tests.conftest import process_env
from tests.helpers import eventually

WAITING_ON_THE_TABLE = """
SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
WHERE c.relname = 'audit_entry' AND NOT l.granted
"""


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_entries_survive_a_worker_killed_mid_batch(client, settings, worker, spawn, redis_sync) -> None:
    from workers.broker import send

    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    try:
        entries = [make_entry("option.set", "option", f"Key{n}", {"value": ""}, {"value": str(n)}, actor_id=1,
                              actor_name="root", actor_role=100, actor_ip="10.0.0.1") for n in range(120)]
        for entry in entries:
            assert await push(store, None, entry)
        rows_key = redis_keys.audit_rows(store)
        async with in_transaction() as conn:
            # The table locked against writes here: the worker reads its batch, then waits on its INSERT.
            await conn.execute_script('LOCK TABLE "audit_entry" IN SHARE MODE')
            await asyncio.to_thread(send, "audit.write")

            async def inserting() -> bool:
                return (await conn.execute_query_dict(WAITING_ON_THE_TABLE))[0]["n"] > 0

            await eventually(inserting)
            assert await store.redis.exists(redis_keys.audit_lock(store))  # it holds the queue's lease
            os.killpg(worker.proc.pid, signal.SIGKILL)
            await asyncio.to_thread(worker.proc.wait)
            assert await store.redis.llen(rows_key) == len(entries)  # taken, not committed: still queued
        assert await AuditEntry.all().count() == 0

        # The next worker: once the dead one's lease lapses, every entry is written, once.
        second = spawn([sys.executable, "-m", "workers", "--processes", "1", "--threads", "2"],
                       process_env(settings), name="worker-2")
        await asyncio.to_thread(send, "audit.write")

        async def written() -> bool:
            if second.proc.poll() is not None:
                raise AssertionError("the second worker exited:\n" + second.output())
            return await AuditEntry.all().count() == len(entries) and not await store.redis.llen(rows_key)

        await eventually(written, timeout=60, interval=0.2)
        ids = await AuditEntry.all().values_list("entry_id", flat=True)
        assert sorted(ids) == sorted(e.entry_id for e in entries)
        rows = await AuditEntry.all().order_by("id")
        assert [r.target_id for r in rows] == [f"Key{n}" for n in range(len(entries))]
        assert all(r.actor_ip == "10.0.0.1" for r in rows)
    finally:
        await store.close()
