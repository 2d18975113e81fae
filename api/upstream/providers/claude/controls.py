"""The request's controls as the target Claude model takes them, from its capability row
(api/services/configuration/capabilities.py): thinking and effort, the output limit, sampling, tools and
tool choice, structured output. What the model would refuse is left out and noted (`drop`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from api.services.configuration.capabilities import EFFORT_BUDGETS, Capability
from api.upstream.providers.claude.messages import as_mapping

Drop = Callable[[str], None]
MIN_BUDGET = 1024  # Claude's smallest thinking budget (extended-thinking: "budget_tokens ≥ 1024")
ANSWER_ROOM = 4096  # output left for the answer when a thinking budget raises max_tokens
JSON_INSTRUCTION = "Respond with a single valid JSON object and nothing else."
WEB_SEARCH_FIELDS = ("max_uses", "allowed_domains", "blocked_domains", "user_location")
DISPLAYS = ("summarized", "omitted")


@dataclass(slots=True)
class Thinking:
    """What this request sends about thinking: whether the model will think, the `thinking` field
    (None = leave it out), the effort (`output_config.effort`) and a budget."""

    on: bool = False
    field: dict[str, Any] | None = None
    effort: str | None = None
    budget: int | None = None


def thinking_of(req: Mapping[str, Any], cap: Capability, drop: Drop, model_default: bool = False) -> Thinking:
    """Thinking as the model controls it: adaptive + an effort (from `reasoning_effort`, or from a
    budget), a budget (from the internal `thinking`, or from the effort), or none; `disabled` where
    the model can be switched off. A client that asked nothing gets no thinking where the model can
    be switched off, unless `model_default` (a Messages client: it gets the model's own default)."""
    wanted = as_mapping(req.get("thinking"))
    kind = wanted.get("type")
    effort = req.get("reasoning_effort") if isinstance(req.get("reasoning_effort"), str) else None
    budget = (wanted.get("budget_tokens") if kind == "enabled" and isinstance(wanted.get("budget_tokens"), int)
              else None)
    off = kind == "disabled" or effort == "none"
    asked = kind in ("enabled", "adaptive") or bool(effort and effort != "none")
    display = wanted.get("display") if wanted.get("display") in DISPLAYS else None
    if off and asked:
        drop("thinking" if kind in ("enabled", "adaptive") else "reasoning_effort")  # switched off: that goes
    if cap.reasoning == "claude-adaptive":
        level = effort if effort and effort != "none" else (cap.effort_for(budget) if budget else None)
        return _adaptive(cap, off, asked, cap.effort(level) if level else None, display, drop, model_default)
    if cap.reasoning == "claude-budget":
        if off or not asked:
            return Thinking()
        tokens = max(MIN_BUDGET, budget or EFFORT_BUDGETS.get(effort or "medium", EFFORT_BUDGETS["medium"]))
        field: dict[str, Any] = {"type": "enabled", "budget_tokens": tokens}
        if display:
            field["display"] = display
        return Thinking(True, field, None, tokens)
    if asked:
        drop("thinking" if kind else "reasoning_effort")
    return Thinking()


def _adaptive(cap: Capability, off: bool, asked: bool, level: str | None, display: str | None,
              drop: Drop, model_default: bool) -> Thinking:
    can_off = "none" in cap.efforts
    if (off or not (asked or model_default)) and can_off:
        return Thinking(False, {"type": "disabled"} if cap.thinks_by_default else None)
    if off:
        drop("thinking.disabled")  # this model always thinks: the least effort it takes instead
        level = cap.effort("none")
    if not (asked or off or cap.thinks_by_default):
        return Thinking()
    # Opus 4.7 and later omit the thinking text unless asked for it (whats-new-claude-4-7, "thinking
    # content omitted by default"): a converted client reads it as its reasoning, so it is asked for.
    return Thinking(True, {"type": "adaptive", "display": display or "summarized"}, level)


def switched_off(drop: Drop) -> Thinking:
    """No thinking budget for this request: its tool turn came back without its thinking."""
    drop("thinking")
    return Thinking()


def output_limit(req: Mapping[str, Any], cap: Capability, thinking: Thinking, drop: Drop) -> int:
    """`max_tokens`: the client's (clamped to the model's cap), else the row's default; above the
    thinking budget when there is one (Claude wants `budget_tokens < max_tokens`)."""
    requested = req.get("max_completion_tokens", req.get("max_tokens"))
    requested = (requested if isinstance(requested, int) and not isinstance(requested, bool) and requested > 0
                 else None)
    if requested and cap.max_output and requested > cap.max_output:
        drop("max_tokens")
    limit = cap.output_limit(requested) or ANSWER_ROOM
    budget = thinking.budget
    if budget is not None and limit <= budget:
        limit = budget + max(ANSWER_ROOM, cap.default_output or 0)
        if cap.max_output:
            limit = min(limit, cap.max_output)
        if limit <= budget and thinking.field is not None:
            thinking.budget = thinking.field["budget_tokens"] = max(MIN_BUDGET, limit - ANSWER_ROOM)
    return limit


def sampling(req: Mapping[str, Any], cap: Capability, thinking_on: bool, drop: Drop) -> dict[str, Any]:
    """temperature / top_p / top_k as the model takes them (with thinking on: no temperature nor
    top_k, top_p only from 0.95 — extended-thinking, "Feature compatibility"), and `stop`."""
    out: dict[str, Any] = {}
    for name in ("temperature", "top_p", "top_k"):
        value = req.get(name)
        if value is None:
            continue
        refused = not cap.accepts(name) or (thinking_on and (
            name in ("temperature", "top_k") or not (isinstance(value, int | float) and 0.95 <= value <= 1)))
        if refused:
            drop(name)
        else:
            out[name] = value
    if cap.sampling_exclusive and "temperature" in out and "top_p" in out:
        del out["top_p"]
        drop("top_p")
    stop = req.get("stop")
    stops = ([stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)] if isinstance(stop, list)
             else [])
    if stops:
        out["stop_sequences"] = stops
    for name in ("presence_penalty", "frequency_penalty", "seed", "logprobs", "top_logprobs", "logit_bias"):
        if req.get(name) is not None:
            drop(name)
    if req.get("n") not in (None, 1):
        drop("n")
    return out


