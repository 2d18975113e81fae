"""The POST to an OAuth token endpoint (Vertex AI's JWT bearer grant, api/upstream/signing/google.py):
the access token and its lifetime, or a RelayError that says whose fault it is (401 when the
endpoint refuses the credentials, so the channel can be auto-disabled; 502 otherwise).
The token is registered with the masking step (api/upstream/masking.py) as it is received."""
from __future__ import annotations

from collections.abc import Mapping

import aiohttp
import orjson

from api.upstream.credentials import Credential
from api.upstream.errors import RelayError
from api.upstream.masking import remember

MAX_ANSWER = 64 * 1024
DEFAULT_LIFETIME = 3600.0


async def exchange(http: aiohttp.ClientSession, url: str, now: float, *, provider: str, refused: str,
                   form: Mapping[str, str] | None = None, timeout: float = 10) -> Credential:
    """`provider` names the endpoint in messages ("the Google token endpoint"); `refused` what it
    refused ("the service account")."""
    try:
        async with http.post(url, data=form, headers={"Accept": "application/json"},
                             timeout=aiohttp.ClientTimeout(total=timeout), allow_redirects=False) as resp:
            raw = await resp.content.read(MAX_ANSWER)
            status = resp.status
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise RelayError(502, f"{provider} failed: {type(exc).__name__}", "upstream_error",
                         "credential_exchange_failed") from exc
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    if status != 200 or not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
        detail = str(data.get("error_description") or data.get("error") or "")[:200] if isinstance(data, dict) else ""
        message = f"{provider} refused {refused} (status {status})" + (f": {detail}" if detail else "")
        if status in (400, 401, 403):
            raise RelayError(401, message, "authentication_error", "credential_exchange_failed")
        raise RelayError(502, message, "upstream_error", "credential_exchange_failed")
    expires_in = data.get("expires_in")
    lifetime = float(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else DEFAULT_LIFETIME
    remember(data["access_token"], now + lifetime)  # masked in any upstream text while it is valid
    return Credential(data["access_token"], now + lifetime)
