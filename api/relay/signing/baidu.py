"""Baidu's access token: the key `ak|sk` is exchanged at `{base}/oauth/2.0/token` (OAuth client
credentials in the query) for a token valid `expires_in` seconds (30 days); requests carry it as
`?access_token=`."""
from __future__ import annotations

from urllib.parse import urlencode

import aiohttp

from api.relay.credentials import Credential
from api.relay.errors import RelayError
from api.relay.masking import mask_secrets
from api.relay.signing import oauth


async def exchange(http: aiohttp.ClientSession, base_url: str, key: str, now: float,
                   timeout: float = 10) -> Credential:
    ak, _, sk = key.strip().partition("|")
    query = urlencode({"grant_type": "client_credentials", "client_id": ak.strip(), "client_secret": sk.strip()})
    try:
        return await oauth.exchange(http, f"{base_url}/oauth/2.0/token?{query}", now, timeout=timeout,
                                    provider="the Baidu token endpoint", refused="the key", default_lifetime=86400.0)
    except RelayError as err:  # the endpoint's own words may quote the client id and secret it was sent
        err.message = mask_secrets(err.message, key, base_url)
        raise
