"""Fuzzed bodies on the client formats' routes, each on an OpenAI, an Anthropic and a Gemini channel
(native where the channel speaks the format, converted elsewhere): Anthropic messages and
count_tokens, Gemini generateContent, streamGenerateContent (SSE and the JSON array), countTokens,
embedContent and batchEmbedContents, OpenAI Responses and its compaction. Never a 5xx, refusals in
the format's own error shape, nothing charged for them."""
from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.relay.fuzz.strategies import HEADER_VALUES, JSON, mutated
from tests.relay.fuzz.world import CHAT_MODELS, GEMINI_EMBEDDING, World
from tests.upstream.providers.claude.fake_anthropic_models import sign

pytestmark = pytest.mark.asyncio(loop_scope="module")
FUZZ = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

PNG = "iVBORw0KGgo="
ANTHROPIC = {
    "model": "gpt-4o", "max_tokens": 100, "stream": False, "temperature": 1, "stop_sequences": ["END"],
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
    "metadata": {"user_id": "u1"}, "tool_choice": {"type": "auto"},
    "tools": [{"name": "get_weather", "description": "Weather of a city", "input_schema": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                  "data": PNG}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "A city.", "signature": sign("A city.")},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": "sunny"}]}]}],
}
ANTHROPIC_EXTRA = ("thinking", "top_p", "top_k", "output_config", "cache_control", "service_tier", "container")
GEMINI = {
    "contents": [
        {"role": "user", "parts": [{"text": "What is this?"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"sky": "sunny"}}}]}],
    "systemInstruction": {"parts": [{"text": "Be brief."}]},
    "generationConfig": {"temperature": 0.5, "maxOutputTokens": 100, "stopSequences": ["END"],
                         "thinkingConfig": {"thinkingBudget": 1024}},
    "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "Weather of a city", "parameters": {
        "type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}]}],
    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
}
GEMINI_EXTRA = ("safetySettings", "cachedContent", "generation_config", "system_instruction")
RESPONSES = {
    "model": "gpt-4o", "instructions": "Be brief.", "max_output_tokens": 100, "stream": False, "store": False,
    "tool_choice": "auto", "reasoning": {"effort": "low"}, "text": {"format": {"type": "text"}},
    "tools": [{"type": "function", "name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is this?"},
                                                        {"type": "input_image",
                                                         "image_url": f"data:image/png;base64,{PNG}"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}],
}
RESPONSES_EXTRA = ("temperature", "top_p", "parallel_tool_calls", "user", "truncation", "include", "metadata",
                   "max_tool_calls", "top_logprobs", "service_tier")


async def post(world: World, path: str, body: Any, shape: str, headers: dict[str, str]) -> None:
    resp = await world.client.post(path, data=orjson.dumps(body), headers={**headers,
                                                                             "Content-Type": "application/json"})
    world.last = await world.check(resp, shape, world.last)


def anthropic_headers(world: World) -> dict[str, str]:
    return {"x-api-key": world.key, "anthropic-version": "2023-06-01"}


def google_headers(world: World) -> dict[str, str]:
    return {"x-goog-api-key": world.key}


@st.composite
def with_model(draw: st.DrawFn, base: dict[str, Any], extra: tuple[str, ...]) -> dict[str, Any]:
    return draw(mutated({**base, "model": draw(st.sampled_from(CHAT_MODELS))}, extra))


