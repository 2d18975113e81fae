"""The Responses format's mappings, unit by unit: Codex's tools (function, namespace, custom with a
grammar, local_shell, additional_tools, hosted ones) in the internal form and back, the input items
(messages, files, reasoning with each provider's sealed state, calls and outputs, compaction), the
parameters, the answer's items and the event stream (validated with the openai SDK's own types),
and what a native channel receives."""
from __future__ import annotations

from typing import Any

import orjson
import pydantic
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from openai.types.responses.compacted_response import CompactedResponse

from api.relay.inbound.responses import ResponsesCompactInbound, ResponsesInbound
from api.relay.inbound.responses_tools import flat_name
from api.relay.responses_support import route_missing
from api.upstream.base import TokenUsage
from api.upstream.errors import RelayError
from api.upstream.reasoning import ANTHROPIC, GEMINI, TEXT, seal, unseal

EVENTS = pydantic.TypeAdapter(ResponseStreamEvent)
SHELL = {"type": "function", "name": "shell", "description": "Run a command", "strict": False,
         "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}}}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Edit files",
         "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"}}
DOCS = {"type": "namespace", "name": "mcp__docs", "description": "The docs server",
        "tools": [{"type": "function", "name": "search", "description": "Search the docs",
                   "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]}
BLOCKS = [{"type": "thinking", "thinking": "Patch it.", "signature": "sig-claude"}]


def inbound(**body: Any) -> ResponsesInbound:
    return ResponsesInbound({"model": "m", **body}, None)


def names(converted: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] if t["type"] == "function" else t["type"] for t in converted.get("tools") or ()]


def test_codex_tools_become_functions_and_hosted_web_search() -> None:
    lite = {"type": "additional_tools", "role": "developer", "tools": [
        {"type": "namespace", "name": "functions", "description": "", "tools": [
            {"type": "function", "name": "exec_command", "description": "Exec", "parameters": {"type": "object"}}]}]}
    request = inbound(tools=[SHELL, PATCH, DOCS, {"type": "local_shell"},
                             {"type": "web_search", "external_web_access": True, "search_context_size": "high",
                              "search_content_types": ["text"], "filters": {"allowed_domains": ["docs.rs"]}},
                             {"type": "image_generation"}, {"type": "file_search", "vector_store_ids": ["v"]}],
                      input=[lite, {"role": "user", "content": "Fix the bug."}], tool_choice="auto")
    out = request.openai
    assert names(out) == ["shell", "apply_patch", "mcp__docs__search", "local_shell", "web_search", "exec_command"]
    tools = {t["function"]["name"]: t["function"] for t in out["tools"] if t["type"] == "function"}
    assert tools["shell"] == {"name": "shell", "description": "Run a command", "parameters": SHELL["parameters"],
                              "strict": False}
    assert tools["apply_patch"]["parameters"] == {"type": "object", "properties": {"input": {"type": "string"}},
                                                  "required": ["input"], "additionalProperties": False}
    assert "lark grammar" in tools["apply_patch"]["description"]
    assert "start: begin_patch hunk+ end_patch" in tools["apply_patch"]["description"]
    assert tools["mcp__docs__search"]["description"] == "Search the docs\n\n(mcp__docs: The docs server)"
    assert set(tools["local_shell"]["parameters"]["properties"]) == {"command", "working_directory", "timeout_ms",
                                                                     "env", "user"}
    assert {"type": "web_search", "allowed_domains": ["docs.rs"]} in out["tools"]
    assert out["tool_choice"] == "auto"
    assert out["messages"] == [{"role": "user", "content": "Fix the bug."}]  # additional_tools: no message
    assert request.conversion_notices == ["tools.web_search.search_content_types",
                                          "tools.web_search.search_context_size", "tools.image_generation",
                                          "tools.file_search"]


def test_long_and_unsafe_names_stay_within_every_provider_limit() -> None:
    long = flat_name("a_very_long_tool_name_" * 3, "mcp__a_server_with_a_long_name")
    assert len(long) == 64 and long == flat_name("a_very_long_tool_name_" * 3, "mcp__a_server_with_a_long_name")
    assert flat_name("read.file", "mcp__fs") == "mcp__fs__read_file"
    assert flat_name("exec", "functions") == "exec"


def test_tool_choice_forms() -> None:
    assert inbound(tools=[DOCS], tool_choice={"type": "function", "name": "search", "namespace": "mcp__docs"}
                   ).openai["tool_choice"] == {"type": "function", "function": {"name": "mcp__docs__search"}}
    assert inbound(tools=[PATCH], tool_choice={"type": "custom", "name": "apply_patch"}).openai["tool_choice"] == {
        "type": "function", "function": {"name": "apply_patch"}}
    allowed = inbound(tools=[SHELL, PATCH], tool_choice={"type": "allowed_tools", "mode": "required",
                                                         "tools": [{"type": "function", "name": "shell"}]}).openai
    assert (names(allowed), allowed["tool_choice"]) == (["shell"], "required")
    hosted = inbound(tools=[SHELL], tool_choice={"type": "file_search"})
    assert "tool_choice" not in hosted.openai and hosted.conversion_notices == ["tool_choice.file_search"]


def test_parameters_explicit_zeros_kept_and_bookkeeping_left_out() -> None:
    out = inbound(input="Hi", max_output_tokens=0, temperature=0, top_p=0.5, parallel_tool_calls=False,
                  reasoning={"effort": "xhigh", "summary": "auto"}, store=False,
                  include=["reasoning.encrypted_content"], prompt_cache_key="k", metadata={"a": "b"},
                  safety_identifier="u",
                  text={"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"},
                                   "strict": True}}).openai
    assert out == {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 0, "temperature": 0,
                   "top_p": 0.5, "parallel_tool_calls": False, "reasoning_effort": "xhigh",
                   "response_format": {"type": "json_schema", "json_schema": {
                       "name": "answer", "schema": {"type": "object"}, "strict": True}}}
    noted = inbound(input="Hi", text={"verbosity": "low"}, truncation="auto", service_tier="flex", max_tool_calls=3,
                    top_logprobs=2)
    assert noted.conversion_notices == ["text.verbosity", "truncation", "service_tier", "max_tool_calls",
                                        "top_logprobs"]


