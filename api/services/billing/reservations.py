"""Reservations: a pre-charge that outlives its process is closed by the sweep (docs/billing.md,
Reservations and the sweep).

The pre-charge script (api.services.billing.quota) records each reservation in the user's `{u}:resv` hash:
`<request id>` → "<user gen>|<key gen>|<JSON>" (what was taken, and the settlement record's fields:
model, prices, key, group…) and `<request id>#` → "<expiry ms>|<output tokens so far>|<channel>".
With budget windows (api.services.budgets), `<request id>@` → the windows' starts, in the order of
the reservation's `bw`. The settlement deletes them, once (a settlement sent again does nothing).
A settlement that finds no reservation while the user's balance was reloaded since its pre-charge
(Redis lost its data) charges the request afresh and leaves `<request id>!` → "<expiry ms>" so
that it does so once; the sweep removes these a day later.

While a request runs, its process renews the expiry and records the output produced so far (the
checkpoint) every CHECKPOINT seconds, in one pipelined call for all its long-running requests;
requests that end sooner are never written to at all. A process that dies stops renewing: once the
expiry passes, `close_orphans` (the scheduler's `billing.sweep`) closes the reservation as a
settlement would: the prompt and the checkpointed output are charged (the log says the request
was incomplete), the rest goes back to user and key; with no output checkpointed, all of it. What
the request might still have taken beyond its pre-charge (api.services.billing.exposure) is released
with it.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from api.services import redis_keys
from api.services.billing import exposure, pricing
from api.services.billing.quota import CLOSE_BALANCES
from api.services.billing.records import SettlementRecord, TokenUsage
from api.services.budgets import scripts as budget_scripts
from api.services.budgets.plan import grace, rolling_seconds, window_key
from api.services.cancellation import raise_if_cancelled
from api.services.store import Script, Store

log = logging.getLogger(__name__)
CHECKPOINT_INTERVAL = 5.0  # seconds between two renewals of a running request's reservation
ORPHAN = "the API process stopped before the request finished"

_RENEW = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1] .. '#', ARGV[2])
return 1
"""

# KEYS: 1 user quota, 2 user gen, 3 key quota, 4 key gen, 5 pend, 6 pver, 7 resv, 8 user conc, 9 key conc,
# 10 expo, then the budget windows; ARGV: 1 final, 2 pre, 3 user gen, 4 key gen, 5 key limited, 6 request id,
# 7 record or '', 8 the renewal read, 9 the number of windows, 10 the prompt's tokens taken, 11 the tokens
# charged, 12 the key's exposure field, then 3 per window (api.services.budgets.scripts)
_CLOSE = exposure.FUNCTIONS + budget_scripts.CLOSE + CLOSE_BALANCES + """
if redis.call('HGET', KEYS[7], ARGV[6] .. '#') ~= ARGV[8] then return 0 end  -- renewed or closed meanwhile
redis.call('HDEL', KEYS[7], ARGV[6], ARGV[6] .. '#', ARGV[6] .. '@')
release_read(KEYS[10], ARGV[6], ARGV[5] == '1' and ARGV[12] or '')
local b = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
close_windows(10, tonumber(ARGV[9]), 12, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[11]),
              tonumber(ARGV[10]), ARGV[7] ~= '' and 1 or 0, b[1] ~= false, (b[2] or '') == ARGV[3])
close_balances(b)
redis.call('ZREM', KEYS[8], ARGV[6])
redis.call('ZREM', KEYS[9], ARGV[6])
return 1
"""


reservations_key = redis_keys.reservations


Progress = Callable[[], tuple[int, int]]  # → (output tokens produced so far, channel id)


