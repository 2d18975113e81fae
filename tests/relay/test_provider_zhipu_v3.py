# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Zhipu ChatGLM channels (type 16, the v3 model API) through the official openai SDK against a
fake that checks the bare JWT, speaks `invoke` (JSON with quoted text) and `sse-invoke` (`add`
events of plain text, `finish` with the usage in its `meta:` field), and Zhipu's business errors."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api import keys
from api.relay.catalogue import ChannelType
from api.relay.providers.zhipu import V3EventParser
from api.relay.sse import SSEEvent
from api.services import pricing
from models import Channel
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, gateway, make_key, relay_of, rich_user  # noqa: F401
from tests.relay.provider_kit import FakeBase, finish_reasons, sdk, settled_log, stream_chat
from tests.relay.test_provider_openai_format import jwt_claims

MODEL = "chatglm_pro"
KEY = "a1b2c3.s3cr3tValue"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
PIECES = ["你好", "，\n我是", "ChatGLM。"]
USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


@dataclass
class FakeChatGLM(FakeBase):
    secret: str = "s3cr3tValue"
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/paas/v3/model-api/{model}/{action}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        claims = jwt_claims(auth, self.secret) if auth.count(".") == 2 else None
        body = await request.json()
        self.seen.append({"model": request.match_info["model"], "action": request.match_info["action"],
                          "auth": auth, "body": body})
        if claims is None or claims["exp"] < time.time() * 1000:
            return web.json_response({"code": 1002, "success": False,
                                      "msg": "Authorization Token非法，请确认Authorization Token正确传递。"})
        roles = [m.get("role") for m in body.get("prompt") or ()]
        if any(r not in ("user", "assistant") for r in roles) or "messages" in body:
            return web.json_response({"code": 1214, "msg": "prompt 参数非法", "success": False})
        if request.match_info["action"] == "invoke":
            return web.json_response({"code": 200, "msg": "操作成功", "success": True, "data": {
                "request_id": "r1", "task_id": "t-42", "task_status": "SUCCESS",
                "choices": [{"role": "assistant", "content": orjson.dumps("".join(PIECES)).decode()}],
                "usage": USAGE}})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece in PIECES:  # a newline in the text is sent as a second data line
            lines = "".join(f"data:{line}\n" for line in piece.split("\n"))
            await response.write(f"event:add\nid:t-42\n{lines}\n".encode())
        meta = orjson.dumps({"task_status": "SUCCESS", "usage": USAGE, "task_id": "t-42"}).decode()
        await response.write(f"event:finish\nid:t-42\ndata:\nmeta:{meta}\n\n".encode())
        await response.write_eof()
        return response


@pytest.fixture
async def chatglm(aiohttp_server):
    fake = FakeChatGLM()
    fake.server = await aiohttp_server(fake.app())
    return fake


async def chatglm_channel(gateway, fake: FakeChatGLM, **fields) -> Channel:
    return await add_channel(gateway, None, models=MODEL, type=int(ChannelType.ZHIPU), base_url=fake.url,
                             key=fields.pop("key", KEY), **fields)


def test_the_meta_field_becomes_an_event_after_its_own() -> None:
    parser = V3EventParser()
    events = parser.feed(b"event:add\ndata:a\ndata:b\n\nevent:finish\ndata:\nmeta:{\"usage\":{}}\n\n")
    assert events == [SSEEvent(b"a\nb", "add"), SSEEvent(b"", "finish"), SSEEvent(b'{"usage":{}}', "meta")]


async def test_invoke_with_the_bare_jwt_and_billing(gateway, chatglm) -> None:
    await chatglm_channel(gateway, chatglm)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0.2)
    assert answer.choices[0].message.content == "".join(PIECES)  # the quotes of v3's answer removed
    seen = chatglm.seen[0]
    assert (seen["model"], seen["action"]) == (MODEL, "invoke")
    assert not seen["auth"].startswith("Bearer") and jwt_claims(seen["auth"], "s3cr3tValue")["api_key"] == "a1b2c3"
    assert seen["body"] == {"temperature": 0.2, "prompt": [
        {"role": "user", "content": "Be brief."}, {"role": "assistant", "content": "OK."},
        {"role": "user", "content": "Say hello."}]}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (12, 5)
    assert log.quota == pricing.settle_quota(pricing.resolve_price(MODEL), 12, 5)


async def test_sse_invoke_with_multiline_text_and_meta_usage(gateway, chatglm) -> None:
    await chatglm_channel(gateway, chatglm)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(PIECES) and finish_reasons(chunks) == ["stop"]
    assert chatglm.seen[0]["action"] == "sse-invoke" and chatglm.seen[0]["body"]["incremental"] is True
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (12, 5)
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (12, 5)


async def test_a_refused_token_disables_the_channel_and_the_channel_test(gateway, chatglm, root: ApiClient) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    broken = await chatglm_channel(gateway, chatglm, key="a1b2c3.wrong")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="Authorization Token非法"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert relay_of(gateway).index.get(broken.id) is None
    good = await chatglm_channel(gateway, chatglm)
    body = await root.get(f"/api/channel/test/{good.id}")
    assert body["success"], body
    body = await root.get(f"/api/channel/test/{broken.id}")
    assert body["success"] is False and "Authorization Token" in body["message"]
