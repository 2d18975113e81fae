"""Gemini in, mapping by mapping: contents and configuration into the internal form (both the REST
API's camelCase and the snake_case google-genai writes), Gemini's Schema dialect as JSON Schema,
answers out whole and streamed, round trips through google-genai's own types (which decode and
re-encode every thought signature as base64) that give Claude's thinking blocks and Gemini's
signatures back exactly, and the body a Gemini channel gets."""
from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from google.genai import types

from api.relay.inbound.gemini import GeminiInbound
from api.relay.inbound.gemini_read import unwrap, wrap
from api.relay.inbound.gemini_schema import to_json_schema
from api.upstream.base import TokenUsage
from api.upstream.catalogue import ChannelType
from api.upstream.reasoning import ANTHROPIC, GEMINI_SKIP_SIGNATURE, TEXT, seal, unseal

CLAUDE_BLOCKS = [{"type": "thinking", "thinking": "Let me see.", "signature": "EqQBClaudeSig"},
                 {"type": "redacted_thinking", "data": "opaque"}]
GEMINI_SIG = base64.b64encode(b"\x12\x34gemini signature").decode()


def inbound(body: dict[str, Any], stream: bool = False) -> GeminiInbound:
    return GeminiInbound(body, None, "gemini-3-pro", stream=stream)


def read(**body: Any) -> dict[str, Any]:
    return inbound(body).openai


def answer(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-r", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 4, "completion_tokens": 6, "total_tokens": 10}}


def through_sdk(rendered: dict[str, Any]) -> dict[str, Any]:
    """The model turn as google-genai reads an answer and sends it back as history."""
    response = types.GenerateContentResponse._from_response(response=rendered, kwargs={})
    content = response.candidates[0].content
    return content.model_dump(mode="json", by_alias=True, exclude_none=True)


# -- contents in -----------------------------------------------------------------------------------------


def test_system_instruction_and_text_parts_stay_apart() -> None:
    body = read(systemInstruction={"parts": [{"text": "one"}, {"text": "two"}]},
                contents=[{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]}])
    assert body["messages"] == [
        {"role": "system", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]


def test_media_of_any_type() -> None:
    parts = [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
             {"inline_data": {"mime_type": "application/pdf", "data": "JVBE", "display_name": "spec.pdf"}},
             {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://g.test/files/1"}},
             {"fileData": {"mimeType": "audio/mp3", "fileUri": "https://g.test/files/2"}}]
    content = read(contents=[{"role": "user", "parts": parts}])["messages"][0]["content"]
    assert content == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "spec.pdf"}},
        {"type": "image_url", "image_url": {"url": "https://g.test/files/1"}},
        {"type": "file", "file": {"file_url": "https://g.test/files/2"}}]


def test_model_turns_thoughts_signatures_and_function_responses() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [
            {"text": "Planning.", "thought": True},
            {"text": "Calling.", "thoughtSignature": "textSig"},
            {"functionCall": {"id": "c1", "name": "run", "args": {"cmd": "ls"}}, "thoughtSignature": GEMINI_SIG},
            {"functionCall": {"name": "run", "args": {}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "run", "response": {"output": "b"}}},
            {"functionResponse": {"id": "c1", "name": "run", "response": {"output": "a"},
                                  "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}}]}},
            {"text": "next"}]}]
    messages = read(contents=contents)["messages"]
    model = messages[1]
    assert model["content"] == "Calling." and model["reasoning_content"] == "Planning."
    assert model["extra_content"] == {"google": {"thought_signature": "textSig"}}
    first, second = model["tool_calls"]
    assert first == {"id": "c1", "type": "function", "function": {"name": "run", "arguments": '{"cmd":"ls"}'},
                     "extra_content": {"google": {"thought_signature": GEMINI_SIG}}}
    assert second["id"] == "call_1_3" and "extra_content" not in second
    assert messages[2:] == [
        {"role": "tool", "tool_call_id": "call_1_3", "content": '{"output":"b"}'},
        {"role": "tool", "tool_call_id": "c1", "content": [
            {"type": "text", "text": '{"output":"a"}'},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]},
        {"role": "user", "content": "next"}]


def test_our_sealed_signatures_restore_claude_blocks_and_reasoning() -> None:
    contents = [{"role": "user", "parts": [{"text": "go"}]},
                {"role": "model", "parts": [
                    {"functionCall": {"name": "f", "args": {}},
                     "thought_signature": wrap(seal(ANTHROPIC, {"blocks": CLAUDE_BLOCKS}))}]},
                {"role": "user", "parts": [{"text": "more"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "g", "args": {}},
                                             "thoughtSignature": seal(TEXT, {"text": "DeepSeek's thought"})}]}]
    messages = read(contents=contents)["messages"]
    assert messages[1]["thinking_blocks"] == CLAUDE_BLOCKS and "extra_content" not in messages[1]["tool_calls"][0]
    assert messages[3]["reasoning_content"] == "DeepSeek's thought"


