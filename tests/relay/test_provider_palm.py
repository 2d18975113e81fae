# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Google PaLM 2 channels (type 11): generateMessage, no streaming and no usage upstream — the
gateway streams the whole answer as one chunk and bills its own count."""
from __future__ import annotations

import openai
import orjson
from aiohttp import web

from api import keys
from api.relay.catalogue import ChannelType
from api.relay.tokenizer import count_chat_request, count_text
from api.services import pricing
from models import Log
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401

ANSWER = "Hello from PaLM."
MESSAGES = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Say hello."}]


async def test_palm_answer_and_stream_billed_by_the_local_count(gateway, aiohttp_server) -> None:
    seen: list[dict] = []

    async def generate(request: web.Request) -> web.Response:
        seen.append({"path": request.path, "key": request.headers.get("x-goog-api-key"),
                     "body": await request.json()})
        body = {"candidates": [{"author": "1", "content": ANSWER}],
                "messages": [{"author": "0", "content": "Say hello."}]}
        return web.Response(body=orjson.dumps(body, option=orjson.OPT_INDENT_2), content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1beta2/models/{target}", generate)
    server = await aiohttp_server(app)
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps(
        {**pricing.DEFAULT_MODEL_RATIO, "chat-bison-001": 1}).decode())
    await add_channel(gateway, None, models="chat-bison-001", type=int(ChannelType.PALM), key="palm-key",
                      base_url=str(server.make_url("")).rstrip("/"))
    user = await rich_user()
    token = await make_key(user)
    async with openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}",
                                  max_retries=0) as client:
        answer = await client.chat.completions.create(model="chat-bison-001", messages=MESSAGES, temperature=0)
        stream = await client.chat.completions.create(model="chat-bison-001", messages=MESSAGES, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert answer.choices[0].message.content == ANSWER and text == ANSWER
    prompt_body = {"context": "Be kind.", "messages": [{"author": "0", "content": "Say hello."}]}
    assert seen[0] == {"path": "/v1beta2/models/chat-bison-001:generateMessage", "key": "palm-key",
                       "body": {"prompt": prompt_body, "temperature": 0}}
    await drain(gateway)
    prompt = count_chat_request({"model": "chat-bison-001", "messages": MESSAGES})
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    expected = (prompt, count_text(ANSWER), pricing.settle_quota(pricing.resolve_price("chat-bison-001", model_ratio={
        "chat-bison-001": 1}), prompt, count_text(ANSWER)))
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [expected, expected]
