"""The internal form ↔ Gemini, without the network: contents (system instructions, parts, documents,
thought signatures replayed or the documented placeholder), schema reduction, thinking per model,
notices, answers and stream chunks. Every converted body is also put to the strict fake's checks."""
from __future__ import annotations

from typing import Any

import orjson
import pytest

from api.services.model_name import ModelName
from api.upstream.base import RelayMeta, StreamState
from api.upstream.catalogue import ChannelType
from api.upstream.decoders import END_OF_BODY
from api.upstream.providers.gemini.answer import convert_response
from api.upstream.providers.gemini.convert import convert_request
from api.upstream.providers.gemini.schema import to_gemini
from api.upstream.providers.gemini.stream import GeminiStream
from api.upstream.reasoning import GEMINI_SKIP_SIGNATURE
from api.upstream.sse import SSEEvent
from tests.upstream.providers.gemini.fake_gemini import FakeGemini, canonical, schema_problem

PRO = "gemini-3-pro-preview"
# A Claude Code tool, as Claude Code declares it (JSON Schema draft 7 from zod).
BASH_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False,
    "required": ["command"],
    "properties": {
        "command": {"type": "string", "description": "The command to execute"},
        "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600000, "description": "Timeout in ms"},
        "env": {"type": "object", "propertyNames": {"pattern": "^[A-Z_][A-Z0-9_]*$"},
                "additionalProperties": {"type": "string"}, "description": "Environment variables"},
        "mode": {"const": "sandbox"},
        "cwd": {"type": ["string", "null"]},
    },
}


def meta(model: str = PRO, **fields: Any) -> RelayMeta:
    return RelayMeta(1, int(ChannelType.GEMINI), "k", name=ModelName(upstream=model), **fields)


def converted(req: dict[str, Any], model: str = PRO, combination: bool = False) -> tuple[dict[str, Any], list[str]]:
    """(the body, the notices), after checking that the strict fake takes the body."""
    m = meta(model)
    body = convert_request(req, m, combination)
    fake = FakeGemini()
    fake.issued |= {"sig-call", "sig-text", "sig-old", "sig-search", "sig-result"}
    assert fake.problem(canonical(body), model) is None, body
    return body, m.notices


def call(id_: str, name: str, args: dict[str, Any], signature: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": id_, "type": "function", "function": {"name": name, "arguments": orjson.dumps(
        args).decode()}}
    if signature:
        out["extra_content"] = {"google": {"thought_signature": signature}}
    return out


def test_system_messages_and_parts_kept_apart() -> None:
    body, notices = converted({"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "Rule one."},
                                          {"type": "text", "text": "Rule two."}]},
        {"role": "user", "content": [
            {"type": "text", "text": "Read these."}, {"type": "text", "text": "Both."},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0x", "filename": "a.pdf"},
             "document": {"title": "Report", "context": "Q3"}},
            {"type": "file", "file": {"file_url": "https://example.org/b.pdf"}},
            {"type": "text", "text": "cached", "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": "Done."},
        {"role": "system", "content": "Now answer in French."},
        {"role": "user", "content": "Merci."}]})
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}, {"text": "Rule one."}, {"text": "Rule two."}]}
    assert body["contents"][0]["parts"] == [
        {"text": "Read these."}, {"text": "Both."}, {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
        {"text": "Document: Report\nQ3"}, {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}},
        {"fileData": {"fileUri": "https://example.org/b.pdf", "mimeType": "application/pdf"}}, {"text": "cached"}]
    assert body["contents"][1:] == [
        {"role": "model", "parts": [{"text": "Done."}]},
        {"role": "user", "parts": [{"text": "[System instruction]\nNow answer in French."}, {"text": "Merci."}]}]
    assert notices == ["cache_control"]


