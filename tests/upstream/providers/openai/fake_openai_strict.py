"""A strict OpenAI chat-completions upstream: `POST /v1/chat/completions` (and Azure's deployment
path), `GET /v1/models`; any other path is a 404 with OpenAI's "Invalid URL" body. It refuses, with
OpenAI's status and error shape, what OpenAI refuses for the model asked (each rule names where the
refusal is documented or reported), and in DeepSeek mode (a `deepseek-*` model, or `mode="deepseek"`)
what DeepSeek refuses. Answers are JSON or SSE (the usage chunk when `stream_options.include_usage`), with usage
(`cached_tokens` when `cached` is set); `script` drives agent loops (tests/upstream/providers/agent_script.py).
Every request body it received is in `seen`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.agent_script import AgentView, Script, Turn
from tests.upstream.providers.kit import FakeBase

REPLY = "Hello from a strict OpenAI model."
LOW_TO_HIGH = ("low", "medium", "high")
# Top-level arguments of chat completions (openai-python, types/chat/completion_create_params.py).
CHAT_FIELDS = frozenset({
    "model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "moderation", "n", "parallel_tool_calls",
    "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
    "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
    "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
    "web_search_options"})
# Message properties per role, and content part types per role (openai-python, types/chat/*_message_param.py).
MESSAGE_KEYS = {"system": {"role", "content", "name"}, "developer": {"role", "content", "name"},
                "user": {"role", "content", "name"}, "tool": {"role", "content", "tool_call_id"},
                "assistant": {"role", "content", "name", "refusal", "tool_calls", "function_call", "audio"}}
PART_TYPES = {"user": ("text", "image_url", "input_audio", "file"), "assistant": ("text", "refusal")}
FILE_KEYS = {"file_data", "file_id", "filename"}
SCHEMA_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
# Sampling a reasoning model refuses outright ("Unsupported parameter: 'stop' is not supported with this
# model": huggingface/smolagents#1671 for gpt-5-mini, #1893 for gpt-5.2; platform.openai.com/docs/guides/reasoning).
REASONING_REFUSED = ("presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "logit_bias", "stop")


@dataclass(frozen=True)
class Model:
    """What one model refuses: the output cap, reasoning-model rules, the efforts it takes (None:
    `reasoning_effort` refused), DeepSeek's rules, whether it thinks by itself."""

    cap: int | None = None
    # Unknown message and part properties refused: gpt-3.5-turbo, gpt-4 and gpt-4-turbo do
    # (openai/openai-node#1161, transitive-bullshit/agentic#531); gpt-4o and later chat models let
    # them pass (the same #1161; microsoft/agent-framework#2344).
    closed: bool = False
    reasoning: bool = False
    efforts: tuple[str, ...] | None = None
    deepseek: bool = False
    thinks: bool = False


# Output caps: developers.openai.com/api/docs/models/<model>; efforts: the API's own refusal lists
# ("Supported values are: 'none', 'low', 'medium', and 'high'": openai/openai-agents-python#2089 for gpt-5.1).
MODELS = {
    "gpt-3.5-turbo": Model(cap=4096, closed=True), "gpt-4": Model(cap=8192, closed=True),
    "gpt-4-turbo": Model(cap=4096, closed=True), "gpt-4o": Model(cap=16384), "gpt-4.1": Model(cap=32768),
    "gpt-5": Model(cap=128000, reasoning=True, efforts=("minimal", *LOW_TO_HIGH)), "gpt-5-chat": Model(cap=16384),
    "gpt-5.1": Model(cap=128000, reasoning=True, efforts=("none", *LOW_TO_HIGH)),
    "gpt-5.2": Model(cap=128000, reasoning=True, efforts=("none", *LOW_TO_HIGH, "xhigh")),
    "gpt-5.6": Model(cap=128000, reasoning=True, efforts=("none", *LOW_TO_HIGH, "xhigh", "max")),
    "o1": Model(cap=100000, reasoning=True, efforts=LOW_TO_HIGH), "o1-mini": Model(cap=65536, reasoning=True),
    "o3": Model(cap=100000, reasoning=True, efforts=LOW_TO_HIGH),
    "o4-mini": Model(cap=100000, reasoning=True, efforts=LOW_TO_HIGH),
    # api-docs.deepseek.com (models & pricing: 8K / 64K output; guides/thinking_mode)
    "deepseek-chat": Model(cap=8192, deepseek=True), "deepseek-reasoner": Model(cap=65536, deepseek=True, thinks=True),
}


