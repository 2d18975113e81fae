"""Root's summary mail of automatic status changes: each change is noted in Redis
(`channel:notify`, a list) and mailed in one summary at most once per NOTIFY_THROTTLE seconds
(`channel:notify:throttle`)."""
from __future__ import annotations

import html
import logging
import time
from datetime import UTC, datetime
from typing import Any

import orjson

from api.channels.monitor_deps import Deps
from api.channels.verdicts import DISABLE, ENABLE
from api.services import redis_keys
from api.services.store import Store
from models import Channel, User
from models.enums import Role

log = logging.getLogger(__name__)

NOTIFY_THROTTLE = 600  # at most one summary mail to root per this many seconds


async def note_status_change(store: Store, action: str, channel: Channel, reason: str) -> None:
    item = {"action": action, "id": channel.id, "name": channel.name, "reason": reason[:300], "time": int(time.time())}
    await store.redis.rpush(redis_keys.channel_notices(store), orjson.dumps(item))


def summary_mail(items: list[dict[str, Any]], system_name: str) -> tuple[str, str]:
    disabled = [i for i in items if i.get("action") == DISABLE]
    enabled = [i for i in items if i.get("action") == ENABLE]
    subject = f"{system_name}: {len(disabled)} channel(s) disabled, {len(enabled)} enabled"
    parts = []
    for title, group in (("Automatically disabled", disabled), ("Automatically enabled", enabled)):
        if not group:
            continue
        rows = "".join(
            f"<li>#{int(i['id'])} {html.escape(str(i.get('name', '')))} at "
            f"{datetime.fromtimestamp(int(i.get('time', 0)), UTC):%Y-%m-%d %H:%M:%S} UTC"
            + (f": {html.escape(str(i['reason']))}" if i.get("reason") else "") + "</li>"
            for i in group)
        parts.append(f"<h3>{title}</h3><ul>{rows}</ul>")
    return subject, "".join(parts)


async def flush_notifications(deps: Deps, throttle: int = NOTIFY_THROTTLE) -> bool:
    """Mail root one summary of the pending changes, at most once per `throttle` seconds; changes
    that arrive meanwhile wait for the next flush (the scheduler's channel.notify_root tick)."""
    store = deps.store
    key = redis_keys.channel_notices(store)
    if deps.send is None or not await store.redis.llen(key):
        return False
    if not await store.redis.set(redis_keys.channel_notice_throttle(store), "1", nx=True, ex=throttle):
        return False
    async with store.redis.pipeline(transaction=True) as pipe:
        pipe.lrange(key, 0, -1)
        pipe.delete(key)
        raw_items, _ = await pipe.execute()
    items = [orjson.loads(raw) for raw in raw_items]
    root = await User.filter(role=Role.ROOT, deleted_at=None).exclude(email="").order_by("id").first()
    if root is None:
        log.warning("%d channel status change(s) not mailed: root has no e-mail address", len(items))
        return False
    subject, body = summary_mail(items, deps.options.get("SystemName"))
    await deps.send("mail.send", root.email, subject, body)
    return True
