"""Anthropic Messages in, mapping by mapping: what a request becomes in the internal form, what an
answer becomes for the client (whole and streamed, read back through the SDK's own accumulator),
round trips that give Claude's thinking blocks and Gemini's signatures back exactly, and the body a
Claude-format channel gets."""
from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from anthropic.lib.streaming._messages import accumulate_event

from api.relay.inbound.anthropic import AnthropicInbound
from api.upstream.base import TokenUsage
from api.upstream.catalogue import ChannelType
from api.upstream.reasoning import ANTHROPIC, GEMINI, TEXT, seal, unseal

CLAUDE_SIG = "EqQBCkYIARgCIkBclaudesignature"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def read(**body: Any) -> tuple[dict[str, Any], AnthropicInbound]:
    inbound = AnthropicInbound({"model": "claude-sonnet-4-5", "max_tokens": 100, **body}, None)
    return inbound.openai, inbound


def messages(*items: dict[str, Any], **body: Any) -> list[dict[str, Any]]:
    return read(messages=list(items), **body)[0]["messages"]


def answer(message: dict[str, Any], finish: str = "stop", **usage: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, **usage}}


def stream(chunks: list[dict[str, Any]], usage: TokenUsage | None = None) -> tuple[list[dict[str, Any]], Any]:
    """The writer's events, and the message the SDK's accumulator builds from them."""
    writer = AnthropicInbound({"model": "m"}, None).writer("m", 10)
    raw = writer.frames([{"id": "chatcmpl-s", "choices": [{"index": 0, "delta": d, "finish_reason": f}]}
                         for d, f in chunks]) + writer.finish(usage or TokenUsage(10, 5), None)
    events = [orjson.loads(frame.split(b"data: ", 1)[1]) for frame in raw.split(b"\n\n") if frame]
    snapshot = None
    buffers: dict[int, bytes] = {}
    for ev in events:
        snapshot = accumulate_event(event=ev, current_snapshot=snapshot, json_bufs=buffers)
    return events, snapshot


# -- messages in -----------------------------------------------------------------------------------------


def test_system_prompt_blocks_stay_apart_with_their_cache_breakpoints() -> None:
    system = [{"type": "text", "text": "You are Claude Code."},
              {"type": "text", "text": "Project rules.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    assert messages({"role": "user", "content": "Hi"}, system=system)[0] == {"role": "system", "content": [
        {"type": "text", "text": "You are Claude Code."},
        {"type": "text", "text": "Project rules.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
    assert messages({"role": "user", "content": "Hi"}, system="Be brief.")[0] == {"role": "system",
                                                                                   "content": "Be brief."}


def test_a_system_message_mid_conversation_stays_where_it_stands() -> None:
    out = messages({"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
                   {"role": "system", "content": [{"type": "text", "text": "Reminder."}]},
                   {"role": "user", "content": "three"})
    assert [m["role"] for m in out] == ["user", "assistant", "system", "user"]
    assert out[2] == {"role": "system", "content": "Reminder."}


def test_turn_scoped_system_messages_tools_added_mid_conversation_and_per_turn_effort() -> None:
    """Claude Code's mid-conversation system messages: cleared at the next user turn, tools added
    and removed, the last per-turn effort."""
    added = {"name": "read_file", "description": "Read a file", "input_schema": SCHEMA}
    body, _ = read(tools=[{"name": "grep", "input_schema": SCHEMA}, {"name": "old", "input_schema": SCHEMA}],
                   messages=[
                       {"role": "user", "content": "one"},
                       {"role": "system", "content": "gone", "clear_at": "next_user_message"},
                       {"role": "user", "content": "two"},
                       {"role": "system", "content": [
                           {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": added}},
                           {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "old"}}],
                        "output_config": {"effort": "low"}},
                       {"role": "system", "content": "kept", "clear_at": "next_user_message"}],
                   output_config={"effort": "high"})
    assert [m.get("content") for m in body["messages"]] == ["one", "two", "kept"]
    assert [t["function"]["name"] for t in body["tools"]] == ["grep", "read_file"]
    assert body["reasoning_effort"] == "low"


def test_user_blocks_stay_apart_images_documents_and_cache_breakpoints() -> None:
    cache = {"type": "ephemeral"}
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
           "title": "Spec", "context": "v2", "citations": {"enabled": True}, "cache_control": cache}
    content = [
        {"type": "text", "text": "first"}, {"type": "text", "text": "second", "cache_control": cache},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
        {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
        pdf,
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}},
        {"type": "document", "source": {"type": "url", "url": "https://x.test/b.pdf"}},
        {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "a"},
                                                                        {"type": "text", "text": "b"}]}},
        {"type": "search_result", "source": "https://x.test", "title": "Result",
         "content": [{"type": "text", "text": "found"}]},
    ]
    parts = messages({"role": "user", "content": content})[0]["content"]
    plain = base64.b64encode(b"plain words").decode()
    assert parts == [
        {"type": "text", "text": "first"}, {"type": "text", "text": "second", "cache_control": cache},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="},
         "document": {"title": "Spec", "context": "v2", "citations": {"enabled": True}}, "cache_control": cache},
        {"type": "file", "file": {"file_data": f"data:text/plain;base64,{plain}"}},
        {"type": "file", "file": {"file_url": "https://x.test/b.pdf"}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64," + base64.b64encode(b"a\n\nb").decode()}},
        {"type": "text", "text": "Result (https://x.test)\nfound"},
    ]


