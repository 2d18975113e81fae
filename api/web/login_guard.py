"""Password guessing, counted per account and per source, so that nobody can lock an owner out.

The account of a login is the user its identifier names (username or e-mail: they count together),
or, for an identifier naming nobody, that identifier (guessing at names costs the same and tells
nothing). The source is where the guess comes from:

- a *known* browser: it holds the account's device cookie (issued at each successful login and by a
  password reset through the account's mailbox; remembered DEVICE_TTL) or a live session of the
  account. It is the second factor a guesser lacks;
- any other caller: its address (`client_ip`, behind TRUSTED_PROXIES the forwarded one).

Each counter allows FREE_FAILURES wrong passwords, then waits 2 s after the next failure, 4, 8 … up
to MAX_WAIT; during a wait no password is checked; FORGET_AFTER without failures forgets it.

- per (account, source): an attacker locks out only his own address, a browser only itself;
- per account, for unknown sources only: spraying from many addresses slows every unknown source,
  never a known browser, which logs in with the right password whatever the attack.

A correct password clears the counter of its source (and the account's, when the source was unknown:
it showed the password without a second factor, as the owner on a new machine does).

Why a cookie and not a remembered address: addresses are shared (NAT, mobile carriers; a proxy left
out of TRUSTED_PROXIES makes every client one address) and change; the cookie is 256 random bits
only that browser holds. It is per account (a browser used for several accounts is known to each),
renewed at each login, and only its HMAC is stored (a Redis dump gives no usable cookie). A password
reset forgets every device of the account.
"""
from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import time
from dataclasses import dataclass

from aiohttp import web

from api.services import redis_keys
from api.services.passwords import sha256_hex
from api.services.store import Store
from api.web import audit
from api.web.net import client_ip
from api.web.sessions import COOKIE as SESSION_COOKIE
from api.web.sessions import sessions_of
from models import User

FREE_FAILURES = 5
MAX_WAIT = 900  # seconds
FORGET_AFTER = 3600  # seconds without a failure
DEVICE_TTL = 180 * 86400  # a browser not seen for this long is unknown again
DEVICES_KEPT = 20  # per account, the most recently seen
DEVICE_COOKIE = "login_device_"  # + the user id
DEVICE_PATH = "/api/user"  # login and reset live under it
_DEVICE_VALUE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")

clock = time.time  # the guard's "now"; tests move it

# KEYS: the counters a failure counts in. ARGV: 1 now (s), 2 free failures, 3 max wait, 4 forget after.
# → {the wait, 1 when this failure is the first past the free ones of a counter (a burst begins)}
_FAILED = """
local wait = 0
local burst = 0
for _, key in ipairs(KEYS) do
  local count = redis.call('HINCRBY', key, 'count', 1)
  if count == tonumber(ARGV[2]) + 1 then burst = 1 end
  if count > tonumber(ARGV[2]) then
    local w = math.min(2 ^ (count - tonumber(ARGV[2])), tonumber(ARGV[3]))
    redis.call('HSET', key, 'until', tonumber(ARGV[1]) + w)
    if w > wait then wait = w end
  end
  redis.call('EXPIRE', key, tonumber(ARGV[4]))
end
return {wait, burst}
"""


def device_cookie(user_id: int) -> str:
    return f"{DEVICE_COOKIE}{user_id}"


def may_be_known(request: web.Request) -> bool:
    """Whether the request carries a cookie that could make it a known source (checked later)."""
    return any(name.startswith(DEVICE_COOKIE) or name == SESSION_COOKIE for name in request.cookies)


def account_of(user: User | None, identifier: str) -> str:
    """The counters' account: the user, or the identifier when it names nobody."""
    return f"u{user.id}" if user is not None else "n" + sha256_hex(identifier.strip().lower())[:32]


@dataclass(frozen=True, slots=True)
class Attempt:
    account: str  # "u<id>" or "n<hash>"
    source: str  # "d<hash>" a known device, "s<hash>" a live session, "a<hash>" an address
    user_id: int  # 0: the identifier names nobody
    device: str  # the browser's device cookie for the account, when it sent one
    wait: int  # seconds before a password may be checked (0: now)

    @property
    def known(self) -> bool:
        return self.source[0] != "a"


