"""The internal form → Claude requests (pure), rule by rule, per model and platform; every body the
conversion makes is also checked by the strict fake of that platform (what Claude would refuse)."""
from __future__ import annotations

from typing import Any

import pytest

from api.services.model_name import ModelName
from api.upstream.base import RelayMeta
from api.upstream.catalogue import ChannelType
from api.upstream.providers.aws.adaptor import BedrockAdaptor
from api.upstream.providers.claude import ClaudeAdaptor
from api.upstream.providers.vertex.adaptor import VertexClaudeAdaptor
from api.upstream.reasoning import TEXT, seal
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.claude.fake_anthropic_models import sign

# Adaptive thinking with its text shown (Opus 4.7 and later omit it unless asked).
ADAPTIVE = {"type": "adaptive", "display": "summarized"}

ADAPTORS = {"anthropic": (ClaudeAdaptor, ChannelType.ANTHROPIC, "sk-ant"),
            "bedrock": (BedrockAdaptor, ChannelType.AWS, "AKIA|secret|us-east-1"),
            "vertex": (VertexClaudeAdaptor, ChannelType.VERTEX_AI, "{}")}
USER = {"role": "user", "content": "Hi"}
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                            "parameters": {"type": "object", "properties": {}}}}


def convert(model: str, req: dict[str, Any], platform: str = "anthropic", other: str = "") -> tuple[dict, list[str]]:
    """(the body, what was left out), after the strict fake of `platform` accepted the body."""
    kind, channel_type, key = ADAPTORS[platform]
    meta = RelayMeta(1, int(channel_type), key, name=ModelName(model, model), other=other)
    body = kind(meta).convert_request({"model": model, **req})
    problem = FakeClaude().problem(body, platform, model)
    assert problem is None, problem
    return body, meta.notices


def think(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": sign(text)}


def tool_loop(blocks: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    call = {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    if blocks is not None:
        assistant["thinking_blocks"] = blocks
    return [USER, assistant, {"role": "tool", "tool_call_id": "toolu_1", "content": "-3°C"}]


# -- messages ---------------------------------------------------------------------------------------


def test_leading_system_messages_become_system_blocks_kept_apart_with_their_breakpoints() -> None:
    body, _ = convert("claude-3-5-haiku-20241022", {"messages": [
        {"role": "system", "content": [{"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}},
                                       {"type": "text", "text": "More rules."}]},
        {"role": "developer", "content": "Be brief.", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        {"role": "user", "content": [{"type": "text", "text": "One."}, {"type": "text", "text": "Two.",
                                                                       "cache_control": {"type": "ephemeral"}}]}]})
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    assert body["system"] == [{"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}},
                              {"type": "text", "text": "More rules."},
                              {"type": "text", "text": "Be brief.", "cache_control": one_hour}]
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "One."}, {"type": "text", "text": "Two.", "cache_control": {"type": "ephemeral"}}]}]


@pytest.mark.parametrize(("model", "platform", "as_role"), [
    ("claude-opus-5-5", "anthropic", True), ("claude-opus-4-8", "anthropic", True),
    ("claude-opus-4-7", "anthropic", False), ("claude-opus-5-5", "bedrock", False),
    ("claude-opus-5-5", "vertex", False)])
def test_a_later_system_message_stays_where_it_stands(model: str, platform: str, as_role: bool) -> None:
    body, _ = convert(model, {"messages": [
        {"role": "system", "content": "Be brief."}, USER, {"role": "system", "content": "Now answer in French."},
        {"role": "assistant", "content": "Bonjour."}, {"role": "user", "content": "Again?"}]}, platform)
    assert body["system"] == [{"type": "text", "text": "Be brief."}]
    if as_role:
        assert body["messages"][:3] == [
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {"role": "system", "content": [{"type": "text", "text": "Now answer in French."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Bonjour."}]}]
    else:
        assert body["messages"][0] == {"role": "user", "content": [
            {"type": "text", "text": "Hi"}, {"type": "text", "text": "<system>\nNow answer in French.\n</system>"}]}


def test_a_system_message_after_an_assistant_turn_joins_the_next_user_turn_marked() -> None:
    body, _ = convert("claude-opus-5-5", {"messages": [
        USER, {"role": "assistant", "content": "Hello."}, {"role": "system", "content": "Mind the tone."},
        {"role": "user", "content": "Go on."}]})
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "text", "text": "<system>\nMind the tone.\n</system>"}, {"type": "text", "text": "Go on."}]}


def test_documents_images_and_unreadable_files() -> None:
    body, notices = convert("claude-sonnet-4-6", {"messages": [{"role": "user", "content": [
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0x", "filename": "report.pdf"},
         "document": {"context": "Q3 figures", "citations": {"enabled": True}}, "cache_control": {"type": "ephemeral"}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64,aGVsbG8="}, "document": {"title": "Note"}},
        {"type": "file", "file": {"file_url": "https://example.com/a.pdf"}},
        {"type": "file", "file": {"file_data": "data:image/jpeg;base64,/9j/"}},
        {"type": "file", "file": {"file_id": "file-abc"}},
        {"type": "text", "text": "Summarise."}]}]})
    assert body["messages"][0]["content"] == [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"},
         "title": "report.pdf", "context": "Q3 figures", "citations": {"enabled": True},
         "cache_control": {"type": "ephemeral"}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hello"}, "title": "Note"},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
        {"type": "text", "text": "Summarise."}]
    assert notices == ["file"]


def test_tool_results_keep_text_and_images_apart_with_errors_and_breakpoints() -> None:
    messages = tool_loop(None)
    messages[2] = {"role": "tool", "tool_call_id": "toolu_1", "is_error": True, "cache_control": {"type": "ephemeral"},
                   "content": [{"type": "text", "text": "Map:"},
                               {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]}
    body, _ = convert("claude-3-5-haiku-20241022", {"messages": [*messages, {"role": "user", "content": "And?"}],
                                                     "tools": [{**WEATHER, "cache_control": {"type": "ephemeral"}}]})
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True, "cache_control": {"type": "ephemeral"},
         "content": [{"type": "text", "text": "Map:"},
                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}]},
        {"type": "text", "text": "And?"}]}
    assert body["tools"] == [{"name": "get_weather", "description": "Weather of a city",
                              "input_schema": {"type": "object", "properties": {}},
                              "cache_control": {"type": "ephemeral"}}]