def test_signatures_replayed_reasoning_never_sent_and_placeholder_only_where_required() -> None:
    history = [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        # an earlier turn from another provider: no signature, not validated, none invented
        {"role": "assistant", "content": None, "tool_calls": [call("a", "get_weather", {"city": "Oslo"})]},
        {"role": "tool", "tool_call_id": "a", "content": "3°C"},
        {"role": "assistant", "content": "Cold.", "extra_content": {"google": {"thought_signature": "sig-old"}},
         "reasoning_content": "I looked it up.",
         "thinking_blocks": [{"type": "thinking", "thinking": "x", "signature": "claude"}]},
        {"role": "user", "content": "And now Paris and Rome?"},
        # this turn: one step signed by Gemini (parallel calls), one from another provider
        {"role": "assistant", "content": None, "tool_calls": [
            call("b", "get_weather", {"city": "Paris"}, "sig-call"), call("c", "get_weather", {"city": "Rome"})]},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "18°C"}]},
        {"role": "tool", "tool_call_id": "c", "content": '{"temp": 21}'},
        {"role": "assistant", "content": None, "tool_calls": [call("d", "get_time", {})]},
        {"role": "tool", "tool_call_id": "d", "content": "noon"}]
    body, _ = converted({"messages": history})
    model = [c["parts"] for c in body["contents"] if c["role"] == "model"]
    assert model[0] == [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]
    assert model[1] == [{"text": "Cold.", "thoughtSignature": "sig-old"}]  # no reasoning text, no Claude blocks
    assert model[2] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "sig-call"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]
    assert model[3] == [{"functionCall": {"name": "get_time", "args": {}}, "thoughtSignature": GEMINI_SKIP_SIGNATURE}]
    responses = [p["functionResponse"] for c in body["contents"] for p in c["parts"] if "functionResponse" in p]
    assert responses == [{"name": "get_weather", "response": {"output": "3°C"}},
                         {"name": "get_weather", "response": {"output": "18°C"}},
                         {"name": "get_weather", "response": {"temp": 21}},
                         {"name": "get_time", "response": {"output": "noon"}}]
    before_3, _ = converted({"messages": history}, "gemini-2.5-flash")
    assert all("thoughtSignature" not in p or p["thoughtSignature"] != GEMINI_SKIP_SIGNATURE
               for c in before_3["contents"] for p in c["parts"])


def test_the_fake_refuses_what_gemini_3_refuses() -> None:
    fake = FakeGemini()
    fake.issued.add("mine")

    def refused(body: dict[str, Any], model: str) -> str:
        problem = fake.problem(body, model)
        assert problem is not None, body
        return problem

    unsigned: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "hi"}]},
                             {"role": "model", "parts": [{"functionCall": {"name": "Bash", "args": {}}}]},
                             {"role": "user", "parts": [{"functionResponse": {"name": "Bash", "response": {}}}]}]}
    assert "missing a thought_signature" in refused(unsigned, PRO)
    assert "`default_api:Bash` , position 2." in refused(unsigned, PRO)
    assert fake.problem(unsigned, "gemini-2.5-pro") is None
    unsigned["contents"][1]["parts"][0]["thoughtSignature"] = "claude-signature"
    assert fake.problem(unsigned, PRO) == "Corrupted thought signature."
    assert schema_problem(BASH_SCHEMA, "tools[0].function_declarations[0].parameters") == (
        'Invalid JSON payload received. Unknown name "$schema" at \'tools[0].function_declarations[0].parameters\': '
        "Cannot find field.")
    both = {"contents": [], "generationConfig": {"thinkingConfig": {"thinkingLevel": "low", "thinkingBudget": 8}}}
    assert refused(both, PRO) == "You can only set only one of thinking budget and thinking level."
    level = {"contents": [], "generationConfig": {"thinking_config": {"thinking_level": "LOW"}}}
    assert refused(canonical(level), "gemini-2.5-flash") == "Thinking level is not supported for this model."
    assert "thinking_level MINIMAL is not supported" in refused(
        {"generationConfig": {"thinkingConfig": {"thinkingLevel": "minimal"}}}, PRO)
    assert "supported range is from 1 (inclusive) to 8193" in refused(
        {"generationConfig": {"maxOutputTokens": 9000}}, "gemini-2.0-flash")
    assert refused({"generationConfig": {"topLogprobs": 1}}, PRO).startswith(
        'Invalid JSON payload received. Unknown name "topLogprobs" at \'generation_config\'')


