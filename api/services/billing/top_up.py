"""An open reservation moved to another model of the request's chain (api/relay/fallbacks.py), in one
Redis call: what the dearer model may cost beyond what is held is taken from user and key (refused
when a balance cannot cover it), and the reservation's record and exposure are rewritten, so that
the settlement and the sweep close it at the new model's prices (docs/billing.md, Fallbacks).

A balance reloaded since the pre-charge (Redis lost its data) is not topped up: the request's chain
ends there, and its settlement charges it as any other.
"""
from __future__ import annotations

import weakref

from api.services import redis_keys
from api.services.billing import exposure
from api.services.billing.quota import Charge
from api.services.store import Script, Store

# KEYS: 1 user quota, 2 user gen, 3 key quota, 4 key gen, 5 reservations, 6 exposures.
# ARGV: 1 request id, 2 extra, 3 key limited, 4 user gen, 5 key gen, 6 the new reservation, 7 its
# exposure (worst case − pre), 8 the key's exposure field.
_TOP_UP = exposure.FUNCTIONS + """
if not redis.call('HGET', KEYS[5], ARGV[1]) then return {1} end
local limited = ARGV[3] == '1'
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[4] then return {1} end
if limited and (redis.call('GET', KEYS[4]) or '') ~= ARGV[5] then return {1} end
local extra = tonumber(ARGV[2])
if extra > 0 then
  local uq = tonumber(redis.call('GET', KEYS[1]) or '')
  if not uq then return {1} end
  if uq < extra then return {2, uq} end
  if limited then
    local tq = tonumber(redis.call('GET', KEYS[3]) or '')
    if not tq then return {1} end
    if tq < extra then return {3, tq} end
    redis.call('DECRBY', KEYS[3], extra)
  end
  redis.call('DECRBY', KEYS[1], extra)
end
redis.call('HSET', KEYS[5], ARGV[1], ARGV[4] .. '|' .. ARGV[5] .. '|' .. ARGV[6])
release(KEYS[6], ARGV[1])
hold(KEYS[6], ARGV[1], tonumber(ARGV[7]), limited and ARGV[8] or '')
return {0}
"""

_scripts: weakref.WeakKeyDictionary[Store, Script] = weakref.WeakKeyDictionary()


class TopUpRefused(Exception):
    """`reason`: lost (the reservation or balance is not the one admitted), user or key (too low)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def top_up(store: Store, charge: Charge, pre: int, reservation: bytes, worst: int) -> None:
    """Hold `pre` in all for the request from now on (never less than what is held already), with
    `reservation` as its record and `worst` its most; `charge.pre` follows."""
    script = _scripts.get(store)
    if script is None:
        script = _scripts[store] = Script(store.redis, _TOP_UP)
    total = max(pre, charge.pre)
    user, token = charge.user_id, charge.token_id

    def u(*parts: object) -> str:
        return redis_keys.user_key(store, user, *parts)

    keys = [u("quota"), u("gen"), u("tq", token), u("tgen", token), u("resv"), u("expo")]
    args = [charge.settlement_id, total - charge.pre, 1 if charge.token_limited else 0, charge.user_gen,
            charge.token_gen, reservation, max(worst - total, 0),
            exposure.key_field(token) if charge.token_limited else ""]
    result = await script(keys=keys, args=args)
    code = int(result[0])
    if code != 0:
        raise TopUpRefused({1: "lost", 2: "user", 3: "key"}[code])
    charge.pre = total