@pytest.mark.parametrize("body", [{"previous_response_id": "resp_1"}, {"conversation": "conv_1"},
                                  {"prompt": {"id": "pmpt_1"}}, {"background": True},
                                  {"input": [{"type": "item_reference", "id": "msg_1"}]}])
def test_stored_state_is_refused_with_the_reason(body: dict[str, Any]) -> None:
    with pytest.raises(RelayError) as refused:
        inbound(**body)
    assert refused.value.status == 400 and refused.value.local and "not supported" in refused.value.message


def test_messages_parts_and_files() -> None:
    out = inbound(instructions="Be brief.", input=[
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Rules."}]},
        {"role": "user", "content": [
            {"type": "input_text", "text": "Read these."},
            {"type": "input_image", "image_url": "https://img.example/a.png", "detail": "high"},
            {"type": "input_file", "filename": "a.pdf", "file_data": "JVBERi0x"},
            {"type": "input_file", "file_url": "https://docs.example/b.pdf"},
            {"type": "input_file", "file_id": "file-1"}]},
        {"role": "system", "content": "Mid-conversation note."}])
    assert out.openai["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Rules."},
        {"role": "user", "content": [
            {"type": "text", "text": "Read these."},
            {"type": "image_url", "image_url": {"url": "https://img.example/a.png", "detail": "high"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0x", "filename": "a.pdf"}},
            {"type": "file", "file": {"file_url": "https://docs.example/b.pdf"}}]},
        {"role": "system", "content": "Mid-conversation note."}]
    assert out.conversion_notices == ["input.input_file.file_id"]


def turn(items: list[dict[str, Any]], **body: Any) -> tuple[list[dict[str, Any]], list[str]]:
    request = inbound(tools=[SHELL, PATCH, DOCS, {"type": "local_shell"}], input=[
        {"role": "user", "content": "Go."}, *items, {"role": "user", "content": "Next."}], **body)
    return request.openai["messages"][1:-1], request.conversion_notices


def test_claude_thinking_goes_back_with_its_turn() -> None:
    messages, notices = turn([
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Patch it."}],
         "encrypted_content": seal(ANTHROPIC, {"blocks": BLOCKS})},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Patching."}]},
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "function_call", "call_id": "c2", "name": "search", "namespace": "mcp__docs", "arguments": "{}"},
        {"type": "local_shell_call", "id": "lsh_1", "call_id": "c3", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}, "timeout_ms": None}},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "Done!"},
        {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "hit"},
                                                                     {"type": "input_text", "text": "hit 2"}]},
        {"type": "local_shell_call_output", "id": "c3", "output": "a.txt"}])
    assert messages == [
        {"role": "assistant", "content": "Patching.", "reasoning_content": "Patch it.", "thinking_blocks": BLOCKS,
         "tool_calls": [
             {"id": "c1", "type": "function", "function": {"name": "apply_patch",
                                                           "arguments": '{"input":"*** Begin Patch"}'}},
             {"id": "c2", "type": "function", "function": {"name": "mcp__docs__search", "arguments": "{}"}},
             {"id": "c3", "type": "function", "function": {"name": "local_shell",
                                                           "arguments": '{"command":["ls"],"env":{}}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Done!"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "hit"},
                                                           {"type": "text", "text": "hit 2"}]},
        {"role": "tool", "tool_call_id": "c3", "content": "a.txt"}]
    assert notices == []


def test_gemini_signatures_go_back_on_their_calls_sealed_before_them() -> None:
    messages, _ = turn([
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look first."}],
         "encrypted_content": seal(GEMINI, {"calls": {"g1": "sig-g1"}})},
        {"type": "function_call", "call_id": "g1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "g1", "output": "1"}])
    assert messages[0]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig-g1"}}
    assert messages[0]["reasoning_content"] == "Look first."


def test_gemini_signatures_go_back_on_their_calls_even_when_sealed_after_them() -> None:
    messages, _ = turn([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": seal(TEXT, {"text": "Look first."})},
        {"type": "function_call", "call_id": "g1", "name": "shell", "arguments": "{}"},
        {"type": "function_call", "call_id": "g2", "name": "shell", "arguments": "{}"},
        {"type": "reasoning", "id": "rs_2", "summary": [],
         "encrypted_content": seal(GEMINI, {"calls": {"g1": "sig-g1"}, "text": "sig-text"})},
        {"type": "function_call_output", "call_id": "g1", "output": "1"},
        {"type": "function_call_output", "call_id": "g2", "output": "2"}])
    assistant = messages[0]
    assert assistant["reasoning_content"] == "Look first."
    assert [c.get("extra_content") for c in assistant["tool_calls"]] == [
        {"google": {"thought_signature": "sig-g1"}}, None]
    assert assistant["extra_content"] == {"google": {"thought_signature": "sig-text"}}


def test_openai_encrypted_reasoning_keeps_its_summary_only_and_empty_turns_go() -> None:
    messages, notices = turn([
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Hmm."}],
         "encrypted_content": "gAAAAopenai"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Ok."}]},
        {"role": "user", "content": "More."},
        {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "cut short"}]}])
    assert messages == [{"role": "assistant", "content": "Ok.", "reasoning_content": "Hmm."},
                        {"role": "user", "content": "More."}]
    assert notices == ["input.reasoning.encrypted_content"]


def test_compaction_items_read_back() -> None:
    messages, notices = turn([{"type": "compaction", "id": "cmp_1", "encrypted_content": seal(TEXT, {"text": "S."})},
                              {"type": "compaction", "id": "cmp_2", "encrypted_content": "gAAAAopenai"},
                              {"type": "web_search_call", "id": "ws_1", "status": "completed"}])
    assert len(messages) == 1 and messages[0]["role"] == "user" and messages[0]["content"].endswith("\n\nS.")
    assert notices == ["input.compaction", "input.web_search_call"]


def answer(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {"model": "m", "choices": [{"index": 0, "message": {"role": "assistant", **message},
                                       "finish_reason": finish}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40,
                      "prompt_tokens_details": {"cached_tokens": 5}}}


def test_answer_items_carry_the_state_back_to_the_same_turn() -> None:
    request = inbound(tools=[PATCH, DOCS, {"type": "local_shell"}], input="Go.")
    calls = [{"id": "c1", "type": "function", "function": {"name": "apply_patch",
                                                           "arguments": '{"input": "*** Begin Patch"}'}},
             {"id": "c2", "type": "function", "function": {"name": "mcp__docs__search", "arguments": '{"q":"x"}'}},
             {"id": "c3", "type": "function", "function": {"name": "local_shell",
                                                           "arguments": '{"command": ["ls", "-la"]}'}}]
    rendered = request.render(answer({"content": "Patching.", "reasoning_content": "Patch it.",
                                      "thinking_blocks": BLOCKS, "tool_calls": calls}))
    response = Response.model_validate(rendered)
    assert [i.type for i in response.output] == ["reasoning", "message", "custom_tool_call", "function_call",
                                                 "local_shell_call"]
    reasoning = rendered["output"][0]
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Patch it."}]
    assert unseal(reasoning["encrypted_content"]) == (ANTHROPIC, {"blocks": BLOCKS})
    assert (rendered["output"][2]["name"], rendered["output"][2]["input"]) == ("apply_patch", "*** Begin Patch")
    assert (rendered["output"][3]["name"], rendered["output"][3]["namespace"]) == ("search", "mcp__docs")
    assert rendered["output"][4]["action"] == {"type": "exec", "command": ["ls", "-la"], "env": {},
                                               "timeout_ms": None, "user": None, "working_directory": None}
    assert rendered["usage"]["input_tokens_details"] == {"cached_tokens": 5, "cache_write_tokens": 0}
    again = inbound(tools=[PATCH, DOCS, {"type": "local_shell"}],
                    input=[{"role": "user", "content": "Go."}, *rendered["output"]]).openai["messages"][1]
    assert again["thinking_blocks"] == BLOCKS and [c["function"]["name"] for c in again["tool_calls"]] == [
        "apply_patch", "mcp__docs__search", "local_shell"]
    assert orjson.loads(again["tool_calls"][0]["function"]["arguments"]) == {"input": "*** Begin Patch"}


def test_answer_reasoning_envelopes_by_provider() -> None:
    request = inbound(tools=[SHELL], input="Go.")
    gemini_call = {"id": "g1", "type": "function", "function": {"name": "shell", "arguments": "{}"},
                   "extra_content": {"google": {"thought_signature": "sig-g1"}}}
    gemini = request.render(answer({"content": None, "tool_calls": [gemini_call]}, "tool_calls"))["output"][0]
    assert gemini["summary"] == [] and unseal(gemini["encrypted_content"]) == (GEMINI, {"calls": {"g1": "sig-g1"}})
    deepseek = request.render(answer({"content": "4", "reasoning_content": "2+2"}))["output"][0]
    assert unseal(deepseek["encrypted_content"]) == (TEXT, {"text": "2+2"})
    cut = request.render(answer({"content": "Partial"}, "length"))
    assert (cut["status"], cut["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})
    assert [i["type"] for i in cut["output"]] == ["message"]


def stream(request: ResponsesInbound, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    writer = request.stream_writer("m")
    raw = writer.frames([{"choices": [{"index": 0, "delta": delta}]} for delta in chunks])
    raw += writer.finish(TokenUsage(30, 10, 5), None)
    events = [orjson.loads(frame.split(b"data: ", 1)[1]) for frame in raw.split(b"\n\n") if frame]
    for data in events:
        EVENTS.validate_python(data)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    return events


def done_items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


def test_stream_of_a_claude_turn() -> None:
    request = inbound(tools=[PATCH, {"type": "local_shell"}], input="Go.", stream=True)
    events = stream(request, [
        {"reasoning_content": "Patch "}, {"reasoning_content": "it."},
        {"thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "sig-claude"}]},
        {"content": "Patching."},
        {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                         "function": {"name": "apply_patch", "arguments": '{"input": "*** '}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'Begin Patch"}'}}]},
        {"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                         "function": {"name": "local_shell", "arguments": '{"command": ["ls"]}'}}]}])
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    items = done_items(events)
    assert [i["type"] for i in items] == ["reasoning", "message", "custom_tool_call", "local_shell_call"]
    assert unseal(items[0]["encrypted_content"]) == (ANTHROPIC, {"blocks": [
        {"type": "thinking", "thinking": "Patch it.", "signature": "sig-claude"}]})
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    assert "encrypted_content" not in added[0]
    assert items[2]["input"] == "*** Begin Patch" and items[3]["action"]["command"] == ["ls"]
    assert {"type": "response.custom_tool_call_input.done", "input": "*** Begin Patch"}.items() <= next(
        e for e in events if e["type"] == "response.custom_tool_call_input.done").items()
    final = Response.model_validate(events[-1]["response"])
    assert [i.type for i in final.output] == [i["type"] for i in items]
    assert final.usage is not None and final.usage.input_tokens == 30


def test_stream_of_a_gemini_turn_seals_late_signatures_in_a_last_reasoning_item() -> None:
    request = inbound(tools=[SHELL, DOCS], input="Go.", stream=True)
    events = stream(request, [
        {"reasoning_content": "Search first."},
        {"tool_calls": [{"index": 0, "id": "g1", "type": "function",
                         "extra_content": {"google": {"thought_signature": "sig-g1"}},
                         "function": {"name": "mcp__docs__search", "arguments": "{}"}}]}])
    items = done_items(events)
    assert [i["type"] for i in items] == ["reasoning", "function_call", "reasoning"]
    assert unseal(items[0]["encrypted_content"]) == (TEXT, {"text": "Search first."})
    assert (items[1]["name"], items[1]["namespace"], items[1]["arguments"]) == ("search", "mcp__docs", "{}")
    assert unseal(items[2]["encrypted_content"]) == (GEMINI, {"calls": {"g1": "sig-g1"}})
    again = inbound(tools=[SHELL, DOCS], input=[{"role": "user", "content": "Go."}, *items]).openai["messages"][1]
    assert again["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig-g1"}}
    assert again["reasoning_content"] == "Search first."


def test_native_body_leaves_out_what_only_this_gateway_can_read() -> None:
    items = [{"role": "user", "content": "Go."},
             {"type": "compaction", "id": "cmp_1", "encrypted_content": seal(TEXT, {"text": "S."})},
             {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": seal(ANTHROPIC, {"blocks": []})},
             {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAAopenai"}]
    request = inbound(input=items, tools=[{"type": "image_generation"}])
    assert request.for_channel({}, 14) == {}
    assert request.notices == ["tools.image_generation", "input.reasoning.encrypted_content"]
    body = request.native_body("gpt-5")
    assert request.notices == []
    assert body["store"] is False and body["model"] == "gpt-5"
    assert [i.get("type", "message") for i in body["input"]] == ["message", "message", "reasoning"]
    assert body["input"][1]["content"][0]["text"].endswith("\n\nS.") and body["input"][2]["id"] == "rs_2"
    compact = ResponsesCompactInbound({"model": "m", "input": items, "store": False}, None).native_body("gpt-5")
    assert "store" not in compact


def test_compaction_converted() -> None:
    request = ResponsesCompactInbound({"model": "m", "instructions": "You are Codex.", "tools": [SHELL],
                                       "stream": True, "text": {"format": {"type": "json_schema", "schema": {}}},
                                       "input": [{"role": "user", "content": "Fix it."},
                                                 {"type": "function_call", "call_id": "c1", "name": "shell",
                                                  "arguments": "{}"},
                                                 {"type": "function_call_output", "call_id": "c1", "output": "ok"}]},
                                      None)
    out = request.openai
    assert "stream" not in out and "response_format" not in out and out["tool_choice"] == "none"
    assert out["messages"][-1]["role"] == "user" and "summary" in out["messages"][-1]["content"]
    rendered = request.render(answer({"content": "The summary."}))
    user, compaction = rendered["output"]
    assert (user["role"], user["content"]) == ("user", [{"type": "input_text", "text": "Fix it."}])
    compacted = CompactedResponse.model_validate({**rendered, "output": [compaction]})
    assert compacted.object == "response.compaction" and compacted.output[0].type == "compaction"
    assert unseal(compaction["encrypted_content"]) == (TEXT, {"text": "The summary."})
    assert (compacted.usage.input_tokens, compacted.usage.output_tokens) == (30, 10)


@pytest.mark.parametrize(("status", "body", "missing"), [
    (404, b"404: Not Found", True),
    (404, b'{"error": {"message": "Invalid URL (POST /v1/responses)"}}', True),
    (405, b"Method Not Allowed", True),
    (404, b'{"error": {"message": "The model `x` does not exist", "code": "model_not_found"}}', False),
    # Azure: a deployment that does not exist is the model's absence, not a missing /responses
    (404, b'{"error": {"code": "DeploymentNotFound", "message": "The API deployment for this resource does not '
          b'exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}',
     False),
    (400, b"bad", False), (500, b"", False)])
def test_route_missing(status: int, body: bytes, missing: bool) -> None:
    assert route_missing(status, body) is missing


SEARCH = {"type": "tool_search", "execution": "client", "description": "Find more tools",
          "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}


def test_client_tool_search_loads_tools_for_the_rest_of_the_conversation() -> None:
    request = inbound(tools=[SHELL, SEARCH, {"type": "tool_search"}], input=[
        {"role": "user", "content": "Use the calendar."},
        {"type": "tool_search_call", "id": "tsc_1", "call_id": "s1", "execution": "client",
         "arguments": {"query": "calendar"}, "status": "completed"},
        {"type": "tool_search_output", "id": "tso_1", "call_id": "s1", "execution": "client", "status": "completed",
         "tools": [{"type": "namespace", "name": "mcp__cal", "description": "Calendar", "tools": [
             {"type": "function", "name": "list_events", "description": "List events", "defer_loading": True,
              "parameters": {"type": "object", "properties": {}}}]}]}])
    out = request.openai
    assert names(out) == ["shell", "tool_search", "mcp__cal__list_events"]
    assert request.conversion_notices == ["tools.tool_search"]  # the server-run one
    assert out["messages"][1:] == [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "s1", "type": "function", "function": {
            "name": "tool_search", "arguments": '{"query":"calendar"}'}}]},
        {"role": "tool", "tool_call_id": "s1", "content": "Tools loaded: mcp__cal__list_events"}]
    search = {"id": "s2", "type": "function", "function": {"name": "tool_search", "arguments": '{"query": "mail"}'}}
    item = request.render(answer({"content": None, "tool_calls": [search]}, "tool_calls"))["output"][0]
    assert {k: item[k] for k in ("type", "call_id", "execution", "arguments")} == {
        "type": "tool_search_call", "call_id": "s2", "execution": "client", "arguments": {"query": "mail"}}
    events = stream(request, [{"tool_calls": [{"index": 0, **search}]}])
    assert [(i["type"], i["arguments"]) for i in done_items(events)] == [("tool_search_call", {"query": "mail"})]


def test_stream_cut_short_ends_with_the_error_and_a_failed_response() -> None:
    request = inbound(input="Go.", stream=True)
    writer = request.stream_writer("m")
    raw = writer.frames([{"choices": [{"index": 0, "delta": {"content": "Half"}}]}])
    raw += writer.finish(TokenUsage(30, 2), RelayError(502, "the upstream went away", "upstream_error",
                                                       "stream_interrupted"))
    events = [orjson.loads(frame.split(b"data: ", 1)[1]) for frame in raw.split(b"\n\n") if frame]
    for data in events:
        EVENTS.validate_python(data)
    assert [e["type"] for e in events[-3:]] == ["response.output_item.done", "error", "response.failed"]
    failed = events[-1]["response"]
    assert failed["status"] == "failed" and failed["error"] == {"code": "server_error",
                                                                "message": "the upstream went away"}
    assert events[-2]["code"] == "stream_interrupted"
    assert failed["output"][0]["content"][0]["text"] == "Half" and failed["usage"]["output_tokens"] == 2


def test_a_failed_call_of_older_codex_versions() -> None:
    messages, _ = turn([{"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
                        {"type": "function_call_output", "call_id": "c1",
                         "output": {"content": "command not found", "success": False}}])
    assert messages[1] == {"role": "tool", "tool_call_id": "c1", "content": "command not found"}
