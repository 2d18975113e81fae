"""AWS Signature Version 4 (the signing of every AWS API request, Bedrock's included).

`sign()` returns the headers to send: the caller's, plus `X-Amz-Date`, `X-Amz-Content-Sha256`
(optional), `X-Amz-Security-Token` (temporary credentials) and `Authorization`. The `host` header is
signed but not returned: aiohttp sends the URL's host itself, and it is the same value.

The canonical URI encodes each path segment per RFC 3986 (unreserved characters kept) and, as AWS
requires for every service but S3, encodes the already-encoded path once more: a Bedrock model id
`anthropic.claude-3-5-sonnet-20240620-v1:0` is sent in the URL as `…-v1%3A0` and appears in the
canonical request as `…-v1%253A0`. Tested against AWS's published SigV4 test suite.
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime
from urllib.parse import quote, unquote, urlsplit

ALGORITHM = "AWS4-HMAC-SHA256"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def url_path_segment(value: str) -> str:
    """One path segment as it must appear in a request URL (`:` → `%3A`, `/` → `%2F`)."""
    return quote(value, safe="-_.~")


def _canonical_uri(path: str, double_encode: bool) -> str:
    if not path:
        return "/"
    segments = path.split("/")
    if double_encode:
        return "/".join(quote(segment, safe="-_.~") for segment in segments)
    return "/".join(quote(unquote(segment), safe="-_.~") for segment in segments)


def _canonical_query(query: str) -> str:
    pairs = []
    for part in query.split("&") if query else ():
        name, _, value = part.partition("=")
        pairs.append((quote(unquote(name), safe="-_.~"), quote(unquote(value), safe="-_.~")))
    return "&".join(f"{n}={v}" for n, v in sorted(pairs))


def _canonical_headers(headers: Mapping[str, str]) -> tuple[str, str]:
    folded: dict[str, list[str]] = {}
    for name, value in headers.items():
        folded.setdefault(name.strip().lower(), []).append(" ".join(str(value).split()))
    names = sorted(folded)
    return "".join(f"{n}:{','.join(folded[n])}\n" for n in names), ";".join(names)


def headers_to_sign(url: str, headers: Mapping[str, str]) -> dict[str, str]:
    """Every header but `Authorization`, with `host` as aiohttp sends it (the port unless 80 or 443)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port and parts.port not in (80, 443):
        host = f"{host}:{parts.port}"
    to_sign = {k: v for k, v in headers.items() if k.lower() != "authorization"}
    if not any(k.lower() == "host" for k in to_sign):
        to_sign["host"] = host
    return to_sign


def canonical_request(method: str, url: str, headers: Mapping[str, str], payload_hash: str,
                      double_encode: bool = True) -> tuple[str, str]:
    """(canonical request, signed headers) of a request whose `headers` include `host`."""
    parts = urlsplit(url)
    canonical_headers, signed = _canonical_headers(headers)
    text = "\n".join([method.upper(), _canonical_uri(parts.path, double_encode), _canonical_query(parts.query),
                      canonical_headers, signed, payload_hash])
    return text, signed


def string_to_sign(amz_date: str, scope: str, canonical: str) -> str:
    return "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])


def signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret_key).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes, *, access_key: str, secret_key: str,
         region: str, service: str, now: datetime, session_token: str | None = None,
         sign_payload_header: bool = True, double_encode: bool = True) -> dict[str, str]:
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date = amz_date[:8]
    payload_hash = hashlib.sha256(body or b"").hexdigest()
    out = dict(headers)
    out["X-Amz-Date"] = amz_date
    if sign_payload_header:
        out["X-Amz-Content-Sha256"] = payload_hash
    if session_token:
        out["X-Amz-Security-Token"] = session_token
    canonical, signed = canonical_request(method, url, headers_to_sign(url, out), payload_hash, double_encode)
    scope = f"{date}/{region}/{service}/aws4_request"
    signature = hmac.new(signing_key(secret_key, date, region, service),
                         string_to_sign(amz_date, scope, canonical).encode(), hashlib.sha256).hexdigest()
    out["Authorization"] = f"{ALGORITHM} Credential={access_key}/{scope}, SignedHeaders={signed}, Signature={signature}"
    return out
