"""OpenAI (type 1) and the base of every OpenAI-format provider.

A chat body is fitted to the upstream model's row (`meta.cap`): the output limit under the model's
name for it and within its cap, no sampling parameter it refuses, the reasoning control it has
(`reasoning_effort`, or DeepSeek's and Kimi's `thinking` switch), the internal form's additions
(api/upstream/reasoning.py) removed or mapped. A converted request (`meta.inbound`) also loses every
top-level field OpenAI's chat API does not define; a plain client's vendor fields pass. What is left
out is said in `meta.notices`; nothing is copied unless it changes."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from api.services.configuration.capabilities import SAMPLING, Capability
from api.upstream.balance import BalanceMixin, Fetch, balance_number
from api.upstream.base import Adaptor, Passthrough, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.endpoints import (
    AudioMixin,
    CompletionsMixin,
    EmbeddingsMixin,
    ImageEditsMixin,
    ImagesMixin,
    ModerationsMixin,
)
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object
from api.upstream.schema_dialect import is_gemini_dialect, json_schema
from api.upstream.sse import SSEEvent

OPENAI_HOST = "api.openai.com"


class OpenAIAdaptor(CompletionsMixin, EmbeddingsMixin, ModerationsMixin, ImagesMixin, ImageEditsMixin, AudioMixin,
                    BalanceMixin, Adaptor):

    def request_headers(self) -> dict[str, str]:
        headers = super().request_headers()
        if self.meta.organization:
            headers["OpenAI-Organization"] = self.meta.organization
        return headers

    def has_balance(self) -> bool:
        """The dashboard billing API where the catalogue says the provider serves one; OpenAI's own
        refuses API keys (a browser session only, since 2023), so a channel at api.openai.com has
        none, while one at another gateway speaking the same API (one-api, new-api) has."""
        return bool(self.provider and self.provider.balance) and urlsplit(self.base_url).hostname != OPENAI_HOST

    def billing_base(self) -> str:
        """Where OpenAI's billing API lives for this channel (the origin for a custom full URL)."""
        return self.base_url

    async def query_balance(self, fetch: Fetch) -> float:
        """OpenAI's dashboard billing API: hard limit minus the usage of the last 100 days (USD)."""
        base = self.billing_base()
        sub = await fetch(self.get(f"{base}/v1/dashboard/billing/subscription"))
        limit = balance_number(sub.get("hard_limit_usd"), "hard_limit_usd")
        today = datetime.now(UTC).date()
        start, end = today - timedelta(days=100), today + timedelta(days=1)
        usage = await fetch(self.get(f"{base}/v1/dashboard/billing/usage?start_date={start}&end_date={end}"))
        return round(limit - balance_number(usage.get("total_usage"), "total_usage") / 100, 6)

    @property
    def supports_stream_options(self) -> bool:
        return bool(self.provider and self.provider.stream_options)

    def supports(self, mode: RelayMode) -> bool:
        """Image edits where the catalogue says the type serves OpenAI's form (`image_edits`): other
        OpenAI-format providers have no such endpoint."""
        if mode == RelayMode.IMAGES_EDIT and self.provider is not None and not self.provider.image_edits:
            return False
        return super().supports(mode)

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """Copy with the upstream model; every other field (explicit 0/False included) untouched.
        A stream asks for the final usage chunk where the provider supports `stream_options`; the
        field is removed everywhere else (and from non-stream requests, which OpenAI rejects)."""
        body = self._with_model(req)
        if body.get("stream") and self.supports_stream_options:
            options = body.get("stream_options")
            body["stream_options"] = {**(options if isinstance(options, Mapping) else {}), "include_usage": True}
        else:
            body.pop("stream_options", None)
        if self.meta.mode == RelayMode.CHAT:
            fit_chat(body, self.meta)
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return body, TokenUsage.from_openai(body.get("usage"))

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        """Forward each chunk verbatim (no re-encoding); read usage, and hide the usage-only final
        chunk from a client that did not ask for it."""
        if ev.is_done:
            state.done = True
            return []
        chunk = json_object(ev.data, EVENT_NOT_OBJECT)
        if "error" in chunk and not chunk.get("choices"):
            raise self.convert_error(500, ev.data)
        usage = chunk.get("usage")
        if usage:
            parsed = TokenUsage.from_openai(usage)
            if parsed is not None:
                state.usage = parsed
            if not chunk.get("choices") and not state.include_usage:
                return []
        return [Passthrough(ev.data, chunk)]


# -- the chat body, fitted to the model ----------------------------------------------------------

# Top-level fields of OpenAI's chat completions (openai-python, types/chat/completion_create_params.py).
OPENAI_CHAT_FIELDS = frozenset({
    "model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "moderation", "n", "parallel_tool_calls",
    "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
    "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
    "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
    "web_search_options"})
