"""OpenAI-format targets (OpenAI, Azure, DeepSeek, Kimi, xAI, compatible servers) take what conversion
sends: the conversion rules one by one (output limit, sampling, reasoning, the internal form's
additions, tools, fields OpenAI's chat API does not define), the strict fake's own refusals, and
whole requests from the anthropic and google-genai SDKs (and a plain openai client) through the
gateway to gpt-5, gpt-4o, gpt-4.1 and deepseek-reasoner channels, with X-Gateway-Dropped, the log's
other.dropped and each charge checked to the unit."""
from __future__ import annotations

from dataclasses import fields
from typing import Any

import anthropic
import orjson
import pytest
from aiohttp import ClientSession
from google import genai
from google.genai import types

from api import keys
from api.services.billing import pricing
from api.services.configuration.capabilities import Capability
from api.services.configuration.capability_lookup import capability, validate_overrides
from api.services.configuration.capability_rows import ROWS
from api.services.model_name import ModelName
from api.upstream.base import RelayMeta
from api.upstream.catalogue import ChannelType
from api.upstream.providers.openai import json_schema
from api.upstream.registry import build_adaptor
from models import Token
from tests.relay.fakes import add_channel, drain, make_key, rich_user
from tests.upstream.providers.agent_script import Recorded, read_file_script
from tests.upstream.providers.kit import consume_logs, sdk
from tests.upstream.providers.openai.fake_openai_strict import REPLY, FakeOpenAI

READ_TOOL = {"name": "Read", "description": "Reads a file from the local filesystem.", "input_schema": {
    "$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False,
    "properties": {"file_path": {"type": "string", "description": "The absolute path to the file to read"}},
    "required": ["file_path"]}}
CLAUDE_CODE_SYSTEM = [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.",
                       "cache_control": {"type": "ephemeral"}}]
PRICES = {"ModelRatio": {**pricing.DEFAULT_MODEL_RATIO, "gpt-5": 0.625},
          "CompletionRatio": {**pricing.DEFAULT_COMPLETION_RATIO, "gpt-5": 8},
          "CacheRatio": {**pricing.DEFAULT_CACHE_RATIO, "gpt-5": 0.1}}


def fit(model: str, body: dict[str, Any], inbound: str = "anthropic",
        channel: ChannelType = ChannelType.OPENAI) -> tuple[dict[str, Any], list[str]]:
    """(what the channel's adaptor sends for `body`, its notices)."""
    meta = RelayMeta(channel_id=1, channel_type=int(channel), key="k", name=ModelName(model, model),
                     inbound=inbound, capability=capability(model))
    return build_adaptor(meta).convert_request({"model": model, **body}), meta.notices


HELLO = [{"role": "user", "content": "Hello"}]


# -- the rules, one by one -------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "given", "sent", "notices"), [
    ("gpt-5", {"max_tokens": 64000}, {"max_completion_tokens": 64000}, []),
    ("gpt-5", {"max_tokens": 200000}, {"max_completion_tokens": 128000}, ["max_tokens:clamped"]),
    ("gpt-4o", {"max_tokens": 64000}, {"max_tokens": 16384}, ["max_tokens:clamped"]),
    ("gpt-4.1", {"max_completion_tokens": 64000}, {"max_tokens": 32768}, ["max_completion_tokens:clamped"]),
    ("o3-mini", {"max_completion_tokens": 4000}, {"max_completion_tokens": 4000}, []),
    ("deepseek-reasoner", {"max_tokens": 64000}, {"max_tokens": 64000}, []),
    ("deepseek-chat", {"max_tokens": 64000}, {"max_tokens": 8192}, ["max_tokens:clamped"]),
    ("my-local-model", {"max_completion_tokens": 64000}, {"max_completion_tokens": 64000}, []),
])
def test_the_output_limit_under_the_models_name_and_within_its_cap(
        model: str, given: dict[str, Any], sent: dict[str, Any], notices: list[str]) -> None:
    out, said = fit(model, {"messages": HELLO, **given}, inbound="")
    assert {k: out[k] for k in ("max_tokens", "max_completion_tokens") if k in out} == sent
    assert said == notices


