# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Through the gateway to a strict OpenAI channel: Claude Code's ~150-character `metadata.user_id`
arrives as a 64-character digest (OpenAI refuses a longer `user`); Gemini CLI's model router (a
`generateJson` whose `responseJsonSchema` uses Gemini's `OBJECT`/`STRING`, which Google accepts
there) and a function declared by `parametersJsonSchema` in that dialect arrive in JSON Schema."""
from __future__ import annotations

import hashlib

import aiohttp
import anthropic

from tests.relay.fakes import gateway, headers_for, make_key, rich_user  # noqa: F401
from tests.upstream.providers.openai.fake_openai_strict import REPLY
from tests.upstream.providers.openai.test_identifiers import CLAUDE_CODE_USER
from tests.upstream.providers.openai.test_openai_target import strict_channel

# What Gemini CLI's classifier asks (packages/core: the model router's `generateJson` call).
ROUTER_SCHEMA = {"type": "OBJECT", "properties": {"reasoning": {"type": "STRING"},
                                                  "model_choice": {"type": "STRING", "enum": ["flash", "pro"]}},
                 "required": ["reasoning", "model_choice"]}


async def test_claude_codes_user_id_reaches_openai_as_a_digest(gateway, aiohttp_server) -> None:
    fake = await strict_channel(gateway, aiohttp_server, "gpt-5", usage=(40, 12))
    user = await rich_user()
    token = await make_key(user)
    async with anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}",
                                        max_retries=0) as client:
        answer = await client.messages.create(model="gpt-5", max_tokens=1024, metadata={"user_id": CLAUDE_CODE_USER},
                                              messages=[{"role": "user", "content": "Hi"}])
    assert answer.content[0].text == REPLY
    assert fake.seen[0]["user"] == hashlib.sha256(CLAUDE_CODE_USER.encode()).hexdigest()


async def test_gemini_clis_router_schema_reaches_openai_in_json_schema(gateway, aiohttp_server) -> None:
    fake = await strict_channel(gateway, aiohttp_server, "gpt-4.1", usage=(64, 16))
    user = await rich_user()
    token = await make_key(user)
    body = {"contents": [{"role": "user", "parts": [{"text": "Route: fix the typo in README.md"}]}],
            "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": ROUTER_SCHEMA},
            "tools": [{"functionDeclarations": [{"name": "lookup", "parametersJsonSchema": {
                "type": "OBJECT", "properties": {"word": {"type": "STRING"}}}}]}]}
    async with aiohttp.ClientSession(headers=headers_for(token)) as session, session.post(
            str(gateway.make_url("/v1beta/models/gpt-4.1:generateContent")), json=body) as resp:
        answer = await resp.json()
    assert resp.status == 200, answer
    (sent,) = fake.seen
    assert sent["response_format"]["json_schema"]["schema"] == {
        "type": "object", "properties": {"reasoning": {"type": "string"},
                                         "model_choice": {"type": "string", "enum": ["flash", "pro"]}},
        "required": ["reasoning", "model_choice"]}
    assert sent["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {"word": {"type": "string"}}}