# The internal form's additions to a message that belong to another provider (api/upstream/reasoning.py).
FOREIGN_MESSAGE_KEYS = frozenset({"thinking_blocks", "extra_content", "cache_control"})
REPLAYED_KEYS = FOREIGN_MESSAGE_KEYS | {"reasoning_content", "tool_calls"}
IDENTIFIER_FIELDS = ("user", "safety_identifier", "prompt_cache_key")
IDENTIFIER_LIMIT = 64
BREAKPOINT = {"mode": "explicit"}  # OpenAI's prompt_cache_breakpoint (gpt-5.6 and later)
_refused: dict[frozenset[str], frozenset[str]] = {}


def fit_chat(body: dict[str, Any], meta: RelayMeta) -> None:
    """A chat body (a copy of the request's top level) fitted to the upstream model, in place."""
    cap = meta.cap
    known = cap.pattern != "*"  # the default row: a model the table does not know (its fields are its own)
    _fit_output(body, cap, known, meta)
    refused = _refused.get(cap.sampling) or _refused.setdefault(cap.sampling, SAMPLING - cap.sampling)
    for name in [k for k in body if k in refused]:
        if body.pop(name) is not None:
            meta.drop(name)
    if cap.sampling_exclusive and "temperature" in body and "top_p" in body:
        del body["top_p"]
        meta.drop("top_p")
    if known and ("reasoning_effort" in body or "thinking" in body or "tool_choice" in body):
        _fit_reasoning(body, cap, meta)
    _fit_messages(body, cap, meta)
    if "tools" in body:
        _fit_tools(body, cap, meta)
    if meta.inbound:
        _fit_identifiers(body)
        for name in [k for k in body if k not in OPENAI_CHAT_FIELDS]:
            if name != "thinking" or cap.reasoning != "switch":
                del body[name]
                meta.drop(name)


def _fit_identifiers(body: dict[str, Any]) -> None:
    """An end-user identifier longer than OpenAI takes (64 characters; Claude Code's `metadata.user_id`
    is about 150) → its SHA-256 digest in hex: as stable, so abuse tracking and cache routing still
    group the same user's requests (maximhq/bifrost#1000, mnfst/llm-gateway#2789)."""
    for name in IDENTIFIER_FIELDS:
        value = body.get(name)
        if isinstance(value, str) and len(value) > IDENTIFIER_LIMIT:
            body[name] = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _fit_output(body: dict[str, Any], cap: Capability, known: bool, meta: RelayMeta) -> None:
    """The output limit under the model's name for it (gpt-5 and the o-series refuse `max_tokens`),
    clamped to its cap (a larger one is refused: "max_tokens is too large")."""
    param = cap.output_param
    other = "max_tokens" if param == "max_completion_tokens" else "max_completion_tokens"
    asked = other if other in body else param
    if other in body and (known or param == "max_completion_tokens"):
        body.setdefault(param, body.pop(other))
    limit = body.get(param)
    if cap.max_output and isinstance(limit, int) and not isinstance(limit, bool) and limit > cap.max_output:
        body[param] = cap.max_output
        meta.drop(f"{asked}:clamped")


def _fit_reasoning(body: dict[str, Any], cap: Capability, meta: RelayMeta) -> None:
    """`reasoning_effort` and Claude's `thinking` → the control the model has: an effort it takes
    (the nearest), DeepSeek's and Kimi's `thinking` switch, or nothing; a forced tool choice the
    model refuses while it thinks becomes `auto`."""
    thinking = body.pop("thinking", None)
    effort = body.get("reasoning_effort")
    said = isinstance(effort, str)
    wanted = effort if said else _effort_of(thinking)
    thinks = cap.thinks_by_default
    if cap.reasoning == "switch":
        on = _switch_of(thinking, wanted)
        if on is not None:
            thinks = on
            body["thinking"] = {"type": "enabled" if on else "disabled"}
            if isinstance(thinking, Mapping) and "keep" in thinking:  # Kimi's preserved thinking
                body["thinking"]["keep"] = thinking["keep"]
        _set_effort(body, cap, wanted if thinks else None, said and thinks, meta)
    elif cap.reasoning == "effort":
        _set_effort(body, cap, wanted, said, meta)
    elif cap.reasoning != "none":
        # A Claude or Gemini model behind an OpenAI-format channel (another gateway, the provider's
        # own OpenAI-compatible endpoint): `reasoning_effort` is how that layer is told.
        if wanted and wanted != "none":
            body["reasoning_effort"] = wanted
    else:
        if body.pop("reasoning_effort", None) is not None:
            meta.drop("reasoning_effort")
        if isinstance(thinking, Mapping) and thinking.get("type") != "disabled":
            meta.drop("thinking")
    choice = body.get("tool_choice")
    if (choice == "required" or isinstance(choice, Mapping)) and (
            cap.forced_tool_choice == "never" or (cap.forced_tool_choice == "without-thinking" and thinks)):
        body["tool_choice"] = "auto"  # Kimi: "tool_choice 'required' is incompatible with thinking enabled"
        meta.drop("tool_choice")


