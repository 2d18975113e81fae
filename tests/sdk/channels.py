"""The channels of the matrix, each a strict fake provider behind a recorder, and what each one's
second request must hold: the reasoning state it emitted on the first turn, replayed exactly (a
Claude thinking block with its signature, a Gemini thought signature on its function call, DeepSeek's
reasoning_content, an OpenAI reasoning item's encrypted_content), the call's arguments and the tool's
result; and the usage it reported, in the billing formula's terms."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from api.upstream.catalogue import ChannelType
from api.upstream.reasoning import GEMINI_SKIP_SIGNATURE
from tests.sdk.recorder import Exchange
from tests.sdk.scenario import CALL_ARGS, TOOL_NAME, TOOL_RESULT
from tests.upstream.providers.agent_script import Script
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI
from tests.upstream.providers.openai.fake_responses import FakeResponses


@dataclass(frozen=True)
class Usage:
    """What the provider reported, as the billing formula reads it."""

    prompt: int  # every input token, cache reads and writes included
    completion: int  # every output token, reasoning included
    cached: int = 0
    cache_writes: int = 0


@dataclass(frozen=True)
class ChannelKit:
    name: str
    type: ChannelType
    model: str
    make: Callable[[Script], Any]  # a fake provider (with `app()` and `key`) playing the script
    # The first request leaves the model thinking: asked explicitly, or left to a model that thinks
    # by default (Gemini 3 Pro, gpt-5 and deepseek-reasoner do; an explicit "off" fails it).
    thinks: Callable[[Exchange], bool]
    replayed: Callable[[Exchange, Exchange, bool], None]  # (first, second, client carries state) → assert
    usage: Callable[[Exchange], Usage]


def _walk(value: Any) -> list[Any]:
    """The value, everything nested in it, and what its JSON strings decode to."""
    found = [value]
    if isinstance(value, dict):
        found += [v for item in value.values() for v in _walk(item)]
    elif isinstance(value, list):
        found += [v for item in value for v in _walk(item)]
    elif isinstance(value, str) and value.startswith(("{", "[")):
        try:
            found += _walk(orjson.loads(value))
        except orjson.JSONDecodeError:
            pass
    return found


def holds_result(value: Any) -> bool:
    """Whether the tool's result is in `value`, however the format wraps it (text, parts, an object)."""
    result = orjson.loads(TOOL_RESULT)
    return any(v == TOOL_RESULT or v == result for v in _walk(value))


SCHEMA_KEYS = ("input_schema", "parameters", "parametersJsonSchema", "parameters_json_schema")


def declared_schema(body: Any, name: str) -> dict[str, Any]:
    """The JSON Schema of the tool `name` as declared in a request of any of the formats (Claude's
    input_schema, OpenAI's parameters, chat's function object, Gemini's declarations in either spelling)."""
    for node in _walk(body):
        if isinstance(node, dict) and node.get("name") == name:
            for key in SCHEMA_KEYS:
                if isinstance(node.get(key), dict):
                    return dict(node[key])
    raise AssertionError(f"no tool {name} declared in {body}")


# -- Claude (Anthropic Messages) -----------------------------------------------------------------


def claude_blocks(exchange: Exchange) -> list[dict[str, Any]]:
    """The content blocks Claude emitted, rebuilt from the event stream when streamed."""
    payloads = exchange.payloads()
    if not exchange.streamed:
        return list(payloads[0]["content"])
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event in payloads:
        kind, index = event.get("type"), event.get("index", -1)
        if kind == "content_block_start":
            blocks[index] = dict(event["content_block"])
        elif kind == "content_block_delta":
            delta, block = event["delta"], blocks[index]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = block.get("signature", "") + delta["signature"]
            elif delta["type"] == "input_json_delta":
                partial[index] = partial.get(index, "") + delta["partial_json"]
    for index, text in partial.items():
        blocks[index]["input"] = orjson.loads(text) if text else {}
    return [blocks[i] for i in sorted(blocks)]