def test_sampling_the_model_refuses_is_left_out_and_explicit_zeros_stay() -> None:
    body = {"messages": HELLO, "temperature": 0, "top_p": 0.9, "stop": ["END"], "presence_penalty": 0,
            "seed": 7, "top_k": 40, "logprobs": None}
    out, notices = fit("gpt-5", body)
    assert ("temperature" in out, "top_p" in out, "stop" in out, out["seed"]) == (False, False, False, 7)
    assert notices == ["temperature", "top_p", "stop", "presence_penalty", "top_k"]  # logprobs: null, nothing lost
    out, notices = fit("gpt-4o", body)
    assert (out["temperature"], out["presence_penalty"], out["stop"]) == (0, 0, ["END"]) and notices == ["top_k"]
    out, notices = fit("my-vllm-model", body, inbound="")  # a plain client's vendor sampling passes
    assert out["top_k"] == 40 and notices == []


@pytest.mark.parametrize(("model", "given", "sent", "notices"), [
    # Claude's thinking → an effort by its budget; disabled → the lowest the model takes
    ("gpt-5", {"thinking": {"type": "enabled", "budget_tokens": 31999}}, {"reasoning_effort": "high"}, []),
    ("gpt-5", {"thinking": {"type": "enabled", "budget_tokens": 1024}}, {"reasoning_effort": "minimal"}, []),
    ("gpt-5.1", {"thinking": {"type": "disabled"}}, {"reasoning_effort": "none"}, []),
    ("gpt-5", {"thinking": {"type": "disabled"}}, {"reasoning_effort": "minimal"}, []),
    ("o3", {"thinking": {"type": "adaptive"}}, {"reasoning_effort": "medium"}, []),
    ("gpt-5.2", {"thinking": {"type": "adaptive"}}, {"reasoning_effort": "medium"}, []),  # its default: none
    # an effort the model does not take → the nearest, said
    ("gpt-5", {"reasoning_effort": "max"}, {"reasoning_effort": "high"}, ["reasoning_effort:max>high"]),
    ("gpt-5.2", {"reasoning_effort": "xhigh", "thinking": {"type": "enabled", "budget_tokens": 2048}},
     {"reasoning_effort": "xhigh"}, []),
    # models without an effort
    ("gpt-4o", {"reasoning_effort": "high", "thinking": {"type": "enabled", "budget_tokens": 9000}}, {},
     ["reasoning_effort", "thinking"]),
    ("o1-mini", {"reasoning_effort": "low"}, {}, ["reasoning_effort"]),
    ("grok-4-0709", {"reasoning_effort": "low"}, {}, ["reasoning_effort"]),
    ("grok-3-mini", {"reasoning_effort": "medium"}, {"reasoning_effort": "high"}, ["reasoning_effort:medium>high"]),
    # DeepSeek's and Kimi's switch
    ("deepseek-reasoner", {"thinking": {"type": "enabled", "budget_tokens": 31999}},
     {"thinking": {"type": "enabled"}}, []),
    ("deepseek-chat", {"reasoning_effort": "none"}, {"thinking": {"type": "disabled"}}, []),
    ("deepseek-chat", {"reasoning_effort": "high"}, {"thinking": {"type": "enabled"}}, ["reasoning_effort"]),
    ("deepseek-v4-pro", {"reasoning_effort": "medium"}, {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
     ["reasoning_effort:medium>high"]),
    ("deepseek-v4-flash", {"reasoning_effort": "xhigh", "thinking": {"type": "disabled"}},
     {"thinking": {"type": "disabled"}}, []),
    ("kimi-k2.6", {"thinking": {"type": "enabled", "keep": "all"}}, {"thinking": {"type": "enabled", "keep": "all"}},
     []),
    # a Claude or Gemini model behind an OpenAI-format channel (another gateway): told by reasoning_effort
    ("claude-opus-5-5", {"thinking": {"type": "enabled", "budget_tokens": 9000}}, {"reasoning_effort": "medium"}, []),
    ("gemini-3-pro-preview", {"reasoning_effort": "low"}, {"reasoning_effort": "low"}, []),
    ("claude-sonnet-4-5", {"thinking": {"type": "disabled"}}, {}, []),
])
def test_reasoning_goes_to_the_control_the_model_has(
        model: str, given: dict[str, Any], sent: dict[str, Any], notices: list[str]) -> None:
    out, said = fit(model, {"messages": HELLO, **given})
    assert {k: out[k] for k in ("reasoning_effort", "thinking") if k in out} == sent
    assert said == notices


def test_a_forced_tool_choice_becomes_auto_where_thinking_refuses_it() -> None:
    tools = [{"type": "function", "function": {"name": "Read", "parameters": READ_TOOL["input_schema"]}}]
    body = {"messages": HELLO, "tools": tools, "tool_choice": "required"}
    out, notices = fit("kimi-k2.6", body, channel=ChannelType.MOONSHOT)
    assert out["tool_choice"] == "auto" and notices == ["tool_choice"]
    out, notices = fit("kimi-k2.6", {**body, "thinking": {"type": "disabled"}}, channel=ChannelType.MOONSHOT)
    assert out["tool_choice"] == "required" and notices == []
    out, notices = fit("gpt-5", body)
    assert out["tool_choice"] == "required" and notices == []


CONVERSATION = [
    {"role": "system", "content": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]},
    {"role": "user", "content": "Read the file."},
    {"role": "assistant", "content": None, "reasoning_content": "I should read it.",
     "thinking_blocks": [{"type": "thinking", "thinking": "I should read it.", "signature": "EqQB"}],
     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"},
                     "extra_content": {"google": {"thought_signature": "c2ln"}}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": [
        {"type": "text", "text": "a picture:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVB"}}]},
    {"role": "user", "content": "Thanks.", "cache_control": {"type": "ephemeral"}},
]