def tools(req: Mapping[str, Any], cap: Capability, web_search: bool, drop: Drop) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in req.get("tools") or ():
        if not isinstance(tool, Mapping):
            continue
        kind = tool.get("type")
        if kind == "function" and isinstance(tool.get("function"), Mapping):
            out.append(_function(tool, cap, drop))
        elif kind == "web_search" and web_search:
            out.append(_web_search(tool))
        else:
            drop(f"tools.{kind}")
    return out


def _function(tool: Mapping[str, Any], cap: Capability, drop: Drop) -> dict[str, Any]:
    function = tool["function"]
    out: dict[str, Any] = {"name": str(function.get("name") or "")}
    if function.get("description"):
        out["description"] = function["description"]
    out["input_schema"] = function.get("parameters") or {"type": "object", "properties": {}}
    if function.get("strict") is True:
        if cap.structured_output:
            out["strict"] = True
        else:
            drop("tools.strict")
    control = tool.get("cache_control")
    if isinstance(control, Mapping):
        out["cache_control"] = dict(control)
    return out


def _web_search(tool: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI's hosted web search → Claude's web search server tool (web-search-tool)."""
    out: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}
    for name in WEB_SEARCH_FIELDS:
        if tool.get(name) is not None:
            out[name] = tool[name]
    location = out.get("user_location")
    if isinstance(location, Mapping):
        out["user_location"] = {"type": "approximate", **{k: v for k, v in location.items() if v is not None}}
    control = tool.get("cache_control")
    if isinstance(control, Mapping):
        out["cache_control"] = dict(control)
    return out


def tool_choice(req: Mapping[str, Any], cap: Capability, thinking_on: bool, drop: Drop) -> dict[str, Any] | None:
    """`required` → any, a named function → tool; a forced choice the model refuses becomes `auto`."""
    choice = req.get("tool_choice")
    result: dict[str, Any] | None = None
    if choice in ("auto", "none"):
        result = {"type": choice}
    elif choice == "required":
        result = {"type": "any"}
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        result = {"type": "tool", "name": str(choice["function"].get("name") or "")}
    if result is not None and result["type"] in ("any", "tool") and (
            cap.forced_tool_choice == "never" or (thinking_on and cap.forced_tool_choice == "without-thinking")):
        drop("tool_choice")
        result = {"type": "auto"}
    if req.get("parallel_tool_calls") is False and (result is None or result["type"] != "none"):
        result = {**(result or {"type": "auto"}), "disable_parallel_tool_use": True}
    return result


def response_format(req: Mapping[str, Any], native: bool) -> tuple[dict[str, Any] | None, str | None]:
    """(`output_config.format`, or an instruction for the system prompt where there is none)."""
    fmt = req.get("response_format")
    if not isinstance(fmt, Mapping) or fmt.get("type") not in ("json_object", "json_schema"):
        return None, None
    spec = as_mapping(fmt.get("json_schema"))
    schema = spec.get("schema") if fmt.get("type") == "json_schema" else None
    if isinstance(schema, Mapping) and native:
        return {"type": "json_schema", "schema": dict(schema)}, None
    if isinstance(schema, Mapping):
        return None, f"{JSON_INSTRUCTION} It must match this JSON schema: {orjson.dumps(schema).decode()}"
    return None, JSON_INSTRUCTION
