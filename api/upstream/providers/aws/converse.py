"""OpenAI chat ↔ Bedrock's Converse API (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html),
the one format of every Bedrock chat model that is not served with Claude's own (Nova, Llama, Mistral, DeepSeek …).

Request: system and developer messages → `system: [{text}]`; user parts → `text` and `image`
blocks (bytes in base64; an http(s) image is fetched by the adaptor's `prepare`); assistant
`tool_calls` → `toolUse` blocks; tool messages → `toolResult` blocks of a user turn; turns of the
same role are merged (Converse wants them alternating). `max_tokens`/`max_completion_tokens`,
`temperature`, `top_p`, `stop` → `inferenceConfig` (maxTokens, temperature, topP, stopSequences);
tools → `toolConfig.tools[].toolSpec` (`inputSchema.json`), `tool_choice` required/named →
`toolChoice` any/tool (only Claude, Nova and Mistral Large take it). Parameters Converse has no
field for are left out and noted.

Answer: `output.message.content` text → content, `reasoningContent` → reasoning_content, `toolUse`
→ tool_calls; `stopReason` → finish_reason; `usage` (inputTokens excludes the cache reads and
writes, which are added to the prompt count).

Stream (ConverseStream, AWS event-stream framing): messageStart, contentBlockStart (a toolUse's
id and name), contentBlockDelta (text, toolUse.input as JSON text, reasoningContent text),
contentBlockStop, messageStop (stopReason), metadata (usage) → OpenAI chunks.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from api.upstream.base import RelayMeta, StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, call_arguments, json_object
from api.upstream.providers.common import ChunkWriter, chat_answer, function_tools, messages_of, text_of, tool_call

FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
                  "content_filtered": "content_filter", "guardrail_intervened": "content_filter",
                  "model_context_window_exceeded": "length"}
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif",
                 "image/webp": "webp"}
# toolChoice `any` and `tool` (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolChoice.html).
TOOL_CHOICE_MODELS = ("anthropic.", "amazon.nova", "mistral.mistral-large")
# Tool use in Converse but not in ConverseStream: such a stream is served by Converse, its whole answer
# turned into chunks
# (docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-supported-models-features.html).
NO_STREAMING_TOOLS = ("meta.llama", "mistral.mistral-large")
URL_PLACEHOLDER = "gateway:url"  # an image block whose bytes `prepare` fetches from the URL in their place
UNSUPPORTED = ("frequency_penalty", "presence_penalty", "seed", "logit_bias", "logprobs", "top_logprobs",
               "response_format", "reasoning_effort", "parallel_tool_calls")


def convert_request(req: Mapping[str, Any], meta: RelayMeta, model_id: str) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    used_tools: dict[str, None] = {}

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages_of(req):
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            text = text_of(content)
            if text:
                system.append({"text": text})
        elif role == "user":
            add("user", user_blocks(content))
        elif role == "assistant":
            text = text_of(content)
            blocks: list[dict[str, Any]] = [{"text": text}] if text.strip() else []
            for call in message.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(function, Mapping):
                    name = str(function.get("name") or "")
                    used_tools[name] = None
                    blocks.append({"toolUse": {"toolUseId": str(call.get("id") or ""), "name": name,
                                               "input": call_arguments(function.get("arguments"))}})
            add("assistant", blocks)
        elif role == "tool":
            result = text_of(content)
            add("user", [{"toolResult": {"toolUseId": str(message.get("tool_call_id") or ""),
                                         "content": [{"text": result or " "}]}}])
    body: dict[str, Any] = {"messages": turns}
    if system:
        body["system"] = system
    config = inference_config(req)
    if config:
        body["inferenceConfig"] = config
    tool_config = tools_of(req, meta, model_id, used_tools)
    if tool_config:
        body["toolConfig"] = tool_config
    for name in UNSUPPORTED:
        if req.get(name) is not None:
            meta.drop(name)
    n = req.get("n")
    if isinstance(n, int) and n > 1:
        meta.drop("n")
    return body


def user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"text": str(part["text"])})
        elif part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if isinstance(url, str) and url:
                blocks.append(image_block(url))
    return blocks


def image_block(url: str) -> dict[str, Any]:
    """An image block: a data URL's bytes at once, an http(s) URL's once `prepare` fetched them."""
    if not url.startswith("data:"):
        return {"image": {"format": URL_PLACEHOLDER, "source": {"bytes": url}}}
    header, _, data = url.partition(",")
    mime = header[5:].split(";", 1)[0].lower()
    if mime not in IMAGE_FORMATS or ";base64" not in header:
        raise RelayError(400, f"Bedrock takes png, jpeg, gif or webp images in base64, not {mime or 'this'}",
                         "invalid_request_error", "invalid_image_url")
    try:
        base64.b64decode(data, validate=True)
    except binascii.Error:
        raise RelayError(400, "the image's data URL is not valid base64", "invalid_request_error",
                         "invalid_image_url") from None
    return {"image": {"format": IMAGE_FORMATS[mime], "source": {"bytes": data}}}


def inference_config(req: Mapping[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    max_tokens = req.get("max_completion_tokens", req.get("max_tokens"))
    if max_tokens is not None:
        config["maxTokens"] = max_tokens
    if req.get("temperature") is not None:
        config["temperature"] = req["temperature"]
    if req.get("top_p") is not None:
        config["topP"] = req["top_p"]
    stop = req.get("stop")
    if isinstance(stop, str) and stop:
        config["stopSequences"] = [stop]
    elif isinstance(stop, list) and stop:
        config["stopSequences"] = [str(s) for s in stop]
    return config


def base_id(model_id: str) -> str:
    """A model id without its inference profile's geography."""
    head, _, rest = model_id.partition(".")
    return rest if rest and head in ("us", "us-gov", "eu", "apac", "global", "jp", "au", "ca") else model_id


