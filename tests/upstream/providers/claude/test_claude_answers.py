"""Claude answers and streams → the internal form (pure): thinking blocks with their signatures,
citations as annotations, server tools kept out of the tool calls, usage with one-hour cache writes;
Bedrock's model ids and both clouds' native bodies; and the strict fake refusing what Claude refuses."""
from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from api.services.model_name import ModelName
from api.upstream.base import RelayMeta, StreamState, TokenUsage
from api.upstream.catalogue import ChannelType
from api.upstream.decoders import EventStreamDecoder, encode_event_stream_message
from api.upstream.providers.aws.adaptor import BedrockAdaptor, bedrock_model_id
from api.upstream.providers.claude import ClaudeAdaptor
from api.upstream.providers.claude.answer import usage_of
from api.upstream.providers.vertex.adaptor import VertexClaudeAdaptor
from api.upstream.sse import SSEEvent
from tests.upstream.providers.claude.fake_anthropic import REPLY, THINKING, FakeClaude
from tests.upstream.providers.claude.fake_anthropic_models import SEARCH_TITLE, SEARCH_URL, sign

MODEL = "claude-opus-5-5"
USAGE = {"input_tokens": 40, "output_tokens": 12, "cache_read_input_tokens": 1000,
         "cache_creation_input_tokens": 300, "output_tokens_details": {"thinking_tokens": 5},
         "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}}
SEARCH = {"type": "web_search_20250305", "name": "web_search"}
TOOL = {"id": "toolu_7", "name": "get_weather", "input": {"city": "Oslo"}}


def adaptor(stream: bool = False) -> ClaudeAdaptor:
    return ClaudeAdaptor(RelayMeta(1, int(ChannelType.ANTHROPIC), "k", name=ModelName(MODEL, MODEL),
                                   is_stream=stream))


def body(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1000, "messages": [{"role": "user", "content": "Hi"}], **fields}


def test_usage_counts_cache_writes_by_lifetime_and_thinking_tokens() -> None:
    assert usage_of(USAGE) == TokenUsage(1340, 12, cached_tokens=1000, reasoning_tokens=5, cache_creation_tokens=300,
                                         cache_creation_1h_tokens=200)
    without_total = {k: v for k, v in USAGE.items() if k != "cache_creation_input_tokens"}
    assert usage_of(without_total).cache_creation_tokens == 300
    assert usage_of({"input_tokens": 3, "output_tokens": 1}) == TokenUsage(3, 1)


def test_answer_thinking_blocks_citations_and_server_tools() -> None:
    fake = FakeClaude(redacted=True, usage=USAGE)
    answer, usage = adaptor().convert_response(fake.message(body(tools=[SEARCH])))
    message = answer["choices"][0]["message"]
    assert message["content"] == "It is sunny." + REPLY  # the search's own blocks are not text
    assert message["reasoning_content"] == THINKING
    assert message["thinking_blocks"] == [{"type": "thinking", "thinking": THINKING, "signature": sign(THINKING)},
                                          {"type": "redacted_thinking", "data": "redacted:" + sign("redacted")}]
    assert message["annotations"] == [{"type": "url_citation", "url_citation": {
        "start_index": 0, "end_index": len("It is sunny."), "url": SEARCH_URL, "title": SEARCH_TITLE}}]
    assert "tool_calls" not in message and answer["choices"][0]["finish_reason"] == "stop"
    assert usage is not None and usage.cache_creation_1h_tokens == 200
    assert answer["usage"]["prompt_tokens_details"] == {"cached_tokens": 1000, "cache_write_tokens": 300}


def test_answer_tool_call_after_thinking() -> None:
    answer, _ = adaptor().convert_response(FakeClaude(reply="", tool=TOOL).message(body()))
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [{"id": "toolu_7", "type": "function", "function": {
        "name": "get_weather", "arguments": '{"city":"Oslo"}'}}]


def stream_chunks(events: list[dict[str, Any]], claude: ClaudeAdaptor | None = None) -> tuple[list[dict], StreamState]:
    claude = claude or adaptor(stream=True)
    state = StreamState()
    chunks: list[Any] = []
    for event in events:
        chunks += claude.convert_stream_event(SSEEvent(orjson.dumps(event), event["type"]), state)
    return chunks, state


def test_stream_thinking_signature_redacted_citations_and_usage() -> None:
    fake = FakeClaude(redacted=True, usage=USAGE)
    chunks, state = stream_chunks(fake.events(body(tools=[SEARCH])))
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == THINKING
    assert [b for d in deltas for b in d.get("thinking_blocks", ())] == [
        {"index": 0, "type": "thinking", "thinking": "", "signature": sign(THINKING)},
        {"index": 1, "type": "redacted_thinking", "data": "redacted:" + sign("redacted")}]
    assert "".join(d.get("content") or "" for d in deltas) == "It is sunny." + REPLY
    assert [a for d in deltas for a in d.get("annotations", ())] == [{"type": "url_citation", "url_citation": {
        "start_index": 0, "end_index": len("It is sunny."), "url": SEARCH_URL, "title": SEARCH_TITLE}}]
    assert not any("tool_calls" in d for d in deltas)  # the server's search is not the client's tool call
    assert state.done and state.usage == usage_of(USAGE)


def test_stream_tool_call_arguments_only_for_client_tools() -> None:
    chunks, _ = stream_chunks(FakeClaude(reply="", tool=TOOL).events(body()))
    calls = [t for c in chunks for t in c["choices"][0]["delta"].get("tool_calls", ())]
    assert calls[0]["id"] == "toolu_7" and {t["index"] for t in calls} == {0}
    assert orjson.loads("".join(t["function"]["arguments"] for t in calls)) == TOOL["input"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


# -- Bedrock and Vertex ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "region", "expected"), [
    ("claude-3-5-sonnet-20240620", "us-west-2", "anthropic.claude-3-5-sonnet-20240620-v1:0"),
    ("claude-3-5-sonnet-20241022", "us-west-2", "us.anthropic.claude-3-5-sonnet-20241022-v2:0"),
    ("claude-opus-4-6", "eu-central-1", "eu.anthropic.claude-opus-4-6-v1"),
    ("claude-opus-5-5", "ap-northeast-1", "apac.anthropic.claude-opus-5-5"),
    ("claude-fable-5-1", "me-central-1", "global.anthropic.claude-fable-5-1"),
    ("global.anthropic.claude-opus-4-6-v1", "us-east-1", "global.anthropic.claude-opus-4-6-v1"),
    ("arn:aws:bedrock:us-east-1:1:inference-profile/x", "us-east-1", "arn:aws:bedrock:us-east-1:1:inference-profile/x"),
])
def test_bedrock_model_ids_through_inference_profiles(model: str, region: str, expected: str) -> None:
    assert bedrock_model_id(model, region) == expected


