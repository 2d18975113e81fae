"""Baidu's access token: the key `ak|sk` is exchanged at `{base}/oauth/2.0/token` (OAuth client
credentials) for a token valid `expires_in` seconds (30 days); requests carry it as `?access_token=`."""
from __future__ import annotations

from urllib.parse import urlencode

import aiohttp
import orjson

from api.relay.credentials import Credential
from api.relay.errors import RelayError


async def exchange(http: aiohttp.ClientSession, base_url: str, key: str, now: float,
                   timeout: float = 10) -> Credential:
    ak, _, sk = key.strip().partition("|")
    query = urlencode({"grant_type": "client_credentials", "client_id": ak.strip(), "client_secret": sk.strip()})
    try:
        async with http.post(f"{base_url}/oauth/2.0/token?{query}", timeout=aiohttp.ClientTimeout(total=timeout),
                             headers={"Accept": "application/json"}, allow_redirects=False) as resp:
            raw = await resp.content.read(64 * 1024)
            status = resp.status
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise RelayError(502, f"the Baidu token endpoint failed: {type(exc).__name__}", "upstream_error",
                         "credential_exchange_failed") from exc
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    token = data.get("access_token") if isinstance(data, dict) else None
    if not isinstance(token, str) or not token:
        detail = str(data.get("error_description") or data.get("error") or "")[:200] if isinstance(data, dict) else ""
        message = f"the Baidu token endpoint refused the key (status {status})" + (f": {detail}" if detail else "")
        if status < 500 and isinstance(data, dict):  # an answer about the key itself
            raise RelayError(401, message, "authentication_error", "credential_exchange_failed")
        raise RelayError(502, message, "upstream_error", "credential_exchange_failed")
    expires_in = data.get("expires_in")
    lifetime = float(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else 86400.0
    return Credential(token, now + lifetime)
