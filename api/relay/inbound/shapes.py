"""The client formats' bodies checked as sent, before they are read into the internal form (and so
before anything is counted, priced or charged, and before a native channel gets them as they are):
nesting depth, then every field the gateway reads, with the type it reads. A problem raises
api.relay.validate.Invalid naming the field in the client's own spelling; the route answers it 400 in
the client's own error shape. What the gateway does not read passes through for the upstream to judge.

Gemini fields are read in both spellings (camelCase, and the snake_case google-genai writes inside
nested objects): the check reads the one the gateway reads (`pick`)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.relay.inbound.gemini_read import pick
from api.relay.validate import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    NUMBER,
    OBJECT,
    OBJECTS,
    STRING,
    STRING_OR_OBJECT,
    STRING_OR_OBJECTS,
    STRINGS,
    Invalid,
    Kind,
    check_depth,
    check_fields,
    check_parts,
    is_kind,
    need,
)

# -- Anthropic Messages -----------------------------------------------------------------------------

ANTHROPIC_FIELDS: Mapping[str, Kind] = {
    "model": STRING, "max_tokens": INTEGER, "stream": BOOLEAN, "temperature": NUMBER, "top_p": NUMBER,
    "top_k": NUMBER, "stop_sequences": STRINGS, "system": STRING_OR_OBJECTS, "tools": OBJECTS, "tool_choice": OBJECT,
    "thinking": OBJECT, "metadata": OBJECT, "output_config": OBJECT, "cache_control": OBJECT,
}
BLOCK_FIELDS: Mapping[str, Kind] = {
    "text": STRING, "id": STRING, "name": STRING, "input": OBJECT, "tool_use_id": STRING, "is_error": BOOLEAN,
    "thinking": STRING, "signature": STRING, "data": STRING, "source": STRING_OR_OBJECT, "cache_control": OBJECT,
    "title": STRING,
}
SOURCE_FIELDS: Mapping[str, Kind] = {"type": STRING, "media_type": STRING, "data": STRING, "url": STRING,
                                     "content": STRING_OR_OBJECTS}
TOOL_FIELDS: Mapping[str, Kind] = {"type": STRING, "name": STRING, "description": STRING, "input_schema": OBJECT,
                                   "strict": BOOLEAN, "cache_control": OBJECT}


def check_anthropic(body: dict[str, Any]) -> None:
    """A Messages (or count_tokens) body."""
    check_depth(body)
    messages = need(body, "messages", ARRAY)
    check_fields(body, ANTHROPIC_FIELDS)
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise Invalid(f"messages.{i}", "must be an object")
        need(message, "role", STRING, f"messages.{i}.")
        content = message.get("content")
        if isinstance(content, list):
            _anthropic_blocks(content, f"messages.{i}.content")
        elif content is not None and not isinstance(content, str):
            raise Invalid(f"messages.{i}.content", "must be a string or an array of content blocks")
    system = body.get("system")
    if isinstance(system, list):
        _anthropic_blocks(system, "system")
    for i, tool in enumerate(body.get("tools") or ()):
        check_fields(tool, TOOL_FIELDS, f"tools.{i}.")
    for name, kinds in (("tool_choice", {"type": STRING, "name": STRING, "disable_parallel_tool_use": BOOLEAN}),
                        ("thinking", {"type": STRING, "budget_tokens": INTEGER}),
                        ("metadata", {"user_id": STRING}),
                        ("output_config", {"effort": STRING, "format": OBJECT})):
        value = body.get(name)
        if value is not None:
            check_fields(value, kinds, f"{name}.")


def _anthropic_blocks(blocks: list[Any], param: str) -> None:
    for j, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise Invalid(f"{param}.{j}", "must be an object")
        need(block, "type", STRING, f"{param}.{j}.")
        if len(block) == 1:
            continue
        check_fields(block, BLOCK_FIELDS, f"{param}.{j}.")
        source = block.get("source")
        if isinstance(source, dict):
            check_fields(source, SOURCE_FIELDS, f"{param}.{j}.source.")
            if isinstance(source.get("content"), list):
                _anthropic_blocks(source["content"], f"{param}.{j}.source.content")
        inner = block.get("content")
        if isinstance(inner, list):
            _anthropic_blocks(inner, f"{param}.{j}.content")
        elif inner is not None and not isinstance(inner, (str, dict)):
            raise Invalid(f"{param}.{j}.content", "must be a string or an array of content blocks")


# -- Gemini ----------------------------------------------------------------------------------------------

GENERATION_FIELDS: Mapping[str, Kind] = {
    "temperature": NUMBER, "topP": NUMBER, "topK": NUMBER, "presencePenalty": NUMBER, "frequencyPenalty": NUMBER,
    "maxOutputTokens": INTEGER, "candidateCount": INTEGER, "seed": INTEGER, "logprobs": INTEGER,
    "responseLogprobs": BOOLEAN, "stopSequences": STRINGS, "responseMimeType": STRING, "thinkingConfig": OBJECT,
    "responseSchema": OBJECT,
}
PART_FIELDS: Mapping[str, Kind] = {
    "text": STRING, "thought": BOOLEAN, "thoughtSignature": STRING, "inlineData": OBJECT, "fileData": OBJECT,
    "functionCall": OBJECT, "functionResponse": OBJECT,
}
NESTED_FIELDS: Mapping[str, Mapping[str, Kind]] = {
    "inlineData": {"mimeType": STRING, "data": STRING, "displayName": STRING},
    "fileData": {"mimeType": STRING, "fileUri": STRING},
    "functionCall": {"name": STRING, "id": STRING, "args": OBJECT},
    "functionResponse": {"name": STRING, "id": STRING, "response": OBJECT, "parts": OBJECTS},
}
DECLARATION_FIELDS: Mapping[str, Kind] = {"name": STRING, "description": STRING, "parameters": OBJECT}


def _picked(obj: Mapping[str, Any], kinds: Mapping[str, Kind], prefix: str) -> None:
    """check_fields for Gemini's two spellings: the value the gateway reads of each field."""
    for name, kind in kinds.items():
        value = pick(obj, name)
        if value is not None and not is_kind(value, kind):
            raise Invalid(prefix + name, f"must be {kind[1]}")


