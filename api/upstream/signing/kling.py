"""Kling's API token: a JWT (HS256, header `{"alg": "HS256", "typ": "JWT"}`) with `iss` = the access key,
`exp` = now + TOKEN_LIFETIME, `nbf` = now - 5, signed with the secret key and sent as
`Authorization: Bearer <jwt>` (Kling's API reference, app.klingai.com/global/dev/document-api/
apiReference/commonInfo, "API authentication"; its Python example signs the same claims)."""
from __future__ import annotations

import base64
import hashlib
import hmac

import orjson

TOKEN_LIFETIME = 1800  # seconds, as Kling's own example signs them


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(access: str, secret: str, now: float) -> tuple[str, int]:
    """(JWT, its expiry) for the key pair: HS256 over {iss, exp, nbf}."""
    expires = int(now) + TOKEN_LIFETIME
    head = _b64(orjson.dumps({"alg": "HS256", "typ": "JWT"}))
    claims = _b64(orjson.dumps({"iss": access, "exp": expires, "nbf": int(now) - 5}))
    signature = hmac.new(secret.encode(), f"{head}.{claims}".encode(), hashlib.sha256).digest()
    return f"{head}.{claims}.{_b64(signature)}", expires
