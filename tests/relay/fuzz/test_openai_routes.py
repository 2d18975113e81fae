"""Fuzzed bodies on the OpenAI-format routes (chat on each channel: native and converted; completions,
embeddings, moderations, images, speech, rerank; the forms of transcriptions, translations, image edits
and videos), and client headers of any name: never a 5xx, refusals in OpenAI's
error shape, nothing charged for them."""
from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.relay.fuzz.strategies import HEADER_VALUES, JSON, forms, mutated
from tests.relay.fuzz.world import CHAT_MODELS, CLAUDE, RERANK, World

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              # aiohttp warns about a client's malformed Content-Disposition (and reads no name from it)
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionHeader"),
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionParam")]
FUZZ = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

IMAGE = "data:image/png;base64,iVBORw0KGgo="
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CHAT = {"model": "gpt-4o", "max_tokens": 50, "temperature": 0.5, "stream": False, "stop": ["END"], "user": "u1",
        "tools": [WEATHER], "tool_choice": "auto", "response_format": {"type": "text"},
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                         {"type": "image_url", "image_url": {"url": IMAGE}}]},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "user", "content": "thanks", "name": "alice"}]}
# Fields the gateway or a converter reads that the base body leaves out.
CHAT_EXTRA = ("n", "top_p", "top_k", "presence_penalty", "frequency_penalty", "seed", "stream_options", "logprobs",
              "top_logprobs", "logit_bias", "reasoning_effort", "thinking", "parallel_tool_calls", "functions",
              "function_call", "max_completion_tokens", "modalities", "audio", "prediction", "metadata",
              "web_search_options", "verbosity", "store", "group", "stop_sequences")


async def post(world: World, path: str, body: Any, shape: str = "openai") -> None:
    resp = await world.client.post(path, data=orjson.dumps(body), headers={
        "Authorization": f"Bearer {world.key}", "Content-Type": "application/json"})
    world.last = await world.check(resp, shape, world.last)


@st.composite
def chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    return draw(mutated({**CHAT, "model": draw(st.sampled_from(CHAT_MODELS))}, CHAT_EXTRA))


