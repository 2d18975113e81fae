"""OpenAI's Responses API in: `POST /v1/responses` (streamed and not) and `POST /v1/responses/compact`,
stateless: nothing is stored, so whatever points at stored state (`previous_response_id`,
`conversation`, a stored `prompt`, `background`, `item_reference`) is refused with the reason, and
every answer says `store: false`.

On a channel whose upstream serves the Responses API itself (the catalogue's `native`: OpenAI, Azure; xAI, whose
docs make it their main API, docs.x.ai/developers/model-capabilities/text/comparison; OpenRouter,
openrouter.ai/docs/api/reference/responses/overview — both at `<base>/v1/responses` like OpenAI; Azure
OpenAI at `{endpoint}/openai/v1/responses` and `/responses/compact`, its adaptor's base being
`{endpoint}/openai`, learn.microsoft.com/azure/foundry/reference/rest/compactconversation) the body
goes as sent, and the upstream's answer and events are relayed untouched. A channel that answers
404/405 there is remembered as having none (api/relay/responses_support.py) and served by
conversion like the other channels:

request → internal chat form: api/relay/inbound/responses_tools.py (tools, tool_choice),
responses_input.py (input items); answer → Responses items: responses_output.py, responses_stream.py.
Parameters no chat target takes are left out: the ones that change the answer with a notice
(`text.verbosity`, `truncation`, `max_tool_calls`, `top_logprobs`, `service_tier`), the
bookkeeping ones without (`include`, `store`, `metadata`, `prompt_cache_key`, `safety_identifier`, …).

Compaction (Codex's `/responses/compact`, codex-rs/codex-api/src/endpoint/compact.rs; the answer as
openai-python types/responses/compacted_response.py: `object: "response.compaction"`, the user
messages then one `compaction` item) is served on a converted channel by asking its model for a
summary; the `compaction` item carries that summary sealed, and reads back as a message.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

from api.relay.inbound.anthropic_render import answer_usage
from api.relay.inbound.base import Inbound, StreamWriter
from api.relay.inbound.responses_input import SUMMARY_PREFIX, read_items
from api.relay.inbound.responses_output import INCOMPLETE, output_items, text_of, usage_of
from api.relay.inbound.responses_stream import ResponsesReader, ResponsesStreamWriter
from api.relay.inbound.responses_tools import ToolMap, new_id
from api.relay.inbound.shapes import check_responses
from api.upstream.base import AnswerReader, TokenUsage
from api.upstream.chat import ChatMessage
from api.upstream.errors import RelayError
from api.upstream.provider import RESPONSES
from api.upstream.reasoning import TEXT, is_sealed, seal, unseal

# Parameters that change the answer and no chat target takes (said in X-Gateway-Dropped when set).
UNSUPPORTED = ("max_tool_calls", "top_logprobs")
STATEFUL = {
    "previous_response_id": "previous_response_id is not supported: this gateway stores no responses; send the "
                            "whole conversation in `input` (its reasoning and function_call items included)",
    "conversation": "conversation is not supported: this gateway stores no conversations; send the whole "
                    "conversation in `input`",
    "prompt": "prompt (a stored prompt template) is not supported: this gateway cannot read OpenAI's stored "
              "prompts; send the instructions and input themselves",
}
COMPACT_INSTRUCTION = (
    "Write a summary of the whole conversation above for a model that will carry on the work without "
    "seeing it: the user's goals and constraints, what has been done and learned (files, commands, "
    "decisions, results), what is under way, and the next steps. Keep names, paths, identifiers and "
    "values exact. Answer with the summary alone.")


class ResponsesInbound(Inbound):
    name: ClassVar[str] = "responses"
    client_format: ClassVar[str] = RESPONSES
    native_path: ClassVar[str] = "/v1/responses"
    check = staticmethod(check_responses)

    def __init__(self, body: dict[str, Any], request: Any) -> None:
        super().__init__(body, request)
        self.response_id = new_id("resp")
        self.created = int(time.time())
        for field, reason in STATEFUL.items():
            if body.get(field):
                raise RelayError.local_error(400, reason, f"{field}_not_supported", "invalid_request_error")
        if body.get("background") is True:
            raise RelayError.local_error(400, "background is not supported: this gateway stores no responses to "
                                         "poll; send the request without it", "background_not_supported",
                                         "invalid_request_error")
        # What conversion leaves out: said for the attempts that convert (for_channel), not the native ones.
        self.conversion_notices: list[str] = []
        self.tools = ToolMap(self.conversion_notices)
        self._openai = self.convert()

    @property
    def openai(self) -> dict[str, Any]:
        return self._openai

    # -- request -----------------------------------------------------------------------------------

    def convert(self) -> dict[str, Any]:
        body = self.body
        given = body.get("input")
        items: list[Any] = given if isinstance(given, list) else []
        self.tools.read(body.get("tools") or ())
        for item in items:
            if isinstance(item, Mapping) and item.get("type") == "additional_tools":
                self.tools.read(item.get("tools") or ())
        messages: list[ChatMessage] = []
        if isinstance(body.get("instructions"), str) and body["instructions"]:
            messages.append({"role": "system", "content": body["instructions"]})
        if isinstance(given, str):
            messages.append({"role": "user", "content": given})
        messages.extend(read_items(items, self.tools, self.conversion_notices))
        out: dict[str, Any] = {"model": body.get("model"), "messages": messages}
        if body.get("max_output_tokens") is not None:
            out["max_tokens"] = body["max_output_tokens"]
        for name in ("temperature", "top_p", "parallel_tool_calls", "user"):
            if body.get(name) is not None:
                out[name] = body[name]
        if body.get("stream") is True:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        choice = self.tools.tool_choice(body.get("tool_choice")) if body.get("tool_choice") is not None else None
        if self.tools.tools:
            out["tools"] = self.tools.tools
            if choice is not None:
                out["tool_choice"] = choice
        reasoning = body.get("reasoning")
        if isinstance(reasoning, Mapping) and reasoning.get("effort"):
            out["reasoning_effort"] = reasoning["effort"]
        given_text = body.get("text")
        text: Mapping[str, Any] = given_text if isinstance(given_text, Mapping) else {}
        fmt = text.get("format")
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            out["response_format"] = {"type": "json_schema", "json_schema": {
                k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}}
        elif isinstance(fmt, Mapping) and fmt.get("type") == "json_object":
            out["response_format"] = {"type": "json_object"}
        self._note_unsupported(text)
        return out

    def _note_unsupported(self, text: Mapping[str, Any]) -> None:
        body, notices = self.body, self.conversion_notices
        if text.get("verbosity") not in (None, "medium"):
            notices.append("text.verbosity")
        if body.get("truncation") not in (None, "disabled"):
            notices.append("truncation")
        if body.get("service_tier") not in (None, "auto", "default"):
            notices.append("service_tier")
        notices.extend(name for name in UNSUPPORTED if body.get(name) is not None)

    def for_channel(self, body: dict[str, Any], channel_type: int) -> dict[str, Any]:
        self.notices = list(self.conversion_notices)
        return body

    def native_body(self, upstream_model: str) -> dict[str, Any]:
        """The body as sent, with our own sealed items turned into what OpenAI takes: a summary of
        ours becomes a message, a reasoning item of another provider's state is left out (OpenAI
        refuses encrypted content it did not make)."""
        self.notices = []
        body: dict[str, Any] = {**self.body, "model": upstream_model, "store": False}
        if isinstance(body.get("input"), list):
            body["input"] = [native_item(item) for item in body["input"] if not foreign_reasoning(item)]
        return body

    def native_reader(self, adaptor: AnswerReader) -> AnswerReader:
        return ResponsesReader()

    # -- answer ------------------------------------------------------------------------------------

    def envelope(self, model: str, status: str, output: list[dict[str, Any]], usage: TokenUsage | None,
                 incomplete: str | None = None) -> dict[str, Any]:
        body = self.body
        return {
            "id": self.response_id, "object": "response", "created_at": self.created, "status": status,
            "model": model, "output": output, "usage": usage_of(usage) if usage is not None else None,
            "error": None, "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
            "parallel_tool_calls": body.get("parallel_tool_calls", True), "previous_response_id": None,
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None}, "store": False,
            "temperature": body.get("temperature", 1.0), "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
            "top_p": body.get("top_p", 1.0), "truncation": "disabled", "metadata": body.get("metadata") or {},
            "user": body.get("user"),
        }

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        choice = (answer.get("choices") or [{}])[0]
        reason = INCOMPLETE.get(choice.get("finish_reason") or "")
        usage = answer_usage(answer["usage"]) if TokenUsage.from_openai(answer.get("usage")) is not None else None
        return self.envelope(str(answer.get("model") or self.body.get("model")),
                             "incomplete" if reason else "completed",
                             output_items(choice.get("message") or {}, self.tools), usage, reason)

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        return self.stream_writer(model)

    def stream_writer(self, model: str) -> ResponsesStreamWriter:
        return ResponsesStreamWriter(lambda status, output, usage, reason: self.envelope(
            model, status, output, usage, reason), self.tools)

    def error_frame(self, err: RelayError) -> bytes:
        return self.stream_writer("").error(err)

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        body = err.to_body(request_id)
        if err.status >= 500 and body["error"]["type"] == "new_api_error":
            body["error"]["type"] = "server_error"
        return body


def foreign_reasoning(item: Any) -> bool:
    """A reasoning item whose state is another provider's (sealed by this gateway)."""
    return isinstance(item, Mapping) and item.get("type") == "reasoning" and is_sealed(item.get("encrypted_content"))


