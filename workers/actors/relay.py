"""Relay follow-ups that touch the database: automatic channel and key disabling."""
from __future__ import annotations

import asyncio
import html
import logging
import time

import dramatiq

from api.channels.admin import auto_disable
from api.channels.keys import set_key_status
from api.services import redis_keys
from api.services.queues import Queue
from models import Channel, User, keyring
from models.enums import Role
from workers.broker import send
from workers.context import ctx

log = logging.getLogger(__name__)
NOTIFY_EVERY = 600  # seconds: at most one mail per channel, and ten in all, per window


@dramatiq.actor(actor_name="relay.disable_channel_key", queue_name=Queue.RELAY, max_retries=5)
async def disable_channel_key(channel_id: int, fingerprint: str, reason: str) -> None:
    """One key of a multi-key channel disabled automatically (its credential was refused); the channel
    follows when it was its last key (api/channels/keys.py). A key disabled by hand stays so."""
    context = ctx()
    if await set_key_status(int(channel_id), str(fingerprint), keyring.AUTO, reason=reason,
                            only_from=(keyring.ENABLED,), events=context.events):
        log.warning("a key of channel %s disabled automatically: %s", channel_id, reason)


@dramatiq.actor(actor_name="relay.disable_channel", queue_name=Queue.RELAY, max_retries=5)
async def disable_channel(channel_id: int, reason: str) -> None:
    """Status 3 with other_info {status_reason, status_time}, the `channel` event, a throttled mail
    to the root user. Only an enabled channel changes (a manual disable or a repeat is a no-op)."""
    context = ctx()
    if not await auto_disable(int(channel_id), reason, context.events):
        return
    channel = await Channel.filter(id=channel_id).first()
    name = channel.name if channel else str(channel_id)
    log.warning("channel %s (%s) disabled automatically: %s", channel_id, name, reason)
    store = context.store
    window = int(time.time() // NOTIFY_EVERY)
    if not await store.redis.set(redis_keys.disable_mail(store, channel_id), "1", nx=True, ex=NOTIFY_EVERY):
        return
    sent = await store.redis.incr(redis_keys.disable_mails(store, window))
    await store.redis.expire(redis_keys.disable_mails(store, window), NOTIFY_EVERY * 2)
    if sent > 10:
        return
    root = await User.filter(role=int(Role.ROOT), deleted_at=None).order_by("id").first()
    if root is None or not root.email:
        return
    system = context.options.get("SystemName") or "AI Gateway"
    subject = f"{system}: channel {name} (#{channel_id}) was disabled / 渠道 {name}（#{channel_id}）已被禁用"
    safe_name, safe_reason = html.escape(name), html.escape(reason)
    body = (f"<p>Channel {safe_name} (#{channel_id}) was disabled automatically. Reason: {safe_reason}</p>"
            f"<p>渠道 {safe_name}（#{channel_id}）已被自动禁用，原因：{safe_reason}</p>")
    await asyncio.to_thread(send, "mail.send", root.email, subject, body)
