"""Password guessing against one account, from any number of addresses: after FREE_FAILURES wrong
passwords the account's password logins wait, 2 s after the next failure, then 4, 8 … up to 15
minutes; during the wait no password is checked (the answer says how long is left). A successful
login clears the count; an hour without failures forgets it. The per-IP limit of the critical routes
still applies on top."""
from __future__ import annotations

import time

from .passwords import sha256_hex
from .store import Store

FREE_FAILURES = 5
MAX_WAIT = 900  # seconds
FORGET_AFTER = 3600  # seconds without a failure

# KEYS: 1 the account's record. ARGV: 1 now (s), 2 free failures, 3 max wait, 4 forget after.
_FAILED = """
local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
local wait = 0
if count > tonumber(ARGV[2]) then
  wait = math.min(2 ^ (count - tonumber(ARGV[2])), tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'until', tonumber(ARGV[1]) + wait)
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return wait
"""


class LoginGuard:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._failed = store.redis.register_script(_FAILED)

    def _key(self, identifier: str) -> str:
        return self.store.key("login", "failures", sha256_hex(identifier.strip().lower())[:32])

    async def wait_left(self, identifier: str) -> int:
        """Seconds before this account may try a password again (0: now)."""
        until = await self.store.redis.hget(self._key(identifier), "until")
        return max(0, int(float(until) - time.time()) + 1) if until and float(until) > time.time() else 0

    async def failed(self, identifier: str) -> int:
        return int(await self._failed(keys=[self._key(identifier)],
                                      args=[int(time.time()), FREE_FAILURES, MAX_WAIT, FORGET_AFTER]))

    async def succeeded(self, identifier: str) -> None:
        await self.store.redis.delete(self._key(identifier))
