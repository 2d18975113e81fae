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
FUNCTIONS = """
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
"""