def test_thinking_blocks_go_first_signatures_untouched_others_never() -> None:
    redacted = {"type": "redacted_thinking", "data": "redacted:" + sign("redacted")}
    blocks = [think("Oslo is cold."), redacted, {"type": "thinking", "thinking": "Gemini's", "signature": ""},
              {"type": "thinking", "thinking": "sealed", "signature": seal(TEXT, {"text": "x"})}]
    body, _ = convert("claude-opus-5-5", {"messages": tool_loop(blocks), "tools": [WEATHER]})
    assert body["messages"][1]["content"] == [
        think("Oslo is cold."), redacted,
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]


def test_thinking_blocks_are_not_sent_while_the_model_does_not_think() -> None:
    body, _ = convert("claude-opus-4-7", {"messages": tool_loop([think("Hmm.")]), "tools": [WEATHER]})
    assert body["messages"][1]["content"][0]["type"] == "tool_use" and "thinking" not in body


def test_a_tool_turn_back_without_its_thinking_gets_no_budget() -> None:
    """A client that did not keep the thinking blocks: with a budget, Claude would refuse the turn."""
    body, notices = convert("claude-sonnet-4-5-20250929", {"messages": tool_loop(None), "tools": [WEATHER],
                                                           "reasoning_effort": "high"})
    assert "thinking" not in body and notices == ["thinking"]


# Not Opus 5.5, which thinks every turn and refuses that turn (the gateway's kept state supplies its
# thinking: tests/relay/test_kept_reasoning.py).
@pytest.mark.parametrize("model", ["claude-opus-4-6", "claude-opus-4-7"])
def test_adaptive_thinking_takes_a_tool_turn_without_thinking(model: str) -> None:
    """Adaptive thinking may skip a turn's thinking: the turn goes as it is, thinking on."""
    body, notices = convert(model, {"messages": tool_loop(None), "tools": [WEATHER], "reasoning_effort": "high"})
    assert body["thinking"] == ADAPTIVE and notices == []
    assert body["messages"][1]["content"][0]["type"] == "tool_use"


