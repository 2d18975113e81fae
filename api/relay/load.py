"""How busy each channel and key is: requests in flight across every API process, and how fast each
channel answers (api/channels/index.py weighs its choice with both).

Counting costs the request nothing but two dictionary updates: each process counts its own requests
and, once per SYNC_SECONDS, writes its counts to Redis and reads everyone else's in one script call.
A process's counts live in a hash that expires after a few missed syncs, and the others drop a
process whose heartbeat stopped: a process killed mid-request stops counting within seconds, so its
requests never stay "in flight". Uses of each key are added to its counters by the same sync.

Latency is an exponentially weighted mean of the time to the first byte of a successful answer, per
channel, kept per process (each process sees a fair sample of every channel it uses).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections import Counter
from collections.abc import Mapping

from api.channels import keys as channel_keys
from api.services import redis_keys
from api.services.cancellation import raise_if_cancelled
from api.services.store import Script, Store

log = logging.getLogger(__name__)

SYNC_SECONDS = 1.0
EXPIRE_AFTER = 4  # syncs a process may miss before the others stop counting its requests
EWMA_ALPHA = 0.2  # weight of the newest sample

# KEYS: processes (zset), this process's hash. ARGV: now (ms), stale before (ms), expiry (ms), own id,
# then field/value pairs of this process's counts. Returns the other processes' hashes, flattened.
SYNC = """
local procs, own = KEYS[1], KEYS[2]
redis.call('DEL', own)
if #ARGV > 4 then redis.call('HSET', own, unpack(ARGV, 5)) end
redis.call('PEXPIRE', own, ARGV[3])
redis.call('ZADD', procs, ARGV[1], ARGV[4])
redis.call('PEXPIRE', procs, ARGV[3] * 10)
local prefix = string.sub(own, 1, #own - #ARGV[4])
for _, dead in ipairs(redis.call('ZRANGEBYSCORE', procs, '-inf', ARGV[2])) do
  redis.call('ZREM', procs, dead)
  redis.call('DEL', prefix .. dead)
end
local out = {}
for _, id in ipairs(redis.call('ZRANGE', procs, 0, -1)) do
  if id ~= ARGV[4] then
    local h = redis.call('HGETALL', prefix .. id)
    for i = 1, #h do out[#out + 1] = h[i] end
  end
end
return out
"""


def procs_key(store: Store) -> str:
    return redis_keys.inflight_processes(store)


def proc_key(store: Store, proc: str) -> str:
    return redis_keys.inflight_of(store, proc)


class Load:
    def __init__(self, store: Store | None, proc: str | None = None, interval: float = SYNC_SECONDS) -> None:
        self.store = store
        self.proc = proc or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.interval = interval
        self._channels: Counter[int] = Counter()  # this process's requests in flight
        self._keys: Counter[tuple[int, str]] = Counter()
        self._others_channels: dict[int, int] = {}  # everyone else's, as of the last sync
        self._others_keys: dict[tuple[int, str], int] = {}
        self._uses: Counter[tuple[int, str]] = Counter()  # key uses not yet added to its counters
        self._latency: dict[int, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._script = Script(store.redis, SYNC) if store is not None else None
        self._failing = 0  # syncs failed in a row

    # -- the request path --------------------------------------------------------------------------
    def begin(self, channel_id: int, fingerprint: str = "") -> None:
        self._channels[channel_id] += 1
        if fingerprint:
            self._keys[channel_id, fingerprint] += 1
            self._uses[channel_id, fingerprint] += 1

    def end(self, channel_id: int, fingerprint: str = "") -> None:
        left = self._channels[channel_id] - 1
        if left > 0:
            self._channels[channel_id] = left
        else:
            self._channels.pop(channel_id, None)
        if fingerprint:
            key = (channel_id, fingerprint)
            left = self._keys[key] - 1
            if left > 0:
                self._keys[key] = left
            else:
                self._keys.pop(key, None)

    def observe(self, channel_id: int, seconds: float) -> None:
        """A successful attempt's time to its first byte."""
        if seconds < 0:
            return
        before = self._latency.get(channel_id)
        self._latency[channel_id] = seconds if before is None else before + EWMA_ALPHA * (seconds - before)

    # -- reading -----------------------------------------------------------------------------------
    def inflight(self, channel_id: int) -> int:
        return self._channels.get(channel_id, 0) + self._others_channels.get(channel_id, 0)

    def key_inflight(self, channel_id: int, fingerprint: str) -> int:
        key = (channel_id, fingerprint)
        return self._keys.get(key, 0) + self._others_keys.get(key, 0)

    def latency(self, channel_id: int) -> float | None:
        return self._latency.get(channel_id)

    def totals(self) -> dict[int, int]:
        """Requests in flight per channel, every process counted (as of the last sync)."""
        out = dict(self._others_channels)
        for cid, n in self._channels.items():
            out[cid] = out.get(cid, 0) + n
        return {cid: n for cid, n in out.items() if n > 0}

    # -- the sync ----------------------------------------------------------------------------------
    async def sync(self, now_ms: int | None = None) -> None:
        if self.store is None or self._script is None:
            return
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        expiry = int(self.interval * 1000 * EXPIRE_AFTER)
        fields: list[str | int] = []
        for cid, n in self._channels.items():
            fields += [str(cid), n]
        for (cid, fp), n in self._keys.items():
            fields += [f"{cid}:{fp}", n]
        uses, self._uses = self._uses, Counter()
        try:
            flat = await self._script(keys=[procs_key(self.store), proc_key(self.store, self.proc)],
                                      args=[now, now - expiry, expiry, self.proc, *fields])
            await channel_keys.add_uses(self.store, uses)
        except Exception:
            self._uses.update(uses)  # counted at the next sync
            raise
        self._others_channels, self._others_keys = parse_counts(flat)

    async def run(self) -> None:
        while True:
            try:
                await self.sync()
                if self._failing:
                    self._failing = 0  # syncs failed in a row
                    log.info("in-flight sync works again")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: keep the last view, try again (said once)
                if not self._failing:
                    self._failing = True
                    log.warning("in-flight sync failed (the last counts are kept until it works): %s", exc)
            raise_if_cancelled()
            await asyncio.sleep(self.interval)

    def start(self) -> None:
        if self.store is not None and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run(), name="inflight-sync")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.store is not None:
            with contextlib.suppress(Exception):  # gone now: the others stop counting this process
                await self.store.redis.zrem(procs_key(self.store), self.proc)
                await self.store.redis.delete(proc_key(self.store, self.proc))


def parse_counts(flat: list[str]) -> tuple[dict[int, int], dict[tuple[int, str], int]]:
    channels: dict[int, int] = {}
    keys: dict[tuple[int, str], int] = {}
    for i in range(0, len(flat) - 1, 2):
        name, value = flat[i], flat[i + 1]
        try:
            n = int(value)
        except (TypeError, ValueError):
            continue
        head, _, fp = str(name).partition(":")
        if not head.isdigit():
            continue
        if fp:
            keys[int(head), fp] = keys.get((int(head), fp), 0) + n
        else:
            channels[int(head)] = channels.get(int(head), 0) + n
    return channels, keys


async def inflight_totals(store: Store) -> dict[int, int]:
    """Requests in flight per channel as Redis holds them (every live process), for tests and tools."""
    procs: list[str] = await store.redis.zrange(procs_key(store), 0, -1)
    totals: dict[int, int] = {}
    for proc in procs:
        counts: Mapping[str, str] = await store.redis.hgetall(proc_key(store, proc))
        channels, _ = parse_counts([x for pair in counts.items() for x in pair])
        for cid, n in channels.items():
            totals[cid] = totals.get(cid, 0) + n
    return {cid: n for cid, n in totals.items() if n > 0}