def tools_of(req: Mapping[str, Any], meta: RelayMeta, model_id: str, used: Mapping[str, None]) -> dict[str, Any]:
    """`toolConfig`: the request's functions; with none, the names the history used (Converse wants
    a toolConfig whenever the messages hold toolUse or toolResult blocks)."""
    specs = []
    for function in function_tools(req):
        spec: dict[str, Any] = {"name": str(function["name"])}
        if function.get("description"):
            spec["description"] = str(function["description"])
        parameters = function.get("parameters")
        spec["inputSchema"] = {"json": parameters if isinstance(parameters, Mapping)
                               else {"type": "object", "properties": {}}}
        specs.append({"toolSpec": spec})
    choice = req.get("tool_choice")
    if specs and choice == "none":
        if not used:
            return {}
        meta.drop("tool_choice")
    if not specs:
        if used:
            return {"tools": [{"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}}
                              for name in used]}
        return {}
    config: dict[str, Any] = {"tools": specs}
    wanted: dict[str, Any] | None = None
    if choice == "required":
        wanted = {"any": {}}
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        wanted = {"tool": {"name": str(choice["function"].get("name") or "")}}
    if wanted is not None:
        if base_id(model_id).startswith(TOOL_CHOICE_MODELS):
            config["toolChoice"] = wanted
        else:
            meta.drop("tool_choice")
    return config


# -- the answer ---------------------------------------------------------------------------------------


def usage_of(raw: Any) -> TokenUsage | None:
    if not isinstance(raw, Mapping):
        return None
    read, write = int(raw.get("cacheReadInputTokens") or 0), int(raw.get("cacheWriteInputTokens") or 0)
    prompt = int(raw.get("inputTokens") or 0) + read + write
    completion = int(raw.get("outputTokens") or 0)
    if not prompt and not completion:
        return None
    return TokenUsage(prompt, completion, cached_tokens=read, cache_creation_tokens=write)


def convert_response(body: Mapping[str, Any], model: str) -> tuple[dict[str, Any], TokenUsage | None]:
    output = body.get("output")
    message = output.get("message") if isinstance(output, Mapping) else None
    blocks = message.get("content") if isinstance(message, Mapping) else None
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, Mapping):
            continue
        if isinstance(block.get("text"), str):
            text.append(block["text"])
        elif isinstance(block.get("reasoningContent"), Mapping):
            thought = block["reasoningContent"].get("reasoningText")
            if isinstance(thought, Mapping) and thought.get("text"):
                reasoning.append(str(thought["text"]))
        elif isinstance(block.get("toolUse"), Mapping):
            use = block["toolUse"]
            calls.append(tool_call(str(use.get("toolUseId") or ""), str(use.get("name") or ""), use.get("input")))
    answer: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if reasoning:
        answer["reasoning_content"] = "".join(reasoning)
    if calls:
        answer["tool_calls"] = calls
    usage = usage_of(body.get("usage"))
    finish = FINISH_REASONS.get(str(body.get("stopReason") or ""), "stop")
    return chat_answer("", model, answer, finish, usage), usage


