"""The keys of a multi-key channel: their state (models/keyring.py) and their counters.

A key is named outside the database by its fingerprint (the first 16 hex digits of its SHA-256), so
its counters and the relay's decisions follow the key when others are added or removed; the console
and the logs name it by position. Counters live in Redis (`chkey:<channel id>`, a hash of
`<fingerprint>:used|failed|last_error|last_error_time`): uses are added by the in-flight sync
(api/relay/load.py) in batches, failures when they happen.

Every state change goes through `set_key_status`: one writer at a time (models.channel.update_keys), the
channel follows its keys (disabled automatically when its last key goes, enabled again when a key
comes back after that), and every API process hears of it (the `channel` event).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tortoise.exceptions import DoesNotExist

from api.channels import admin as channels
from api.channels.index import fingerprint
from api.channels.test_outcome import parse_other_info
from api.services import redis_keys
from api.services.events import EventBus
from api.services.store import Store
from models import Channel, keyring
from models.channel import update_keys
from models.enums import ChannelStatus

ALL_KEYS_DISABLED = "all keys disabled"  # the channel's status reason when its last key went


def stats_key(store: Store, channel_id: int) -> str:
    return redis_keys.channel_key_stats(store, channel_id)


@dataclass(frozen=True, slots=True)
class KeyStats:
    used: int = 0
    failed: int = 0
    last_error: str = ""
    last_error_time: int = 0


async def key_stats(store: Store, channel_id: int) -> dict[str, KeyStats]:
    """Counters by fingerprint."""
    raw: Mapping[str, str] = await store.redis.hgetall(stats_key(store, channel_id))
    fields: dict[str, dict[str, str]] = {}
    for name, value in raw.items():
        fp, _, what = name.partition(":")
        fields.setdefault(fp, {})[what] = value
    out: dict[str, KeyStats] = {}
    for fp, f in fields.items():
        out[fp] = KeyStats(_int(f.get("used")), _int(f.get("failed")), f.get("last_error", ""),
                           _int(f.get("last_error_time")))
    return out


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


async def record_key_failure(store: Store, channel_id: int, key: str, message: str) -> None:
    fp = fingerprint(key)
    async with store.redis.pipeline(transaction=False) as pipe:
        pipe.hincrby(stats_key(store, channel_id), f"{fp}:failed", 1)
        pipe.hset(stats_key(store, channel_id), mapping={f"{fp}:last_error": message[:500],
                                                         f"{fp}:last_error_time": int(time.time())})
        await pipe.execute()


async def add_uses(store: Store, counts: Mapping[tuple[int, str], int]) -> None:
    """Uses counted by a process since its last sync: (channel id, fingerprint) → requests."""
    if not counts:
        return
    async with store.redis.pipeline(transaction=False) as pipe:
        for (channel_id, fp), n in counts.items():
            pipe.hincrby(stats_key(store, channel_id), f"{fp}:used", n)
        await pipe.execute()


def index_of(ring: keyring.Keyring, which: int | str) -> int | None:
    """A key's position from its position or its fingerprint."""
    if isinstance(which, int):
        return which if 0 <= which < len(ring.keys) else None
    for i, key in enumerate(ring.keys):
        if fingerprint(key) == which:
            return i
    return None


async def set_key_status(channel_id: int, which: int | str, status: int, *, reason: str = "",
                         only_from: tuple[int, ...] | None = None, events: EventBus | None) -> bool:
    """One key of a multi-key channel to `status` (1 enabled, 2 disabled by hand, 3 automatically),
    only from a status in `only_from` when given (an automatic change never undoes a manual one).
    True when the key changed."""
    def change(ring: keyring.Keyring) -> bool:
        index = index_of(ring, which)
        if index is None or not ring.multi:
            return False
        current = ring.status(index)
        if current == status or (only_from is not None and current not in only_from):
            return False
        ring.set_status(index, status, reason, int(time.time()))
        return True

    try:
        channel, changed = await update_keys(channel_id, change)
    except DoesNotExist:
        return False
    if changed:
        await follow_keys(channel, events)
        await channels.publish(events, [channel_id])
    return changed


async def set_all_keys(channel_id: int, status: int, *, events: EventBus | None) -> int:
    """Every key of the channel to 1 or 2 (the console's enable all / disable all); the count changed."""
    def change(ring: keyring.Keyring) -> int:
        now = int(time.time())
        changed = 0
        for i in range(len(ring.keys)):
            if ring.status(i) != status:
                ring.set_status(i, status, "", now)
                changed += 1
        return changed

    channel, changed = await update_keys(channel_id, change)
    if changed:
        await follow_keys(channel, events)
        await channels.publish(events, [channel_id])
    return changed


async def follow_keys(channel: Channel, events: EventBus | None) -> None:
    """A multi-key channel with no enabled key is disabled automatically; one that was, and has a key
    again, comes back. A channel disabled by hand stays as it is."""
    ring = keyring.load(channel.key, channel.channel_info)
    if not ring.multi:
        return
    if not ring.enabled():
        await channels.auto_disable(channel.id, ALL_KEYS_DISABLED, events)
    elif (channel.status == int(ChannelStatus.AUTO_DISABLED) and
            parse_other_info(channel.other_info).get("status_reason") == ALL_KEYS_DISABLED):
        await channels.auto_enable(channel.id, events)


def key_rows(channel: Channel, stats: Mapping[str, KeyStats]) -> list[dict[str, Any]]:
    """The console's view of a channel's keys: masked, with their state and counters."""
    ring = keyring.load(channel.key, channel.channel_info)
    rows = []
    for i, key in enumerate(ring.keys):
        fp = fingerprint(key)
        state = ring.states.get(i)
        s = stats.get(fp, KeyStats())
        rows.append({"index": i, "fingerprint": fp, "key": keyring.mask(key),
                     "status": state.status if state else keyring.ENABLED,
                     "reason": state.reason if state else "", "disabled_time": state.time if state else 0,
                     "used": s.used, "failed": s.failed, "last_error": s.last_error,
                     "last_error_time": s.last_error_time})
    return rows
