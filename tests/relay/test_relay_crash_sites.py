"""Bodies and headers that made the relay answer 500 (hostile inputs): each is now refused
before anything is counted, priced or charged, in the route's own error shape, naming the field; and
an unexpected failure after the pre-charge refunds it and answers 500 in the route's shape, logged."""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
import pytest
import pytest_asyncio

from api import keys
from api.upstream.providers.gemini.adaptor import GeminiAdaptor
from models.enums import Role
from tests.conftest import PREFIX, _delete_prefix
from tests.relay.fakes import make_key, rich_user
from tests.relay.fuzz.world import CLAUDE, GEMINI, GEMINI_EMBEDDING, World, assert_error_shape, open_world

pytestmark = pytest.mark.asyncio(loop_scope="module")
CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
ANTHROPIC = {"model": CLAUDE, "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
RESPONSES = {"model": "gpt-4o", "input": "hi"}
DEEP = b"[" * 300 + b"1" + b"]" * 300  # orjson writes at most 255 levels: written by hand


def deep(body: dict[str, Any], field: bytes) -> bytes:
    """The body with `field` holding a value nested 300 levels deep."""
    return orjson.dumps(body)[:-1] + b',"' + field + b'":{"x":' + DEEP + b"}}"


@pytest.fixture(autouse=True)
def _clean_redis() -> Iterator[None]:
    """The module's gateway keeps its Redis state from test to test (it is cleaned at its end)."""
    yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                redis_sync: Any) -> AsyncIterator[World]:
    try:
        async with open_world("sqlite", request, tmp_path_factory.mktemp("crash")) as world:
            yield world
    finally:
        _delete_prefix(redis_sync, PREFIX)


def headers_of(world: World, shape: str) -> dict[str, str]:
    if shape == "anthropic":
        return {"x-api-key": world.key, "anthropic-version": "2023-06-01"}
    if shape == "gemini":
        return {"x-goog-api-key": world.key}
    return {"Authorization": f"Bearer {world.key}"}


def forwarded(world: World) -> int:
    return sum(len(fake.seen) for fake in world.fakes.values())