def test_gemini_clis_stand_in_signature_is_gemini_state() -> None:
    contents = [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}},
                                             "thoughtSignature": GEMINI_SKIP_SIGNATURE}]}]
    call = read(contents=contents)["messages"][0]["tool_calls"][0]
    assert call["extra_content"] == {"google": {"thought_signature": GEMINI_SKIP_SIGNATURE}}


# -- configuration in ------------------------------------------------------------------------------------


def test_generation_config_in_both_spellings() -> None:
    body = read(contents=[{"role": "user", "parts": [{"text": "x"}]}], generationConfig={
        "topK": 40.0, "topP": 0.9, "temperature": 0, "maxOutputTokens": 300, "stopSequences": ["END"], "seed": 7,
        "thinking_config": {"thinking_level": "HIGH", "include_thoughts": True}})
    assert (body["top_k"], body["top_p"], body["temperature"], body["max_tokens"], body["stop"], body["seed"]) == (
        40, 0.9, 0, 300, ["END"], 7)
    assert isinstance(body["top_k"], int) and body["reasoning_effort"] == "high"


@pytest.mark.parametrize(("budget", "thinking", "effort"), [
    (0, {"type": "disabled"}, None), (-1, {"type": "adaptive"}, "medium"),
    (2048, {"type": "enabled", "budget_tokens": 2048}, "low"),
    (20000, {"type": "enabled", "budget_tokens": 20000}, "high")])
def test_thinking_budgets(budget: int, thinking: dict[str, Any], effort: str | None) -> None:
    body = read(generationConfig={"thinkingConfig": {"thinkingBudget": budget}})
    assert body["thinking"] == thinking and body.get("reasoning_effort") == effort


def test_structured_output_schemas() -> None:
    gemini = {"type": "OBJECT", "properties": {"ok": {"type": "BOOLEAN", "nullable": True}},
              "propertyOrdering": ["ok"]}
    body = read(generationConfig={"responseMimeType": "application/json", "responseSchema": gemini})
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": {
        "type": "object", "properties": {"ok": {"type": ["boolean", "null"]}}}}}
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    for key in ("responseJsonSchema", "response_json_schema"):
        body = read(generationConfig={"responseMimeType": "application/json", key: schema})
        assert body["response_format"]["json_schema"]["schema"] == schema
    assert read(generationConfig={"responseMimeType": "application/json"})["response_format"] == {
        "type": "json_object"}


def test_the_gemini_schema_dialect_as_json_schema() -> None:
    gemini = {"type": "OBJECT", "nullable": True, "required": ["when"], "property_ordering": ["when", "n"],
              "properties": {
                  "when": {"type": "STRING", "format": "date-time", "description": "d", "example": "2026-01-01"},
                  "mode": {"type": "STRING", "format": "enum", "enum": ["a", "b"]},
                  "n": {"type": "INTEGER", "format": "enum", "enum": ["101", "201"], "minimum": "1"},
                  "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "max_items": "3"},
                  "either": {"any_of": [{"type": "STRING"}, {"type": "NUMBER"}], "nullable": True},
                  "pet": {"ref": "#/defs/Pet"}},
              "defs": {"Pet": {"type": "OBJECT", "properties": {"name": {"type": "STRING"}}}}}
    assert to_json_schema(gemini) == {
        "type": ["object", "null"], "required": ["when"], "properties": {
            "when": {"type": "string", "format": "date-time", "description": "d", "examples": ["2026-01-01"]},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "n": {"type": "integer", "enum": [101, 201], "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "either": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "null"}]},
            "pet": {"$ref": "#/$defs/Pet"}},
        "$defs": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}}}