def test_other_providers_state_is_removed_and_reasoning_kept_where_it_goes_back() -> None:
    out, notices = fit("gpt-5", {"messages": CONVERSATION})
    assert out["messages"] == [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": "Read the file."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "a picture:"}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVB"}}]},
        {"role": "user", "content": "Thanks."}]
    assert notices == ["cache_control"]
    out, _ = fit("deepseek-reasoner", {"messages": CONVERSATION}, channel=ChannelType.DEEPSEEK)
    replayed = out["messages"][2]
    assert replayed["reasoning_content"] == "I should read it." and "thinking_blocks" not in replayed
    out, notices = fit("gpt-5.6", {"messages": CONVERSATION})  # OpenAI's own breakpoints
    assert out["messages"][0]["content"] == [
        {"type": "text", "text": "Be brief.", "prompt_cache_breakpoint": {"mode": "explicit"}}]
    assert out["messages"][-1]["content"] == [
        {"type": "text", "text": "Thanks.", "prompt_cache_breakpoint": {"mode": "explicit"}}]
    assert notices == []


def test_a_tool_turn_without_its_reasoning_goes_to_deepseek_with_an_empty_one() -> None:
    """A client that kept no reasoning (LangChain, the openai SDK's stream helper) would get DeepSeek's
    400 "Missing `reasoning_content` field" on every tool loop in thinking mode: the field goes empty."""
    turn = {"role": "assistant", "content": None, "tool_calls": CONVERSATION[2]["tool_calls"][:1]}
    out, notices = fit("deepseek-reasoner", {"messages": [*HELLO, turn]}, inbound="", channel=ChannelType.DEEPSEEK)
    assert out["messages"][1]["reasoning_content"] == "" and notices == ["reasoning_content:missing"]
    out, notices = fit("gpt-5", {"messages": [*HELLO, turn]}, inbound="")
    assert "reasoning_content" not in out["messages"][1]


def test_documents_as_openai_takes_files() -> None:
    parts = [{"type": "file", "file": {"file_url": "https://example.com/report.pdf"},
              "document": {"title": "Report"}},
             {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="},
              "document": {"title": "Q3", "citations": {"enabled": True}}},
             {"type": "file", "file": {"file_id": "file-abc", "filename": "notes.txt"}}]
    out, notices = fit("gpt-4.1", {"messages": [{"role": "user", "content": parts}]})
    assert out["messages"][0]["content"] == [
        {"type": "text", "text": "[document 'Report': https://example.com/report.pdf]"},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "document.pdf"}},
        {"type": "file", "file": {"file_id": "file-abc", "filename": "notes.txt"}}]
    assert notices == ["file_url", "document"]