def test_a_files_api_image_is_noticed() -> None:
    inbound = AnthropicInbound({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "file", "file_id": "file_1"}}, {"type": "text", "text": "hi"}]}]}, None)
    body = inbound.openai
    assert body["messages"][0]["content"] == "hi"
    inbound.for_channel(body, ChannelType.OPENAI)
    assert inbound.notices == ["image.file"]


def test_tool_results_text_images_errors_and_cache() -> None:
    out = messages(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}},
                                          {"type": "tool_use", "id": "t2", "name": "run", "input": {"x": 1}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "cache_control": {"type": "ephemeral"}, "content": [
                {"type": "text", "text": "the screen"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}]},
            {"type": "tool_result", "tool_use_id": "t2", "content": "exit 1", "is_error": True},
            {"type": "text", "text": "continue"}]})
    assert out[2:] == [
        {"role": "tool", "tool_call_id": "t1", "cache_control": {"type": "ephemeral"}, "content": [
            {"type": "text", "text": "the screen"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]},
        {"role": "tool", "tool_call_id": "t2", "content": "Error: exit 1"},
        {"role": "user", "content": "continue"}]


def test_assistant_thinking_each_to_its_provider() -> None:
    gemini = seal(GEMINI, {"calls": {"t1": "gemini-call-sig"}, "text": "gemini-text-sig"})
    content = [
        {"type": "thinking", "thinking": "Claude's thought.", "signature": CLAUDE_SIG},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "thinking", "thinking": "Gemini's thought.", "signature": gemini},
        {"type": "thinking", "thinking": "DeepSeek's thought.",
         "signature": seal(TEXT, {"text": "DeepSeek's thought."})},
        {"type": "thinking", "thinking": "Old answer.", "signature": ""},
        {"type": "text", "text": "Calling."},
        {"type": "tool_use", "id": "t1", "name": "run", "input": {"cmd": "ls"}},
        {"type": "tool_use", "id": "t2", "name": "run", "input": {}}]
    message = messages({"role": "user", "content": "go"}, {"role": "assistant", "content": content})[1]
    assert message["thinking_blocks"] == content[:2]
    assert message["reasoning_content"] == "Claude's thought.Gemini's thought.DeepSeek's thought.Old answer."
    assert message["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "gemini-call-sig"}}
    assert "extra_content" not in message["tool_calls"][1]
    assert message["extra_content"] == {"google": {"thought_signature": "gemini-text-sig"}}
    assert message["content"] == "Calling." and message["tool_calls"][0]["function"]["arguments"] == '{"cmd":"ls"}'


def test_thinking_effort_and_output_config() -> None:
    body, _ = read(thinking={"type": "enabled", "budget_tokens": 10000})
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10000} and body["reasoning_effort"] == "medium"
    body, _ = read(thinking={"type": "adaptive", "display": "omitted"}, output_config={
        "effort": "xhigh", "format": {"type": "json_schema", "schema": SCHEMA}, "task_budget": 5})
    assert body["thinking"] == {"type": "adaptive", "display": "omitted"} and body["reasoning_effort"] == "xhigh"
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": SCHEMA}}
    assert body["output_config"] == {"task_budget": 5}
    body, _ = read(thinking={"type": "disabled"})
    assert body["thinking"] == {"type": "disabled"} and "reasoning_effort" not in body


