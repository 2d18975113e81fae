# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The reason a channel was disabled automatically is read by every admin: an upstream refusing the
key while quoting the credential made from it (a Baidu access token, a Zhipu JWT) and the key itself
leaves neither in the reason the worker stores."""
from __future__ import annotations

import orjson
from aiohttp import web

from api import keys
from api.relay.catalogue import ChannelType
from models import Channel
from models.enums import ChannelStatus
from tests.helpers import eventually
from tests.relay.fake_baidu import FakeBaidu
from tests.relay.fakes import add_channel, gateway, headers_for, make_key, rich_user  # noqa: F401

ZHIPU_KEY = "3f1a2b7c.zhipuSecretValue99"


class RefusingBaidu(FakeBaidu):
    """Qianfan refusing the key (IAM error 14), quoting the access token and the client secret."""

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return web.json_response({"error_code": 14, "error_msg": "IAM Certification failed for access_token="
                                  f"{request.query['access_token']} (client {self.ak}, secret {self.sk})"})


def refusing_zhipu(tokens: list[str]) -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        jwt = request.headers.get("Authorization", "").removeprefix("Bearer ")
        tokens.append(jwt)
        return web.json_response({"error": {"code": "1000", "message": f"身份验证失败 token {jwt} key {ZHIPU_KEY}"}},
                                 status=401)

    app = web.Application()
    app.router.add_post("/api/paas/v4/chat/completions", chat)
    return app


async def disabled_reason(channel_id: int) -> str | None:
    row = await Channel.get(id=channel_id)
    return orjson.loads(row.other_info)["status_reason"] if row.status == ChannelStatus.AUTO_DISABLED else None


async def test_disable_reasons_quote_no_derived_credential(gateway, aiohttp_server, worker) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    baidu = RefusingBaidu()
    baidu.server = await aiohttp_server(baidu.app())
    tokens: list[str] = []
    zhipu = await aiohttp_server(refusing_zhipu(tokens))
    on_baidu = await add_channel(gateway, None, models="ERNIE-3.5-8K", type=int(ChannelType.BAIDU),
                                 base_url=baidu.url, key=f"{baidu.ak}|{baidu.sk}")
    on_zhipu = await add_channel(gateway, None, models="glm-4-flash", type=int(ChannelType.ZHIPU_V4), key=ZHIPU_KEY,
                                 base_url=str(zhipu.make_url("")).rstrip("/"))
    token = await make_key(await rich_user())
    for model in ("ERNIE-3.5-8K", "glm-4-flash"):
        resp = await gateway.post("/v1/chat/completions", json={"model": model, "messages": [
            {"role": "user", "content": "hi"}]}, headers=headers_for(token))
        assert resp.status == 401
    baidu_reason = await eventually(lambda: disabled_reason(on_baidu.id), timeout=30)
    zhipu_reason = await eventually(lambda: disabled_reason(on_zhipu.id), timeout=30)
    assert "IAM Certification failed" in baidu_reason and "***" in baidu_reason
    assert baidu.issued[-1] not in baidu_reason and baidu.sk not in baidu_reason
    assert "身份验证失败" in zhipu_reason and "***" in zhipu_reason
    assert tokens[-1] not in zhipu_reason and "zhipuSecretValue99" not in zhipu_reason