def test_bedrock_native_body_and_stream_frames() -> None:
    meta = RelayMeta(1, int(ChannelType.AWS), "AKIA|secret|us-east-1", name=ModelName(upstream=MODEL),
                     other="context-1m")
    bedrock = BedrockAdaptor(meta)
    sent, headers = bedrock.native_request(body(stream=True), {"anthropic-version": "2026-10-21",
                                                                "anthropic-beta": "interleaved,context-1m"})
    assert "model" not in sent and "stream" not in sent and headers == {}
    assert sent["anthropic_version"] == "bedrock-2023-05-31" and sent["anthropic_beta"] == ["context-1m", "interleaved"]
    events = FakeClaude().events(body())
    raw = b"".join(encode_event_stream_message(
        {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"},
        orjson.dumps({"bytes": base64.b64encode(orjson.dumps(e)).decode()})) for e in events)
    decoded = EventStreamDecoder().feed(raw)
    assert bedrock.native_frames(decoded, raw) == b"".join(
        f"event: {e['type']}\ndata: ".encode() + orjson.dumps(e) + b"\n\n" for e in events)


def test_vertex_native_body_keeps_the_betas_as_a_header() -> None:
    vertex = VertexClaudeAdaptor(RelayMeta(1, int(ChannelType.VERTEX_AI), "{}", name=ModelName(upstream=MODEL)))
    sent, headers = vertex.native_request(body(stream=True), {"anthropic-version": "2023-06-01",
                                                               "anthropic-beta": "context-1m"})
    expected = {k: v for k, v in body(stream=True).items() if k != "model"}
    assert sent == {**expected, "anthropic_version": "vertex-2023-10-16"}
    assert headers == {"anthropic-beta": "context-1m"}


# -- the fake refuses what Claude refuses ----------------------------------------------------------------


@pytest.mark.parametrize(("model", "fields", "platform", "refusal"), [
    ("claude-opus-4-6", {"stream_options": {}}, "anthropic", "stream_options: Extra inputs are not permitted"),
    ("claude-opus-4-6", {"stream": True}, "bedrock", "stream: Extra inputs are not permitted"),
    ("claude-sonnet-4-6", {"max_tokens": 64001}, "anthropic", "maximum allowed number of output tokens"),
    ("claude-opus-4-7", {"thinking": {"type": "enabled", "budget_tokens": 2000}}, "anthropic",
     '"thinking.type.enabled" is not supported for this model'),
    ("claude-sonnet-4-5", {"thinking": {"type": "adaptive"}}, "anthropic", '"thinking.type.adaptive" is not'),
    ("claude-opus-5-5", {"thinking": {"type": "disabled"}}, "anthropic", '"thinking.type.disabled" is not'),
    ("claude-opus-5", {"thinking": {"type": "disabled"}, "output_config": {"effort": "max"}}, "anthropic",
     "may not be disabled at effort max"),
    ("claude-haiku-4-5", {"temperature": 0.5, "top_p": 0.9}, "anthropic", "cannot both be specified"),
    ("claude-opus-4-7", {"temperature": 0.5}, "anthropic", "`temperature` is not supported"),
    ("claude-sonnet-4-5", {"temperature": 0.5, "thinking": {"type": "enabled", "budget_tokens": 1024},
                           "max_tokens": 2000}, "anthropic",
     "may only be set to 1 when thinking"),
    ("claude-sonnet-4-5", {"tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "any"},
                           "thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2000}, "anthropic",
     "Thinking may not be enabled when tool_choice forces tool use"),
    ("claude-fable-5-1", {"tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "tool", "name": "f"}},
     "anthropic", "forced tool use is not supported"),
    ("claude-opus-4-6", {"output_config": {"effort": "xhigh"}}, "anthropic", "'xhigh' is not supported"),
    ("claude-opus-4-6", {"output_config": {"format": {"type": "json_schema", "schema": {}}}}, "vertex",
     "structured outputs are disabled"),
    ("claude-opus-5-5", {"tools": [SEARCH]}, "bedrock", "does not match any of the expected tags"),
    ("claude-opus-4-7", {"messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]},
     "anthropic", "role 'system' is not supported on this model"),
    ("claude-opus-5-5", {"messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]},
     "bedrock", "Input should be 'user' or 'assistant'"),
    ("claude-opus-4-6", {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
     "anthropic", "does not support assistant message prefill"),
    ("claude-opus-4-6", {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
     "anthropic", "roles must alternate"),
    ("claude-opus-5-5", {"messages": [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": sign("y")},
                                          {"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}]},
     "anthropic", "Invalid `signature` in `thinking` block"),
    ("claude-opus-4-6", {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "nope", "content": "r"}]}]}, "anthropic", "unexpected `tool_use_id`"),
])
def test_the_fake_refuses_what_claude_refuses(model: str, fields: dict, platform: str, refusal: str) -> None:
    request = body(**fields)
    if platform != "anthropic":
        request.pop("model")
    assert refusal in str(FakeClaude().problem(request, platform, model))