def model_of(name: str) -> Model | None:
    found = [prefix for prefix in MODELS if name == prefix or name.startswith(prefix + "-")]
    return MODELS[max(found, key=len)] if found else None


def listed(values: tuple[str, ...]) -> str:
    quoted = [f"'{v}'" for v in values]
    if len(quoted) < 3:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


def deepseek_thinks(body: dict[str, Any], model: Model) -> bool:
    """DeepSeek's thinking mode: `thinking: {type: enabled}`, or deepseek-reasoner unless disabled."""
    given = body.get("thinking")
    kind = given.get("type") if isinstance(given, dict) else None
    return model.deepseek and (kind == "enabled" or (model.thinks and kind != "disabled"))


class Refused(Exception):
    """A 400 in OpenAI's error shape."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param, self.code = message, param, code


def unknown(path: str) -> Refused:
    # The shape of OpenAI's newer validator: teabranch/open-responses-server#41, bestruirui/octopus#31.
    return Refused(f"Unknown parameter: '{path}'.", path, "unknown_parameter")


def check_arguments(body: dict[str, Any], model: Model) -> None:
    for name in body if not model.deepseek else ():
        if name in CHAT_FIELDS:
            continue
        if model.reasoning:  # teabranch/open-responses-server#41 (o4-mini: "Unknown parameter: 'reasoning'.")
            raise unknown(name)
        # xlinx/sd-webui-decadetw-auto-prompt-llm#29 (top_k), nashsu/llm_wiki#336 (thinking)
        raise Refused(f"Unrecognized request argument supplied: {name}")
    effort = body.get("reasoning_effort")
    if effort is not None and not model.deepseek:
        if model.efforts is None and not model.reasoning:  # coroot/coroot#698 (gpt-4o-mini)
            raise Refused("Unrecognized request argument supplied: reasoning_effort")
        if model.efforts is None:
            raise Refused("Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                          "reasoning_effort", "unsupported_parameter")
        if effort not in model.efforts:  # livekit/agents#3966, openai/openai-agents-python#2089
            raise Refused(f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. "
                          f"Supported values are: {listed(model.efforts)}.", "reasoning_effort", "unsupported_value")
    if model.reasoning:
        if "max_tokens" in body:  # teilomillet/gollm#33 (o1, o3-mini), griptape-ai/ComfyUI-Griptape#312 (gpt-5)
            raise Refused("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                          "'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
        for name in ("temperature", "top_p"):  # leafo/lua-openai#12 (o1-mini), QwenLM/qwen-code#921 (gpt-5-mini)
            if body.get(name) not in (None, 1):
                raise Refused(f"Unsupported value: '{name}' does not support {body[name]} with this model. Only the "
                              "default (1) value is supported.", name, "unsupported_value")
        for name in REASONING_REFUSED:
            if body.get(name) is not None:
                raise Refused(f"Unsupported parameter: '{name}' is not supported with this model.", name,
                              "unsupported_parameter")
    limit_name = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    limit = body.get(limit_name)
    if model.cap and isinstance(limit, int) and limit > model.cap:
        if model.deepseek:  # api-docs.deepseek.com/quick_start/pricing: the output limits
            raise Refused(f"Invalid max_tokens value, the valid range of max_tokens is [1, {model.cap}]")
        # ChatGPTNextWeb/NextChat#3195, enoch3712/ExtractThinker#346 (gpt-4o: 16384)
        raise Refused(f"{limit_name} is too large: {limit}. This model supports at most {model.cap} completion "
                      f"tokens, whereas you provided {limit}.", limit_name)


def check_messages(body: dict[str, Any], model: Model) -> None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Refused("[] is too short - 'messages'", "messages")
    thinks = deepseek_thinks(body, model)
    for i, message in enumerate(messages):
        role = message.get("role")
        allowed = MESSAGE_KEYS.get(role, set()) | ({"reasoning_content"} if model.deepseek else set())
        extra = [k for k in message if k not in allowed] if model.closed else []
        if extra:
            names = ", ".join(f"'{k}'" for k in extra)
            raise Refused(f"Additional properties are not allowed ({names} {'was' if len(extra) == 1 else 'were'} "
                          f"unexpected) - 'messages.{i}'")
        content = message.get("content")
        for j, part in enumerate(content if isinstance(content, list) else ()):
            check_part(part, f"messages[{i}].content[{j}]", PART_TYPES.get(role, ("text",)), model)
        calls = message.get("tool_calls")
        if calls == []:  # openai/openai-node#1341
            raise Refused(f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum length "
                          "1, but got an empty array instead.", f"messages[{i}].tool_calls", "empty_array")
        for k, call in enumerate(calls if model.closed else ()):
            for key in call:
                if key not in ("id", "type", "function", "custom"):
                    raise unknown(f"messages[{i}].tool_calls[{k}].{key}")
        if thinks and role == "assistant" and calls and "reasoning_content" not in message:
            # api-docs.deepseek.com/guides/thinking_mode#tool-calls; continuedev/continue#9831
            raise Refused(f"Missing `reasoning_content` field in the assistant message at message index {i}. For "
                          "more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode"
                          "#tool-calls")


def check_part(part: dict[str, Any], path: str, types: tuple[str, ...], model: Model) -> None:
    kind = part.get("type")
    if kind not in types:  # the role's part types (openai-python); OpenAI's invalid_value shape
        raise Refused(f"Invalid value: '{kind}'. Supported values are: {listed(types)}.", f"{path}.type",
                      "invalid_value")
    for key in part if model.closed else ():
        if key not in ("type", kind):
            raise unknown(f"{path}.{key}")
    if kind == "file":
        file = part.get("file") or {}
        for key in file if model.closed else ():
            if key not in FILE_KEYS:
                raise unknown(f"{path}.file.{key}")
        if not file.get("file_id") and not (file.get("file_data") and file.get("filename")):
            # openai/openai-agents-python#1513, langchain-ai/langchainjs#9512: inline data needs a filename
            raise Refused(f"Missing required parameter: '{path}.file.file_id'.", f"{path}.file.file_id",
                          "missing_required_parameter")


# Identifiers OpenAI takes up to 64 characters ("Invalid 'user': string too long. Expected a string with
# maximum length 64, but got a string with length 150 instead." for Claude Code's `metadata.user_id`:
# maximhq/bifrost#1000, ujisati/claude-code-provider-proxy#11; `safety_identifier`: mnfst/llm-gateway#2789).
IDENTIFIER_LIMITS = {"user": 64, "safety_identifier": 64}


def check_identifiers(body: dict[str, Any]) -> None:
    for name, limit in IDENTIFIER_LIMITS.items():
        value = body.get(name)
        if isinstance(value, str) and len(value) > limit:
            raise Refused(f"Invalid '{name}': string too long. Expected a string with maximum length {limit}, but "
                          f"got a string with length {len(value)} instead.", name, "string_above_max_length")


def check_response_format(body: dict[str, Any]) -> None:
    """A structured output's schema in JSON Schema (Gemini's "OBJECT" is refused, as in tool parameters)."""
    fmt = body.get("response_format")
    spec = fmt.get("json_schema") if isinstance(fmt, dict) and fmt.get("type") == "json_schema" else None
    bad = bad_type(spec.get("schema")) if isinstance(spec, dict) else None
    if bad is not None:
        raise Refused(f"Invalid schema for response_format '{spec.get('name')}': '{bad}' is not valid under any of "
                      "the given schemas.", "response_format", "invalid_json_schema")


def check_tools(body: dict[str, Any]) -> None:
    tools = body.get("tools")
    if tools is None:
        return
    if tools == []:  # continuedev/continue#3370
        raise Refused("Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty "
                      "array instead.", "tools", "empty_array")
    for i, tool in enumerate(tools):
        if tool.get("type") not in ("function", "custom"):  # openai-python ChatCompletionToolUnionParam
            raise Refused(f"Invalid value: '{tool.get('type')}'. Supported values are: 'function' and 'custom'.",
                          f"tools[{i}].type", "invalid_value")
        for key in tool:
            if key not in ("type", "function", "custom"):
                raise unknown(f"tools[{i}].{key}")
        function = tool.get("function") or {}
        for key in function:
            if key not in ("name", "description", "parameters", "strict"):
                raise unknown(f"tools[{i}].function.{key}")
        bad = bad_type(function.get("parameters") or {"type": "object"})
        if bad is not None:  # the shape: FoundationAgents/OpenManus#1162 (invalid_function_parameters)
            raise Refused(f"Invalid schema for function '{function.get('name')}': '{bad}' is not valid under any of "
                          "the given schemas.", f"tools[{i}].function.parameters", "invalid_function_parameters")


def bad_type(schema: Any) -> str | None:
    """The first type name in a schema that is not JSON Schema's (Gemini's "OBJECT", …)."""
    if isinstance(schema, list):
        return next((bad for item in schema if (bad := bad_type(item)) is not None), None)
    if not isinstance(schema, dict):
        return None
    kinds = schema.get("type")
    for kind in kinds if isinstance(kinds, list) else [kinds] if kinds is not None else []:
        if kind not in SCHEMA_TYPES:
            return str(kind)
    for key, value in schema.items():
        nested = value.values() if key in ("properties", "$defs", "definitions") and isinstance(value, dict) else \
            [value] if key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "not") else []
        for item in nested:
            if (bad := bad_type(item)) is not None:
                return bad
    return None


def view_of(body: dict[str, Any]) -> AgentView:
    """The request as an agent script sees it."""
    view = AgentView()
    for tool in body.get("tools") or ():
        function = tool.get("function") or {}
        view.tools[function.get("name") or ""] = function.get("parameters") or {}
    for message in body.get("messages") or ():
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(
            p.get("text") or "" for p in content or () if isinstance(p, dict) and p.get("type") == "text")
        if message.get("role") == "tool":
            view.tool_results.append(text)
        elif message.get("role") == "user":
            view.user_texts.append(text)
        elif message.get("role") == "assistant":
            view.turns += 1
    return view


@dataclass
class FakeOpenAI(FakeBase):
    key: str = "sk-openai-upstream"
    mode: str = ""  # "deepseek": DeepSeek's rules and answers whatever the model
    reply: str = REPLY
    thinking: str = "Let me think about it."  # reasoning_content of a thinking DeepSeek answer
    usage: tuple[int, int] = (40, 12)  # (prompt, completion) reported
    cached: int = 0  # of the prompt tokens, read from the cache
    script: Script | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # path and query of each chat request

    def app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self.chat)
        app.router.add_post("/openai/v1/chat/completions", self.chat)  # Azure's v1 API
        app.router.add_get("/v1/models", self.models)
        app.router.add_route("*", "/{tail:.*}", self.not_found)
        return app

    @staticmethod
    def error(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None,
              code: str | None = None) -> web.Response:
        return web.json_response({"error": {"message": message, "type": kind, "param": param, "code": code}},
                                 status=status)

    async def not_found(self, request: web.Request) -> web.Response:
        return self.error(404, f"Invalid URL ({request.method} {request.path})")

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": name, "object": "model", "created": 1_700_000_000, "owned_by": "openai"} for name in MODELS]})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        given = request.headers.get("api-key") or request.headers.get("Authorization", "").removeprefix("Bearer ")
        if given != self.key:
            return self.error(401, "Incorrect API key provided.", code="invalid_api_key")
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return self.error(400, "We could not parse the JSON body of your request.")
        self.seen.append(body)
        self.paths.append(request.path_qs)
        version = request.query.get("api-version", "")
        if "deployment" in request.match_info and "max_completion_tokens" in body and version[:10] < "2024-09-01":
            # Azure took max_completion_tokens from 2024-09-01-preview (learn.microsoft.com/azure/ai-services/
            # openai/api-version-deprecation); before, it is unknown: langroid/langroid#831
            return self.error(400, "Unrecognized request argument supplied: max_completion_tokens")
        model = model_of(str(body.get("model") or request.match_info.get("deployment") or ""))
        if self.mode == "deepseek":
            model = replace(model or MODELS["deepseek-reasoner"], deepseek=True)
        if model is None:
            return self.error(404, f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                              code="model_not_found")
        try:
            check_arguments(body, model)
            check_messages(body, model)
            check_tools(body)
            check_identifiers(body)
            check_response_format(body)
        except Refused as refused:
            return self.error(400, refused.message, param=refused.param, code=refused.code)
        turn = self.script(view_of(body)) if self.script else Turn(text=self.reply)
        if not deepseek_thinks(body, model):
            turn = Turn(turn.text, turn.tool)
        elif not turn.thinking:
            turn = Turn(turn.text, turn.tool, self.thinking)
        if body.get("stream"):
            return await self.stream(request, body, turn, model)
        return web.json_response(self.answer(body, turn, model))

    def usage_of(self, model: Model, turn: Turn) -> dict[str, Any]:
        prompt, completion = self.usage
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "total_tokens": prompt + completion,
                                 "prompt_tokens_details": {"cached_tokens": self.cached}}
        if model.reasoning or turn.thinking:
            usage["completion_tokens_details"] = {"reasoning_tokens": completion // 2}
        if model.deepseek:  # api-docs.deepseek.com/guides/kv_cache
            usage.update(prompt_cache_hit_tokens=self.cached, prompt_cache_miss_tokens=prompt - self.cached)
        return usage

    @staticmethod
    def call_of(turn: Turn) -> dict[str, Any]:
        assert turn.tool is not None
        return {"id": turn.tool["id"], "type": "function",
                "function": {"name": turn.tool["name"], "arguments": orjson.dumps(turn.tool["input"]).decode()}}

    def answer(self, body: dict[str, Any], turn: Turn, model: Model) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None, "refusal": None}
        if turn.thinking:
            message["reasoning_content"] = turn.thinking
        if turn.tool:
            message["tool_calls"] = [self.call_of(turn)]
        return {"id": "chatcmpl-strict", "object": "chat.completion", "created": int(time.time()),
                "model": body["model"], "usage": self.usage_of(model, turn),
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if turn.tool else "stop"}]}

    async def stream(self, request: web.Request, body: dict[str, Any], turn: Turn, model: Model) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def send(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> None:
            choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
            chunk = {"id": "chatcmpl-strict", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
                     "choices": choices, **extra}
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")

        await send({"role": "assistant", "content": ""})
        if turn.thinking:
            await send({"reasoning_content": turn.thinking})
        words = turn.text.split(" ") if turn.text else []
        for i, word in enumerate(words):
            await send({"content": word + (" " if i < len(words) - 1 else "")})
        if turn.tool:
            call = self.call_of(turn)
            arguments = call["function"]["arguments"]
            await send({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                        "function": {"name": call["function"]["name"], "arguments": ""}}]})
            for piece in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2:]):
                await send({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        await send({}, "tool_calls" if turn.tool else "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            await send(None, usage=self.usage_of(model, turn))
        await resp.write(b"data: [DONE]\n\n")
        return resp
