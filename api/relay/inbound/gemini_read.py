"""A Gemini `generateContent` request → the internal form (api/upstream/reasoning.py).

Fields are read in both spellings: the REST API's camelCase and the snake_case the google-genai SDK
writes inside nested objects (`parameters_json_schema`, `thinking_config.thinking_level`, …).

Contents: `systemInstruction` parts and every turn's text parts stay apart; `thought` parts →
`reasoning_content`; inline and file data of any type → image parts (images) or file parts
(PDFs, audio, …); `functionCall` parts → tool calls (their ids, or ids made from their place), and
`functionResponse` parts → `tool` messages answering the call of that id (or the oldest unanswered
call of that name). A `thoughtSignature` is Gemini's own (kept on its call, or for a text part on
the message) unless it is one of ours: a sealed Claude state (written by this gateway when the
turn came from a Claude channel) → the assistant message's `thinking_blocks`, sealed reasoning text
→ its `reasoning_content`. Ours travel base64-wrapped, since google-genai decodes and re-encodes
every signature as base64 (`thought_signature: bytes`).

Request: generationConfig (sampling, `maxOutputTokens`, stop sequences, JSON output with
`responseSchema` in Gemini's dialect or `responseJsonSchema`, `thinkingConfig`), function
declarations (`parameters` in Gemini's dialect or `parametersJsonSchema`), Google Search → the
hosted `web_search`, `toolConfig`. Google's other tools and settings are noticed.
"""
from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Mapping
from typing import Any

import orjson

from api.relay.inbound.base import assistant_message, collapse, note
from api.relay.inbound.gemini_schema import camel, json_schema_of, to_json_schema
from api.upstream.chat import ChatMessage, ChatTool, ContentPart, FileRef, FunctionSpec, FunctionTool, ToolCall
from api.upstream.reasoning import ANTHROPIC, SEAL_PREFIX, TEXT, unseal, with_gemini_signature

WRAPPED_PREFIX = base64.b64encode(SEAL_PREFIX.encode()).decode()[:6]  # "Z3dyMS": a wrapped seal begins so
SEARCH_TOOLS = frozenset({"googleSearch", "googleSearchRetrieval"})
FUNCTION_TOOLS = "functionDeclarations"
LEVELS = {"MINIMAL": "minimal", "LOW": "low", "MEDIUM": "medium", "HIGH": "high"}
CHOICES = {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}
SAMPLING = (("temperature", "temperature"), ("topP", "top_p"), ("topK", "top_k"), ("maxOutputTokens", "max_tokens"),
            ("candidateCount", "n"), ("seed", "seed"), ("presencePenalty", "presence_penalty"),
            ("frequencyPenalty", "frequency_penalty"), ("logprobs", "top_logprobs"))
# Generation settings no other provider has: noticed when the request is converted.
GOOGLE_ONLY = ("responseModalities", "speechConfig", "mediaResolution", "imageConfig", "routingConfig")
_CAMEL = re.compile(r"([A-Z])")


@functools.lru_cache(maxsize=256)
def snake(name: str) -> str:
    return _CAMEL.sub(lambda m: "_" + m.group(1).lower(), name)


def pick(obj: Any, name: str) -> Any:
    """A field in camelCase or in snake_case (None when absent)."""
    if not isinstance(obj, Mapping):
        return None
    value = obj.get(name)
    return obj.get(snake(name)) if value is None else value


def wrap(sealed: str) -> str:
    """A sealed state as a thought signature google-genai keeps intact (valid base64)."""
    return base64.b64encode(sealed.encode()).decode()