def test_tools_declarations_search_and_google_only_tools() -> None:
    json_schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    gateway_in = inbound({"contents": [{"role": "user", "parts": [{"text": "x"}]}], "tools": [
        {"functionDeclarations": [{"name": "a", "description": "A", "parameters": {
            "type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]},
        {"function_declarations": [{"name": "b", "parameters_json_schema": json_schema},
                                   {"name": "c", "parametersJsonSchema": json_schema}, {"name": "d"}]},
        {"googleSearch": {}}, {"google_search_retrieval": {}}, {"codeExecution": {}}, {"url_context": {}}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}}})
    body = gateway_in.openai
    assert body["tools"] == [
        {"type": "function", "function": {"name": "a", "description": "A", "parameters": json_schema}},
        {"type": "function", "function": {"name": "b", "parameters": json_schema}},
        {"type": "web_search"}]
    assert body["tool_choice"] == "required"
    assert gateway_in.for_channel(body, ChannelType.OPENAI) is body  # converted, never refused
    assert gateway_in.notices == ["tools.codeExecution", "tools.urlContext"]


@pytest.mark.parametrize(("config", "choice"), [
    ({"mode": "AUTO"}, "auto"), ({"mode": "NONE"}, "none"), ({"mode": "VALIDATED"}, "auto"),
    ({"mode": "ANY", "allowed_function_names": ["a"]}, {"type": "function", "function": {"name": "a"}})])
def test_tool_config(config: dict[str, Any], choice: Any) -> None:
    body = read(tools=[{"functionDeclarations": [{"name": "a"}]}], tool_config={"function_calling_config": config})
    assert body["tool_choice"] == choice


# -- answers out ----------------------------------------------------------------------------------------------


def test_thoughts_text_and_calls_with_their_signatures() -> None:
    message = {"role": "assistant", "content": "Calling.", "reasoning_content": "Plan.",
               "extra_content": {"google": {"thought_signature": "textSig"}},
               "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'},
                               "extra_content": {"google": {"thought_signature": GEMINI_SIG}}}]}
    rendered = inbound({}).render(answer(message, "tool_calls"))
    assert rendered["candidates"][0]["content"]["parts"] == [
        {"text": "Plan.", "thought": True}, {"text": "Calling.", "thoughtSignature": "textSig"},
        {"functionCall": {"name": "f", "args": {"a": 1}, "id": "c1"}, "thoughtSignature": GEMINI_SIG}]
    hidden = inbound({"generationConfig": {"thinkingConfig": {"includeThoughts": False}}}).render(answer(message))
    assert not any(p.get("thought") for p in hidden["candidates"][0]["content"]["parts"])


def test_claude_blocks_ride_on_the_first_call_or_the_first_text() -> None:
    call = {"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    with_call = inbound({}).render(answer({"role": "assistant", "content": "Hm.", "reasoning_content": "Let me see.",
                                           "thinking_blocks": CLAUDE_BLOCKS, "tool_calls": [call]}))
    parts = with_call["candidates"][0]["content"]["parts"]
    assert "thoughtSignature" not in parts[1]
    assert unseal(unwrap(parts[2]["thoughtSignature"])) == (ANTHROPIC, {"blocks": CLAUDE_BLOCKS})
    text_only = inbound({}).render(answer({"role": "assistant", "content": "Hm.", "thinking_blocks": CLAUDE_BLOCKS}))
    assert unseal(unwrap(text_only["candidates"][0]["content"]["parts"][0]["thoughtSignature"]))[0] == ANTHROPIC


