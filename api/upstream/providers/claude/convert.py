"""The pipeline's internal form (OpenAI chat completions plus the additions of api/upstream/reasoning.py)
→ an Anthropic Messages API request for the target model and platform (pure; also used by the
Bedrock and Vertex AI adaptors).

messages.py turns the conversation into `system` and `messages`; controls.py decides thinking,
effort, `max_tokens`, sampling, tools, tool choice and structured output from the model's
capability row (`meta.cap`). Only fields Claude defines are sent; what the target cannot take is
noted with `meta.drop` (the client sees it in `X-Gateway-Dropped`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api.services.configuration.capability_lookup import base_name
from api.upstream.base import RelayMeta
from api.upstream.providers.claude import controls
from api.upstream.providers.claude.messages import (
    convert_messages,
    flatten_open_tool_turn,
    open_tool_turn_lacks_thinking,
    strip_thinking,
    takes_system_messages,
)

# Request fields read here; any other field of the internal form is not sent (and is noted).
READ = frozenset({"model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens",
                  "temperature", "top_p", "top_k", "stop", "presence_penalty", "frequency_penalty", "seed", "logprobs",
                  "top_logprobs", "logit_bias", "n", "tools", "tool_choice", "parallel_tool_calls", "response_format",
                  "reasoning_effort", "thinking", "user"})


@dataclass(frozen=True, slots=True)
class Platform:
    """What the serving platform adds to or takes from the Messages API."""

    name: str
    system_messages: bool  # `{"role": "system"}` messages mid-conversation (Claude API only)
    web_search: bool  # the web search server tool
    structured_output: bool  # `output_config.format`


# The Claude API itself (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages,
# …/agents-and-tools/tool-use/web-search-tool, …/build-with-claude/structured-outputs).
ANTHROPIC_API = Platform("anthropic", system_messages=True, web_search=True, structured_output=True)


def convert_request(req: Mapping[str, Any], meta: RelayMeta, platform: Platform = ANTHROPIC_API) -> dict[str, Any]:
    cap, drop, model = meta.cap, meta.drop, meta.model
    system, messages = convert_messages(req.get("messages"), drop,
                                        platform.system_messages and takes_system_messages(base_name(model)))
    thinking = controls.thinking_of(req, cap, drop, model_default=meta.inbound == "anthropic")
    # Adaptive thinking may skip a turn's thinking (build-with-claude/adaptive-thinking), so only a
    # budget's turns must come back with theirs.
    if open_tool_turn_lacks_thinking(messages):
        if thinking.budget is not None:
            thinking = controls.switched_off(drop)
        elif thinking.on and cap.thinks_by_default:
            # A 5.x model thinks every turn and refuses a tool turn without its thinking (another
            # model's answer, or a client that dropped it with no kept state): that turn goes as text.
            messages = flatten_open_tool_turn(messages)
    if not thinking.on:
        messages = strip_thinking(messages)
    body: dict[str, Any] = {"model": model, "messages": messages,
                            "max_tokens": controls.output_limit(req, cap, thinking, drop)}
    output_format, instruction = controls.response_format(req, cap.structured_output and platform.structured_output)
    if instruction:
        system.append({"type": "text", "text": instruction})
    if system:
        body["system"] = system
    if thinking.field is not None:
        body["thinking"] = thinking.field
    output_config = {k: v for k, v in (("effort", thinking.effort), ("format", output_format)) if v}
    if output_config:
        body["output_config"] = output_config
    body.update(controls.sampling(req, cap, thinking.on, drop))
    tools = controls.tools(req, cap, platform.web_search, drop)
    if tools:
        body["tools"] = tools
        choice = controls.tool_choice(req, cap, thinking.on, drop)
        if choice is not None:
            body["tool_choice"] = choice
    elif req.get("tool_choice") not in (None, "auto", "none"):
        drop("tool_choice")
    user = req.get("user")
    if isinstance(user, str) and user:
        body["metadata"] = {"user_id": user}
    if req.get("stream"):
        body["stream"] = True
    for name in req:
        if name not in READ:
            drop(name)
    return body