def unwrap(signature: Any) -> str | None:
    """The sealed state in a thought signature (raw or base64-wrapped); None for Gemini's own."""
    if not isinstance(signature, str):
        return None
    if signature.startswith(SEAL_PREFIX):
        return signature
    if not signature.startswith(WRAPPED_PREFIX):
        return None
    try:
        text = base64.b64decode(signature.replace("-", "+").replace("_", "/") + "=" * (-len(signature) % 4),
                                validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return text if text.startswith(SEAL_PREFIX) else None


def is_ours(signature: Any) -> bool:
    return unwrap(signature) is not None


# -- contents ------------------------------------------------------------------------------------------


def texts_of(content: Any) -> list[ContentPart]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts = pick(content, "parts")
    return [{"type": "text", "text": str(p["text"])} for p in parts or ()
            if isinstance(p, Mapping) and isinstance(p.get("text"), str) and not p.get("thought")]


def media(part: Mapping[str, Any]) -> ContentPart | None:
    """inlineData / fileData → an image part (images) or a file part (anything else)."""
    inline = pick(part, "inlineData")
    if isinstance(inline, Mapping):
        mime = str(pick(inline, "mimeType") or "application/octet-stream")
        url = f"data:{mime};base64,{inline.get('data') or ''}"
        if mime.startswith("image/"):
            return {"type": "image_url", "image_url": {"url": url}}
        file: FileRef = {"file_data": url}
        if pick(inline, "displayName"):
            file["filename"] = str(pick(inline, "displayName"))
        return {"type": "file", "file": file}
    found = pick(part, "fileData")
    if isinstance(found, Mapping):
        uri = str(pick(found, "fileUri") or "")
        if str(pick(found, "mimeType") or "").startswith("image/"):
            return {"type": "image_url", "image_url": {"url": uri}}
        return {"type": "file", "file": {"file_url": uri}}
    return None


def _kind(part: Mapping[str, Any]) -> str:
    return camel(next((str(k) for k in part if camel(str(k)) not in ("thoughtSignature", "thought")), "part"))


class Contents:
    """Reads the turns in order, matching function responses to the calls before them."""

    def __init__(self, notices: list[str]) -> None:
        self.notices = notices
        self.pending: dict[str, list[str]] = {}  # function name → ids of its calls not answered yet

    def messages(self, body: Mapping[str, Any]) -> list[ChatMessage]:
        out: list[ChatMessage] = []
        system = texts_of(pick(body, "systemInstruction"))
        if system:
            out.append({"role": "system", "content": collapse(system)})
        turns = [t for t in pick(body, "contents") or () if isinstance(t, Mapping)]
        index = 0
        while index < len(turns):
            first = index
            parts = [p for p in pick(turns[index], "parts") or () if isinstance(p, Mapping)]
            if turns[index].get("role") == "model":
                # consecutive model turns are one assistant turn (google-genai's streamed automatic
                # function calling records one per chunk)
                while index + 1 < len(turns) and turns[index + 1].get("role") == "model":
                    index += 1
                    parts += [p for p in pick(turns[index], "parts") or () if isinstance(p, Mapping)]
                out.append(self.model(parts, first))
            else:
                out.extend(self.user(parts))
            index += 1
        return out

    def model(self, parts: list[Mapping[str, Any]], turn_index: int) -> ChatMessage:
        content: list[ContentPart] = []
        calls: list[ToolCall] = []
        reasoning: list[str] = []
        sealed_reasoning: list[str] = []  # ours, for clients that drop thought parts
        blocks: list[dict[str, Any]] = []
        text_signature: str | None = None
        for index, part in enumerate(parts):
            signature = pick(part, "thoughtSignature")
            sealed = unseal(unwrap(signature))
            if sealed is not None:
                signature = None
                if sealed[0] == ANTHROPIC:
                    blocks.extend(b for b in sealed[1].get("blocks") or () if isinstance(b, dict))
                elif sealed[0] == TEXT and sealed[1].get("text"):
                    sealed_reasoning.append(str(sealed[1]["text"]))
            call = pick(part, "functionCall")
            if isinstance(call, Mapping):
                name = str(call.get("name") or "")
                call_id = str(call.get("id") or f"call_{turn_index}_{index}")
                self.pending.setdefault(name, []).append(call_id)
                calls.append(with_gemini_signature({"id": call_id, "type": "function", "function": {
                    "name": name, "arguments": orjson.dumps(call.get("args") or {}).decode()}}, signature))
            elif part.get("thought"):
                reasoning.append(str(part.get("text") or ""))
                text_signature = text_signature or signature
            elif isinstance(part.get("text"), str):
                content.append({"type": "text", "text": part["text"]})
                text_signature = text_signature or signature
            elif (found := media(part)) is not None:
                content.append(found)
            elif sealed is None:
                note(self.notices, f"contents.{_kind(part)}")
        reasoning = reasoning if any(reasoning) else sealed_reasoning
        if not any(p["type"] == "text" and p["text"] for p in content) and all(p["type"] == "text" for p in content):
            content = []  # empty text parts only carried signatures
        return assistant_message(content, calls, reasoning, blocks, text_signature)

    def response(self, answer: Mapping[str, Any]) -> ChatMessage:
        name = str(answer.get("name") or "")
        pending = self.pending.get(name) or []
        call_id = str(answer.get("id") or "") or (pending.pop(0) if pending else f"call_{name}")
        text = orjson.dumps(answer.get("response") or {}).decode()
        extra = [p for item in answer.get("parts") or () if isinstance(item, Mapping) and (p := media(item))]
        return {"role": "tool", "tool_call_id": call_id,
                "content": [{"type": "text", "text": text}, *extra] if extra else text}

    def user(self, parts: list[Mapping[str, Any]]) -> list[ChatMessage]:
        """Function responses first (as `tool` messages), then the rest as a user message. Responses
        with an id answer that call; the others, the oldest unanswered calls of their name."""
        answers = [a for p in parts if isinstance(a := pick(p, "functionResponse"), Mapping)]
        for answer in answers:
            pending = self.pending.get(str(answer.get("name") or "")) or []
            if answer.get("id") in pending:
                pending.remove(answer["id"])
        out = [self.response(answer) for answer in answers]
        content: list[ContentPart] = []
        for part in parts:
            if pick(part, "functionResponse") is not None:
                continue
            if isinstance(part.get("text"), str):
                content.append({"type": "text", "text": part["text"]})
            elif (found := media(part)) is not None:
                content.append(found)
            else:
                note(self.notices, f"contents.{_kind(part)}")
        if content:
            out.append({"role": "user", "content": collapse(content)})
        return out


# -- configuration ---------------------------------------------------------------------------------------


def read_thinking(config: Any) -> dict[str, Any]:
    """thinkingLevel → reasoning_effort; thinkingBudget → the internal `thinking` (0: disabled,
    -1: dynamic, i.e. adaptive with a medium effort) and the effort nearest to it."""
    out: dict[str, Any] = {}
    level = pick(config, "thinkingLevel")
    budget = pick(config, "thinkingBudget")
    if isinstance(budget, int) and not isinstance(budget, bool):
        if budget == 0:
            out["thinking"] = {"type": "disabled"}
        elif budget < 0:
            out["thinking"] = {"type": "adaptive"}
            out["reasoning_effort"] = "medium"
        else:
            out["thinking"] = {"type": "enabled", "budget_tokens": budget}
            out["reasoning_effort"] = "low" if budget < 4096 else "medium" if budget < 16384 else "high"
    if isinstance(level, str) and level.upper() in LEVELS:
        out["reasoning_effort"] = LEVELS[level.upper()]
    return out


def response_format(config: Mapping[str, Any]) -> dict[str, Any] | None:
    schema = json_schema_of(pick(config, "responseJsonSchema"))
    if schema is None and pick(config, "responseSchema") is not None:
        schema = to_json_schema(pick(config, "responseSchema"))
    if isinstance(schema, Mapping):
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
    if pick(config, "responseMimeType") == "application/json":
        return {"type": "json_object"}
    return None


def read_config(config: Any, notices: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(config, Mapping):
        return out
    for theirs, ours in SAMPLING:
        value = pick(config, theirs)
        if value is not None:
            out[ours] = int(value) if ours == "top_k" and isinstance(value, float) and value.is_integer() else value
    if pick(config, "responseLogprobs") is not None:
        out["logprobs"] = pick(config, "responseLogprobs")
    stop = pick(config, "stopSequences")
    if isinstance(stop, list) and stop:
        out["stop"] = stop
    fmt = response_format(config)
    if fmt is not None:
        out["response_format"] = fmt
    out.update(read_thinking(pick(config, "thinkingConfig")))
    for name in GOOGLE_ONLY:
        if pick(config, name) is not None:
            note(notices, f"generationConfig.{name}")
    return out


def _declaration(declaration: Mapping[str, Any]) -> FunctionTool:
    schema = json_schema_of(pick(declaration, "parametersJsonSchema"))
    if schema is None and pick(declaration, "parameters") is not None:
        schema = to_json_schema(pick(declaration, "parameters"))
    function: FunctionSpec = {"name": str(declaration.get("name") or ""), "parameters": schema if isinstance(
        schema, Mapping) else {"type": "object", "properties": {}}}
    if declaration.get("description"):
        function["description"] = str(declaration["description"])
    return {"type": "function", "function": function}


def read_tools(body: Mapping[str, Any], notices: list[str]) -> list[ChatTool]:
    functions: list[ChatTool] = []
    search = False
    for tool in pick(body, "tools") or ():
        if not isinstance(tool, Mapping):
            continue
        for key, value in tool.items():
            name = camel(key)
            if name == FUNCTION_TOOLS:
                functions.extend(_declaration(d) for d in value or () if isinstance(d, Mapping))
            elif name in SEARCH_TOOLS:
                search = True
            elif value is not None:
                note(notices, f"tools.{name}")
    return functions + ([{"type": "web_search"}] if search else [])


def tool_choice(body: Mapping[str, Any], tools: list[ChatTool]) -> tuple[Any, list[ChatTool]]:
    """(tool_choice, tools): `ANY` with allowed names calls one of those, so only those are offered."""
    calling = pick(pick(body, "toolConfig"), "functionCallingConfig")
    if not isinstance(calling, Mapping):
        return None, tools
    mode = str(calling.get("mode") or "").upper()
    allowed = pick(calling, "allowedFunctionNames")
    if mode == "ANY" and isinstance(allowed, list) and allowed:
        tools = [t for t in tools if t["type"] != "function" or t["function"]["name"] in allowed]
        if len(allowed) == 1:
            return {"type": "function", "function": {"name": str(allowed[0])}}, tools
    return CHOICES.get(mode), tools


def read_request(body: Mapping[str, Any], model: str, notices: list[str]) -> dict[str, Any]:
    """The whole generateContent body → the internal chat body (without `stream`)."""
    out: dict[str, Any] = {"model": model, "messages": Contents(notices).messages(body)}
    out.update(read_config(pick(body, "generationConfig"), notices))
    tools = read_tools(body, notices)
    choice, tools = tool_choice(body, tools)
    if tools:
        out["tools"] = tools
        if choice is not None:
            out["tool_choice"] = choice
    for name in ("cachedContent", "safetySettings"):
        if pick(body, name) is not None:
            note(notices, name)
    return out