def test_output_config_goes_to_claude_channels_only() -> None:
    body, inbound = read(output_config={"task_budget": 5}, service_tier="auto")
    assert inbound.for_channel(body, ChannelType.AWS) is body
    assert inbound.notices == ["service_tier"]
    converted = inbound.for_channel(body, ChannelType.OPENAI)
    assert "output_config" not in converted and inbound.notices == ["service_tier", "output_config.task_budget"]


def test_tools_client_run_hosted_and_server() -> None:
    cache = {"type": "ephemeral"}
    body, inbound = read(tools=[
        {"name": "get", "description": "Get it", "input_schema": SCHEMA, "cache_control": cache, "strict": True},
        {"type": "bash_20250124", "name": "bash"},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        {"type": "memory_20250818", "name": "memory"},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3, "allowed_domains": ["a.test"],
         "user_location": {"type": "approximate", "city": "Paris"}},
        {"type": "web_search_20260318", "name": "web_search", "blocked_domains": ["b.test"]},
        {"type": "web_fetch_20250910", "name": "web_fetch"},
        {"type": "code_execution_20250825", "name": "code_execution"}],
        tool_choice={"type": "tool", "name": "get", "disable_parallel_tool_use": True},
        metadata={"user_id": "u-1"}, stop_sequences=["END"], top_k=5, temperature=0)
    tools = body["tools"]
    assert tools[0] == {"type": "function", "cache_control": cache, "function": {
        "name": "get", "description": "Get it", "parameters": SCHEMA, "strict": True}}
    assert tools[1]["function"]["name"] == "bash"
    assert tools[1]["function"]["parameters"]["properties"]["command"] == {"type": "string"}
    editor = tools[2]["function"]["parameters"]["properties"]["command"]["enum"]
    assert tools[2]["function"]["name"] == "str_replace_based_edit_tool" and "undo_edit" not in editor
    assert "rename" in tools[3]["function"]["parameters"]["properties"]["command"]["enum"]
    assert tools[4:] == [{"type": "web_search", "max_uses": 3, "allowed_domains": ["a.test"],
                          "user_location": {"type": "approximate", "city": "Paris"}},
                         {"type": "web_search", "blocked_domains": ["b.test"]}]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get"}}
    assert body["parallel_tool_calls"] is False
    assert (body["user"], body["stop"], body["top_k"], body["temperature"]) == ("u-1", ["END"], 5, 0)
    inbound.for_channel(body, ChannelType.OPENAI)
    assert inbound.notices == ["tools.web_fetch_20250910", "tools.code_execution_20250825"]


@pytest.mark.parametrize(("choice", "expected"), [({"type": "auto"}, "auto"), ({"type": "any"}, "required"),
                                                 ({"type": "none"}, "none")])
def test_tool_choice(choice: dict[str, Any], expected: str) -> None:
    body, _ = read(tools=[{"name": "get", "input_schema": SCHEMA}], tool_choice=choice)
    assert body["tool_choice"] == expected and "parallel_tool_calls" not in body


def test_a_top_level_cache_breakpoint_marks_the_last_block() -> None:
    out = messages({"role": "user", "content": "Hi"}, cache_control={"type": "ephemeral"})
    assert out[-1]["content"] == [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}]


# -- answers out ------------------------------------------------------------------------------------------


def test_claude_thinking_blocks_are_rendered_as_they_are() -> None:
    blocks = [{"type": "thinking", "thinking": "hm", "signature": CLAUDE_SIG}, {"type": "redacted_thinking",
                                                                               "data": "opaque"}]
    message = AnthropicInbound({"model": "m"}, None).render(answer(
        {"role": "assistant", "content": "Done.", "reasoning_content": "hm", "thinking_blocks": blocks}))
    assert message["content"] == [*blocks, {"type": "text", "text": "Done."}]