def _set_effort(body: dict[str, Any], cap: Capability, wanted: str | None, said: bool, meta: RelayMeta) -> None:
    """`reasoning_effort`: the effort the model takes nearest to `wanted`, or none when it takes
    none (a notice when that changes an effort the client said: `said`)."""
    effort = cap.effort(wanted)
    if effort is None:
        body.pop("reasoning_effort", None)
        if said:
            meta.drop("reasoning_effort")
        return
    body["reasoning_effort"] = effort
    if said and effort != wanted:
        meta.drop(f"reasoning_effort:{wanted}>{effort}")


def _effort_of(thinking: Any) -> str | None:
    """Claude's `thinking` as an effort: a budget by its size, `disabled` as none; adaptive (or no
    budget) as medium, OpenAI's own default, so that a model whose default is not to reason (gpt-5.1
    and later) still thinks when asked to."""
    if not isinstance(thinking, Mapping) or thinking.get("type") not in ("enabled", "adaptive", "disabled"):
        return None
    budget = thinking.get("budget_tokens")
    if thinking["type"] == "disabled":
        return "none"
    if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:
        return Capability.effort_for(budget)
    return "medium"


def _switch_of(thinking: Any, wanted: str | None) -> bool | None:
    """Whether a `thinking` switch turns thinking on (None: the request says nothing)."""
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if isinstance(kind, str) and kind in ("enabled", "adaptive", "disabled"):
        return kind != "disabled"
    return None if wanted is None else wanted != "none"


def _fit_messages(body: dict[str, Any], cap: Capability, meta: RelayMeta) -> None:
    """Messages without what belongs to other providers; `reasoning_content` only where the model
    wants it back (or, for a plain client, where the model is not known); images a tool returned
    (OpenAI's tool messages take text only) follow the tool turn as a user message."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    keep_reasoning = cap.replays_reasoning or (cap.pattern == "*" and not meta.inbound)
    switch = body.get("thinking")
    thinking = switch.get("type") == "enabled" if isinstance(switch, Mapping) else cap.thinks_by_default
    if all(type(m) is dict and REPLAYED_KEYS.isdisjoint(m) and type(m.get("content")) is str for m in messages):
        return  # plain text turns: nothing to fit
    out: list[Any] = []
    moved: list[dict[str, Any]] = []
    for message in messages:
        if moved and not (isinstance(message, Mapping) and message.get("role") == "tool"):
            out.append({"role": "user", "content": moved})
            moved = []
        out.append(_fit_message(message, keep_reasoning, thinking, cap, meta, moved) if isinstance(message, dict)
                   else message)
    if moved:
        out.append({"role": "user", "content": moved})
    if len(out) != len(messages) or any(a is not b for a, b in zip(out, messages, strict=True)):
        body["messages"] = out


def _fit_message(message: dict[str, Any], keep_reasoning: bool, thinking: bool, cap: Capability, meta: RelayMeta,
                 moved: list[dict[str, Any]]) -> dict[str, Any]:
    drop = [k for k in message if k in FOREIGN_MESSAGE_KEYS or (k == "reasoning_content" and not keep_reasoning)]
    content = message.get("content")
    parts = (_fit_parts(content, cap, meta, moved if message.get("role") == "tool" else None)
             if isinstance(content, list) else content)
    calls = message.get("tool_calls")
    # DeepSeek and Kimi refuse a tool turn without the field in thinking mode; a client that kept no
    # reasoning sends it empty
    unreasoned = cap.replays_reasoning and thinking and bool(calls) and "reasoning_content" not in message
    if isinstance(calls, list) and any(isinstance(c, Mapping) and "extra_content" in c for c in calls):
        calls = [{k: v for k, v in c.items() if k != "extra_content"} if isinstance(c, Mapping) else c for c in calls]
    if not drop and not unreasoned and parts is content and calls is message.get("tool_calls"):
        return message
    out = {k: v for k, v in message.items() if k not in drop}
    if unreasoned:
        out["reasoning_content"] = ""
        meta.drop("reasoning_content:missing")
    if parts is not content:
        out["content"] = parts or ""
    if calls is not None:
        out["tool_calls"] = calls
    if "cache_control" in message and cap.cache_breakpoints and out.get("content"):
        text = out["content"]
        parts = [{"type": "text", "text": text}] if isinstance(text, str) else list(text)
        out["content"] = [*parts[:-1], {**parts[-1], "prompt_cache_breakpoint": BREAKPOINT}]
    elif "cache_control" in message:
        meta.drop("cache_control")
    return out


def _fit_parts(parts: list[Any], cap: Capability, meta: RelayMeta, moved: list[dict[str, Any]] | None) -> list[Any]:
    """Content parts fitted (`_fit_part`); a tool message's parts other than text go to `moved`."""
    out = [_fit_part(part, cap, meta) if isinstance(part, dict) else part for part in parts]
    if moved is not None and any(isinstance(p, Mapping) and p.get("type") != "text" for p in out):
        moved.extend(p for p in out if isinstance(p, dict) and p.get("type") != "text")
        return [p for p in out if not (isinstance(p, Mapping) and p.get("type") != "text")]
    return out if any(a is not b for a, b in zip(out, parts, strict=True)) else parts