def native_item(item: Any) -> Any:
    """An input item as OpenAI takes it: a compaction of ours becomes the message it stands for."""
    if isinstance(item, Mapping) and item.get("type") == "compaction":
        sealed = unseal(item.get("encrypted_content"))
        if sealed is not None and sealed[0] == TEXT:
            text = f"{SUMMARY_PREFIX}\n\n{sealed[1].get('text') or ''}"
            return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return item


class ResponsesCompactInbound(ResponsesInbound):
    """`POST /v1/responses/compact`: natively as sent; converted, the channel's model is asked for
    a summary of the conversation, answered as OpenAI's compacted response."""

    name: ClassVar[str] = "responses_compact"
    native_path: ClassVar[str] = "/v1/responses/compact"

    def convert(self) -> dict[str, Any]:
        out = super().convert()
        for name in ("stream", "stream_options", "response_format"):  # one plain-text summary
            out.pop(name, None)
        out["messages"].append({"role": "user", "content": COMPACT_INSTRUCTION})
        if out.get("tools"):
            out["tool_choice"] = "none"  # the tools stay declared: the history's calls refer to them
        return out

    def native_body(self, upstream_model: str) -> dict[str, Any]:
        body = super().native_body(upstream_model)
        body.pop("store", None)  # not a parameter of the compact endpoint
        return body

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        choice = (answer.get("choices") or [{}])[0]
        summary = text_of((choice.get("message") or {}).get("content")).strip()
        compaction = {"type": "compaction", "id": new_id("cmp"), "encrypted_content": seal(TEXT, {"text": summary})}
        usage = TokenUsage.from_openai(answer.get("usage")) or TokenUsage()
        return {"id": self.response_id, "object": "response.compaction", "created_at": self.created,
                "output": [*self.user_messages(), compaction], "usage": usage_of(usage)}

    def user_messages(self) -> list[dict[str, Any]]:
        """The request's user messages, as message items (content as a list of parts, which Codex
        reads: codex-rs/protocol/src/models.rs `ResponseItem::Message`): they stay in the history."""
        given = self.body.get("input")
        items = [{"role": "user", "content": given}] if isinstance(given, str) else given
        return ([{"type": "message", "id": item.get("id") or new_id("msg"), "status": "completed", "role": "user",
                  "content": [{"type": "input_text", "text": item["content"]}] if isinstance(item.get("content"), str)
                  else item.get("content") or []}
                 for item in items if isinstance(item, Mapping)
                 and (item.get("type") or "message") == "message" and item.get("role") == "user"]
                if isinstance(items, list) else [])

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        raise TypeError("compaction requests do not stream")
