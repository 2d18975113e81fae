"""Liveness of the background processes, and audit log rows."""
from __future__ import annotations

import time

import dramatiq
import orjson
from tortoise.exceptions import IntegrityError

from api.services import redis_keys
from api.services.columns import cut
from api.services.queues import Queue
from api.services.row_insert import row_refused
from api.services.set_aside import set_aside
from api.services.store import Store
from models import Log
from models.enums import LogType
from workers.context import ctx

WRITER = "record_log"  # the name its refused rows are set aside under


@dramatiq.actor(actor_name="system.heartbeat", queue_name=Queue.SYSTEM, max_retries=0)
async def heartbeat(sent_at: float, sender: str = "") -> None:
    """Proves that a worker consumes messages; /readyz reads the timestamp."""
    store = ctx().store
    await store.redis.set(redis_keys.heartbeat(store, "worker"), f"{time.time():.3f}", ex=600)


@dramatiq.actor(actor_name="system.record_log", queue_name=Queue.SYSTEM, max_retries=10)
async def record_log(user_id: int, log_type: int, content: str, username: str = "",
                     request_id: str | None = None, other: str = "") -> None:
    """Write one management/system log row; idempotent when a request id is given."""
    await write_record(ctx().store, user_id, log_type, content, username, request_id, other)


async def write_record(store: Store, user_id: int, log_type: int, content: str, username: str = "",
                       request_id: str | None = None, other: str = "") -> None:
    """record_log's row. Its text is cut to the columns; a row the database refuses all the same
    is set aside, not retried (a database that is away: raised, the message is retried)."""
    if request_id and await Log.filter(request_id=request_id).exists():
        return
    try:
        await Log.create(user_id=user_id, type=int(LogType(log_type)), content=cut(Log, "content", content),
                         username=cut(Log, "username", username), request_id=request_id,
                         other=cut(Log, "other", other))
    except IntegrityError:
        pass  # a redelivered duplicate that raced the first delivery: already written
    except Exception as exc:
        if not row_refused(exc):
            raise  # the database away: retried
        row = orjson.dumps({"user_id": user_id, "type": log_type, "content": content, "username": username,
                            "request_id": request_id, "other": other})
        await set_aside(store, WRITER, [(request_id or "", row, exc)])
