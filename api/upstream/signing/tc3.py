"""Tencent Cloud API signature v3 (TC3-HMAC-SHA256).

canonical request = method, path, query, the signed headers (lower-case `name:value` lines), their
names, and the SHA-256 of the payload; string to sign = algorithm, timestamp, scope
(`date/service/tc3_request`), SHA-256 of the canonical request; the signing key is derived from
`"TC3" + secret_key` by HMAC over the UTC date, the service and `tc3_request`.
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import UTC, datetime

ALGORITHM = "TC3-HMAC-SHA256"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def canonical_request(payload: bytes, headers: Mapping[str, str], method: str = "POST", path: str = "/",
                      query: str = "") -> tuple[str, str]:
    """(canonical request, signed header names); `headers` are the headers to sign."""
    signed = sorted((name.lower(), value.strip()) for name, value in headers.items())
    lines = "".join(f"{name}:{value}\n" for name, value in signed)
    names = ";".join(name for name, _ in signed)
    return f"{method}\n{path}\n{query}\n{lines}\n{names}\n{_sha256(payload)}", names


def signature(secret_key: str, service: str, timestamp: int, canonical: str) -> str:
    date = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")
    to_sign = f"{ALGORITHM}\n{timestamp}\n{date}/{service}/tc3_request\n{_sha256(canonical)}"
    key = _hmac(_hmac(_hmac(("TC3" + secret_key).encode(), date), service), "tc3_request")
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def authorization(secret_id: str, secret_key: str, service: str, timestamp: int, payload: bytes,
                  headers: Mapping[str, str], method: str = "POST", path: str = "/", query: str = "") -> str:
    """The `Authorization` header value of a request signed with these headers (host included)."""
    canonical, names = canonical_request(payload, headers, method, path, query)
    date = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")
    return (f"{ALGORITHM} Credential={secret_id}/{date}/{service}/tc3_request, SignedHeaders={names}, "
            f"Signature={signature(secret_key, service, timestamp, canonical)}")