# -- thinking and effort ------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "req", "thinking", "effort"), [
    ("claude-opus-5-5", {}, ADAPTIVE, None),  # thinks by default: asked only to show its thinking
    ("claude-opus-5-5", {"reasoning_effort": "minimal"}, ADAPTIVE, "low"),
    ("claude-opus-4-7", {"reasoning_effort": "xhigh"}, ADAPTIVE, "xhigh"),
    ("claude-opus-4-6", {"reasoning_effort": "xhigh"}, ADAPTIVE, "max"),  # 4.6 has no xhigh
    ("claude-opus-4-8", {"thinking": {"type": "enabled", "budget_tokens": 10000}}, ADAPTIVE, "medium"),
    ("claude-opus-4-8", {"thinking": {"type": "adaptive", "display": "summarized"}},
     {"type": "adaptive", "display": "summarized"}, None),
    ("claude-opus-4-7", {}, None, None),  # does not think unless asked
    ("claude-opus-5", {"thinking": {"type": "disabled"}}, {"type": "disabled"}, None),
    ("claude-opus-4-7", {"reasoning_effort": "none"}, None, None),
])
def test_adaptive_models_get_adaptive_thinking_and_an_effort_never_a_budget(model, req, thinking, effort) -> None:
    body, _ = convert(model, {"messages": [USER], **req})
    assert body.get("thinking") == thinking
    assert body.get("output_config", {}).get("effort") == effort
    assert body["max_tokens"] == 32000


def test_thinking_cannot_be_switched_off_on_opus_5_5_the_least_effort_instead() -> None:
    body, notices = convert("claude-opus-5-5", {"messages": [USER], "thinking": {"type": "disabled"}})
    assert body["thinking"] == ADAPTIVE and body["output_config"] == {"effort": "low"}
    assert notices == ["thinking.disabled"]


@pytest.mark.parametrize(("req", "budget", "max_tokens"), [
    ({"reasoning_effort": "high"}, 24576, 40576),
    ({"thinking": {"type": "adaptive"}}, 8192, 16000),  # Claude Code's adaptive: a budget for this model
    ({"thinking": {"type": "enabled", "budget_tokens": 500}, "max_tokens": 800}, 1024, 17024),
    ({"reasoning_effort": "low", "max_tokens": 60000}, 2048, 60000),
])
def test_budget_models_get_a_budget_below_max_tokens(req: dict, budget: int, max_tokens: int) -> None:
    body, _ = convert("claude-sonnet-4-5-20250929", {"messages": [USER], **req})
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == max_tokens and "output_config" not in body


def test_the_budget_shrinks_to_fit_a_small_output_cap() -> None:
    body, _ = convert("claude-opus-4-1-20250805", {"messages": [USER], "reasoning_effort": "max"})
    assert body["max_tokens"] == 32000 and body["thinking"]["budget_tokens"] == 32000 - 4096


def test_no_thinking_model_drops_the_request_for_it() -> None:
    body, notices = convert("claude-3-5-haiku-20241022", {"messages": [USER], "reasoning_effort": "high"})
    assert "thinking" not in body and notices == ["reasoning_effort"]


def test_max_tokens_clamped_to_the_model_cap_with_a_notice() -> None:
    body, notices = convert("claude-sonnet-4-6", {"messages": [USER], "max_completion_tokens": 100000})
    assert body["max_tokens"] == 64000 and notices == ["max_tokens"]


# -- sampling, tools ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "req", "kept", "notices"), [
    ("claude-3-5-haiku-20241022", {"temperature": 0, "top_p": 0.5, "top_k": 5}, {"temperature": 0, "top_p": 0.5,
                                                                                "top_k": 5}, []),
    ("claude-haiku-4-5-20251001", {"temperature": 0, "top_p": 0.5}, {"temperature": 0}, ["top_p"]),
    ("claude-opus-4-7", {"temperature": 0.2, "top_p": 0.9, "top_k": 3}, {}, ["temperature", "top_p", "top_k"]),
    ("claude-opus-4-6", {"temperature": 0.2, "top_p": 0.97, "top_k": 3, "reasoning_effort": "low"}, {"top_p": 0.97},
     ["temperature", "top_k"]),
    ("claude-opus-4-6", {"temperature": 0, "presence_penalty": 1, "seed": 7, "n": 1, "logprobs": False},
     {"temperature": 0}, ["presence_penalty", "seed", "logprobs"]),
])
def test_sampling_as_the_model_takes_it(model: str, req: dict, kept: dict, notices: list[str]) -> None:
    body, dropped = convert(model, {"messages": [USER], **req})
    assert {k: body[k] for k in ("temperature", "top_p", "top_k") if k in body} == kept
    assert dropped == notices