def _fit_part(part: dict[str, Any], cap: Capability, meta: RelayMeta) -> dict[str, Any]:
    """A part without Anthropic's `cache_control` (OpenAI's own breakpoint where the model takes one)
    and `document`; a file as OpenAI takes it: `file_data` with a filename (refused without), or
    `file_id`. A document given by URL becomes a text naming it: OpenAI takes no file URL, and the
    gateway does not fetch users' URLs for a provider that would only see their bytes."""
    if "cache_control" not in part and part.get("type") != "file":
        return part
    out = dict(part)
    if out.pop("cache_control", None) is not None:
        if cap.cache_breakpoints:
            out["prompt_cache_breakpoint"] = BREAKPOINT
        else:
            meta.drop("cache_control")
    if out.get("type") != "file":
        return out
    document: Mapping[str, Any] = out.pop("document") if isinstance(out.get("document"), Mapping) else {}
    if document.get("context") or document.get("citations"):
        meta.drop("document")
    given: Mapping[str, Any] = out["file"] if isinstance(out.get("file"), Mapping) else {}
    file = {k: v for k, v in given.items() if k != "file_url"}
    if not file.get("file_data") and not file.get("file_id"):
        meta.drop("file_url")
        title = f" {document['title']!r}" if document.get("title") else ""
        return {"type": "text", "text": f"[document{title}: {given.get('file_url') or 'not attached'}]"}
    if file.get("file_data") and not file.get("filename"):
        file["filename"] = "document." + str(file["file_data"]).removeprefix("data:").split(";")[0].split("/")[-1]
    out["file"] = file
    return out


def _fit_tools(body: dict[str, Any], cap: Capability, meta: RelayMeta) -> None:
    """Function tools without `cache_control`, their schemas in JSON Schema; a hosted web search
    becomes `web_search_options` on OpenAI's search models and is left out elsewhere."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return
    out: list[Any] = []
    for tool in tools:
        if isinstance(tool, Mapping) and tool.get("type") == "web_search":
            if cap.web_search_options:
                body["web_search_options"] = _search_options(tool, meta)
            else:
                meta.drop("tools.web_search")
        elif isinstance(tool, Mapping) and "cache_control" in tool:
            meta.drop("cache_control")  # no breakpoint on a tool in OpenAI's format
            out.append({k: v for k, v in tool.items() if k != "cache_control"})
        else:
            out.append(tool)
    if meta.inbound and is_gemini_dialect(out):
        out = [{**t, "function": {**t["function"], "parameters": json_schema(t["function"].get("parameters"))}}
               if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping) else t for t in out]
    if not out:  # OpenAI refuses an empty tool list, and a tool_choice without tools
        for name in ("tools", "tool_choice", "parallel_tool_calls"):
            body.pop(name, None)
    elif len(out) != len(tools) or any(a is not b for a, b in zip(out, tools, strict=True)):
        body["tools"] = out


def _search_options(tool: Mapping[str, Any], meta: RelayMeta) -> dict[str, Any]:
    """OpenAI's `web_search_options` for a hosted web search tool: its location and context size."""
    options: dict[str, Any] = {}
    place = tool.get("user_location")
    place = place.get("approximate", place) if isinstance(place, Mapping) else {}
    approximate = {k: place[k] for k in ("city", "country", "region", "timezone") if place.get(k)}
    if approximate:
        options["user_location"] = {"type": "approximate", "approximate": approximate}
    if tool.get("search_context_size") in ("low", "medium", "high"):
        options["search_context_size"] = tool["search_context_size"]
    for name in ("max_uses", "allowed_domains", "blocked_domains"):
        if tool.get(name):
            meta.drop(f"tools.web_search.{name}")
    return options