# (path, shape, body, the field named); each of the first group answered 500
BODIES = {
    "anthropic messages: 5": ("/v1/messages", "anthropic", {**ANTHROPIC, "messages": 5}, "messages"),
    "anthropic content: true": ("/v1/messages", "anthropic", {**ANTHROPIC, "messages": [
        {"role": "user", "content": True}]}, "messages.0.content"),
    "count_tokens messages: 5": ("/v1/messages/count_tokens", "anthropic", {**ANTHROPIC, "messages": 5}, "messages"),
    "gemini contents: 5": (f"/v1beta/models/{GEMINI}:generateContent", "gemini", {"contents": 5}, "contents"),
    "gemini parts: true": (f"/v1beta/models/{GEMINI}:streamGenerateContent?alt=sse", "gemini", {
        "contents": [{"role": "user", "parts": True}]}, "contents[0].parts"),
    "gemini tools: 5": (f"/v1beta/models/{GEMINI}:countTokens", "gemini", {**GEMINI_BODY, "tools": 5}, "tools"),
    "batchEmbedContents requests: object": (f"/v1beta/models/{GEMINI_EMBEDDING}:batchEmbedContents", "gemini",
                                            {"requests": {"a": 1}}, "requests"),
    "embedContent parts: true": (f"/v1beta/models/{GEMINI_EMBEDDING}:embedContent", "gemini",
                                 {"content": {"parts": True}}, "content.parts"),
    "chat tools: [5]": ("/v1/chat/completions", "openai", {**CHAT, "tools": [5]}, "tools[0]"),
    "chat tools: a string": ("/v1/chat/completions", "openai", {**CHAT, "tools": "x"}, "tools"),
    "chat function name: object": ("/v1/chat/completions", "openai", {**CHAT, "tools": [
        {"type": "function", "function": {"name": {"a": 1}}}]}, "tools[0].function.name"),
    "chat text part: 5": ("/v1/chat/completions", "openai", {**CHAT, "messages": [
        {"role": "user", "content": [{"type": "text", "text": 5}]}]}, "messages[0].content[0].text"),
    "chat tool_call_id: true": ("/v1/chat/completions", "openai", {**CHAT, "messages": [
        {"role": "tool", "tool_call_id": True, "content": "x"}]}, "messages[0].tool_call_id"),
    "chat tool_calls arguments: object": ("/v1/chat/completions", "openai", {**CHAT, "messages": [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}]},
        "messages[0].tool_calls[0].function.arguments"),
    "embeddings input: true": ("/v1/embeddings", "openai", {"model": "text-embedding-3-small", "input": True},
                               "input"),
    "completions prompt: 0.5": ("/v1/completions", "openai", {"model": "gpt-4o", "prompt": 0.5}, "prompt"),
    "rerank documents: 5": ("/v1/rerank", "openai", {"model": "jina-reranker-v2-base-multilingual", "query": "q",
                                                     "documents": 5}, "documents"),
    # after the pre-charge, in the Gemini converter
    "chat to Gemini stop: 5": ("/v1/chat/completions", "openai", {**CHAT, "model": GEMINI, "stop": 5}, "stop"),
    "chat to Gemini tool_calls function: 5": ("/v1/chat/completions", "openai", {**CHAT, "model": GEMINI, "messages": [
        {"role": "assistant", "tool_calls": [{"id": "c", "function": 5}]}]}, "messages[0].tool_calls[0].function"),
    # native pass-through nested deeper than the limit
    "anthropic native 300 deep": ("/v1/messages", "anthropic", deep(ANTHROPIC, b"metadata"), "body"),
    "responses native 300 deep": ("/v1/responses", "openai", deep(RESPONSES, b"metadata"), "body"),
    "gemini native 300 deep": (f"/v1beta/models/{GEMINI}:generateContent", "gemini",
                               deep(GEMINI_BODY, b"cachedContentConfig"), "body"),
    # unhashable values where a value is looked up
    "images size: object": ("/v1/images/generations", "openai", {"model": "dall-e-3", "prompt": "a cat",
                                                                 "size": {"a": 1}}, "size"),
    "images size: list": ("/v1/images/generations", "openai", {"model": "dall-e-3", "prompt": "a cat",
                                                               "size": ["1024x1024"]}, "size"),
    # not a 500 before, but refused by the upstream after the pre-charge, converted without the field,
    # or refused naming the wrong field: now refused first, naming the client's own field
    "anthropic system: 5, native": ("/v1/messages", "anthropic", {**ANTHROPIC, "system": 5}, "system"),
    "anthropic system: 5, converted": ("/v1/messages", "anthropic", {**ANTHROPIC, "model": "gpt-4o", "system": 5},
                                       "system"),
    "gemini generationConfig: x": (f"/v1beta/models/{GEMINI}:generateContent", "gemini", {
        **GEMINI_BODY, "generationConfig": "x"}, "generationConfig"),
    "gemini generationConfig: x, converted": ("/v1beta/models/gpt-4o:generateContent", "gemini", {
        **GEMINI_BODY, "generationConfig": "x"}, "generationConfig"),
    "responses input: true": ("/v1/responses", "openai", {**RESPONSES, "input": True}, "input"),
    "responses local_shell_call action: []": ("/v1/responses", "openai", {**RESPONSES, "input": [
        {"type": "local_shell_call", "call_id": "c", "action": []}]}, "input[0].action"),
    "images quality: list": ("/v1/images/generations", "openai", {"model": "dall-e-3", "prompt": "a cat",
                                                                  "quality": [], "size": "1792x1024"}, "quality"),
}


@pytest.mark.parametrize("case", BODIES)
async def test_refused_before_anything_is_charged(world: World, case: str) -> None:
    path, shape, body, param = BODIES[case]
    seen = forwarded(world)
    raw = body if isinstance(body, bytes) else orjson.dumps(body)
    resp = await world.client.post(path, data=raw, headers={**headers_of(world, shape),
                                                            "Content-Type": "application/json"})
    answer = await resp.json()
    assert resp.status == 400, answer
    world.last = await world.check_raw(resp.status, orjson.dumps(answer), shape, world.last)
    message = answer["error"]["message"]
    assert f"'{param}'" in message, answer
    if shape == "openai":
        assert answer["error"]["param"] == param
    assert forwarded(world) == seen  # never sent upstream


