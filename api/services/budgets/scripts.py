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
# Locals it needs: now (ms), pre, w (windows), ptok (prompt tokens), wk and wa: window j is KEYS[wk + j],
# its arguments ARGV[wa + 6(j-1) + 1..6]: start (0 rolling), rolling seconds (0 calendar), expiry
# (calendar: epoch s; rolling: seconds after its end), caps of quota, requests, tokens (-1 none).
# One HMGET per window; what it read (bused) is what TAKE writes back, plus the request's share.
CHECK = """
local nows = math.floor(now / 1000)
local bstart, bstate, bused = {}, {}, {}
for j = 1, w do
  local b = wa + 6 * (j - 1)
  local start = tonumber(ARGV[b + 1])
  local roll = tonumber(ARGV[b + 2])
  local h = redis.call('HMGET', KEYS[wk + j], 's', 'q', 'r', 't')
  local used = {0, 0, 0}
  local state = 0  -- 0 counted in as it is, 1 a calendar window's first request, 2 a rolling window opened
  if roll > 0 and not (h[1] and tonumber(h[1]) + roll > nows) then
    start, state = nows, 2
  else
    if h[1] then start = tonumber(h[1]) else state = 1 end
    used = {tonumber(h[2] or '0'), tonumber(h[3] or '0'), tonumber(h[4] or '0')}
  end
  local want = {pre, 1, ptok}
  for m = 1, 3 do
    local cap = tonumber(ARGV[b + 3 + m])
    if cap >= 0 and used[m] + want[m] > cap then return {9, j, m, used[m], start} end
  end
  bstart[j], bstate[j], bused[j] = start, state, used
end
"""

# After the balances are taken: every window at once (one HSET each: the values CHECK read plus the
# request's share; the script is atomic, so nothing moved in between), its expiry set when it opens.
# Leaves `bstarts`, the windows' starts, for the reservation's `<request id>@`.
TAKE = """
for j = 1, w do
  local key = KEYS[wk + j]
  local b = wa + 6 * (j - 1)
  local u = bused[j]
  if bstate[j] == 0 then
    redis.call('HSET', key, 'q', u[1] + pre, 'r', u[2] + 1, 't', u[3] + ptok)
  else
    redis.call('HSET', key, 's', bstart[j], 'q', u[1] + pre, 'r', u[2] + 1, 't', u[3] + ptok)
    if bstate[j] == 2 then
      redis.call('EXPIREAT', key, bstart[j] + tonumber(ARGV[b + 2]) + tonumber(ARGV[b + 3]))
    else
      redis.call('EXPIREAT', key, ARGV[b + 3])
    end
  end
end
local bstarts = table.concat(bstart, ',')
"""

# close_windows(k0, nw, a0, final, pre, tokens, ptok, counted, loaded, same): windows KEYS[k0 + j],
# ARGV[a0 + 3(j-1) + 1..3] = start, end (epoch s), expiry; `loaded` whether the user's balance is in
# Redis, `same` whether its gen is the admission's (the caller read both: one MGET with the balances);
# `counted` 1 when the request stays counted (a record), 0 for a refund. One HMGET and one HSET per
# window; the clock (TIME) is read only for a hash that is gone.
CLOSE = """
local function close_windows(k0, nw, a0, final, pre, tokens, ptok, counted, loaded, same)
  if nw == 0 or not loaded then return end
  local dq, dr, dt = final, counted, tokens
  if same then dq, dr, dt = final - pre, counted - 1, tokens - ptok end
  if dq == 0 and dr == 0 and dt == 0 then return end
  local nows = nil
  for j = 1, nw do
    local key = KEYS[k0 + j]
    local b = a0 + 3 * (j - 1)
    local h = redis.call('HMGET', key, 's', 'q', 'r', 't')
    local s = h[1]
    if not s and not nows then nows = tonumber(redis.call('TIME')[1]) end
    if s == ARGV[b + 1] or (not s and tonumber(ARGV[b + 2]) > nows) then
      local q, r, t = tonumber(h[2] or '0') + dq, tonumber(h[3] or '0') + dr, tonumber(h[4] or '0') + dt
      if s then
        redis.call('HSET', key, 'q', q, 'r', r, 't', t)
      else
        redis.call('HSET', key, 's', ARGV[b + 1], 'q', q, 'r', r, 't', t)
        redis.call('EXPIREAT', key, ARGV[b + 3])
      end
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