def _content(content: Any, param: str) -> None:
    """A Content: an object with a role and an array of parts."""
    if not isinstance(content, dict):
        raise Invalid(param, "must be an object")
    role = content.get("role")
    if role is not None and not isinstance(role, str):
        raise Invalid(f"{param}.role", "must be a string")
    parts = pick(content, "parts")
    if parts is None:
        return
    if not isinstance(parts, list):
        raise Invalid(f"{param}.parts", "must be an array")
    for j, part in enumerate(parts):
        where = f"{param}.parts[{j}]"
        if not isinstance(part, dict):
            raise Invalid(where, "must be an object")
        _picked(part, PART_FIELDS, f"{where}.")
        for name, kinds in NESTED_FIELDS.items():
            inner = pick(part, name)
            if inner is not None:
                _picked(inner, kinds, f"{where}.{name}.")


def check_gemini(body: dict[str, Any]) -> None:
    """A generateContent (or streamGenerateContent, countTokens) body."""
    check_depth(body)
    wrapped = pick(body, "generateContentRequest")
    if wrapped is not None:  # countTokens may wrap a whole request
        if not isinstance(wrapped, dict):
            raise Invalid("generateContentRequest", "must be an object")
        body = wrapped
    contents = pick(body, "contents")
    if not isinstance(contents, list):
        raise Invalid("contents", "must be an array")
    for i, content in enumerate(contents):
        _content(content, f"contents[{i}]")
    system = pick(body, "systemInstruction")
    if system is not None and not isinstance(system, str):
        _content(system, "systemInstruction")
    _picked(body, {"generationConfig": OBJECT, "tools": OBJECTS, "toolConfig": OBJECT, "cachedContent": STRING},
            "")
    config = pick(body, "generationConfig")
    if config is not None:
        _picked(config, GENERATION_FIELDS, "generationConfig.")
        thinking = pick(config, "thinkingConfig")
        if thinking is not None:
            _picked(thinking, {"thinkingBudget": INTEGER, "thinkingLevel": STRING, "includeThoughts": BOOLEAN},
                    "generationConfig.thinkingConfig.")
    for i, tool in enumerate(pick(body, "tools") or ()):
        declarations = pick(tool, "functionDeclarations")
        if declarations is None:
            continue
        if not isinstance(declarations, list):
            raise Invalid(f"tools[{i}].functionDeclarations", "must be an array")
        for k, declaration in enumerate(declarations):
            where = f"tools[{i}].functionDeclarations[{k}]"
            if not isinstance(declaration, dict):
                raise Invalid(where, "must be an object")
            _picked(declaration, DECLARATION_FIELDS, f"{where}.")
    calling = pick(pick(body, "toolConfig"), "functionCallingConfig")
    if calling is not None:
        if not isinstance(calling, dict):
            raise Invalid("toolConfig.functionCallingConfig", "must be an object")
        _picked(calling, {"mode": STRING, "allowedFunctionNames": STRINGS}, "toolConfig.functionCallingConfig.")


