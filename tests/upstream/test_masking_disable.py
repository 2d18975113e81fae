# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The reason a channel was disabled automatically is read by every admin: Vertex AI refusing the
access token made from the channel's service-account key while quoting it, or Google's token
endpoint refusing the service account while quoting the token it issued before, leaves the token
out of the reason the worker stores."""
from __future__ import annotations

import time

import aiohttp
import orjson
import pytest
from aiohttp import web

from api import keys
from api.upstream.catalogue import ChannelType
from api.upstream.masking import DERIVED
from api.upstream.signing import google
from models import Channel
from models.enums import ChannelStatus
from tests.helpers import eventually
from tests.relay.fakes import add_channel, gateway, headers_for, make_key, rich_user  # noqa: F401
from tests.upstream.providers.vertex.fake_vertex import FakeVertex, error

REGION = '{"default": "us-central1"}'


class RefusingVertex(FakeVertex):
    """Vertex refusing the access token it was sent (401 UNAUTHENTICATED), quoting it."""

    async def project_google(self, request: web.Request) -> web.StreamResponse:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        return error(401, "UNAUTHENTICATED", f"Request had invalid authentication credentials: {token} was revoked.")


class RefusingTokenEndpoint(FakeVertex):
    """Google's token endpoint issuing one access token, then refusing the service account, quoting it."""

    async def token(self, request: web.Request) -> web.Response:
        if not self.tokens:
            return await super().token(request)
        return web.json_response({"error": "invalid_grant", "error_description":
                                  f"account disabled, its access token {self.tokens[-1]} revoked"}, status=400)


async def started(aiohttp_server, fake: FakeVertex) -> FakeVertex:
    server = await aiohttp_server(fake.app())
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.fixture(autouse=True)
def no_remembered_credentials():
    """Each test masks the tokens it was issued, not ones left registered by earlier tests."""
    DERIVED.forget_all()
    yield
    DERIVED.forget_all()


async def disabled_reason(channel_id: int) -> str | None:
    row = await Channel.get(id=channel_id)
    return orjson.loads(row.other_info)["status_reason"] if row.status == ChannelStatus.AUTO_DISABLED else None


async def test_disable_reasons_quote_no_access_token(gateway, aiohttp_server, worker) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    api = await started(aiohttp_server, RefusingVertex())
    endpoint = await started(aiohttp_server, RefusingTokenEndpoint(token_prefix="ya29.endpoint-"))
    async with aiohttp.ClientSession() as http:  # the token the endpoint quotes: issued, live, registered
        await google.exchange(http, google.parse_service_account(endpoint.service_account()), time.time())
    on_api = await add_channel(gateway, None, models="gemini-2.0-flash", type=int(ChannelType.VERTEX_AI),
                               base_url=api.url, key=api.service_account(), other=REGION)
    on_endpoint = await add_channel(gateway, None, models="gemini-2.5-flash", type=int(ChannelType.VERTEX_AI),
                                    base_url=endpoint.url, key=endpoint.service_account(), other=REGION)
    token = await make_key(await rich_user())
    for model in ("gemini-2.0-flash", "gemini-2.5-flash"):
        resp = await gateway.post("/v1/chat/completions", json={"model": model, "messages": [
            {"role": "user", "content": "hi"}]}, headers=headers_for(token))
        assert resp.status == 401
    api_reason = await eventually(lambda: disabled_reason(on_api.id), timeout=30)
    endpoint_reason = await eventually(lambda: disabled_reason(on_endpoint.id), timeout=30)
    assert api.tokens == ["ya29.token-1"] and endpoint.tokens == ["ya29.endpoint-1"]
    assert "invalid authentication credentials: *** was revoked" in api_reason, api_reason
    assert "its access token *** revoked" in endpoint_reason, endpoint_reason
    assert "ya29." not in api_reason + endpoint_reason