def test_claude_code_schema_reduced_with_its_meaning_in_descriptions() -> None:
    reduced = to_gemini(BASH_SCHEMA)
    assert schema_problem(reduced, "parameters") is None
    properties = reduced["properties"]
    assert properties["timeout"] == {"type": "number", "maximum": 600000, "description": "Timeout in ms (must be > 0)"}
    assert properties["env"] == {"type": "object", "description": "Environment variables (other properties: string) "
                                                                  "(property names matching ^[A-Z_][A-Z0-9_]*$)"}
    assert properties["mode"] == {"type": "string", "enum": ["sandbox"]}
    assert properties["cwd"] == {"type": "string", "nullable": True}
    assert reduced["required"] == ["command"] and "$schema" not in reduced


def test_schema_references_unions_and_tuples() -> None:
    schema = {"type": "object", "$defs": {"Node": {"type": "object", "properties": {
        "name": {"type": "string", "format": "uri"}, "next": {"$ref": "#/$defs/Node"}}}},
        "properties": {
            "head": {"$ref": "#/$defs/Node", "description": "First node"},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer", "multipleOf": 2}, {"type": "null"}]},
            "both": {"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                               {"type": "object", "properties": {"b": {"type": "boolean"}}}]},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
            "level": {"enum": [1, 2, 3]},
            "bag": {"type": "array", "uniqueItems": True}}}
    reduced = to_gemini(schema)
    assert schema_problem(reduced, "parameters") is None
    head = reduced["properties"]["head"]
    assert head["description"] == "First node" and head["properties"]["name"]["description"] == "(format: uri)"
    assert head["properties"]["next"]["properties"]["next"] == {
        "description": "(a recursive value of the same shape as its parent)"}
    assert reduced["properties"]["either"] == {"nullable": True, "anyOf": [
        {"type": "string"}, {"type": "integer", "description": "(a multiple of 2)"}]}
    assert reduced["properties"]["both"] == {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string"}, "b": {"type": "boolean"}}}
    assert reduced["properties"]["pair"]["items"] == {"anyOf": [{"type": "string"}, {"type": "number"}]}
    assert reduced["properties"]["level"] == {"description": "(one of: 1, 2, 3)"}
    assert reduced["properties"]["bag"] == {"type": "array", "items": {"type": "string"},
                                            "description": "(items of any type) (items must be unique)"}


@pytest.mark.parametrize(("model", "combination", "combined"), [
    (PRO, True, True), ("gemini-3.1-flash-lite-preview", True, True),
    ("gemini-2.5-pro", True, False),  # the combination is for Gemini 3 models only
    (PRO, False, False)])  # Vertex AI: no includeServerSideToolInvocations
def test_web_search_beside_functions(model: str, combination: bool, combined: bool) -> None:
    tools = [{"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
             {"type": "web_search"}]
    body, notices = converted({"messages": [{"role": "user", "content": "hi"}], "tools": tools,
                               "tool_choice": "auto"}, model, combination)
    declared = [list(tool) for tool in body["tools"]]
    if combined:
        assert (declared, notices) == ([["functionDeclarations"], ["googleSearch"]], [])
        assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"},
                                      "includeServerSideToolInvocations": True}
    else:
        assert (declared, notices) == ([["functionDeclarations"]], ["tools.web_search"])
        assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


@pytest.mark.parametrize(("model", "request_", "expected"), [
    (PRO, {}, {"includeThoughts": True}),
    (PRO, {"reasoning_effort": "minimal"}, {"includeThoughts": True, "thinkingLevel": "low"}),
    (PRO, {"reasoning_effort": "xhigh"}, {"includeThoughts": True, "thinkingLevel": "high"}),
    (PRO, {"thinking": {"type": "disabled"}}, {"thinkingLevel": "low"}),
    ("gemini-3-flash-preview", {"reasoning_effort": "none"}, {"thinkingLevel": "minimal"}),
    ("gemini-3.1-pro-preview", {"thinking": {"type": "enabled", "budget_tokens": 10000}},
     {"includeThoughts": True, "thinkingLevel": "medium"}),
    ("gemini-2.5-flash", {"thinking": {"type": "disabled"}}, {"thinkingBudget": 0}),
    ("gemini-2.5-pro", {"reasoning_effort": "none"}, {"thinkingBudget": 128}),
    ("gemini-2.5-flash", {"reasoning_effort": "high"}, {"includeThoughts": True, "thinkingBudget": 24576}),
    ("gemini-2.5-pro", {"thinking": {"type": "enabled", "budget_tokens": 99999}},
     {"includeThoughts": True, "thinkingBudget": 32768}),
    ("gemini-2.5-pro", {"thinking": {"type": "adaptive"}}, {"includeThoughts": True, "thinkingBudget": -1}),
    ("gemini-2.5-flash-lite", {}, None),
])
def test_thinking_per_model(model: str, request_: dict[str, Any], expected: dict[str, Any] | None) -> None:
    body, _ = converted({"messages": [{"role": "user", "content": "hi"}], **request_}, model)
    assert (body.get("generationConfig") or {}).get("thinkingConfig") == expected


def test_caps_sampling_and_tools_with_notices() -> None:
    tools = [{"type": "function", "function": {"name": "Bash", "parameters": BASH_SCHEMA}},
             {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
             {"type": "web_search"}]
    body, notices = converted({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 100000,
                               "temperature": 0, "logprobs": True, "stop": ["a", "b", "c", "d", "e", "f"],
                               "reasoning_effort": "high", "tools": tools, "tool_choice": "required",
                               "response_format": {"type": "json_schema", "json_schema": {
                                   "name": "x", "schema": {"type": "object", "additionalProperties": False,
                                                           "properties": {"n": {"type": "integer"}}}}}})
    config = body["generationConfig"]
    assert (config["maxOutputTokens"], config["temperature"], config["stopSequences"]) == (65536, 0,
                                                                                            ["a", "b", "c", "d", "e"])
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"] == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert body["tools"] == [{"functionDeclarations": [{"name": "Bash", "parameters": to_gemini(BASH_SCHEMA)},
                                                       {"name": "noop"}]}]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert notices == ["logprobs", "stop beyond 5", "max_tokens above 65536", "tools.web_search"]
    search, notices = converted({"messages": [{"role": "user", "content": "news?"}], "top_logprobs": 2,
                                 "tools": [{"type": "web_search", "allowed_domains": ["a.org"]}]}, "gemini-2.0-flash")
    assert search["tools"] == [{"googleSearch": {}}] and "toolConfig" not in search
    assert notices == ["top_logprobs", "tools.web_search.allowed_domains"]
    _, notices = converted({"messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "low"},
                           "gemini-2.0-flash")
    assert notices == ["reasoning_effort"]


def test_answer_signatures_thoughts_and_citations() -> None:
    parts = [{"text": "Weighing it.", "thought": True}, {"text": "Héllo world", "thoughtSignature": "sig-text"},
             {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "sig-call"},
             {"functionCall": {"name": "g", "args": {}}}]
    body = {"responseId": "r1", "candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model",
                                                                                               "parts": parts},
        "groundingMetadata": {"groundingChunks": [{"web": {"uri": "https://e.org", "title": "e.org"}}],
                              "groundingSupports": [{"segment": {"startIndex": 7, "endIndex": 12},
                                                     "groundingChunkIndices": [0]}]}}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "thoughtsTokenCount": 5,
                          "cachedContentTokenCount": 40}}
    answer, usage = convert_response(body, PRO)
    assert usage is not None
    message = answer["choices"][0]["message"]
    assert message["content"] == "Héllo world" and message["reasoning_content"] == "Weighing it."
    assert message["extra_content"] == {"google": {"thought_signature": "sig-text"}}
    assert [c.get("extra_content") for c in message["tool_calls"]] == [
        {"google": {"thought_signature": "sig-call"}}, None]
    assert message["annotations"] == [{"type": "url_citation", "url_citation": {
        "url": "https://e.org", "title": "e.org", "start_index": 6, "end_index": 11}}]
    assert answer["choices"][0]["finish_reason"] == "tool_calls"
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) == (100, 15, 40)