def test_unsigned_reasoning_rides_on_the_first_call() -> None:
    """DeepSeek's reasoning must come back with the tool turn; Gemini CLI drops thought parts."""
    rendered = inbound({}).render(answer({"role": "assistant", "content": None, "reasoning_content": "Hmm.",
                                          "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}))
    call = rendered["candidates"][0]["content"]["parts"][1]
    assert unseal(unwrap(call["thoughtSignature"])) == (TEXT, {"text": "Hmm."})


# -- round trips through google-genai -----------------------------------------------------------------------------


def test_round_trip_gives_claude_its_blocks_back_through_the_sdk() -> None:
    sent = {"role": "assistant", "content": "Running.", "reasoning_content": "Let me see.",
            "thinking_blocks": CLAUDE_BLOCKS,
            "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]}
    turn = through_sdk(inbound({}).render(answer(sent, "tool_calls")))
    back = read(contents=[{"role": "user", "parts": [{"text": "go"}]}, turn])["messages"][1]
    assert back == sent


def test_round_trip_gives_gemini_its_signatures_back_through_the_sdk() -> None:
    sent = {"role": "assistant", "content": "Running.", "reasoning_content": "Plan.",
            "extra_content": {"google": {"thought_signature": GEMINI_SIG}},
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"},
                            "extra_content": {"google": {"thought_signature": GEMINI_SIG}}}]}
    turn = through_sdk(inbound({}).render(answer(sent, "tool_calls")))
    back = read(contents=[{"role": "user", "parts": [{"text": "go"}]}, turn])["messages"][1]
    assert back == sent


# -- streams ------------------------------------------------------------------------------------------------------


def stream(chunks: list[dict[str, Any]], thoughts: bool = True) -> list[dict[str, Any]]:
    writer = inbound({} if thoughts else {"generationConfig": {"thinkingConfig": {"includeThoughts": False}}},
                     stream=True).writer("m", 1)
    raw = writer.frames([{"choices": [{"index": 0, "delta": d, "finish_reason": f}]} for d, f in chunks])
    raw += writer.finish(TokenUsage(4, 6), None)
    return [orjson.loads(frame.removeprefix(b"data: ")) for frame in raw.split(b"\r\n\r\n") if frame]


def test_a_stream_of_claude_thinking_text_and_a_call() -> None:
    frames = stream([
        ({"reasoning_content": "Let me "}, None), ({"reasoning_content": "see."}, None),
        ({"thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "EqQBClaudeSig"}]}, None),
        ({"thinking_blocks": [{"type": "redacted_thinking", "data": "opaque"}]}, None),
        ({"content": "Running."}, None),
        ({"tool_calls": [{"index": 0, "id": "toolu_1", "function": {"name": "f", "arguments": '{"a":'}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}, "tool_calls")])
    parts = [p for f in frames for p in f["candidates"][0]["content"]["parts"]]
    assert parts[:2] == [{"text": "Let me ", "thought": True}, {"text": "see.", "thought": True}]
    assert parts[2]["text"] == "Running."
    assert unseal(unwrap(parts[2]["thoughtSignature"])) == (ANTHROPIC, {"blocks": [
        {"type": "thinking", "thinking": "Let me see.", "signature": "EqQBClaudeSig"}, CLAUDE_BLOCKS[1]]})
    assert parts[3] == {"functionCall": {"name": "f", "args": {"a": 1}, "id": "toolu_1"}}
    assert frames[-1]["candidates"][0]["finishReason"] == "STOP"
    assert frames[-1]["usageMetadata"]["candidatesTokenCount"] == 6


def test_a_stream_sends_gemini_signatures_with_their_parts() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"},
            "extra_content": {"google": {"thought_signature": GEMINI_SIG}}}
    frames = stream([({"reasoning_content": "Plan."}, None),
                     ({"content": "", "extra_content": {"google": {"thought_signature": "textSig"}}}, None),
                     ({"tool_calls": [call]}, "tool_calls")], thoughts=False)
    parts = [p for f in frames for p in f["candidates"][0]["content"]["parts"]]
    assert parts == [{"text": "", "thoughtSignature": "textSig"},
                     {"functionCall": {"name": "f", "args": {}, "id": "c1"}, "thoughtSignature": GEMINI_SIG}]


def test_a_stream_of_unsigned_reasoning_and_a_call_seals_the_reasoning_on_the_call() -> None:
    frames = stream([({"reasoning_content": "Hmm."}, None),
                     ({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]},
                      "tool_calls")])
    call = frames[-1]["candidates"][0]["content"]["parts"][0]
    assert unseal(unwrap(call["thoughtSignature"])) == (TEXT, {"text": "Hmm."})


# -- the native path -------------------------------------------------------------------------------------------------


def test_a_gemini_channel_gets_our_signatures_replaced_by_the_stand_in() -> None:
    clean = {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}},
                                                       "thoughtSignature": GEMINI_SIG}]}]}
    assert inbound(clean).native_body("gemini-3-pro") is clean
    ours = wrap(seal(ANTHROPIC, {"blocks": CLAUDE_BLOCKS}))
    body = {"contents": [{"role": "user", "parts": [{"text": "go"}]},
                         {"role": "model", "parts": [{"text": "a", "thought_signature": seal(TEXT, {"text": "x"})},
                                                     {"functionCall": {"name": "f", "args": {}},
                                                      "thoughtSignature": ours}]}]}
    sent = inbound(body).native_body("gemini-3-pro")
    assert sent["contents"][1]["parts"] == [
        {"text": "a", "thought_signature": GEMINI_SKIP_SIGNATURE},
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": GEMINI_SKIP_SIGNATURE}]
    assert sent["contents"][0] is body["contents"][0] and body["contents"][1]["parts"][1]["thoughtSignature"] == ours


def test_wrapped_seals_survive_either_base64_alphabet() -> None:
    sealed = seal(ANTHROPIC, {"blocks": CLAUDE_BLOCKS})
    wrapped = base64.urlsafe_b64encode(sealed.encode()).decode()
    assert unwrap(wrapped) == sealed == unwrap(wrap(sealed)) == unwrap(sealed)
    assert unwrap(GEMINI_SIG) is None and unwrap("Z3dyMS5!!") is None


def test_consecutive_model_turns_are_one_assistant_turn() -> None:
    """google-genai's streamed automatic function calling records one model turn per chunk: the
    thought and the call that follow each other are one assistant message, not two."""
    body = {"contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"text": "Looking it up.", "thought": True}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                                     "thoughtSignature": "c2ln"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": 21}}}]}]}
    messages = inbound(body).openai["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assistant = messages[1]
    assert assistant["reasoning_content"] == "Looking it up."
    [call] = assistant["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert call["extra_content"] == {"google": {"thought_signature": "c2ln"}}
    assert messages[2]["tool_call_id"] == call["id"]