def test_tools_web_search_and_gemini_schemas() -> None:
    function = {"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "OBJECT", "properties": {"q": {"type": "STRING", "nullable": True},
                                         "tags": {"type": "ARRAY", "items": {"type": "STRING"}}}}},
                "cache_control": {"type": "ephemeral"}}
    search = {"type": "web_search", "max_uses": 3, "user_location": {"type": "approximate", "city": "Paris",
                                                                     "country": "FR"}}
    out, notices = fit("gpt-5", {"messages": HELLO, "tools": [function, search], "tool_choice": "auto"}, "gemini")
    assert out["tools"] == [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": ["string", "null"]},
                                         "tags": {"type": "array", "items": {"type": "string"}}}}}}]
    assert notices == ["cache_control", "tools.web_search"]
    out, notices = fit("gpt-5", {"messages": HELLO, "tools": [search], "tool_choice": "auto"})
    assert "tools" not in out and "tool_choice" not in out and notices == ["tools.web_search"]
    out, notices = fit("gpt-4o-search-preview", {"messages": HELLO, "tools": [search]})
    assert out["web_search_options"] == {"user_location": {"type": "approximate",
                                                           "approximate": {"city": "Paris", "country": "FR"}}}
    assert "tools" not in out and notices == ["tools.web_search.max_uses"]


def test_json_schema_of_geminis_dialect() -> None:
    assert json_schema({"type": "OBJECT", "properties": {"nullable": {"type": "BOOLEAN"}}, "anyOf": [
        {"type": "INTEGER"}], "nullable": True}) == {
        "type": ["object", "null"], "properties": {"nullable": {"type": "boolean"}}, "anyOf": [{"type": "integer"}]}


def test_fields_openai_does_not_define_leave_converted_requests_only() -> None:
    body = {"messages": HELLO, "top_k": 40, "output_config": {"effort": "high"}, "thinking": {"type": "adaptive"},
            "enable_thinking": True}
    out, notices = fit("my-vllm-model", body)
    assert set(out) == {"model", "messages"} and notices == ["top_k", "output_config", "thinking", "enable_thinking"]
    out, notices = fit("my-vllm-model", body, inbound="")
    assert out == {"model": "my-vllm-model", **body} and notices == []


def test_a_plain_request_is_not_copied() -> None:
    body = {"model": "gpt-4o-mini", "messages": HELLO, "max_tokens": 256, "temperature": 0.2,
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}
    out, notices = fit("gpt-4o-mini", body, inbound="")
    assert out == body and out["messages"] is body["messages"] and out["tools"] is body["tools"] and notices == []


def test_every_shipped_row_is_valid_and_effort_for_budgets() -> None:
    listed = {f.name for f in fields(Capability)} - {"pattern"}
    for row in ROWS:
        changes = {name: sorted(getattr(row, name)) if isinstance(getattr(row, name), frozenset)
                   else list(getattr(row, name)) if isinstance(getattr(row, name), tuple) else getattr(row, name)
                   for name in listed}
        assert validate_overrides({row.pattern: changes}) is None, row
    assert [Capability.effort_for(b) for b in (0, 1024, 4000, 8192, 31999, 64000)] == [
        "minimal", "minimal", "low", "medium", "high", "max"]


# -- the strict fake refuses what OpenAI and DeepSeek refuse -----------------------------------------