def claude_replayed(first: Exchange, second: Exchange, carries: bool) -> None:
    """Claude's thinking blocks back exactly (text and signature) ahead of the tool_use, which pairs
    with the tool_result (ids are the client's to keep: a format without call ids gets new ones)."""
    emitted = claude_blocks(first)
    thinking = [_thinking_keys(b) for b in emitted if b["type"] in ("thinking", "redacted_thinking")]
    assert thinking and [b["type"] for b in emitted if b["type"] == "tool_use"] == ["tool_use"], emitted
    messages = second.body["messages"]
    assistant = next(m for m in messages if m["role"] == "assistant")
    content = assistant["content"] if isinstance(assistant["content"], list) else []
    sent_thinking = [_thinking_keys(b) for b in content if b.get("type") in ("thinking", "redacted_thinking")]
    # Exactly the blocks Claude made, also for a client that dropped them (the gateway kept them:
    # api/relay/kept_reasoning.py), and leading the turn.
    assert sent_thinking == thinking, content
    assert content[0].get("type") in ("thinking", "redacted_thinking"), content
    uses = [b for b in content if b.get("type") == "tool_use"]
    assert [(u["name"], u["input"]) for u in uses] == [(TOOL_NAME, CALL_ARGS)], content
    results = [b for m in messages if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [uses[0]["id"]], messages
    assert holds_result(results[0].get("content")), results


def _thinking_keys(block: dict[str, Any]) -> dict[str, Any]:
    return {k: block[k] for k in ("type", "thinking", "signature", "data") if k in block}


def claude_usage(exchange: Exchange) -> Usage:
    payloads = exchange.payloads()
    if exchange.streamed:
        usage = dict(next(p["message"]["usage"] for p in payloads if p.get("type") == "message_start"))
        for p in payloads:
            if p.get("type") == "message_delta":
                usage.update({k: v for k, v in (p.get("usage") or {}).items() if v is not None})
    else:
        usage = payloads[0]["usage"]
    read = usage.get("cache_read_input_tokens") or 0
    write = usage.get("cache_creation_input_tokens") or 0
    return Usage(usage["input_tokens"] + read + write, usage["output_tokens"], read, write)


def claude_thinks(exchange: Exchange) -> bool:
    """Asked explicitly: what the Claude fake answers thinking blocks to."""
    thinking = exchange.body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("adaptive", "enabled")


# -- Gemini ---------------------------------------------------------------------------------------


def gemini_parts(exchange: Exchange) -> list[dict[str, Any]]:
    return [part for payload in exchange.payloads() for candidate in payload.get("candidates") or ()
            for part in (candidate.get("content") or {}).get("parts") or ()]


def gemini_replayed(first: Exchange, second: Exchange, carries: bool) -> None:
    emitted = gemini_parts(first)
    (call,) = [p for p in emitted if "functionCall" in p]
    assert call.get("thoughtSignature"), emitted  # Gemini 3 signs its first function call
    contents = second.body["contents"]
    sent = [p for c in contents if c.get("role") == "model" for p in c.get("parts") or () if "functionCall" in p]
    calls = [(p["functionCall"]["name"], p["functionCall"].get("args")) for p in sent]
    assert calls == [(TOOL_NAME, CALL_ARGS)], f"the model's call is not in the history sent back: {contents}"
    # The signature Gemini issued, also for a client that dropped it (kept by the gateway), never the placeholder.
    assert sent[0].get("thoughtSignature") == call["thoughtSignature"] != GEMINI_SKIP_SIGNATURE, sent
    responses = [p["functionResponse"] for c in contents if c.get("role") == "user" for p in c.get("parts") or ()
                 if "functionResponse" in p]
    assert [r["name"] for r in responses] == [TOOL_NAME], contents
    assert holds_result(responses[0].get("response")), responses


def gemini_usage(exchange: Exchange) -> Usage:
    usage = [p["usageMetadata"] for p in exchange.payloads() if p.get("usageMetadata")][-1]
    output = (usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0)
    return Usage(usage.get("promptTokenCount") or 0, output, usage.get("cachedContentTokenCount") or 0)


def gemini_thinks(exchange: Exchange) -> bool:
    """Gemini 3 Pro thinks unless given a zero budget (read in either spelling: the API parses protobuf
    JSON, which takes the proto field names too; google-genai sends `thinking_level`, `include_thoughts`)."""
    body = exchange.body
    generation = body.get("generationConfig") or body.get("generation_config") or {}
    config = generation.get("thinkingConfig") or generation.get("thinking_config") or {}
    return config.get("thinkingBudget", config.get("thinking_budget")) != 0


# -- OpenAI chat completions (DeepSeek thinking mode, OpenAI) -------------------------------------


def chat_message(exchange: Exchange) -> dict[str, Any]:
    """The assistant message the upstream emitted, rebuilt from the chunks when streamed."""
    payloads = exchange.payloads()
    if not exchange.streamed:
        return dict(payloads[0]["choices"][0]["message"])
    message: dict[str, Any] = {"reasoning_content": "", "content": "", "tool_calls": {}}
    for chunk in payloads:
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            message["reasoning_content"] += delta.get("reasoning_content") or ""
            message["content"] += delta.get("content") or ""
            for piece in delta.get("tool_calls") or ():
                call = message["tool_calls"].setdefault(piece["index"], {"function": {"arguments": ""}})
                call["id"] = piece.get("id") or call.get("id")
                function = piece.get("function") or {}
                call["function"]["name"] = function.get("name") or call["function"].get("name")
                call["function"]["arguments"] += function.get("arguments") or ""
    message["tool_calls"] = [message["tool_calls"][i] for i in sorted(message["tool_calls"])]
    return message


def chat_replayed(first: Exchange, second: Exchange, carries: bool, reasoning: bool) -> None:
    """The assistant turn with its tool call (paired with the tool message), and, where the provider
    wants it back (DeepSeek thinking mode: 400 otherwise, api-docs.deepseek.com/guides/thinking_mode),
    the reasoning_content it emitted."""
    emitted = chat_message(first)
    assert len(emitted["tool_calls"]) == 1, emitted
    messages = second.body["messages"]
    (assistant,) = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    calls = [(c["function"]["name"], orjson.loads(c["function"]["arguments"])) for c in assistant["tool_calls"]]
    assert calls == [(TOOL_NAME, CALL_ARGS)], assistant
    if reasoning:
        assert emitted.get("reasoning_content"), emitted
        # A client whose library kept nothing may get an empty placeholder, never someone else's text.
        allowed = {emitted["reasoning_content"]} if carries else {emitted["reasoning_content"], ""}
        assert assistant.get("reasoning_content") in allowed, assistant
    else:
        assert "reasoning_content" not in assistant, assistant
    tools = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == [assistant["tool_calls"][0]["id"]], messages
    assert holds_result(tools[0]["content"]), tools


def chat_usage(exchange: Exchange) -> Usage:
    usage = [p["usage"] for p in exchange.payloads() if p.get("usage")][-1]
    details = usage.get("prompt_tokens_details") or {}
    cached = usage.get("prompt_cache_hit_tokens", details.get("cached_tokens")) or 0
    return Usage(usage["prompt_tokens"], usage["completion_tokens"], cached)


# -- OpenAI Responses (the native route of Responses clients to an OpenAI channel) ----------------


def responses_output(exchange: Exchange) -> list[dict[str, Any]]:
    payloads = exchange.payloads()
    if not exchange.streamed:
        return list(payloads[0]["output"])
    return list(next(p["response"]["output"] for p in payloads if p.get("type") == "response.completed"))


def responses_replayed(first: Exchange, second: Exchange) -> None:
    emitted = responses_output(first)
    reasoning = [i for i in emitted if i["type"] == "reasoning"]
    (call,) = [i for i in emitted if i["type"] == "function_call"]
    assert reasoning and all(i.get("encrypted_content") for i in reasoning), emitted
    items = second.body["input"]
    sent = [i for i in items if isinstance(i, dict) and i.get("type") == "reasoning"]
    assert [i["encrypted_content"] for i in sent] == [i["encrypted_content"] for i in reasoning], items
    calls = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call"]
    assert [(c["call_id"], c["name"], orjson.loads(c["arguments"])) for c in calls] == [
        (call["call_id"], TOOL_NAME, CALL_ARGS)], items
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [call["call_id"]] and holds_result(outputs[0]["output"]), items


def responses_usage(exchange: Exchange) -> Usage:
    payloads = exchange.payloads()
    usage = payloads[0]["usage"] if not exchange.streamed else next(
        p["response"]["usage"] for p in payloads if p.get("type") == "response.completed")
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
    return Usage(usage["input_tokens"], usage["output_tokens"], cached)


def openai_replayed(first: Exchange, second: Exchange, carries: bool) -> None:
    if second.path.endswith("/responses"):
        responses_replayed(first, second)
    else:  # chat completions: OpenAI returns no reasoning there, so there is none to send back
        chat_replayed(first, second, carries, reasoning=False)


def openai_usage(exchange: Exchange) -> Usage:
    return responses_usage(exchange) if exchange.path.endswith("/responses") else chat_usage(exchange)


def openai_thinks(exchange: Exchange) -> bool:
    """gpt-5 reasons at its default effort unless told `none`."""
    if exchange.path.endswith("/responses"):
        return (exchange.body.get("reasoning") or {}).get("effort") != "none"
    return exchange.body.get("reasoning_effort") != "none"


def deepseek_replayed(first: Exchange, second: Exchange, carries: bool) -> None:
    chat_replayed(first, second, carries, reasoning=True)


def deepseek_thinks(exchange: Exchange) -> bool:
    """deepseek-reasoner thinks unless thinking is disabled (api-docs.deepseek.com/guides/thinking_mode)."""
    return (exchange.body.get("thinking") or {}).get("type") != "disabled"


# -- the channels ----------------------------------------------------------------------------------


# Usage each fake reports, with cache reads (and Claude's cache writes) so the cache ratios are billed too.
CLAUDE_USAGE = {"input_tokens": 30, "output_tokens": 12, "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 20}
GEMINI_USAGE = {"promptTokenCount": 140, "candidatesTokenCount": 8, "thoughtsTokenCount": 5,
                "cachedContentTokenCount": 100, "totalTokenCount": 153}


def _claude(script: Script) -> FakeClaude:
    return FakeClaude(script=script, usage=dict(CLAUDE_USAGE))


def _gemini(script: Script) -> FakeGemini:
    return FakeGemini(script=script, usage=dict(GEMINI_USAGE))


def _deepseek(script: Script) -> FakeOpenAI:
    return FakeOpenAI(script=script, mode="deepseek", cached=16)


@dataclass
class OpenAIPlatform:
    """OpenAI's chat completions and Responses API behind one base URL and key, playing one script."""

    chat: FakeOpenAI
    responses: FakeResponses

    @property
    def key(self) -> str:
        return self.chat.key

    def app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat.chat)
        app.router.add_post("/v1/responses", self.responses.responses)
        return app


def _openai(script: Script) -> OpenAIPlatform:
    chat = FakeOpenAI(script=script, cached=16)
    return OpenAIPlatform(chat, FakeResponses(key=chat.key, script=script))


CLAUDE = ChannelKit("claude", ChannelType.ANTHROPIC, "claude-opus-5-5", _claude, claude_thinks,
                    claude_replayed, claude_usage)
GEMINI = ChannelKit("gemini", ChannelType.GEMINI, "gemini-3-pro-preview", _gemini, gemini_thinks,
                    gemini_replayed, gemini_usage)
DEEPSEEK = ChannelKit("deepseek", ChannelType.DEEPSEEK, "deepseek-reasoner", _deepseek, deepseek_thinks,
                      deepseek_replayed, chat_usage)
OPENAI = ChannelKit("openai", ChannelType.OPENAI, "gpt-5", _openai, openai_thinks, openai_replayed,
                    openai_usage)
KITS = (CLAUDE, GEMINI, DEEPSEEK, OPENAI)