async def test_a_failure_after_the_pre_charge_refunds_it_and_answers_in_the_route_shape(
        world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The last line of defence: an unexpected exception in an adaptor after the reservation."""
    def broken(self: GeminiAdaptor, *args: Any) -> Any:
        raise RuntimeError("an adaptor bug")

    monkeypatch.setattr(GeminiAdaptor, "convert_request", broken)
    monkeypatch.setattr(GeminiAdaptor, "native_request", broken)
    caplog.set_level(logging.ERROR, "api.relay")
    routes = (("/v1/chat/completions", {**CHAT, "model": GEMINI}), ("/v1/messages", {**ANTHROPIC, "model": GEMINI}),
              (f"/v1beta/models/{GEMINI}:generateContent", GEMINI_BODY))
    for path, body in routes:
        resp = await world.client.post(path, json=body, headers=headers_of(world, _shape(path)))
        raw = await resp.read()
        assert resp.status == 500, raw
        assert_error_shape(_shape(path), 500, orjson.loads(raw))
        world.last = await world.unchanged(world.last)  # refunded: nothing taken, the reservation closed
    assert sum("an adaptor bug" in (r.exc_text or "") for r in caplog.records) == len(routes)


def _shape(path: str) -> str:
    return "anthropic" if path.startswith("/v1/messages") else "gemini" if "models/" in path else "openai"


# -- headers ------------------------------------------------------------------------------------------

HEADER_ROUTES = (("/v1/chat/completions", "openai", CHAT), ("/v1/messages", "anthropic", ANTHROPIC),
                 (f"/v1beta/models/{GEMINI}:generateContent", "gemini", GEMINI_BODY))


@pytest.mark.parametrize("name", [b"Authorization", b"x-api-key", b"x-goog-api-key", b"api-key"])
@pytest.mark.parametrize("route", HEADER_ROUTES, ids=lambda r: r[1])
async def test_a_key_header_that_is_not_utf8_is_refused_as_no_valid_key(
        world: World, name: bytes, route: tuple[str, str, dict[str, Any]]) -> None:
    path, shape, body = route
    value = b"Bearer sk-\xff\xfe" if name == b"Authorization" else b"sk-\xff\xfe"
    status, raw = await world.raw(path, [(name, value), (b"Content-Type", b"application/json")], orjson.dumps(body))
    assert status == 401, raw
    world.last = await world.check_raw(status, raw, shape, world.last)


async def test_a_beta_flag_that_is_not_utf8_never_reaches_the_channel_and_is_said(world: World) -> None:
    seen = len(world.fakes["anthropic"].seen)
    status, raw = await world.raw("/v1/messages", [
        (b"x-api-key", world.key.encode()), (b"anthropic-version", b"2023-06-01"),
        (b"anthropic-beta", b"tools-\xff"), (b"Content-Type", b"application/json")], orjson.dumps(ANTHROPIC))
    assert status == 200, raw
    sent = world.fakes["anthropic"].seen[seen:]
    assert len(sent) == 1 and "anthropic-beta" not in {k.lower() for k in sent[0]["headers"]}
    assert b"x-gateway-dropped: anthropic-beta" in world.last_head.lower()  # and said
    world.last = await world.check_raw(status, raw, "anthropic", world.last)


# -- multipart ----------------------------------------------------------------------------------------


def form(*fields: tuple[bytes, bytes, bytes], boundary: bytes = b"gw") -> bytes:
    """(headers of the part after its disposition, its name, its value)."""
    out = b""
    for extra, name, value in fields:
        out += b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"" + name + b"\"" + extra + b"\r\n"
        out += b"\r\n" + value + b"\r\n"
    return out + b"--" + boundary + b"--\r\n"


AUDIO = (b"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg", b"file", b"ID3fake")
FORM = b"multipart/form-data; boundary=gw"
MULTIPART = {
    "a field that is not UTF-8": (FORM, form((b"", b"model", b"whisper-\xff"), AUDIO)),
    "a field in an unknown charset": (FORM, form((b"\r\nContent-Type: text/plain; charset=x-unknown", b"model",
                                                  b"whisper-1"), AUDIO)),
    "no boundary": (b"multipart/form-data", form((b"", b"model", b"whisper-1"), AUDIO)),
    "a truncated body": (FORM, form((b"", b"model", b"whisper-1"), AUDIO)[:-30]),
    "a field name that is not UTF-8": (FORM, form((b"", b"mo\xffdel", b"whisper-1"), AUDIO)),
    "a file name that is not UTF-8": (FORM, form((b"", b"model", b"whisper-1"),
                                                 (b"; filename=\"\xff.mp3\"", b"file", b"ID3fake"))),
}


@pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionHeader")
@pytest.mark.parametrize("case", MULTIPART)
async def test_a_malformed_form_is_refused(world: World, case: str) -> None:
    content_type, body = MULTIPART[case]
    seen = forwarded(world)
    status, raw = await world.raw("/v1/audio/transcriptions", [
        (b"Authorization", f"Bearer {world.key}".encode()), (b"Content-Type", content_type)], body)
    assert status == 400, raw
    world.last = await world.check_raw(status, raw, "openai", world.last)
    assert forwarded(world) == seen


async def test_a_channel_pinned_by_an_id_in_other_digits_is_refused(world: World) -> None:
    """An admin's `sk-<key>-<channel id>` with a superscript two: not a number, not a 500."""
    admin = await rich_user("pinner", role=int(Role.ADMIN))
    token = await make_key(admin)
    resp = await world.client.post("/v1/chat/completions", json=CHAT,
                                   headers={"Authorization": f"Bearer sk-{token.key}-\u00b2"})
    answer = await resp.json()
    assert resp.status == 403 and answer["error"]["code"] == "channel_unavailable", answer


async def test_a_metrics_token_that_is_not_utf8_is_refused(world: World) -> None:
    await world.client.server.app[keys.OPTIONS].update("MetricsToken", "scrape-secret")
    status, raw = await world.raw("/metrics", [(b"Authorization", b"Bearer \xff")], method=b"GET")
    assert status == 403, raw


# Shapes real clients send that the checks must let through (to the upstream, which judges the rest).
ACCEPTED = {
    "older Codex's {content, success} tool output": ("/v1/responses", "openai", {**RESPONSES, "input": [
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": {"content": "failed", "success": False}}]}),
    "an Anthropic search result's source is a URL": ("/v1/messages", "anthropic", {**ANTHROPIC, "model": "gpt-4o",
        "messages": [{"role": "user", "content": [{"type": "search_result", "source": "https://example.com",
                                                   "title": "Example", "content": [{"type": "text", "text": "x"}]}]}]}),
    "a web search error result": ("/v1/messages", "anthropic", {**ANTHROPIC, "model": "gpt-4o", "messages": [
        {"role": "user", "content": "search"},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "srv_1",
             "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"}}]},
        {"role": "user", "content": "go on"}]}),
    "a Gemini schema that is a boolean": (f"/v1beta/models/{GEMINI}:countTokens", "gemini", {**GEMINI_BODY, "tools": [
        {"functionDeclarations": [{"name": "f", "parametersJsonSchema": True}]}]}),
    "google-genai's snake_case": (f"/v1beta/models/{GEMINI}:countTokens", "gemini", {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generation_config": {"thinking_config": {"thinking_budget": 0}, "max_output_tokens": 10}}),
    "a speech voice by id": ("/v1/audio/speech", "openai", {"model": "tts-1", "input": "hi", "voice": {"id": "v1"}}),
    "omni moderation of parts": ("/v1/moderations", "openai", {"model": "text-moderation-latest", "input": [
        {"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}),
    "an image part as a bare URL": ("/v1/chat/completions", "openai", {**CHAT, "messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}]}),
    "a hosted tool without a function": ("/v1/chat/completions", "openai", {**CHAT, "tools": [
        {"type": "web_search"}]}),
}


@pytest.mark.parametrize("case", ACCEPTED)
async def test_accepted_shapes_pass_the_checks(world: World, case: str) -> None:
    path, shape, body = ACCEPTED[case]
    resp = await world.client.post(path, json=body, headers=headers_of(world, shape))
    raw = await resp.read()
    assert resp.status < 500 and b"Invalid value for" not in raw, raw
    world.last = await world.check_raw(resp.status, raw, shape, world.last)