async def test_the_fake_refuses_as_the_providers_do(aiohttp_server) -> None:
    fake = FakeOpenAI()
    fake.server = await aiohttp_server(fake.app())
    auth = {"Authorization": f"Bearer {fake.key}"}
    call = [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    cases = [
        ({"model": "gpt-4o", "messages": HELLO, "top_k": 3}, "Unrecognized request argument supplied: top_k"),
        ({"model": "gpt-5", "messages": HELLO, "max_tokens": 10},
         "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."),
        ({"model": "gpt-5-mini", "messages": HELLO, "temperature": 0.2},
         "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is "
         "supported."),
        ({"model": "gpt-4o", "messages": HELLO, "max_tokens": 64000},
         "max_tokens is too large: 64000. This model supports at most 16384 completion tokens, whereas you "
         "provided 64000."),
        ({"model": "gpt-5.1", "messages": HELLO, "reasoning_effort": "minimal"},
         "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: "
         "'none', 'low', 'medium', and 'high'."),
        ({"model": "gpt-4", "messages": [{"role": "user", "content": "hi", "cache_control": {}}]},
         "Additional properties are not allowed ('cache_control' was unexpected) - 'messages.0'"),
        ({"model": "o3", "messages": HELLO, "thinking": {"type": "enabled"}}, "Unknown parameter: 'thinking'."),
        ({"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "file", "file": {
            "file_data": "data:application/pdf;base64,JVBERi0="}}]}]},
         "Missing required parameter: 'messages[0].content[0].file.file_id'."),
        ({"model": "gpt-4o", "messages": HELLO, "tools": [{"type": "function", "function": {
            "name": "f", "parameters": {"type": "OBJECT"}}}]},
         "Invalid schema for function 'f': 'OBJECT' is not valid under any of the given schemas."),
        ({"model": "deepseek-reasoner", "messages": [*HELLO, {"role": "assistant", "content": None, "tool_calls": call},
                                                     {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]},
         "Missing `reasoning_content` field in the assistant message at message index 1. For more information, "
         "please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"),
    ]
    async with ClientSession() as session:
        for body, message in cases:
            async with session.post(fake.url + "/v1/chat/completions", json=body, headers=auth) as resp:
                assert (resp.status, (await resp.json())["error"]["message"]) == (400, message), body
        async with session.post(fake.url + "/v1/responses", json={}, headers=auth) as resp:
            assert resp.status == 404 and (await resp.json())["error"]["message"] == "Invalid URL (POST /v1/responses)"
        async with session.get(fake.url + "/v1/models", headers=auth) as resp:
            assert "gpt-5" in [m["id"] for m in (await resp.json())["data"]]


# -- through the gateway ---------------------------------------------------------------------------


async def strict_channel(gateway, aiohttp_server, model: str, channel: ChannelType = ChannelType.OPENAI,
                         **behaviour: Any) -> FakeOpenAI:
    fake = FakeOpenAI(**behaviour)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=model, type=int(channel), base_url=fake.url, key=fake.key)
    options = gateway.server.app[keys.OPTIONS]
    for name, value in PRICES.items():
        await options.update(name, orjson.dumps(value).decode())
    return fake


def claude_client(gateway, token: Token) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}", max_retries=0)


def price_of(model: str) -> pricing.Price:
    return pricing.resolve_price(model, model_ratio=PRICES["ModelRatio"], completion_ratio=PRICES["CompletionRatio"],
                                 cache_ratio=PRICES["CacheRatio"])


def nested_keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for item in value.values() for k in nested_keys(item)}
    if isinstance(value, list):
        return {k for item in value for k in nested_keys(item)}
    return set()