def test_reasoning_without_a_claude_signature_gets_a_sealed_one() -> None:
    message = AnthropicInbound({"model": "m"}, None).render(answer(
        {"role": "assistant", "content": "42", "reasoning_content": "Let me think."}))
    thinking = message["content"][0]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "Let me think."
    assert unseal(thinking["signature"]) == (TEXT, {"text": "Let me think."})


def test_gemini_signatures_sealed_by_tool_use_id_and_usage_with_cache_writes() -> None:
    calls = [{"id": "call_a", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'},
              "extra_content": {"google": {"thought_signature": "sigA"}}},
             {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]
    message = AnthropicInbound({"model": "m"}, None).render(answer(
        {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls",
        prompt_tokens_details={"cached_tokens": 3}, cache_creation_input_tokens=4,
        cache_creation={"ephemeral_1h_input_tokens": 1}))
    thinking, first, second = message["content"]
    assert thinking["thinking"] == "" and unseal(thinking["signature"]) == (GEMINI, {"calls": {"call_a": "sigA"}})
    assert (first["id"], first["input"], second["id"]) == ("call_a", {"x": 1}, "call_b")
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 3,
                                "cache_creation_input_tokens": 4,
                                "cache_creation": {"ephemeral_5m_input_tokens": 3, "ephemeral_1h_input_tokens": 1}}


def test_url_annotations_become_citations_on_the_cited_span() -> None:
    text = "Paris is the capital. It is big."
    annotation = {"type": "url_citation", "url_citation": {"url": "https://wiki.test/Paris", "title": "Paris",
                                                           "start_index": 0, "end_index": 21}}
    content = AnthropicInbound({"model": "m"}, None).render(answer(
        {"role": "assistant", "content": text, "annotations": [annotation]}))["content"]
    assert [b["text"] for b in content] == ["Paris is the capital.", " It is big."]
    cited = content[0]["citations"][0]
    assert (cited["type"], cited["url"], cited["cited_text"]) == ("web_search_result_location",
                                                                 "https://wiki.test/Paris", text[:21])


@pytest.mark.parametrize(("finish", "reason"), [("stop", "end_turn"), ("length", "max_tokens"),
                                                ("tool_calls", "tool_use"), ("content_filter", "refusal")])
def test_stop_reasons(finish: str, reason: str) -> None:
    rendered = AnthropicInbound({"model": "m"}, None).render(answer({"role": "assistant", "content": "x"}, finish))
    assert rendered["stop_reason"] == reason


# -- round trips -------------------------------------------------------------------------------------------


def test_round_trip_gives_gemini_its_signatures_back() -> None:
    """A Gemini answer rendered for Claude Code, sent back as history, reads as it came."""
    sent = {"role": "assistant", "content": "Checking.", "reasoning_content": "Plan.",
            "extra_content": {"google": {"thought_signature": "textSig"}},
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'},
                            "extra_content": {"google": {"thought_signature": "callSig"}}}]}
    rendered = AnthropicInbound({"model": "m"}, None).render(answer(sent, "tool_calls"))
    back = messages({"role": "user", "content": "go"}, {"role": "assistant", "content": rendered["content"]})[1]
    assert back == sent


