"""Volcengine's OpenAPI signature (HMAC-SHA256), the signing of every `*.volcengineapi.com` call.

It is AWS Signature Version 4 with other names (volcengine.com/docs/6369/67269, "签名方法"; the same
steps in volcengine/volc-sdk-python volcengine/auth/SignerV4.py): the canonical request is SigV4's
(method, URI, sorted query, lower-cased sorted headers, their names, the payload's SHA-256: reused from
api.upstream.signing.sigv4, the URI encoded once); the string to sign is `HMAC-SHA256`, the `X-Date`
(`YYYYMMDDTHHMMSSZ`, UTC), the scope `YYYYMMDD/<region>/<service>/request` and the canonical request's
SHA-256; the key is HMAC over date, region, service and `request` starting from the secret key as it is
(no prefix); the header is `Authorization: HMAC-SHA256 Credential=<AK>/<scope>, SignedHeaders=…,
Signature=…`. `X-Content-Sha256` (the payload's SHA-256) is sent and signed, as Volcengine's SDKs do.
Tested against the worked examples of docs/6369/67269 and docs/6369/67270.
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime

from api.upstream.signing.sigv4 import canonical_request, headers_to_sign

ALGORITHM = "HMAC-SHA256"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    key = secret_key.encode()
    for part in (date, region, service, "request"):
        key = _hmac(key, part)
    return key


def string_to_sign(x_date: str, scope: str, canonical: str) -> str:
    return "\n".join([ALGORITHM, x_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes, *, access_key: str, secret_key: str,
         region: str, service: str, now: datetime, payload_header: bool = True) -> dict[str, str]:
    """The headers to send: the caller's, `X-Date`, `X-Content-Sha256` (unless `payload_header` is
    False) and `Authorization`; every one of them is signed, with `host` (aiohttp sends the same)."""
    x_date = now.strftime("%Y%m%dT%H%M%SZ")
    payload_hash = hashlib.sha256(body or b"").hexdigest()
    out = {**headers, "X-Date": x_date}
    if payload_header:
        out["X-Content-Sha256"] = payload_hash
    canonical, signed = canonical_request(method, url, headers_to_sign(url, out), payload_hash, double_encode=False)
    scope = f"{x_date[:8]}/{region}/{service}/request"
    signature = hmac.new(signing_key(secret_key, x_date[:8], region, service),
                         string_to_sign(x_date, scope, canonical).encode(), hashlib.sha256).hexdigest()
    out["Authorization"] = f"{ALGORITHM} Credential={access_key}/{scope}, SignedHeaders={signed}, Signature={signature}"
    return out
