"""Live quota and rate limits of the relay, in Redis: one Lua call before the upstream call (limits +
pre-charge), one after it (settle or refund + the settlement record).

The keys (one hash tag per user, so both scripts touch one Redis Cluster slot; group limits under
`{g:<group>}`, passed only when a group limit is on) are laid out in api.services.redis_keys.
`{u}:gen` is a random id written when a balance is (re)loaded from the database; `{u}:pver` is
incremented with every record added to `{u}:pend` and every balance change made outside the relay.

Loading a missing balance: database value minus the settlements still pending (records in
{u}:pend whose request id has no models.Settlement row yet), read in one transaction that locks the
user row (the worker updates that row in the transaction that inserts the Settlement rows), and
written only if {u}:pver did not move meanwhile (a record added while we read could be missed).
A request pre-charged against a balance that was reloaded before it settled is told so by the gen:
its settlement then subtracts the whole final amount instead of the difference to its pre-charge.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tortoise.transactions import in_transaction

from api.services import redis_keys
from api.services.billing import exposure
from api.services.billing.balances import token_quota_key, user_quota_key
from api.services.billing.records import SettlementRecord
from api.services.budgets import durable
from api.services.budgets import scripts as budget_scripts
from api.services.budgets.limits import MEASURES
from api.services.budgets.plan import Counted
from api.services.store import Script, Store
from models import Settlement, Token, User

CONCURRENCY_LEASE_MS = 3_600_000  # a request slot held by a process that died frees itself after 1 h
RESERVATION_TTL_MS = 120_000  # a reservation not renewed for this long belongs to a process that died
WINDOW_TTL_MS = 120_000

# KEYS: 1 user quota, 2 user gen, 3 key quota, 4 key gen, 5 reservations, 6 exposures, then the n limits
# that are on, the w budget windows (api.services.budgets.scripts), the pin (if asked) and the nk keys
# read for the caller (api.relay.kept_reasoning). ARGV: 1 now (ms), 2 pre, 3 key limited, 4 request id,
# 5 concurrency lease, 6 window life, 7 reservation, 8 its renewal, 9 exposure (worst case − pre), 10 the
# key's exposure field, 11 n, 12 w, 13 the pin's life (ms, '' = no pin), 14 the prompt's tokens, 15 nk;
# then 2 per limit and 6 per window.
#
# What it reads, it reads once: one MGET for the balances, their gens, the per-minute counters, the pin
# and the caller's keys; one HMGET for the exposures held and one per window; a concurrency set is
# counted (ZCARD) and its expired leases dropped only when it looks full. What it writes back in a
# hash, it writes with one HSET (the script is atomic: nothing moved since the read).
_PRE_CHARGE = exposure.FUNCTIONS + """
local now = tonumber(ARGV[1])
local pre = tonumber(ARGV[2])
local limited = ARGV[3] == '1'
local rid = ARGV[4]
local lease = tonumber(ARGV[5])
local n = tonumber(ARGV[11])
local w = tonumber(ARGV[12])
local ptok = tonumber(ARGV[14])
local nk = tonumber(ARGV[15])
local wk, wa = 6 + n, 15 + 2 * n  -- window j: KEYS[wk + j], ARGV[wa + 6(j-1) + 1..6]
-- a session's pin (api/relay/affinity.py), when asked: KEYS[7 + n + w]
local pin_ttl = ARGV[13] ~= '' and ARGV[13] or nil
-- one read: balances and gens, the counters of the per-minute limits, the pin, the caller's keys
local names = {KEYS[1], KEYS[2], KEYS[3], KEYS[4]}
local at = {}
for j = 1, n do
  if ARGV[14 + 2 * j] ~= '2' then
    names[#names + 1] = KEYS[6 + j]
    at[j] = #names
  end
end
local pin_at = 0
if pin_ttl then
  names[#names + 1] = KEYS[7 + n + w]
  pin_at = #names
end
local kept_at = #names
for i = #KEYS - nk + 1, #KEYS do names[#names + 1] = KEYS[i] end
local got = redis.call('MGET', unpack(names))
-- the limits that are on: KEYS[6 + j], kind ARGV[14 + 2j] (0 rpm, 1 tpm, 2 concurrency), limit ARGV[15 + 2j]
for j = 1, n do
  local limit = tonumber(ARGV[15 + 2 * j])
  local used
  if at[j] then
    used = tonumber(got[at[j]] or '0')
  else
    local key = KEYS[6 + j]
    used = redis.call('ZCARD', key)
    if used >= limit then  -- leases of requests whose process died free themselves here
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
      used = redis.call('ZCARD', key)
    end
  end
  if used >= limit then return {6, j} end
end
if not got[1] then return {1} end
local uq = tonumber(got[1])
local tq = 0
if limited then
  if not got[3] then return {2} end
  tq = tonumber(got[3])
end
""" + budget_scripts.CHECK + """
if uq <= 0 or uq < pre then return {3, uq} end
if limited then
  if tq <= 0 then return {4, tq} end
  if tq < pre then return {5, tq} end
end
-- what the requests in flight may still take must stay covered (api.services.billing.exposure)
local kfield = limited and ARGV[10] or ''
local uheld, theld = held_read(KEYS[6], kfield)
if uq - pre < uheld then return {7, uq, uheld} end
if limited and tq - pre < theld then return {8, tq, theld} end
for j = 1, n do
  local key = KEYS[6 + j]
  local kind = ARGV[14 + 2 * j]
  if kind == '0' then
    if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[6]) end  -- a new minute window
  elseif kind == '2' then
    redis.call('ZADD', key, now + lease, rid)
    redis.call('PEXPIRE', key, lease)
  end
end
redis.call('DECRBY', KEYS[1], pre)
local tgen = ''
if limited then
  redis.call('DECRBY', KEYS[3], pre)
  tgen = got[4] or ''
end
local ugen = got[2] or ''
hold_read(KEYS[6], rid, tonumber(ARGV[9]), kfield, uheld, theld)
""" + budget_scripts.TAKE + """
-- the reservation: what was taken (and against which balance loads), until when it stands, its windows
if w > 0 then
  redis.call('HSET', KEYS[5], rid, ugen .. '|' .. tgen .. '|' .. ARGV[7], rid .. '#', ARGV[8], rid .. '@', bstarts)
else
  redis.call('HSET', KEYS[5], rid, ugen .. '|' .. tgen .. '|' .. ARGV[7], rid .. '#', ARGV[8])
end
local pin = ''
if pin_at > 0 then
  pin = got[pin_at] or ''
  if pin ~= '' then redis.call('PEXPIRE', KEYS[7 + n + w], pin_ttl) end
end
local kept = {}
for i = 1, nk do kept[i] = got[kept_at + i] end
return {0, ugen, tgen, uq - pre, pin, bstarts, kept}
"""

# Closing a reservation on the balances (settlement and sweep alike), as close_balances(b) where b is
# the MGET of KEYS 1-4 the script made first: user and key charged `final` (ARGV 1) for a pre-charge of
# `pre` (ARGV 2) taken under the gens ARGV 3 and 4; a balance reloaded since (another gen) was loaded
# without the pre-charge, so it is charged the whole `final`; a balance not in Redis is left to be
# loaded. The record (ARGV 7, if any) goes to the user's pending hash under the request id (ARGV 6).
# KEYS: 1 user quota, 2 user gen, 3 key quota, 4 key gen, 5 pending, 6 pending version; ARGV 5 = '1'
# when the key is limited.
CLOSE_BALANCES = """
local function close_balances(b)
  local final = tonumber(ARGV[1])
  local pre = tonumber(ARGV[2])
  if b[1] then redis.call('DECRBY', KEYS[1], (b[2] or '') == ARGV[3] and final - pre or final) end
  if ARGV[5] == '1' and b[3] then redis.call('DECRBY', KEYS[3], (b[4] or '') == ARGV[4] and final - pre or final) end
  if ARGV[7] ~= '' then
    redis.call('HSET', KEYS[5], ARGV[6], ARGV[7])
    redis.call('INCR', KEYS[6])
  end
end
"""

# keep_states(first, kv, now, count): KEYS[first] a sorted index of kept entries, KEYS[first + 1..count]
# the entries; ARGV[kv] their life (s), ARGV[kv + 1] the most the index holds, ARGV[kv + 1 + i] the
# values. Each entry is written with its expiry and indexed by `now` (ms); the index forgets what has
# expired, and past the cap the oldest entries go. Its own script in api.relay.kept_reasoning, and part
# of the settlement (an answer's state written with the request's close, no call of its own).
KEEP_STATES = """
local function keep_states(first, kv, now, count)
  local index, ttl, cap = KEYS[first], tonumber(ARGV[kv]), tonumber(ARGV[kv + 1])
  local scored = {}
  for i = 1, count do
    redis.call('SET', KEYS[first + i], ARGV[kv + 1 + i], 'EX', ttl)
    scored[#scored + 1] = now
    scored[#scored + 1] = KEYS[first + i]
  end
  redis.call('ZADD', index, unpack(scored))
  redis.call('ZREMRANGEBYSCORE', index, '-inf', now - ttl * 1000)
  local over = redis.call('ZCARD', index) - cap
  if over > 0 then
    local old = redis.call('ZRANGE', index, 0, over - 1)
    redis.call('DEL', unpack(old))
    redis.call('ZREMRANGEBYRANK', index, 0, over - 1)
  end
  redis.call('EXPIRE', index, ttl)
  return over
end
"""

# KEYS: 1-6 as CLOSE_BALANCES, 7 reservations, 8 exposures, then the token-per-minute windows (ARGV[10] of
# them), the budget windows (ARGV[11]), the concurrency sets, and (ARGV[13] entries) the kept reasoning
# index and its entries (api.relay.kept_reasoning). ARGV: 8 tokens, 9 window life, 12 the prompt's tokens
# taken at admission, 13 kept entries, 14 the key's exposure field ('' none), 15 now (ms), then 3 per
# budget window (api.services.budgets.scripts), then the kept entries' TTL (s), their cap and values.
_SETTLE = exposure.FUNCTIONS + budget_scripts.CLOSE + CLOSE_BALANCES + KEEP_STATES + """
local ntpm = tonumber(ARGV[10])
local nw = tonumber(ARGV[11])
local nkeep = tonumber(ARGV[13])
local nconc = #KEYS - 8 - ntpm - nw - (nkeep > 0 and nkeep + 1 or 0)
if nkeep > 0 then  -- the answer's reasoning state, kept for the next turn (written whatever follows)
  local first, kv = 9 + ntpm + nw + nconc, 16 + 3 * nw
  keep_states(first, kv, tonumber(ARGV[15]), nkeep)
end
-- a reservation closes once: a settlement sent again (its first answer lost) or after the sweep closed it does nothing
local b = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
if redis.call('HDEL', KEYS[7], ARGV[6], ARGV[6] .. '#', ARGV[6] .. '@') == 0 then
  if (b[2] or '') == ARGV[3] then return 0 end
  -- the user's balance was loaded afresh since the pre-charge: Redis lost the data it was reserved in.
  -- Charge it now (against the reloaded balances), once: a tombstone stops a second settlement.
  if redis.call('HEXISTS', KEYS[7], ARGV[6] .. '!') == 1 then return 0 end
  redis.call('HSET', KEYS[7], ARGV[6] .. '!', tonumber(redis.call('TIME')[1]) * 1000 + 86400000)
end
release_read(KEYS[8], ARGV[6], ARGV[14])
local tokens = tonumber(ARGV[8])
close_windows(8 + ntpm, nw, 15, tonumber(ARGV[1]), tonumber(ARGV[2]), math.max(tokens, 0), tonumber(ARGV[12]),
              ARGV[7] ~= '' and 1 or 0, b[1] ~= false, (b[2] or '') == ARGV[3])
close_balances(b)
-- KEYS[9 .. 8 + ntpm]: token-per-minute windows that are on; after the budget windows: concurrency sets to leave
if tokens > 0 then
  for i = 9, 8 + ntpm do
    if redis.call('INCRBY', KEYS[i], tokens) == tokens then redis.call('PEXPIRE', KEYS[i], ARGV[9]) end
  end
end
for i = 9 + ntpm + nw, 8 + ntpm + nw + nconc do
  redis.call('ZREM', KEYS[i], ARGV[6])
end
return 1
"""

# KEYS: 1 balance, 2 its gen, 3 the pending version, then the user's open budget windows; ARGV: 1 the
# balance, 2 the pending version read, 3 the new gen, then 5 per window (api.services.budgets.scripts.LOAD)
_LOAD = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if (redis.call('GET', KEYS[3]) or '0') ~= ARGV[2] then return -1 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[3])
""" + budget_scripts.LOAD + """
return 1
"""

SCOPES = ("user_rpm", "user_tpm", "user_concurrency", "key_rpm", "key_tpm", "key_concurrency",
          "group_rpm", "group_tpm", "group_concurrency")


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-minute request and token limits and concurrent requests; 0 = off."""

    user_rpm: int = 0
    user_tpm: int = 0
    user_concurrency: int = 0
    key_rpm: int = 0
    key_tpm: int = 0
    key_concurrency: int = 0
    group_rpm: int = 0
    group_tpm: int = 0
    group_concurrency: int = 0

    def values(self) -> tuple[int, ...]:
        return tuple(getattr(self, name) for name in SCOPES)

    @property
    def group_on(self) -> bool:
        return bool(self.group_rpm or self.group_tpm or self.group_concurrency)


class QuotaRefused(Exception):
    """`reason`: user_insufficient, key_exhausted, key_insufficient, or user_ / key_in_flight (the
    requests in flight may still take `held`: api.services.billing.exposure); `remain` the live balance."""

    def __init__(self, reason: str, remain: int, pre: int, held: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.remain = remain
        self.pre = pre
        self.held = held


class RateLimited(Exception):
    def __init__(self, scope: str, limit: int, retry_after: int) -> None:
        super().__init__(scope)
        self.scope = scope
        self.limit = limit
        self.retry_after = retry_after


class BudgetExceeded(Exception):
    """A limit over time would be passed (api.services.budgets): `window` is the one refused, `measure`
    quota | requests | tokens, `used` what the window holds, `start` its start (epoch s)."""

    def __init__(self, window: Counted, measure: str, used: int, start: int) -> None:
        super().__init__(measure)
        self.window = window
        self.measure = measure
        self.used = used
        self.start = start

    @property
    def limit(self) -> int:
        return self.window.rule.caps[MEASURES.index(self.measure)]

    @property
    def resets_at(self) -> int:
        rule = self.window.rule
        return self.start + rule.rolling if rule.rolling else self.window.end


class BalanceUnavailable(Exception):
    """The balance could not be loaded (records kept arriving while loading)."""


@dataclass(slots=True)
class Charge:
    """One admitted request: what was pre-charged where, and what the settlement must release."""

    settlement_id: str
    user_id: int
    token_id: int  # 0 = no key (playground)
    token_limited: bool
    pre: int
    group: str
    limits: Limits
    minute: int
    user_gen: str = ""
    token_gen: str = ""
    remain_after: int = 0
    settled: bool = field(default=False)
    pin: str = ""  # the session's pin, read with the admission (api/relay/affinity.py)
    windows: list[Counted] = field(default_factory=list)  # the budget windows it counts in, starts known
    prompt_tokens: int = 0  # what it took from the windows' token measure
    read: dict[str, str | None] = field(default_factory=dict)  # pre_charge's `read` keys → their values


@dataclass(frozen=True, slots=True)
class Kept:
    """Entries a settlement keeps for a while (KEEP_STATES): (key, value) pairs of the user's layout,
    their sorted index, their life in seconds, the most the index holds, and the time (ms) they are
    indexed at."""

    index: str
    entries: Sequence[tuple[str, bytes]]
    ttl: int
    cap: int
    now_ms: int


def _minute(now: float) -> int:
    return int(now // 60)


def _started(windows: Sequence[Counted], starts: object) -> list[Counted]:
    """The windows with the starts the script counted them in (a rolling window's start is its own)."""
    if not windows:
        return []
    text = starts.decode() if isinstance(starts, bytes) else str(starts)
    out = []
    for window, start in zip(windows, text.split(","), strict=True):
        begin = int(start)
        if window.rule.rolling:
            window = Counted(window.rule, window.key, begin, begin + window.rule.rolling,
                             begin + window.rule.rolling + window.expire)
        out.append(window)
    return out


KEY_CACHE_SIZE = 4096  # (user, key, group, minute) → key names; cleared when full


class QuotaService:
    def __init__(self, store: Store, reservation_ttl_ms: int = RESERVATION_TTL_MS) -> None:
        self.store = store
        self.reservation_ttl_ms = reservation_ttl_ms
        self._pre = Script(store.redis, _PRE_CHARGE)
        self._settle = Script(store.redis, _SETTLE)
        self._load = Script(store.redis, _LOAD)
        self._names: dict[tuple[int, int, str, int], tuple[str, ...]] = {}
        self.clock: Callable[[], float] = time.time  # tests move time (budget windows) without waiting

    # -- key names ---------------------------------------------------------------------------------
    def _u(self, user_id: int, *parts: object) -> str:
        return redis_keys.user_key(self.store, user_id, *parts)

    def _g(self, group: str, *parts: object) -> str:
        return redis_keys.group_key(self.store, group, *parts)

    def pending_key(self, user_id: int) -> str:
        return self._u(user_id, "pend")

    def _key_names(self, user_id: int, token_id: int, group: str, minute: int) -> tuple[str, ...]:
        """quota, gen, key quota, key gen, pend, pver, the 9 limit keys in SCOPES order, then the
        reservations (`{u}:resv`) and their exposures (`{u}:expo`)."""
        cache_key = (user_id, token_id, group, minute)
        names = self._names.get(cache_key)
        if names is None:
            u, g = self._u, self._g
            names = (u(user_id, "quota"), u(user_id, "gen"), u(user_id, "tq", token_id), u(user_id, "tgen", token_id),
                     u(user_id, "pend"), u(user_id, "pver"),
                     u(user_id, "rpm", minute), u(user_id, "tpm", minute), u(user_id, "conc"),
                     u(user_id, "trpm", token_id, minute), u(user_id, "ttpm", token_id, minute),
                     u(user_id, "tconc", token_id),
                     g(group, "rpm", minute), g(group, "tpm", minute), g(group, "conc"), u(user_id, "resv"),
                     u(user_id, "expo"))
            if len(self._names) >= KEY_CACHE_SIZE:
                self._names.clear()
            self._names[cache_key] = names
        return names

    # -- before the upstream call ------------------------------------------------------------------
    async def pre_charge(self, *, settlement_id: str, user_id: int, token_id: int, token_limited: bool,
                         pre: int, group: str, limits: Limits, reservation: bytes = b"{}", pin_key: str = "",
                         pin_ttl_ms: int = 0, worst: int = 0, windows: Sequence[Counted] = (),
                         prompt_tokens: int = 0, read: Sequence[str] = ()) -> Charge:
        """Check the limits and take `pre` from the user and (when limited) the key, atomically, and
        record the reservation (`reservation`: what the sweep needs to close it if this process dies,
        see api.services.billing.reservations) with its expiry. `worst`, the most the request may
        cost (0: its pre-charge), is admitted by the rule of api.services.billing.exposure: the
        balance after `pre` must cover what the requests in flight may still take; then its own
        `worst − pre` is held with them until it settles.

        Raises RateLimited or QuotaRefused; loads a balance missing from Redis and tries again.
        Only the limits that are on are passed to the script (none: the balance and reservation keys).
        With `pin_key` (a key of the user's own layout), the session pin there is read and its life
        renewed in the same call (Charge.pin). `windows`, the budget windows the request counts in
        (api.services.budgets.plan), are checked and taken in the same call: (pre, 1, `prompt_tokens`)
        from each, or BudgetExceeded and nothing taken. `read`: keys of the user's own layout whose
        values come back with the admission (Charge.read: key → value, None where missing), in the
        same call."""
        limited = bool(token_id) and token_limited
        if not token_id:
            limits = Limits(limits.user_rpm, limits.user_tpm, limits.user_concurrency, 0, 0, 0,
                            limits.group_rpm, limits.group_tpm, limits.group_concurrency)
        values = limits.values()
        on = [i for i, v in enumerate(values) if v > 0]
        for _ in range(4):
            now = self.clock()
            minute = _minute(now)
            names = self._key_names(user_id, token_id, group, minute)
            keys = [names[0], names[1], names[2], names[3], names[15], names[16]]
            args: list[Any] = [int(now * 1000), pre, 1 if limited else 0, settlement_id, CONCURRENCY_LEASE_MS,
                               WINDOW_TTL_MS, reservation, f"{int(now * 1000) + self.reservation_ttl_ms}|0|0",
                               max(worst - pre, 0), exposure.key_field(token_id) if limited else "", len(on),
                               len(windows), pin_ttl_ms if pin_key else "", prompt_tokens, len(read)]
            for i in on:
                keys.append(names[6 + i])
                args.append(i % 3)
                args.append(values[i])
            for window in windows:
                keys.append(window.key)
                args += (window.start, window.rule.rolling, window.expire, *window.rule.caps)
            if pin_key:
                keys.append(pin_key)
            keys += read
            result = await self._pre(keys=keys, args=args)
            code = int(result[0])
            if code == 0:
                return Charge(settlement_id, user_id, token_id, limited, pre, group, limits, minute,
                              str(result[1]), str(result[2]), int(result[3]), pin=str(result[4] or ""),
                              windows=_started(windows, result[5]), prompt_tokens=prompt_tokens,
                              read=dict(zip(read, result[6], strict=True)) if read else {})
            if code == 9:
                window = windows[int(result[1]) - 1]
                raise BudgetExceeded(window, MEASURES[int(result[2]) - 1], int(result[3]), int(result[4]))
            if code in (1, 2):
                await self.load_balances(user_id, token_id if limited else None)
            elif code == 3:
                raise QuotaRefused("user_insufficient", int(result[1]), pre)
            elif code == 4:
                raise QuotaRefused("key_exhausted", int(result[1]), pre)
            elif code == 5:
                raise QuotaRefused("key_insufficient", int(result[1]), pre)
            elif code in (7, 8):
                raise QuotaRefused("user_in_flight" if code == 7 else "key_in_flight", int(result[1]), pre,
                                   int(result[2]))
            elif code == 6:
                index = on[int(result[1]) - 1]
                scope = SCOPES[index]
                retry = 1 if index % 3 == 2 else max(1, 60 - int(now) % 60)
                raise RateLimited(scope, values[index], retry)
            else:
                raise RuntimeError(f"the pre-charge script answered {result!r}")
        raise BalanceUnavailable(f"balance of user {user_id} could not be loaded")

    # -- after it ----------------------------------------------------------------------------------
    async def settle(self, charge: Charge, final: int, record: bytes | None, tokens: int,
                     keep: Kept | None = None) -> None:
        """Correct the balances by final − pre, free the concurrency slots, count the tokens per
        minute, and (when `record` is given) queue the settlement record for the workers; `keep`,
        entries to keep for a while (api.relay.kept_reasoning), written in the same call."""
        if charge.settled:
            return
        lim = charge.limits
        names = self._key_names(charge.user_id, charge.token_id, charge.group, charge.minute)
        keys = [*names[:6], names[15], names[16]]
        tpm = [names[6 + i] for i, v in ((1, lim.user_tpm), (4, lim.key_tpm), (7, lim.group_tpm)) if v]
        keys += tpm
        entries = keep.entries if keep is not None else ()
        args: list[Any] = [final, charge.pre, charge.user_gen, charge.token_gen, 1 if charge.token_limited else 0,
                           charge.settlement_id, record or b"", max(tokens, 0), WINDOW_TTL_MS, len(tpm),
                           len(charge.windows), charge.prompt_tokens, len(entries),
                           exposure.key_field(charge.token_id) if charge.token_limited else "",
                           keep.now_ms if keep is not None else 0]
        for window in charge.windows:
            keys.append(window.key)
            args += (window.start, window.end, window.expire)
        for i, v in ((2, lim.user_concurrency), (5, lim.key_concurrency), (8, lim.group_concurrency)):
            if v:
                keys.append(names[6 + i])
        if keep is not None and entries:
            keys.append(keep.index)
            keys += (key for key, _ in entries)
            args += (keep.ttl, keep.cap, *(value for _, value in entries))
        await self._settle(keys=keys, args=args)  # safe to send again: the reservation closes once
        charge.settled = True

    async def refund(self, charge: Charge) -> None:
        await self.settle(charge, 0, None, 0)

    # -- loading from the database -----------------------------------------------------------------
    async def load_balances(self, user_id: int, token_id: int | None) -> None:
        """Write the user's (and the key's) balance from the database minus pending settlements, and
        with the user's the open budget windows (api.services.budgets.durable)."""
        for _ in range(8):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.get(self._u(user_id, "pver"))
                pipe.hgetall(self.pending_key(user_id))
                pver, pending = await pipe.execute()
            pver = pver or "0"
            records = {rid: SettlementRecord.decode(raw) for rid, raw in pending.items()}
            async with in_transaction() as conn:
                row = await User.filter(id=user_id).using_db(conn).select_for_update().values("quota")
                user_quota = int(row[0]["quota"]) if row else 0
                token_remain = 0
                if token_id:
                    trow = await Token.filter(id=token_id).using_db(conn).values("remain_quota")
                    token_remain = int(trow[0]["remain_quota"]) if trow else 0
                applied: set[str] = set()
                if records:
                    found = (await Settlement.filter(request_id__in=list(records)).using_db(conn)
                             .values_list("request_id", flat=True))
                    applied = {str(rid) for rid in found}
                now = int(self.clock())
                rows = await durable.open_rows(conn, user_id, now)
            unapplied = [r for rid, r in records.items() if rid not in applied]
            user_value = user_quota - sum(r.quota for r in unapplied)
            gen = os.urandom(6).hex()
            # the open budget windows: the database's, plus what the pending records add to them
            wkeys, wargs = durable.load_arguments(self.store, user_id, rows,
                                                  (r.window_charge() for r in unapplied if r.windows), now)
            results = [await self._load(keys=[user_quota_key(self.store, user_id), self._u(user_id, "gen"),
                                              self._u(user_id, "pver"), *wkeys], args=[user_value, pver, gen, *wargs])]
            if token_id:
                token_value = token_remain - sum(r.quota for r in unapplied
                                                 if r.token_id == token_id and r.token_limited)
                results.append(await self._load(
                    keys=[token_quota_key(self.store, user_id, token_id), self._u(user_id, "tgen", token_id),
                          self._u(user_id, "pver")], args=[token_value, pver, gen]))
            if -1 not in results:
                return
        raise BalanceUnavailable(f"balance of user {user_id} could not be loaded")