@FUZZ
@given(body=with_model(ANTHROPIC, ANTHROPIC_EXTRA))
async def test_anthropic_messages(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/messages", body, "anthropic", anthropic_headers(world))


@FUZZ
@given(body=with_model(ANTHROPIC, ANTHROPIC_EXTRA))
async def test_anthropic_count_tokens(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/messages/count_tokens", body, "anthropic", anthropic_headers(world))


GEMINI_ACTIONS = ("generateContent", "streamGenerateContent?alt=sse", "streamGenerateContent", "countTokens")


@FUZZ
@given(model=st.sampled_from(CHAT_MODELS), action=st.sampled_from(GEMINI_ACTIONS),
       prefix=st.sampled_from(["/v1beta", "/v1"]), body=mutated(GEMINI, GEMINI_EXTRA))
async def test_gemini_generate(world: World, model: str, action: str, prefix: str, body: dict[str, Any]) -> None:
    await post(world, f"{prefix}/models/{model}:{action}", body, "gemini", google_headers(world))


@FUZZ
@given(batch=st.booleans(), body=mutated({"content": {"parts": [{"text": "one"}]}, "outputDimensionality": 8,
                                          "taskType": "RETRIEVAL_DOCUMENT"}, ("title",)))
async def test_gemini_embeddings(world: World, batch: bool, body: dict[str, Any]) -> None:
    if batch:
        body = {"requests": [{**body, "model": f"models/{GEMINI_EMBEDDING}"}, body]}
    action = "batchEmbedContents" if batch else "embedContent"
    await post(world, f"/v1beta/models/{GEMINI_EMBEDDING}:{action}", body, "gemini", google_headers(world))


@FUZZ
@given(body=mutated({"requests": [{"model": f"models/{GEMINI_EMBEDDING}", "content": {"parts": [{"text": "a"}]}}]}))
async def test_gemini_batch_embeddings(world: World, body: dict[str, Any]) -> None:
    await post(world, f"/v1beta/models/{GEMINI_EMBEDDING}:batchEmbedContents", body, "gemini",
               google_headers(world))


@FUZZ
@given(body=with_model(RESPONSES, RESPONSES_EXTRA), compact=st.booleans())
async def test_responses(world: World, body: dict[str, Any], compact: bool) -> None:
    if compact:
        body = {k: v for k, v in body.items() if k not in ("stream", "store", "max_output_tokens", "tool_choice")}
    path = "/v1/responses/compact" if compact else "/v1/responses"
    await post(world, path, body, "openai", {"Authorization": f"Bearer {world.key}"})


ROUTES = (("/v1/messages", "anthropic"), ("/v1/messages/count_tokens", "anthropic"),
          ("/v1beta/models/gpt-4o:generateContent", "gemini"), ("/v1beta/models/gpt-4o:countTokens", "gemini"),
          (f"/v1beta/models/{GEMINI_EMBEDDING}:batchEmbedContents", "gemini"),
          (f"/v1beta/models/{GEMINI_EMBEDDING}:embedContent", "gemini"),
          ("/v1/responses", "openai"), ("/v1/responses/compact", "openai"))


@FUZZ
@given(route=st.sampled_from(ROUTES), body=JSON)
async def test_any_json_anywhere(world: World, route: tuple[str, str], body: Any) -> None:
    path, shape = route
    headers = {"anthropic": anthropic_headers(world), "gemini": google_headers(world)}.get(
        shape, {"Authorization": f"Bearer {world.key}"})
    await post(world, path, body, shape, headers)


@FUZZ
@given(route=st.sampled_from(ROUTES), name=st.sampled_from([
    b"Authorization", b"x-api-key", b"x-goog-api-key", b"anthropic-version", b"anthropic-beta", b"Accept-Language"]),
       value=HEADER_VALUES, keyed=st.booleans())
async def test_headers(world: World, route: tuple[str, str], name: bytes, value: bytes, keyed: bool) -> None:
    path, shape = route
    body = {"/v1/messages": ANTHROPIC, "/v1/messages/count_tokens": ANTHROPIC, "/v1/responses": RESPONSES,
            "/v1/responses/compact": {k: v for k, v in RESPONSES.items() if k not in ("stream", "store",
                                                                                    "max_output_tokens",
                                                                                    "tool_choice")}}.get(path)
    if body is None:
        body = {"requests": [{"content": {"parts": [{"text": "a"}]}}]} if "batch" in path else \
            {"content": {"parts": [{"text": "a"}]}} if "embedContent" in path else GEMINI
    headers = [(name, value), (b"Content-Type", b"application/json")]
    if keyed and name != b"x-api-key":
        headers.append((b"x-api-key", world.key.encode()))
    if name != b"anthropic-version":
        headers.append((b"anthropic-version", b"2023-06-01"))
    status, raw = await world.raw(path, headers, orjson.dumps(body))
    world.last = await world.check_raw(status, raw, shape, world.last)