@pytest.mark.parametrize(("model", "req", "choice", "notices"), [
    ("claude-3-5-haiku-20241022", {"tool_choice": "required"}, {"type": "any"}, []),
    ("claude-opus-4-7", {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
     {"type": "tool", "name": "get_weather"}, []),
    ("claude-opus-4-7", {"tool_choice": "required", "reasoning_effort": "high"}, {"type": "auto"}, ["tool_choice"]),
    ("claude-fable-5-1", {"tool_choice": "required"}, {"type": "auto"}, ["tool_choice"]),
    ("claude-opus-5-5", {"tool_choice": "none", "parallel_tool_calls": False}, {"type": "none"}, []),
    ("claude-opus-5-5", {"parallel_tool_calls": False}, {"type": "auto", "disable_parallel_tool_use": True}, []),
])
def test_tool_choice_as_the_model_takes_it(model: str, req: dict, choice: dict, notices: list[str]) -> None:
    body, dropped = convert(model, {"messages": [USER], "tools": [WEATHER], **req})
    assert body["tool_choice"] == choice and dropped == notices


@pytest.mark.parametrize(("platform", "sent"), [("anthropic", True), ("vertex", True), ("bedrock", False)])
def test_hosted_web_search_is_claude_s_server_tool_where_the_platform_runs_it(platform: str, sent: bool) -> None:
    search = {"type": "web_search", "max_uses": 3, "allowed_domains": ["example.com"],
              "user_location": {"city": "Oslo", "country": "NO"}}
    body, notices = convert("claude-sonnet-5-5", {"messages": [USER], "tools": [WEATHER, search]}, platform)
    server = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3, "allowed_domains": ["example.com"],
              "user_location": {"type": "approximate", "city": "Oslo", "country": "NO"}}
    assert (server in body["tools"]) is sent and len(body["tools"]) == (2 if sent else 1)
    assert notices == ([] if sent else ["tools.web_search"])


@pytest.mark.parametrize(("model", "platform", "native"), [
    ("claude-opus-4-6", "anthropic", True), ("claude-haiku-4-5-20251001", "bedrock", True),
    ("claude-opus-4-6", "vertex", False), ("claude-3-7-sonnet-20250219", "anthropic", False)])
def test_a_json_schema_is_structured_output_where_there_is_one(model: str, platform: str, native: bool) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    body, _ = convert(model, {"messages": [USER], "response_format": {
        "type": "json_schema", "json_schema": {"name": "place", "schema": schema, "strict": True}}}, platform)
    if native:
        assert body["output_config"]["format"] == {"type": "json_schema", "schema": schema} and "system" not in body
    else:
        assert "output_config" not in body or "format" not in body["output_config"]
        assert body["system"][-1]["text"].endswith('{"type":"object","properties":{"city":{"type":"string"}}}')


def test_fields_claude_does_not_define_are_never_sent() -> None:
    body, notices = convert("claude-opus-5-5", {"messages": [USER], "user": "u-7", "store": True,
                                                "stream_options": {"include_usage": True}, "modalities": ["text"]})
    assert set(body) == {"model", "messages", "max_tokens", "metadata", "thinking"}
    assert body["metadata"] == {"user_id": "u-7"} and notices == ["store", "modalities"]
    assert body["thinking"] == ADAPTIVE  # it thinks by default: asked only to show its thinking


def test_platform_bodies_bedrock_and_vertex() -> None:
    bedrock, _ = convert("claude-opus-5-5", {"messages": [USER], "stream": True}, "bedrock",
                         other="context-1m-2025-08-07")
    assert "model" not in bedrock and "stream" not in bedrock
    assert (bedrock["anthropic_version"], bedrock["anthropic_beta"]) == ("bedrock-2023-05-31",
                                                                         ["context-1m-2025-08-07"])
    vertex, _ = convert("claude-opus-5-5", {"messages": [USER], "stream": True}, "vertex")
    assert "model" not in vertex and vertex["stream"] is True and vertex["anthropic_version"] == "vertex-2023-10-16"