def test_round_trip_gives_claude_its_blocks_back() -> None:
    blocks = [{"type": "thinking", "thinking": "hm", "signature": CLAUDE_SIG},
              {"type": "redacted_thinking", "data": "opaque"}]
    sent = {"role": "assistant", "content": None, "reasoning_content": "hm", "thinking_blocks": blocks,
            "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    rendered = AnthropicInbound({"model": "m"}, None).render(answer(sent, "tool_calls"))
    back = messages({"role": "user", "content": "go"}, {"role": "assistant", "content": rendered["content"]})[1]
    assert back == sent


# -- streams ------------------------------------------------------------------------------------------------


def test_a_stream_of_claude_thinking_text_and_a_tool_call() -> None:
    events, message = stream([
        ({"role": "assistant", "reasoning_content": "Think"}, None),
        ({"reasoning_content": "ing."}, None),
        ({"thinking_blocks": [{"type": "thinking", "thinking": "", "signature": CLAUDE_SIG}]}, None),
        ({"thinking_blocks": [{"type": "redacted_thinking", "data": "opaque"}]}, None),
        ({"content": "Let me run it."}, None),
        ({"tool_calls": [{"index": 0, "id": "toolu_9", "type": "function",
                          "function": {"name": "run", "arguments": '{"cmd":'}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '"ls"}'}}]}, "tool_calls")],
        TokenUsage(10, 5, cached_tokens=2, cache_creation_tokens=3, cache_creation_1h_tokens=3))
    assert [b.model_dump(exclude_none=True) for b in message.content] == [
        {"type": "thinking", "thinking": "Thinking.", "signature": CLAUDE_SIG},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Let me run it."},
        {"type": "tool_use", "id": "toolu_9", "name": "run", "input": {"cmd": "ls"}}]
    assert message.stop_reason == "tool_use"
    usage = events[-2]["usage"]
    assert (usage["input_tokens"], usage["cache_read_input_tokens"], usage["cache_creation"]) == (
        5, 2, {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 3})
    assert [e["delta"]["type"] for e in events if e["type"] == "content_block_delta"].count("signature_delta") == 1


def test_a_gemini_stream_seals_signatures_and_adds_a_block_for_late_ones() -> None:
    """The thinking block closes before Gemini's call signature arrives: an extra thinking block
    (empty text, sealed) goes just before that tool_use."""
    _, message = stream([
        ({"reasoning_content": "Plan."}, None),
        ({"content": "Calling.", "extra_content": {"google": {"thought_signature": "textSig"}}}, None),
        ({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                          "function": {"name": "f", "arguments": "{}"},
                          "extra_content": {"google": {"thought_signature": "callSig"}}}]}, "tool_calls")])
    kinds = [b.type for b in message.content]
    assert kinds == ["thinking", "text", "thinking", "tool_use"]
    first, late = message.content[0], message.content[2]
    # The text's signature came while the thinking block was open: sealed in it.
    assert first.thinking == "Plan." and unseal(first.signature) == (GEMINI, {"text": "textSig"})
    assert late.thinking == "" and unseal(late.signature) == (GEMINI, {"calls": {"call_1": "callSig"}})
    # Sent back as history, the turn reads as it came.
    back = messages({"role": "user", "content": "go"},
                    {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]})[1]
    assert back["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "callSig"}}
    assert back["extra_content"] == {"google": {"thought_signature": "textSig"}}
    assert back["reasoning_content"] == "Plan."


def test_a_signature_arriving_while_thinking_is_open_goes_into_that_block() -> None:
    _, message = stream([({"reasoning_content": "Plan."}, None),
                         ({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"},
                                           "extra_content": {"google": {"thought_signature": "s"}}}]}, None)])
    assert [b.type for b in message.content] == ["thinking", "tool_use"]
    assert unseal(message.content[0].signature) == (GEMINI, {"calls": {"call_1": "s"}})


def test_a_stream_cut_short_ends_with_an_error_event() -> None:
    from api.upstream.errors import RelayError

    writer = AnthropicInbound({"model": "m"}, None).writer("m", 1)
    writer.frames([{"id": "x", "choices": [{"index": 0, "delta": {"reasoning_content": "a"}}]}])
    tail = writer.finish(TokenUsage(1, 1), RelayError(502, "gone", "upstream_error"))
    assert b"signature_delta" in tail and tail.rstrip().endswith(b'"message":"gone"}}')


# -- the native path -----------------------------------------------------------------------------------------


def native(**body: Any) -> tuple[dict[str, Any], AnthropicInbound]:
    inbound = AnthropicInbound({"model": "claude-sonnet-4-5", "max_tokens": 100, **body}, None)
    return inbound.native_body(inbound.body["model"]), inbound


