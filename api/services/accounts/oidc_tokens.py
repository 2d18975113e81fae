"""Verifying an OpenID Connect ID token (PyJWT over `cryptography`).

A token is accepted only when all of these hold, else TokenRefused says which failed:
- its signature verifies with a key of the provider's JWKS, under an asymmetric algorithm (RS*, PS*,
  ES*, EdDSA: never `none` nor an HMAC keyed with something public), the key's own `alg` agreeing;
- `iss` is the provider's issuer, exactly; `aud` holds the expected audience (the client id unless the
  provider names another), and with several audiences `azp` is the client id (when present, always);
- `exp` is in the future and `iat` not in the future, each with LEEWAY seconds of clock skew;
- `nonce` is the one this login sent (the flow keeps it, used once), and `sub` is present.

The JWKS of each provider is cached (JWKS_TTL) per process; a token signed with a key id the cache
does not know makes it fetch the set again, at most once every REFETCH_INTERVAL per URL, so a run of
tokens with made-up key ids costs one fetch. At most MAX_SETS sets are kept (the oldest goes first).
"""
from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import jwt

from api.services.passwords import constant_time_equals

ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"})
LEEWAY = 60  # seconds of clock skew allowed on exp and iat
JWKS_TTL = 3600
REFETCH_INTERVAL = 60
MAX_SETS = 64

FetchJson = Callable[[str], Awaitable[dict[str, Any]]]


class TokenRefused(Exception):
    """The ID token is not accepted; `reason` is one of: missing, invalid, signature, expired, issuer,
    audience, nonce (each a message key `oidc_token_<reason>`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _KeySet:
    keys: list[tuple[str | None, jwt.PyJWK]]  # (the key's own alg, the key)
    fetched: float
    forced: float = field(default=0.0)  # when a fetch was last made for an unknown key id


class JwksCache:
    """The providers' signing keys, by JWKS URL."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._sets: OrderedDict[str, _KeySet] = OrderedDict()

    async def _load(self, url: str, fetch: FetchJson, forced: float) -> _KeySet:
        document = await fetch(url)
        keys: list[tuple[str | None, jwt.PyJWK]] = []
        for data in document.get("keys") or []:
            if not isinstance(data, dict) or data.get("use", "sig") != "sig":
                continue
            try:
                alg = data.get("alg")
                keys.append((alg if isinstance(alg, str) else None, jwt.PyJWK(data)))
            except (jwt.PyJWTError, ValueError, TypeError, KeyError):
                continue  # a key of a type or curve not supported: the others still serve
        entry = _KeySet(keys, self.clock(), forced)
        self._sets[url] = entry
        self._sets.move_to_end(url)
        while len(self._sets) > MAX_SETS:
            self._sets.popitem(last=False)
        return entry

    async def key(self, url: str, kid: str | None, alg: str, fetch: FetchJson) -> jwt.PyJWK:
        now = self.clock()
        entry = self._sets.get(url)
        if entry is None or now - entry.fetched > JWKS_TTL:
            entry = await self._load(url, fetch, entry.forced if entry else 0.0)
        found = _pick(entry.keys, kid, alg)
        if found is None and now - entry.forced >= REFETCH_INTERVAL:
            entry = await self._load(url, fetch, now)
            found = _pick(entry.keys, kid, alg)
        if found is None:
            raise TokenRefused("signature")
        return found


def _pick(keys: list[tuple[str | None, jwt.PyJWK]], kid: str | None, alg: str) -> jwt.PyJWK | None:
    """The key named by `kid`; without a kid, the only key that can serve `alg`."""
    fitting = [k for own, k in keys if own in (None, alg)]
    if kid is not None:
        return next((k for k in fitting if k.key_id == kid), None)
    return fitting[0] if len(fitting) == 1 else None


@dataclass(frozen=True)
class Expected:
    issuer: str
    audience: str  # what `aud` must hold
    client_id: str  # what `azp` must be, when present or when there are several audiences
    nonce: str
    jwks_url: str


async def verify_id_token(token: str, expected: Expected, cache: JwksCache, fetch: FetchJson) -> dict[str, Any]:
    """The claims of a valid ID token, or TokenRefused."""
    if not isinstance(token, str) or not token:
        raise TokenRefused("missing")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise TokenRefused("invalid") from None
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise TokenRefused("signature")
    kid = header.get("kid")
    key = await cache.key(expected.jwks_url, kid if isinstance(kid, str) else None, alg, fetch)
    try:
        claims: dict[str, Any] = jwt.decode(
            token, key.key, algorithms=[alg], audience=expected.audience, issuer=expected.issuer, leeway=LEEWAY,
            options={"require": ["exp", "iat", "iss", "aud", "sub"], "verify_iat": True,
                     "verify_nbf": True, "strict_aud": False})
    except jwt.InvalidSignatureError:
        raise TokenRefused("signature") from None
    except (jwt.ExpiredSignatureError, jwt.ImmatureSignatureError):
        raise TokenRefused("expired") from None
    except jwt.InvalidIssuerError:
        raise TokenRefused("issuer") from None
    except jwt.InvalidAudienceError:
        raise TokenRefused("audience") from None
    except (jwt.PyJWTError, ValueError, TypeError):
        raise TokenRefused("invalid") from None
    iat = claims.get("iat")
    if not isinstance(iat, int | float) or iat > time.time() + LEEWAY:
        raise TokenRefused("expired")
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    azp = claims.get("azp")
    if (len(audiences) > 1 or azp is not None) and azp != expected.client_id:
        raise TokenRefused("audience")
    nonce = claims.get("nonce")
    if not isinstance(nonce, str) or not expected.nonce or not constant_time_equals(nonce, expected.nonce):
        raise TokenRefused("nonce")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise TokenRefused("invalid")
    return claims
