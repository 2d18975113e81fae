"""A message sent by the API is processed by a real worker process and lands in the database; the
worker process stops cleanly when told to."""
from __future__ import annotations

import asyncio
import os
import signal

from models import Log
from models.db import close_database, init_database
from models.enums import LogType
from tests.helpers import ApiClient, both_databases, eventually


@both_databases
async def test_option_change_is_logged_by_a_worker(root: ApiClient, worker) -> None:
    body = await root.put("/api/option/", {"key": "SystemName", "value": "Worker Proof"})
    assert body["success"]

    async def logged() -> list[Log]:
        return await Log.filter(type=LogType.MANAGE, content__contains="SystemName").all()

    rows = await eventually(logged, timeout=30)
    assert rows[0].content == "option SystemName set to Worker Proof"
    assert rows[0].username == "root"


async def test_record_log_is_idempotent_by_request_id(settings, worker) -> None:
    import asyncio

    from workers.broker import send

    await init_database(settings.database_url)
    try:
        for _ in range(3):
            await asyncio.to_thread(send, "system.record_log", 0, int(LogType.SYSTEM), "once", "", "req-1")
        await asyncio.to_thread(send, "system.record_log", 0, int(LogType.SYSTEM), "marker", "", "req-2")

        async def marker() -> bool:
            return await Log.filter(request_id="req-2").exists()

        await eventually(marker, timeout=30)
        # The single-threaded... worker may still be handling duplicates: wait for the queue to drain.
        from workers.broker import setup_broker

        broker = setup_broker()
        await asyncio.to_thread(broker.join, "system", timeout=30_000)
        assert await Log.filter(request_id="req-1").count() == 1
    finally:
        await close_database()


async def test_sigterm_to_the_whole_group_stops_the_worker_once_and_for_good(worker) -> None:
    """systemd and `docker stop` signal the process group: each worker process gets SIGTERM from
    the group and again from Dramatiq's parent. It must stop gracefully once, not linger."""
    os.killpg(worker.proc.pid, signal.SIGTERM)
    code = await asyncio.to_thread(worker.proc.wait, 40)
    output = worker.output()
    assert code == 0, output
    assert "Killing worker process" not in output, output
    assert "Worker has been shut down" in output