async def test_claude_code_to_gpt_5(gateway, aiohttp_server) -> None:
    fake = await strict_channel(gateway, aiohttp_server, "gpt-5", usage=(1200, 300), cached=1000)
    user = await rich_user()
    token = await make_key(user)
    async with claude_client(gateway, token) as client:
        raw = await client.messages.with_raw_response.create(
            model="gpt-5", max_tokens=64000, system=CLAUDE_CODE_SYSTEM, tools=[READ_TOOL], timeout=60,
            thinking={"type": "enabled", "budget_tokens": 31999}, metadata={"user_id": "user_abc"},
            extra_body={"top_k": 40, "temperature": 1},  # arguments of older SDKs, still in the Messages API
            messages=[{"role": "user", "content": [{"type": "text", "text": "What is in README.md?",
                                                    "cache_control": {"type": "ephemeral"}}]}])
    message = await raw.parse()
    assert [b.type for b in message.content] == ["text"] and message.content[0].text == REPLY
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens, message.usage.output_tokens) == (
        200, 1000, 300)
    (sent,) = fake.seen
    assert (sent["max_completion_tokens"], sent["reasoning_effort"], sent["user"]) == (64000, "high", "user_abc")
    assert not {"max_tokens", "top_k", "temperature", "thinking", "cache_control"} & nested_keys(sent)
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "Read", "description": READ_TOOL["description"], "parameters": READ_TOOL["input_schema"]}}]
    dropped = raw.headers["X-Gateway-Dropped"].split(",")
    assert {"top_k", "temperature", "cache_control"} <= set(dropped)
    await drain(gateway)
    (log,) = await consume_logs(user)
    other = orjson.loads(log.other)
    assert other["dropped"] == dropped and other["inbound_format"] == "anthropic"
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (
        1200, 300, pricing.settle_quota(price_of("gpt-5"), 1200, 300, cached_tokens=1000))


async def test_a_streamed_tool_loop_to_gpt_4o(gateway, aiohttp_server) -> None:
    script = Recorded(read_file_script("/repo/README.md"))
    fake = await strict_channel(gateway, aiohttp_server, "gpt-4o", script=script)
    user = await rich_user()
    token = await make_key(user)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What is in README.md?"}]
    headers = []
    async with claude_client(gateway, token) as client:
        for _ in range(2):
            raw = await client.messages.with_raw_response.create(
                model="gpt-4o", max_tokens=64000, system=CLAUDE_CODE_SYSTEM, tools=[READ_TOOL], stream=True,
                messages=history)
            headers.append(raw.headers["X-Gateway-Dropped"])
            blocks: dict[int, dict[str, Any]] = {}
            async for event in await raw.parse():
                if event.type == "content_block_start":
                    blocks[event.index] = event.content_block.model_dump(exclude_none=True)
                elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    blocks[event.index]["json"] = blocks[event.index].get("json", "") + event.delta.partial_json
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    blocks[event.index]["text"] += event.delta.text
            content = [{k: v for k, v in b.items() if k != "json"} | (
                {"input": orjson.loads(b["json"])} if "json" in b else {}) for _, b in sorted(blocks.items())]
            history.append({"role": "assistant", "content": content})
            if content[-1]["type"] == "tool_use":
                history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": content[-1]["id"],
                                                             "content": "# The README"}]})
    assert history[-1]["content"] == [{"type": "text", "text": 'The file says: "# The README"'}]
    assert [s["max_tokens"] for s in fake.seen] == [16384, 16384]
    assert fake.seen[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_read_1", "content": "# The README"}
    assert [h.split(",") for h in headers] == [["max_tokens:clamped", "cache_control"]] * 2
    await drain(gateway)
    logs = await consume_logs(user)
    quota = pricing.settle_quota(price_of("gpt-4o"), 40, 12)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [(40, 12, quota)] * 2


async def test_deepseek_thinking_goes_back_with_its_tool_call(gateway, aiohttp_server) -> None:
    script = Recorded(read_file_script("/repo/README.md", thinking="The user wants the README."))
    fake = await strict_channel(gateway, aiohttp_server, "deepseek-reasoner", ChannelType.DEEPSEEK, script=script,
                                usage=(50, 20), cached=32)
    user = await rich_user()
    token = await make_key(user)
    history: list[Any] = [{"role": "user", "content": "What is in README.md?"}]
    async with claude_client(gateway, token) as client:
        ask = {"model": "deepseek-reasoner", "max_tokens": 32000, "tools": [READ_TOOL], "timeout": 60,
               "thinking": {"type": "enabled", "budget_tokens": 16000}}
        async with client.messages.stream(**ask, messages=history) as stream:  # the first turn streamed
            first = await stream.get_final_message()
        assert [b.type for b in first.content] == ["thinking", "tool_use"]
        assert first.content[0].thinking == "The user wants the README."
        history += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[1].id,
                                                  "content": "# The README"}]}]
        second = await client.messages.create(**ask, messages=history)
    assert second.content[-1].text == 'The file says: "# The README"'
    replayed = fake.seen[1]["messages"][1]
    assert replayed["reasoning_content"] == "The user wants the README." and "thinking_blocks" not in replayed
    assert [s["thinking"] for s in fake.seen] == [{"type": "enabled"}] * 2
    await drain(gateway)
    quota = pricing.settle_quota(price_of("deepseek-reasoner"), 50, 20, cached_tokens=32)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (50, 20, quota)] * 2