def test_stream_carries_signatures_on_deltas() -> None:
    stream = GeminiStream(PRO)
    state = StreamState()

    def event(parts: list[dict[str, Any]], finish: str | None = None) -> list[Any]:
        candidate: dict[str, Any] = {"index": 0, "content": {"role": "model", "parts": parts}}
        if finish:
            candidate["finishReason"] = finish
        return stream.convert(SSEEvent(orjson.dumps({"candidates": [candidate], "responseId": "r"})), state)

    thought = event([{"text": "Hmm.", "thought": True}])
    text = event([{"text": "Hi"}])
    call_chunk = event([{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "sig-call"}])
    last = event([{"text": "", "thoughtSignature": "sig-text"}], "STOP")
    assert thought[0]["choices"][0]["delta"] == {"role": "assistant", "reasoning_content": "Hmm."}
    assert text[0]["choices"][0]["delta"] == {"content": "Hi"}
    (delta_call,) = call_chunk[0]["choices"][0]["delta"]["tool_calls"]
    assert delta_call["index"] == 0 and delta_call["extra_content"] == {"google": {"thought_signature": "sig-call"}}
    assert last[0]["choices"][0]["delta"]["extra_content"] == {"google": {"thought_signature": "sig-text"}}
    assert last[0]["choices"][0]["finish_reason"] == "tool_calls"
    stream.convert(SSEEvent(b"", END_OF_BODY), state)
    assert state.done


