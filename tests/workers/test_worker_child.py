"""`python -m workers` keeps its worker processes running: a worker process killed with kill -9 (or
Dramatiq's main process itself) is replaced and the new one consumes; SIGTERM and SIGINT still stop
everything, once."""
from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from tests.helpers import eventually
from workers.supervisor import next_delay


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def worker_processes(supervisor: int) -> list[int]:
    """Dramatiq's worker processes under the supervisor (its child is Dramatiq's main process)."""
    return [pid for main in children(supervisor) for pid in children(main) if alive(pid)]


async def consumes(redis_sync, settings) -> bool:
    """A heartbeat sent now is consumed (the heartbeat key comes back)."""
    from tests.conftest import _send_heartbeat

    key = f"{settings.redis_prefix}heartbeat:worker"
    redis_sync.delete(key)
    await asyncio.to_thread(_send_heartbeat)

    async def beaten() -> bool:
        return redis_sync.exists(key) == 1

    await eventually(beaten, timeout=30, interval=0.1)
    return True


async def test_a_worker_process_killed_is_replaced_and_the_new_one_consumes(worker, redis_sync, settings) -> None:
    [first] = await eventually(lambda: _async(worker_processes(worker.proc.pid)))
    os.kill(first, signal.SIGKILL)

    async def replaced() -> list[int]:
        assert worker.proc.poll() is None, "python -m workers exited:\n" + worker.output()
        return [pid for pid in worker_processes(worker.proc.pid) if pid != first]

    [second] = await eventually(replaced, timeout=30, interval=0.1)
    assert await consumes(redis_sync, settings)
    assert worker.proc.poll() is None
    assert "exited unasked" in worker.output()


async def test_a_killed_main_process_leaves_no_worker_behind(worker, redis_sync, settings) -> None:
    [main] = children(worker.proc.pid)
    [orphan] = await eventually(lambda: _async(worker_processes(worker.proc.pid)))
    os.kill(main, signal.SIGKILL)

    async def orphan_gone() -> bool:
        return not alive(orphan)

    await eventually(orphan_gone, timeout=30, interval=0.1)  # it stopped by itself (its parent gone)
    [new] = await eventually(lambda: _async(worker_processes(worker.proc.pid)), timeout=30, interval=0.1)
    assert new != orphan
    assert await consumes(redis_sync, settings)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_stop_signal_to_the_supervisor_stops_everything_once(worker, sig) -> None:
    tree = descendants(worker.proc.pid)
    assert len(tree) >= 2  # Dramatiq's main process and its worker process
    worker.proc.send_signal(sig)
    code = await asyncio.to_thread(worker.proc.wait, 40)
    assert code == 0, worker.output()
    assert not [pid for pid in tree if alive(pid)]
    assert "exited unasked" not in worker.output()
    assert "Worker has been shut down" in worker.output()


def test_the_back_off_doubles_while_the_workers_die_young_and_starts_over_after_a_long_run() -> None:
    delays = [1.0]
    for _ in range(6):
        delays.append(next_delay(delays[-1], 2.0, first=1.0, most=30.0, stable_after=60.0))
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert next_delay(30.0, 61.0, first=1.0, most=30.0, stable_after=60.0) == 1.0


async def _async(value):
    return value
