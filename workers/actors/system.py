"""Liveness of the background processes, and audit log rows."""
from __future__ import annotations

import time

import dramatiq
from tortoise.exceptions import IntegrityError

from api.services import redis_keys
from api.services.queues import Queue
from models import Log
from models.enums import LogType
from workers.context import ctx


@dramatiq.actor(actor_name="system.heartbeat", queue_name=Queue.SYSTEM, max_retries=0)
async def heartbeat(sent_at: float, sender: str = "") -> None:
    """Proves that a worker consumes messages; /readyz reads the timestamp."""
    store = ctx().store
    await store.redis.set(redis_keys.heartbeat(store, "worker"), f"{time.time():.3f}", ex=600)


@dramatiq.actor(actor_name="system.record_log", queue_name=Queue.SYSTEM, max_retries=10)
async def record_log(user_id: int, log_type: int, content: str, username: str = "",
                     request_id: str | None = None, other: str = "") -> None:
    """Write one management/system log row; idempotent when a request id is given."""
    if request_id and await Log.filter(request_id=request_id).exists():
        return
    try:
        await Log.create(user_id=user_id, type=int(LogType(log_type)), content=content,
                         username=username, request_id=request_id, other=other)
    except IntegrityError:
        pass  # a redelivered duplicate that raced the first delivery: already written
