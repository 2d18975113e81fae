"""What the requests in flight may still take beyond their pre-charges, and the admission rule that
bounds how far below zero they can take a balance together (docs/billing.md, Pre-charge).

A request's pre-charge is an estimate (`PreConsumedQuota` tokens when it sets no `max_tokens`); its
worst case W is the most it may cost: its prompt and the longest answer it may get (`max_tokens`, or
the model's output cap in the capability table) at its prices (api.services.billing.pricing.
worst_case_quota). Its **exposure** is e = W − pre: what its settlement may still take. The user's
`{u}:expo` hash holds, while the request runs, `<request id>` → "<e>|<key field>" (e > 0 only), and
the sums over the open reservations: `user` for the user's balance, `key:<token id>` for a limited key's.

**The rule**, checked by the pre-charge script with the balances (one atomic Redis step): besides
B ≥ pre, a request is admitted only when its balance after its pre-charge still covers the exposure
already held against that balance: B − pre ≥ X (the user's, and the key's when it is limited);
admitted, B −= pre and X += e. With nothing else in flight X = 0 and the rule is the plain one, so a
request alone is served as before, whatever its balance.

Why it holds: let S = B − X, what a balance keeps if every request in flight costs its worst. An
admission needs S ≥ pre and leaves S − W ≥ −e; a settlement moves B by pre − final and X by −e, so S
grows by W − final ≥ 0; a refund returns all of `pre` and releases e. When the last admitted request
L and every one before it have settled, B ≥ pre_L − final_L: below zero by at most one request's
overrun, however many ran together — provided each answer stays within its W (an upstream that
honours the output limit and counts the prompt as the gateway does; a model with no output cap in
the table and a request without `max_tokens` have W = pre, e = 0: the rule does not bound them).

Settling, refunding and the sweep (api.services.billing.reservations) release the exposure with the
reservation, in the same script; a settlement sent again finds nothing to release.
"""
from __future__ import annotations

USER_FIELD = "user"


def key_field(token_id: int) -> str:
    """The `{u}:expo` field of a limited key's held exposure."""
    return f"key:{token_id}"


# Lua functions for the scripts that open and close reservations; `expo` is the `{u}:expo` key.
# The pre-charge and the settlement use the `*_read` forms: the sums read with one HMGET and written
# back with one HSET (the script is atomic), instead of a command per field.
FUNCTIONS = """
local EXPO_USER = '""" + USER_FIELD + """'
local function held(expo, field)
  return tonumber(redis.call('HGET', expo, field) or '0')
end
local function hold(expo, rid, amount, key_field)
  if amount <= 0 then return end
  redis.call('HSET', expo, rid, amount .. '|' .. key_field)
  redis.call('HINCRBY', expo, '""" + USER_FIELD + """', amount)
  if key_field ~= '' then redis.call('HINCRBY', expo, key_field, amount) end
end
local function release(expo, rid)
  local entry = redis.call('HGET', expo, rid)
  if not entry then return end
  redis.call('HDEL', expo, rid)
  local sep = string.find(entry, '|', 1, true)
  local amount = tonumber(string.sub(entry, 1, sep - 1))
  local fields = {'""" + USER_FIELD + """', string.sub(entry, sep + 1)}
  for _, field in ipairs(fields) do
    if field ~= '' and redis.call('HINCRBY', expo, field, -amount) <= 0 then redis.call('HDEL', expo, field) end
  end
end
-- held_read(expo, key_field) → the user's sum, the key's (0 when key_field is ''), in one read
local function held_read(expo, key_field)
  local h = redis.call('HMGET', expo, EXPO_USER, key_field ~= '' and key_field or EXPO_USER)
  return tonumber(h[1] or '0'), key_field ~= '' and tonumber(h[2] or '0') or 0
end
-- hold_read: hold() with the sums held_read returned, in one HSET
local function hold_read(expo, rid, amount, key_field, uheld, kheld)
  if amount <= 0 then return end
  if key_field ~= '' then
    redis.call('HSET', expo, rid, amount .. '|' .. key_field, EXPO_USER, uheld + amount, key_field, kheld + amount)
  else
    redis.call('HSET', expo, rid, amount .. '|', EXPO_USER, uheld + amount)
  end
end
-- release_read: release() reading the entry and the sums in one HMGET (`key_field`: the key's field
-- when the caller knows it, else ''), then one HDEL and, while other requests still hold, one HSET
local function release_read(expo, rid, key_field)
  local h = redis.call('HMGET', expo, rid, EXPO_USER, key_field ~= '' and key_field or EXPO_USER)
  local entry = h[1]
  if not entry then return end
  local sep = string.find(entry, '|', 1, true)
  local amount = tonumber(string.sub(entry, 1, sep - 1))
  local named = string.sub(entry, sep + 1)
  local sums = {{EXPO_USER, h[2]}}
  if named ~= '' then sums[2] = {named, named == key_field and h[3] or redis.call('HGET', expo, named)} end
  local gone, left = {rid}, {}
  for _, sum in ipairs(sums) do
    local rest = tonumber(sum[2] or '0') - amount
    if rest <= 0 then gone[#gone + 1] = sum[1] else left[#left + 1] = sum[1]; left[#left + 1] = rest end
  end
  redis.call('HDEL', expo, unpack(gone))
  if #left > 0 then redis.call('HSET', expo, unpack(left)) end
end
"""