class LoginGuard:
    def __init__(self, store: Store, secret: bytes) -> None:
        self.store = store
        self.secret = secret
        self._failed = store.redis.register_script(_FAILED)

    # Every key of an account carries its hash tag: one slot in a cluster, one script per failure.
    def account_key(self, account: str) -> str:
        return redis_keys.login_failures(self.store, account)

    def source_key(self, account: str, source: str) -> str:
        return redis_keys.login_failures_from(self.store, account, source)

    def devices_key(self, account: str) -> str:
        return redis_keys.login_devices(self.store, account)

    def _mac(self, value: str) -> str:
        return hmac.new(self.secret, value.encode(), hashlib.sha256).hexdigest()[:32]

    async def attempt(self, request: web.Request, user: User | None, identifier: str) -> Attempt:
        """Who guesses at which account, and how long it must wait; one Redis round trip (two with a
        session cookie)."""
        account = account_of(user, identifier)
        user_id = user.id if user is not None else 0
        device = request.cookies.get(device_cookie(user_id), "") if user_id else ""
        device = device if _DEVICE_VALUE.match(device) else ""
        session_source = ""
        if user_id and request.cookies.get(SESSION_COOKIE):
            session = await sessions_of(request).load(request)
            if session is not None and session.user_id == user_id:
                session_source = "s" + self._mac(session.sid)
        device_source = "d" + self._mac(device) if device else ""
        address_source = "a" + self._mac(client_ip(request))
        sources = [s for s in (device_source, session_source, address_source) if s]
        async with self.store.redis.pipeline(transaction=False) as pipe:
            pipe.zscore(self.devices_key(account), device_source[1:] or "-")
            pipe.hget(self.account_key(account), "until")
            for source in sources:
                pipe.hget(self.source_key(account, source), "until")
            seen, account_until, *untils = await pipe.execute()
        now = clock()
        if seen is not None and float(seen) > now - DEVICE_TTL:
            source = device_source
        else:
            source = session_source or address_source
        wait = _left(untils[sources.index(source)], now)
        if source == address_source:
            wait = max(wait, _left(account_until, now))
        return Attempt(account, source, user_id, device, wait)

    async def failed(self, attempt: Attempt, request: web.Request | None = None, identifier: str = "") -> int:
        """Count a wrong password (or code) → the wait it earns. With `request`: the failure that
        starts a burst (the first past FREE_FAILURES of a counter, once per counter until it is
        forgotten) writes one audit entry, `login.burst`, on the account."""
        keys = [self.source_key(attempt.account, attempt.source)]
        if not attempt.known:
            keys.append(self.account_key(attempt.account))
        wait, burst = await self._failed(keys=keys, args=[round(clock(), 3), FREE_FAILURES, MAX_WAIT, FORGET_AFTER])
        if burst and request is not None:
            await audit.login_burst(request, attempt.user_id, identifier, FREE_FAILURES + 1, int(wait), attempt.known)
        return int(wait)

    async def succeeded(self, attempt: Attempt, response: web.StreamResponse, secure: bool) -> None:
        """Clear the source's counter (the account's too, for an unknown source) and make this browser
        a known device of the account; one round trip."""
        keys = [self.source_key(attempt.account, attempt.source)]
        if not attempt.known:
            keys.append(self.account_key(attempt.account))
        await self.trust(attempt.user_id, response, secure, replacing=attempt.device, clear=keys)

    async def trust(self, user_id: int, response: web.StreamResponse, secure: bool, replacing: str = "",
                    clear: list[str] | None = None) -> None:
        """A new device cookie for this browser, remembered for the account (the one it replaces
        forgotten); `clear`: counters to drop in the same round trip."""
        device = secrets.token_urlsafe(32)
        key = self.devices_key(f"u{user_id}")
        now = clock()
        async with self.store.redis.pipeline(transaction=False) as pipe:
            if clear:
                pipe.delete(*clear)
            if replacing:
                pipe.zrem(key, self._mac(replacing))
            pipe.zadd(key, {self._mac(device): now})
            pipe.zremrangebyscore(key, "-inf", now - DEVICE_TTL)
            pipe.zremrangebyrank(key, 0, -DEVICES_KEPT - 1)
            pipe.expire(key, DEVICE_TTL)
            await pipe.execute()
        response.set_cookie(device_cookie(user_id), device, max_age=DEVICE_TTL, path=DEVICE_PATH,
                            httponly=True, samesite="Strict", secure=secure)

    async def forget_devices(self, user_id: int) -> None:
        """No browser is known for the account any more (its password was reset)."""
        await self.store.redis.delete(self.devices_key(f"u{user_id}"))


def _left(until: str | None, now: float) -> int:
    """Whole seconds left of a wait (rounded up), 0 when none."""
    if not until or float(until) <= now:
        return 0
    return math.ceil(float(until) - now)
