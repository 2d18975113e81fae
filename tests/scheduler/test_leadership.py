"""Two schedulers: exactly one leader enqueues; when it dies, the other takes over."""
from __future__ import annotations

import signal
import sys

import orjson
import redis as sync_redis

from models.settings import Settings
from tests.conftest import process_env
from tests.helpers import eventually
from workers.broker import setup_broker


def _sent_heartbeats(redis: sync_redis.Redis, settings: Settings) -> list[str]:
    """Senders of the system.heartbeat messages waiting in the queue (the test runs no worker)."""
    raw = redis.hvals(f"{settings.redis_prefix}dramatiq:system.msgs")
    senders = []
    for item in raw:
        message = orjson.loads(item)
        if message["actor_name"] == "system.heartbeat":
            senders.append(message["args"][1])
    return senders


async def test_single_leader_and_takeover(settings: Settings, spawn, redis_sync: sync_redis.Redis) -> None:
    setup_broker(settings)
    env = process_env(settings, SCHEDULER_LEADER_TTL="1.5", SCHEDULER_INTERVAL_SCALE="0.03")
    leader_key = f"{settings.redis_prefix}scheduler:leader"
    a = spawn([sys.executable, "-m", "scheduler"], env, name="scheduler-a")

    async def a_leads() -> bool:
        return redis_sync.get(leader_key) == f"{_host()}:{a.proc.pid}".encode()

    await eventually(a_leads, timeout=30)
    b = spawn([sys.executable, "-m", "scheduler"], env, name="scheduler-b")

    async def b_started() -> bool:
        return "scheduler started" in b.output()

    await eventually(b_started, timeout=30)

    async def several_sent() -> bool:
        return len(_sent_heartbeats(redis_sync, settings)) >= 5

    await eventually(several_sent, timeout=30)
    assert set(_sent_heartbeats(redis_sync, settings)) == {f"{_host()}:{a.proc.pid}"}, b.output()

    a.stop(signal.SIGKILL)  # dies without releasing the lock

    async def b_leads() -> bool:
        return redis_sync.get(leader_key) == f"{_host()}:{b.proc.pid}".encode()

    await eventually(b_leads, timeout=30)

    async def b_sends() -> bool:
        return f"{_host()}:{b.proc.pid}" in _sent_heartbeats(redis_sync, settings)

    await eventually(b_sends, timeout=30)
    beat = redis_sync.get(f"{settings.redis_prefix}heartbeat:scheduler")
    assert beat is not None


def _host() -> str:
    import socket

    return socket.gethostname()