def test_a_body_with_nothing_foreign_goes_as_it_is() -> None:
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [{"type": "thinking", "thinking": "a", "signature": CLAUDE_SIG},
                                                 {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]
    inbound = AnthropicInbound({"model": "claude-sonnet-4-5", "max_tokens": 1, "messages": history,
                                "thinking": {"type": "enabled", "budget_tokens": 2000}}, None)
    assert inbound.native_body("claude-sonnet-4-5") is inbound.body
    renamed = inbound.native_body("claude-sonnet-4-5-20250929")
    assert renamed["model"] == "claude-sonnet-4-5-20250929" and renamed["messages"] is history


def test_other_providers_thinking_is_removed_and_thinking_switched_off_when_the_tool_turn_needs_it() -> None:
    sealed = {"type": "thinking", "thinking": "Gemini's", "signature": seal(GEMINI, {"calls": {"t": "s"}})}
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [sealed, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}]
    body, inbound = native(messages=history, thinking={"type": "enabled", "budget_tokens": 2000})
    assert body["messages"][1]["content"] == [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]
    assert "thinking" not in body and inbound.notices == ["thinking"]
    assert history[1]["content"][0] is sealed  # the client's body is left as it was
    body, inbound = native(messages=history, thinking={"type": "adaptive"}, model="claude-opus-5")
    assert body["thinking"] == {"type": "disabled"}  # a model that thinks by default is told not to


def test_thinking_stays_when_the_last_tool_turn_keeps_its_claude_block() -> None:
    sealed = {"type": "thinking", "thinking": "x", "signature": seal(TEXT, {"text": "x"})}
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": [sealed]},
               {"role": "user", "content": "b"},
               {"role": "assistant", "content": [{"type": "thinking", "thinking": "y", "signature": CLAUDE_SIG},
                                                 {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]
    body, inbound = native(messages=history, thinking={"type": "enabled", "budget_tokens": 2000})
    assert [m["role"] for m in body["messages"]] == ["user", "user", "assistant"]  # the emptied turn is gone
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000} and inbound.notices == []


def test_our_citations_are_removed_before_claude_sees_them() -> None:
    cited = {"type": "url_citation", "url_citation": {"url": "https://w.test", "start_index": 0, "end_index": 6}}
    rendered = AnthropicInbound({"model": "m"}, None).render(answer(
        {"role": "assistant", "content": "Paris.", "annotations": [cited]}))
    body, _ = native(messages=[{"role": "user", "content": "a"},
                               {"role": "assistant", "content": rendered["content"]}])
    assert body["messages"][1]["content"] == [{"type": "text", "text": "Paris."}]


def test_which_channels_take_the_body_as_sent() -> None:
    """Claude's own format: Anthropic, Vertex AI's Claude models, Bedrock (its event-stream reframed)."""
    gemini = AnthropicInbound({"model": "gemini-2.5-pro"}, None)
    assert not gemini.native(ChannelType.VERTEX_AI) and not gemini.native(ChannelType.OPENAI)
    mapped = AnthropicInbound({"model": "claude-sonnet-4-5"}, None)  # the channel maps it to a Gemini model
    assert not mapped.native(ChannelType.VERTEX_AI, "gemini-2.5-pro") and mapped.native(ChannelType.VERTEX_AI)
    claude = AnthropicInbound({"model": "claude-sonnet-4-5"}, None)
    assert all(claude.native(t) for t in (ChannelType.ANTHROPIC, ChannelType.VERTEX_AI, ChannelType.AWS))
    streamed = AnthropicInbound({"model": "claude-sonnet-4-5", "stream": True}, None)
    assert streamed.native(ChannelType.ANTHROPIC) and streamed.native(ChannelType.AWS)


def test_sealed_anthropic_blocks_on_a_claude_client_are_claudes() -> None:
    """A turn a Gemini client had from Claude and a Claude client sends: the blocks come back."""
    blocks = [{"type": "thinking", "thinking": "hm", "signature": CLAUDE_SIG}]
    message = messages({"role": "user", "content": "a"}, {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm", "signature": seal(ANTHROPIC, {"blocks": blocks})},
        {"type": "text", "text": "ok"}]})[1]
    assert message["thinking_blocks"] == blocks