class ReservationKeeper:
    """Renews the reservations of this process's running requests and records their checkpoints."""

    def __init__(self, store: Store, ttl_ms: int, interval: float = CHECKPOINT_INTERVAL) -> None:
        self.store = store
        self.ttl_ms = ttl_ms
        self.interval = interval
        self._held: dict[str, tuple[int, Progress]] = {}
        self._task: asyncio.Task[None] | None = None

    def hold(self, request_id: str, user_id: int, progress: Progress) -> None:
        self._held[request_id] = (user_id, progress)

    def release(self, request_id: str) -> None:
        self._held.pop(request_id, None)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="reservations")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.renew()
            except Exception as exc:  # Redis unreachable: the next round tries again
                log.warning("reservations not renewed: %s", exc)
            raise_if_cancelled()

    async def renew(self, now_ms: int | None = None) -> int:
        """One round: every reservation held here gets a new expiry and its checkpoint."""
        if not self._held:
            return 0
        expiry = (int(time.time() * 1000) if now_ms is None else now_ms) + self.ttl_ms
        async with self.store.redis.pipeline(transaction=False) as pipe:
            for request_id, (user_id, progress) in list(self._held.items()):
                produced, channel = progress()
                pipe.eval(_RENEW, 1, reservations_key(self.store, user_id), request_id,
                          f"{expiry}|{produced}|{channel}")
            results = await pipe.execute()
        return sum(int(r) for r in results)


async def close_orphans(store: Store, quota_per_unit: int, now_ms: int | None = None) -> list[str]:
    """Close every reservation whose expiry has passed; returns the request ids closed."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    script = Script(store.redis, _CLOSE)
    closed: list[str] = []
    async for key in store.redis.scan_iter(match=redis_keys.every_user(store, "resv"), count=500):
        user_id = redis_keys.user_of(store, key)
        if user_id is None:
            continue
        entries = await store.redis.hgetall(key)
        for request_id, value in entries.items():
            if request_id.endswith("!"):  # a lost reservation settled after Redis lost its data
                if int(value) <= now_ms:
                    await store.redis.hdel(key, request_id)
                continue
            if request_id.endswith(("#", "@")):
                continue
            renewal = entries.get(request_id + "#")
            if renewal is None:
                continue
            expiry, produced, channel = (renewal.split("|") + ["0", "0"])[:3]
            if int(expiry) > now_ms:
                continue
            if await _close(store, script, user_id, request_id, value, renewal, int(produced), int(channel),
                            quota_per_unit, entries.get(request_id + "@", "")):
                closed.append(request_id)
    if closed:
        log.warning("closed %d reservations of requests whose process stopped: %s", len(closed), closed[:10])
    return closed


async def _close(store: Store, script: Script, user_id: int, request_id: str, value: str, renewal: str,
                 produced: int, channel: int, quota_per_unit: int, starts: str = "") -> bool:
    user_gen, token_gen, raw = value.split("|", 2)
    request, pre = SettlementRecord.decode_reservation(raw)
    token_id, limited = request.token_id, request.token_limited
    request.windows = started_windows(request.windows, starts)
    prompt = request.usage.prompt_tokens
    final, record, tokens = 0, b"", 0
    if produced > 0:
        final = pricing.settle_quota(request.price, prompt, produced, quota_per_unit=quota_per_unit)
        now = time.time()
        if channel:
            request.channel_id, request.used_channels = channel, [channel]
        request.quota, request.usage = final, TokenUsage(prompt, produced)
        request.use_time, request.incomplete, request.at = max(0, int(now - (request.started or now))), ORPHAN, now
        record, tokens = request.encode(), prompt + produced
    def u(*parts: object) -> str:
        return redis_keys.user_key(store, user_id, *parts)

    keys = [u("quota"), u("gen"), u("tq", token_id), u("tgen", token_id), u("pend"), u("pver"), u("resv"), u("conc"),
            u("tconc", token_id), u("expo")]
    args: list[object] = [final, pre, user_gen, token_gen, 1 if limited else 0, request_id, record, renewal,
                          len(request.windows), prompt, tokens, exposure.key_field(token_id) if limited else ""]
    for part, identity, start, end in request.windows:
        keys.append(window_key(store, user_id, part, identity, start))
        args += (start, end, end + grace(end - start))
    done = await script(keys=keys, args=args)
    return bool(int(done))


def started_windows(windows: list[list[Any]], starts: str) -> list[list[Any]]:
    """A reservation's windows with the starts its admission counted them in (`<request id>@`)."""
    if not windows:
        return []
    found = starts.split(",") if starts else []
    if len(found) != len(windows):  # no starts kept: the windows as the reservation has them
        return [w for w in windows if w[2]]
    out = []
    for (part, identity, _, end), start in zip(windows, found, strict=True):
        begin = int(start)
        roll = rolling_seconds(identity)
        out.append([part, identity, begin, begin + roll if roll else end])
    return out
