"""Zhipu's API token: the key `id.secret` signs a short-lived HS256 JWT (header `sign_type: SIGN`,
claims `api_key`, `exp` and `timestamp` in milliseconds); only the JWT travels, never the secret. The
JWT is registered with the masking step (api/relay/masking.py) as it is made."""
from __future__ import annotations

import base64
import hashlib
import hmac

import orjson

from api.relay.credentials import Credential
from api.relay.masking import remember

TOKEN_LIFETIME = 3600  # seconds


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def token(key: str, now: float, lifetime: int = TOKEN_LIFETIME) -> Credential:
    ident, _, secret = key.strip().partition(".")
    now_ms = int(now * 1000)
    header = _b64(orjson.dumps({"alg": "HS256", "sign_type": "SIGN"}))
    claims = _b64(orjson.dumps({"api_key": ident, "exp": now_ms + lifetime * 1000, "timestamp": now_ms}))
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    value = f"{header}.{claims}.{_b64(signature)}"
    remember(value, now + lifetime)  # masked in any upstream text while it is valid
    return Credential(value, now + lifetime)
