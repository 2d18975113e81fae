"""The Lua of budgets, spliced into the billing scripts (api.services.billing.quota, .reservations, the
task refund): each window is checked and taken in the pre-charge's own call, and closed in the call
that closes the reservation, so a budget costs no round trip of its own.

Window hashes (api.services.budgets.plan): fields `s` start (epoch s), `q` quota, `r` requests,
`t` tokens. A request takes (pre, 1, prompt tokens) from every window it counts in, and its close
moves each by (final − pre, 0, tokens − prompt): a settlement leaves the exact charge, a refund
(final 0, no record) gives back all it took, requests too. Only the window the request was admitted
in is moved: a hash whose `s` is another start (a rolling window that closed and reopened) is not;
one that has expired is not written again once its window ended.

While the user's balance is not in Redis nothing is moved (the balance and the windows are loaded
together from the database and the pending records, api.services.billing.quota.load_balances); a
close against a balance loaded afresh since the admission (another gen: Redis lost the data the
reservation was in) adds the whole charge, as the balances do.
"""
from __future__ import annotations

# In the pre-charge, after the balances are known to be loaded and before anything is taken.
# Locals it needs: now (ms), pre, n (rate limits), w (windows), ptok (prompt tokens). KEYS[6 + n + j]:
# window j; ARGV[14 + 2n + 6(j-1) + 1..6]: start (0 rolling), rolling seconds (0 calendar), expiry
# (calendar: epoch s; rolling: seconds after its end), caps of quota, requests, tokens (-1 none).
CHECK = """
local nows = math.floor(now / 1000)
local bstart, bstate = {}, {}
for j = 1, w do
  local key = KEYS[6 + n + j]
  local b = 14 + 2 * n + 6 * (j - 1)
  local start = tonumber(ARGV[b + 1])
  local roll = tonumber(ARGV[b + 2])
  local h = redis.call('HMGET', key, 's', 'q', 'r', 't')
  local used = {0, 0, 0}
  local state = 0  -- 0 counted in as it is, 1 a calendar window's first request, 2 a rolling window opened
  if roll > 0 and not (h[1] and tonumber(h[1]) + roll > nows) then
    start, state = nows, 2
  elseif h[1] then
    start = tonumber(h[1])
    used = {tonumber(h[2] or '0'), tonumber(h[3] or '0'), tonumber(h[4] or '0')}
  else
    state = 1
  end
  local want = {pre, 1, ptok}
  for m = 1, 3 do
    local cap = tonumber(ARGV[b + 3 + m])
    if cap >= 0 and used[m] + want[m] > cap then return {9, j, m, used[m], start} end
  end
  bstart[j], bstate[j] = start, state
end
"""

# After the balances are taken: every window at once, and their starts kept with the reservation.
TAKE = """
for j = 1, w do
  local key = KEYS[6 + n + j]
  local b = 14 + 2 * n + 6 * (j - 1)
  if bstate[j] == 2 then
    redis.call('DEL', key)
    redis.call('HSET', key, 's', bstart[j], 'q', pre, 'r', 1, 't', ptok)
    redis.call('EXPIREAT', key, bstart[j] + tonumber(ARGV[b + 2]) + tonumber(ARGV[b + 3]))
  else
    redis.call('HINCRBY', key, 'q', pre)
    redis.call('HINCRBY', key, 'r', 1)
    if ptok ~= 0 then redis.call('HINCRBY', key, 't', ptok) end
    if bstate[j] == 1 then
      redis.call('HSET', key, 's', bstart[j])
      redis.call('EXPIREAT', key, ARGV[b + 3])
    end
  end
end
local bstarts = table.concat(bstart, ',')
if w > 0 then redis.call('HSET', KEYS[5], rid .. '@', bstarts) end
"""

# close_windows(k0, nw, a0, final, pre, tokens, ptok, counted): windows KEYS[k0 + j], ARGV[a0 + 3(j-1)
# + 1..3] = start, end (epoch s), expiry; KEYS[1] the user's balance, KEYS[2] its gen, ARGV[3] the gen
# of the admission; `counted` 1 when the request stays counted (a record), 0 for a refund.
CLOSE = """
local function close_windows(k0, nw, a0, final, pre, tokens, ptok, counted)
  if nw == 0 or redis.call('EXISTS', KEYS[1]) == 0 then return end
  local dq, dr, dt = final, counted, tokens
  if (redis.call('GET', KEYS[2]) or '') == ARGV[3] then dq, dr, dt = final - pre, counted - 1, tokens - ptok end
  local nows = tonumber(redis.call('TIME')[1])
  for j = 1, nw do
    local key = KEYS[k0 + j]
    local b = a0 + 3 * (j - 1)
    local s = redis.call('HGET', key, 's')
    if s == ARGV[b + 1] or (not s and tonumber(ARGV[b + 2]) > nows) then
      if not s then
        redis.call('HSET', key, 's', ARGV[b + 1])
        redis.call('EXPIREAT', key, ARGV[b + 3])
      end
      if dq ~= 0 then redis.call('HINCRBY', key, 'q', dq) end
      if dr ~= 0 then redis.call('HINCRBY', key, 'r', dr) end
      if dt ~= 0 then redis.call('HINCRBY', key, 't', dt) end
    end
  end
end
"""

# A task's refund (api.relay.tasks.billing): its charge and its request given back to each window it
# counted in, while that window is the one in Redis. KEYS[k0 + j], ARGV[a0 + j] = its start.
REFUND = """
local function refund_windows(k0, nw, a0, quota)
  if nw == 0 or redis.call('EXISTS', KEYS[1]) == 0 then return end
  for j = 1, nw do
    local key = KEYS[k0 + j]
    if redis.call('HGET', key, 's') == ARGV[a0 + j] then
      redis.call('HINCRBY', key, 'q', -quota)
      redis.call('HINCRBY', key, 'r', -1)
    end
  end
end
"""

# Loading a user's balance (load_balances' script, once the balance is written): the open windows.
# KEYS[3 + j], ARGV[3 + 5(j-1) + 1..5] = start, quota, requests, tokens, expiry (epoch s).
LOAD = """
for j = 1, #KEYS - 3 do
  local key = KEYS[3 + j]
  local b = 3 + 5 * (j - 1)
  redis.call('DEL', key)
  redis.call('HSET', key, 's', ARGV[b + 1], 'q', ARGV[b + 2], 'r', ARGV[b + 3], 't', ARGV[b + 4])
  redis.call('EXPIREAT', key, ARGV[b + 5])
end
"""