async def test_gemini_cli_to_gpt_4_1(gateway, aiohttp_server) -> None:
    fake = await strict_channel(gateway, aiohttp_server, "gpt-4.1", usage=(64, 16))
    user = await rich_user()
    token = await make_key(user)
    client = genai.Client(api_key=f"sk-{token.key}", http_options=types.HttpOptions(
        base_url=str(gateway.make_url("")), api_version="v1beta"))
    lookup = types.FunctionDeclaration(name="lookup", description="Looks a word up", parameters=types.Schema(
        type=types.Type.OBJECT, properties={"word": types.Schema(type=types.Type.STRING, nullable=True)},
        required=["word"]))
    answer = await client.aio.models.generate_content(
        model="gpt-4.1", contents="Define serendipity.",
        config=types.GenerateContentConfig(max_output_tokens=64000, top_k=40, tools=[types.Tool(
            function_declarations=[lookup])], thinking_config=types.ThinkingConfig(thinking_budget=8192)))
    assert answer.text == REPLY
    (sent,) = fake.seen
    assert sent["max_tokens"] == 32768 and not {"top_k", "thinking", "reasoning_effort"} & set(sent)
    parameters = sent["tools"][0]["function"]["parameters"]
    assert parameters["type"] == "object" and "nullable" not in nested_keys(parameters)
    await drain(gateway)
    (log,) = await consume_logs(user)
    assert {"max_tokens:clamped", "top_k", "reasoning_effort", "thinking"} <= set(orjson.loads(log.other)["dropped"])
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (
        64, 16, pricing.settle_quota(price_of("gpt-4.1"), 64, 16))


async def test_a_plain_openai_client_to_gpt_5(gateway, aiohttp_server) -> None:
    fake = await strict_channel(gateway, aiohttp_server, "gpt-5")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        raw = await client.chat.completions.with_raw_response.create(
            model="gpt-5", messages=HELLO, max_tokens=500, temperature=0.2, reasoning_effort="max")
    assert raw.parse().choices[0].message.content == REPLY
    assert raw.headers["X-Gateway-Dropped"] == "temperature,reasoning_effort:max>high"
    (sent,) = fake.seen
    assert (sent["max_completion_tokens"], sent["reasoning_effort"]) == (500, "high") and "max_tokens" not in sent
    await drain(gateway)
    (log,) = await consume_logs(user)
    assert log.quota == pricing.settle_quota(price_of("gpt-5"), 40, 12)


async def test_a_plain_client_keeps_its_vendor_fields(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="gpt-4o-mini", type=int(ChannelType.CUSTOM),
                      base_url=fake.url + "/custom/{model}/chat")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model="gpt-4o-mini", messages=HELLO,
                                             extra_body={"top_k": 20, "enable_thinking": False})
    assert "top_k" not in fake.seen[0].body and fake.seen[0].body["enable_thinking"] is False


async def test_azure_v1_api_takes_reasoning_models_fields(gateway, aiohttp_server) -> None:
    fake = await strict_channel(gateway, aiohttp_server, "gpt-5,gpt-4o", ChannelType.AZURE)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model="gpt-5", messages=HELLO, max_tokens=100)
        await client.chat.completions.create(model="gpt-4o", messages=HELLO, max_tokens=100)
    assert fake.paths == ["/openai/v1/chat/completions"] * 2  # no api-version on the v1 API
    assert [sent["model"] for sent in fake.seen] == ["gpt-5", "gpt-4o"]
    assert (fake.seen[0]["max_completion_tokens"], fake.seen[1]["max_tokens"]) == (100, 100)