SEARCH_CALL = {"toolCall": {"id": "s1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": ["q"]}},
               "thoughtSignature": "sig-search"}
SEARCH_RESULT = {"toolResponse": {"id": "s1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"results": []}},
                 "thoughtSignature": "sig-result"}  # its own signature kept apart (BerriAI/litellm#31115)
LATE_CALL = {"toolCall": {"id": "s2", "toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": ["r"]}}}
LAST_CALL = {"toolCall": {"id": "s3", "toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": ["s"]}}}


def test_search_parts_gathered_apart_with_where_they_stood() -> None:
    """Left out of the answer (whole and streamed), each whole with where it stood: before everything,
    or after the text and before the call that follows it (or at the end)."""
    parts = [SEARCH_CALL, SEARCH_RESULT, {"text": "Looking."}, LATE_CALL,
             {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "sig-call"}, LAST_CALL]
    expected = [{"at": 0, "part": SEARCH_CALL}, {"at": 0, "part": SEARCH_RESULT}, {"at": 1, "part": LATE_CALL},
                {"at": 2, "part": LAST_CALL}]
    hidden: list[dict[str, Any]] = []
    answer, _ = convert_response({"candidates": [{"content": {"role": "model", "parts": parts},
                                                  "finishReason": "STOP"}]}, PRO, hidden)
    assert hidden == expected and "toolCall" not in orjson.dumps(answer).decode()
    stream = GeminiStream(PRO)
    chunks = [stream.convert(SSEEvent(orjson.dumps({"candidates": [{"index": 0, "content": {
        "role": "model", "parts": [part]}}]})), StreamState()) for part in parts]
    assert stream.hidden == expected and "toolCall" not in orjson.dumps(chunks).decode()


def test_kept_search_parts_go_back_in_place_only_in_the_combination_mode() -> None:
    hidden = [{"at": 0, "part": SEARCH_CALL}, {"at": 0, "part": SEARCH_RESULT}, {"at": 1, "part": LATE_CALL},
              {"at": 9, "part": LAST_CALL}]
    req = {"messages": [{"role": "user", "content": "Weather?"},
                        {"role": "assistant", "content": "Looking.", "gemini_server_parts": hidden,
                         "tool_calls": [call("c1", "get_weather", {"city": "Paris"}, "sig-call")]},
                        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
           "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
                     {"type": "web_search"}]}
    body, _ = converted(req, combination=True)
    assert [list(p)[0] for p in body["contents"][1]["parts"]] == ["toolCall", "toolResponse", "text", "toolCall",
                                                                  "functionCall", "toolCall"]
    assert body["contents"][1]["parts"][:2] == [SEARCH_CALL, SEARCH_RESULT]
    for combination, tools in ((False, req["tools"]), (True, req["tools"][:1])):  # Vertex AI; no search asked
        body, _ = converted({**req, "tools": tools}, combination=combination)
        assert [list(p)[0] for p in body["contents"][1]["parts"]] == ["text", "functionCall"]
