"""Probing automatically disabled channels: each has a backoff in Redis (`channel:probe`, a hash
id → "attempts:next_at") that doubles per failed probe, and is tested again when its probe is due."""
from __future__ import annotations

import time

from api.channels.channel_test import is_testable
from api.channels.monitor_deps import Deps
from api.services import redis_keys
from api.services.store import Store
from models import Channel
from models.enums import ChannelStatus

PROBE_BASE_DELAY = 60  # seconds before the first probe of an automatically disabled channel
PROBE_MAX_DELAY = 3600  # the backoff doubles per failed probe up to this


def probe_delay(attempts: int) -> int:
    return min(PROBE_MAX_DELAY, int(PROBE_BASE_DELAY * 2 ** max(0, attempts)))


def _probe_state(raw: str | None) -> tuple[int, float]:
    if not raw:
        return 0, 0.0
    attempts, _, next_at = raw.partition(":")
    try:
        return int(attempts), float(next_at)
    except ValueError:
        return 0, 0.0


async def probe_state(store: Store, channel_id: int) -> tuple[int, float]:
    """(failed probes so far, unix time of the next probe); (0, 0.0) = probe at once."""
    return _probe_state(await store.redis.hget(redis_keys.channel_probes(store), str(channel_id)))


async def schedule_probe(store: Store, channel_id: int, attempts: int, now: float | None = None) -> None:
    now = time.time() if now is None else now
    await store.redis.hset(redis_keys.channel_probes(store), str(channel_id),
                           f"{attempts}:{now + probe_delay(attempts):.0f}")


async def probe_failed(store: Store, channel_id: int, now: float | None = None) -> None:
    attempts, _ = await probe_state(store, channel_id)
    await schedule_probe(store, channel_id, attempts + 1, now)


async def due_probes(deps: Deps, now: float | None = None) -> list[int]:
    """Automatically disabled channels whose next probe is due; each is pushed back by its current
    backoff at once, so the next tick does not send it again while its probe is queued."""
    now = time.time() if now is None else now
    if not deps.options.get_bool("AutomaticEnableChannelEnabled"):
        return []
    probe_key = redis_keys.channel_probes(deps.store)
    disabled = [c for c in await Channel.filter(status=ChannelStatus.AUTO_DISABLED).order_by("id")
                if is_testable(c)]
    states = await deps.store.redis.hgetall(probe_key)
    stale = set(states) - {str(c.id) for c in disabled}
    if stale:
        await deps.store.redis.hdel(probe_key, *stale)
    due: list[int] = []
    for channel in disabled:
        attempts, next_at = _probe_state(states.get(str(channel.id)))
        if next_at <= now:
            due.append(channel.id)
            await deps.store.redis.hset(probe_key, str(channel.id), f"{attempts}:{now + probe_delay(attempts):.0f}")
    return due