def _embed_request(request: Any, param: str) -> None:
    if not isinstance(request, dict):
        raise Invalid(param, "must be an object")
    content = request.get("content")
    if not isinstance(content, str):
        _content(content, f"{param}content")
    _picked(request, {"outputDimensionality": INTEGER, "taskType": STRING, "title": STRING, "model": STRING},
            param)


def check_gemini_embed(body: dict[str, Any], batch: bool) -> None:
    """An embedContent body, or batchEmbedContents' `requests`."""
    check_depth(body)
    if not batch:
        _embed_request(body, "")
        return
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        raise Invalid("requests", "must be a non-empty array")
    for i, request in enumerate(requests):
        _embed_request(request, f"requests[{i}].")


# -- OpenAI Responses --------------------------------------------------------------------------------------

RESPONSES_FIELDS: Mapping[str, Kind] = {
    "model": STRING, "instructions": STRING, "max_output_tokens": INTEGER, "temperature": NUMBER, "top_p": NUMBER,
    "stream": BOOLEAN, "parallel_tool_calls": BOOLEAN, "user": STRING, "tools": OBJECTS,
    "tool_choice": STRING_OR_OBJECT, "reasoning": OBJECT, "text": OBJECT, "background": BOOLEAN,
}
ITEM_FIELDS: Mapping[str, Kind] = {
    "type": STRING, "role": STRING, "id": STRING, "call_id": STRING, "name": STRING, "namespace": STRING,
    "arguments": STRING_OR_OBJECT, "input": STRING, "action": OBJECT, "summary": OBJECTS, "encrypted_content": STRING,
    "output": ((str, list, dict), "a string, an array of content parts or an object", None), "tools": OBJECTS,
    "execution": STRING,
}
RESPONSES_TOOL_FIELDS: Mapping[str, Kind] = {
    "type": STRING, "name": STRING, "description": STRING, "parameters": OBJECT, "strict": BOOLEAN, "tools": OBJECTS,
    "format": OBJECT, "execution": STRING,
}


def check_responses(body: dict[str, Any]) -> None:
    """A Responses (or compact) body."""
    check_depth(body)
    check_fields(body, RESPONSES_FIELDS)
    given = body.get("input")
    if isinstance(given, list):
        for i, item in enumerate(given):
            _item(item, f"input[{i}]")
    elif given is not None and not isinstance(given, str):
        raise Invalid("input", "must be a string or an array of input items")
    for i, tool in enumerate(body.get("tools") or ()):
        _responses_tool(tool, f"tools[{i}]")
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        check_fields(choice, {"type": STRING, "name": STRING}, "tool_choice.")
    reasoning = body.get("reasoning")
    if reasoning is not None:
        check_fields(reasoning, {"effort": STRING, "summary": STRING}, "reasoning.")
    text = body.get("text")
    if text is not None:
        check_fields(text, {"format": OBJECT, "verbosity": STRING}, "text.")
        fmt = text.get("format")
        if fmt is not None:
            check_fields(fmt, {"type": STRING, "name": STRING, "schema": OBJECT, "strict": BOOLEAN}, "text.format.")


def _item(item: Any, param: str) -> None:
    if not isinstance(item, dict):
        raise Invalid(param, "must be an object")
    check_fields(item, ITEM_FIELDS, f"{param}.")
    content = item.get("content")
    if isinstance(content, list):
        check_parts(content, f"{param}.content")
    elif content is not None and not isinstance(content, str):
        raise Invalid(f"{param}.content", "must be a string or an array of content parts")
    for name in ("output", "summary"):
        value = item.get(name)
        if isinstance(value, list):
            check_parts(value, f"{param}.{name}")
    for i, tool in enumerate(item.get("tools") or ()):
        _responses_tool(tool, f"{param}.tools[{i}]")


def _responses_tool(tool: dict[str, Any], param: str) -> None:
    check_fields(tool, RESPONSES_TOOL_FIELDS, f"{param}.")
    for i, member in enumerate(tool.get("tools") or ()):
        check_fields(member, RESPONSES_TOOL_FIELDS, f"{param}.tools[{i}].")