@FUZZ
@given(body=chat_bodies())
async def test_chat_completions(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/chat/completions", body)


@FUZZ
@given(body=mutated({"model": "gpt-4o", "prompt": ["Say hi", "and bye"], "max_tokens": 20, "stream": False,
                     "suffix": "", "echo": False}, ("n", "best_of", "logprobs", "stop", "temperature")))
async def test_completions(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/completions", body)


@FUZZ
@given(body=mutated({"model": "text-embedding-3-small", "input": ["one", "two"], "encoding_format": "float"},
                    ("dimensions", "user")), gemini=st.booleans())
async def test_embeddings(world: World, body: dict[str, Any], gemini: bool) -> None:
    if gemini and body.get("model") == "text-embedding-3-small":
        body["model"] = "text-embedding-004"
    await post(world, "/v1/embeddings", body)


@FUZZ
@given(body=mutated({"model": "text-moderation-latest", "input": "a sentence"}))
async def test_moderations(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/moderations", body)


@FUZZ
@given(body=mutated({"model": "dall-e-3", "prompt": "a cat", "n": 1, "size": "1024x1024", "quality": "standard",
                     "response_format": "url"}, ("style", "user")))
async def test_images(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/images/generations", body)


@FUZZ
@given(body=mutated({"model": "tts-1", "input": "Say this.", "voice": "alloy", "response_format": "mp3",
                     "speed": 1.0}))
async def test_speech(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/audio/speech", body)


@FUZZ
@given(body=mutated({"model": RERANK, "query": "which one", "documents": ["a", {"text": "b"}], "top_n": 1},
                    ("return_documents",)))
async def test_rerank(world: World, body: dict[str, Any]) -> None:
    await post(world, "/v1/rerank", body)


@FUZZ
@given(path=st.sampled_from(["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/images/generations",
                             "/v1/moderations", "/v1/audio/speech", "/v1/rerank"]), body=JSON)
async def test_any_json_anywhere(world: World, path: str, body: Any) -> None:
    await post(world, path, body)


@FUZZ
@given(path=st.sampled_from(["/v1/audio/transcriptions", "/v1/audio/translations", "/v1/images/edits",
                             "/v1/videos"]), form=forms())
async def test_forms(world: World, path: str, form: tuple[bytes, bytes]) -> None:
    content_type, body = form
    status, raw = await world.raw(path, [(b"Authorization", f"Bearer {world.key}".encode()),
                                         (b"Content-Type", content_type)], body)
    world.last = await world.check_raw(status, raw, "openai", world.last)


@FUZZ
@given(name=st.sampled_from([b"Authorization", b"x-api-key", b"x-goog-api-key", b"api-key", b"mj-api-secret",
                             b"Accept-Language", b"X-Forwarded-For", b"Content-Type"]),
       value=HEADER_VALUES, keyed=st.booleans(),
       path=st.sampled_from(["/v1/chat/completions", "/v1/embeddings", "/pg/chat/completions", "/v1/models"]))
async def test_headers(world: World, name: bytes, value: bytes, keyed: bool, path: str) -> None:
    headers = [(name, value)]
    if keyed and name != b"Authorization":
        headers.append((b"Authorization", f"Bearer {world.key}".encode()))
    if name != b"Content-Type":
        headers.append((b"Content-Type", b"application/json"))
    body = {"model": "text-embedding-3-small", "input": "hi"} if "embeddings" in path else CHAT
    status, raw = await world.raw(path, headers, orjson.dumps(body),
                                  method=b"GET" if path == "/v1/models" else b"POST")
    google = path == "/v1/models" and name == b"x-goog-api-key"  # a Google client: answered in Google's shape
    world.last = await world.check_raw(status, raw, "gemini" if google else "openai", world.last)


# Header names a client may choose: the gateway's own names and those it reads, and any token; not
# those that frame the message (aiohttp's parser answers a bad one itself, before the gateway).
FRAMING = frozenset({b"content-length", b"transfer-encoding", b"content-encoding", b"host", b"connection",
                     b"upgrade", b"expect"})
HEADER_NAMES = (st.sampled_from([b"X-Gateway-Dropped", b"X-Session-Id", b"X-Claude-Code-Session-Id", b"session_id",
                                 b"X-Request-Id", b"Idempotency-Key", b"anthropic-beta", b"anthropic-version",
                                 b"OpenAI-Organization", b"X-Oneapi-Request-Id", b"Cookie", b"X-Real-IP"])
                | st.from_regex(rb"\A[!#$%&'*+.^_`|~0-9A-Za-z-]{1,40}\Z")).filter(lambda n: n.lower() not in FRAMING)


@FUZZ
@given(names=st.lists(HEADER_NAMES, min_size=1, max_size=4), value=HEADER_VALUES,
       path=st.sampled_from(["/v1/chat/completions", "/v1/messages", "/v1/audio/transcriptions"]))
async def test_header_names(world: World, names: list[bytes], value: bytes, path: str) -> None:
    headers = [(name, value) for name in names] + [(b"Authorization", f"Bearer {world.key}".encode())]
    if path == "/v1/audio/transcriptions":
        content_type, body = b"multipart/form-data; boundary=gw", (
            b'--gw\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--gw\r\nContent-Disposition: '
            b'form-data; name="file"; filename="a.wav"\r\n\r\nWAV\r\n--gw--\r\n')
    else:
        content_type, body = b"application/json", orjson.dumps(
            CHAT if path == "/v1/chat/completions" else {"model": CLAUDE, "max_tokens": 20,
                                                          "messages": [{"role": "user", "content": "hi"}]})
    if not any(name.lower() == b"content-type" for name in names):
        headers.append((b"Content-Type", content_type))
    status, raw = await world.raw(path, headers, body)
    world.last = await world.check_raw(status, raw, "anthropic" if path == "/v1/messages" else "openai", world.last)