class ConverseStream:
    """ConverseStream's events (by their `:event-type`) → OpenAI chunks."""

    def __init__(self, model: str) -> None:
        self.writer = ChunkWriter(model)
        self.tools: dict[int, int] = {}  # content block index → tool-call index

    def convert(self, name: str, data: bytes, state: StreamState) -> list[StreamChunk]:
        event = json_object(data, EVENT_NOT_OBJECT)
        raw_index = event.get("contentBlockIndex")
        index = raw_index if isinstance(raw_index, int) else 0
        if name == "messageStart":
            return [self.writer.chunk({"content": ""})]
        if name == "contentBlockStart":
            use = (event.get("start") or {}).get("toolUse")
            if not isinstance(use, Mapping):
                return []
            call = self.tools.setdefault(index, len(self.tools))
            return [self.writer.chunk({"tool_calls": [{"index": call, "id": str(use.get("toolUseId") or ""),
                                                       "type": "function", "function": {
                                                           "name": str(use.get("name") or ""), "arguments": ""}}]})]
        if name == "contentBlockDelta":
            return self.delta(index, event.get("delta") or {})
        if name == "messageStop":
            reason = str(event.get("stopReason") or "")
            state.finish_reason = FINISH_REASONS.get(reason, "stop")
            return [self.writer.chunk({}, state.finish_reason)]
        if name == "metadata":
            usage = usage_of(event.get("usage"))
            if usage is not None:
                state.usage = usage
            state.done = True
            return []
        return []  # contentBlockStop, and events added later

    def whole(self, answer: Mapping[str, Any], usage: TokenUsage | None, state: StreamState) -> list[StreamChunk]:
        """A whole Converse answer (convert_response's) as the chunks of a stream."""
        message = answer["choices"][0]["message"]
        chunks: list[StreamChunk] = []
        if message.get("reasoning_content"):
            chunks.append(self.writer.chunk({"reasoning_content": message["reasoning_content"]}))
        if message.get("content") or not message.get("tool_calls"):
            chunks.append(self.writer.chunk({"content": message.get("content") or ""}))
        calls = [{**call, "index": i} for i, call in enumerate(message.get("tool_calls") or ())]
        if calls:
            chunks.append(self.writer.chunk({"tool_calls": calls}))
        state.finish_reason = answer["choices"][0]["finish_reason"]
        chunks.append(self.writer.chunk({}, state.finish_reason))
        if usage is not None:
            state.usage = usage
        state.done = True
        return chunks

    def delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamChunk]:
        if isinstance(delta.get("text"), str):
            return [self.writer.chunk({"content": delta["text"]})] if delta["text"] else []
        use = delta.get("toolUse")
        if isinstance(use, Mapping) and index in self.tools:
            return [self.writer.chunk({"tool_calls": [{"index": self.tools[index],
                                                       "function": {"arguments": str(use.get("input") or "")}}]})]
        thought = delta.get("reasoningContent")
        if isinstance(thought, Mapping) and thought.get("text"):
            return [self.writer.chunk({"reasoning_content": str(thought["text"])})]
        return []  # a reasoning signature, redacted reasoning, citations
