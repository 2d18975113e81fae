"""The internal form → Gemini's generateContent body (pure; also used by Vertex AI's Gemini models).

Contents come from contents.py, schemas from schema.py; this module assembles the request as the
upstream model's capability row (`meta.cap`) allows, and notes in `meta` what it leaves out:

- `generationConfig` holds only fields Gemini defines (ai.google.dev/api/generate-content#
  generationconfig): sampling the row accepts (others dropped with a notice), `maxOutputTokens`
  clamped to the row's cap (a larger value is refused: "Unable to submit request because it has a
  maxOutputTokens value of … but the supported range is from 1 (inclusive) to 65537 (exclusive)",
  BerriAI/litellm#10548), at most 5 `stopSequences`, JSON output (`responseMimeType`, `responseSchema`).
- Thinking (ai.google.dev/gemini-api/docs/thinking): `gemini-level` models take `thinkingLevel`
  (Gemini 3; the levels each model takes are the row's `efforts`; thinking cannot be switched off, so
  `disabled` asks for the lowest level), `gemini-budget` models take `thinkingBudget` (Gemini 2.5; 0
  switches thinking off where the model allows it, -1 lets the model decide; each model's range
  below). Never both: "You can only set only one of thinking budget and thinking level."
  (sterlp/eclipse-peon-ai#115). `includeThoughts` is set whenever the model thinks, so the thoughts
  come back as reasoning_content.
- Tools: functions → `functionDeclarations` (schema reduced), the hosted `web_search` tool →
  `googleSearch` (ai.google.dev/gemini-api/docs/google-search). Gemini runs a built-in tool beside
  function declarations only in the tool-combination mode, "supported for Gemini 3 models only"
  (ai.google.dev/gemini-api/docs/tool-combination), asked for with
  `toolConfig.includeServerSideToolInvocations`, which Vertex AI does not take (googleapis
  java-genai/kotlin-genai `ToolConfig.includeServerSideToolInvocations`: "not supported in Vertex
  AI"): there both go together, the search's own `toolCall`/`toolResponse` parts left out of the
  answer (answer.py) and put back on the next turn from the gateway's kept state (contents.py);
  elsewhere, with functions present, web search is dropped with a notice.
- Image output (images.py): `responseModalities` and `imageConfig` for Gemini's image models only.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.services.configuration.capabilities import EFFORT_ORDER, Capability
from api.services.configuration.capability_lookup import base_name
from api.upstream.base import RelayMeta
from api.upstream.providers.gemini.answer import convert_error, convert_response
from api.upstream.providers.gemini.contents import MEDIA_PLACEHOLDER, convert_contents
from api.upstream.providers.gemini.images import chat_output
from api.upstream.providers.gemini.schema import has_parameters, to_gemini

# The Gemini API's adjustable harm categories (HARM_CATEGORY_CIVIC_INTEGRITY is deprecated).
SAFETY_CATEGORIES = ("HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
                     "HARM_CATEGORY_DANGEROUS_CONTENT")
SAFETY_SETTINGS = [{"category": c, "threshold": "BLOCK_NONE"} for c in SAFETY_CATEGORIES]
SAMPLING = (("temperature", "temperature"), ("top_p", "topP"), ("top_k", "topK"), ("seed", "seed"),
            ("presence_penalty", "presencePenalty"), ("frequency_penalty", "frequencyPenalty"),
            ("n", "candidateCount"))
UNMAPPED = ("logprobs", "top_logprobs", "logit_bias")  # no Gemini field carries them as OpenAI defines them
MAX_STOP_SEQUENCES = 5
# Thinking budgets per Gemini 2.5 model: (prefix, lowest, highest, can switch off) from the thinking
# guide's table (ai.google.dev/gemini-api/docs/thinking#set-budget); longest prefix first.
BUDGET_RANGES = (("gemini-2.5-flash-lite", 512, 24576, True), ("gemini-2.5-flash", 1, 24576, True),
                 ("gemini-2.5-pro", 128, 32768, False))
LEVEL_FOR_BUDGET = ((1024, "minimal"), (4096, "low"), (16384, "medium"))

__all__ = ["MEDIA_PLACEHOLDER", "convert_error", "convert_request", "convert_response"]


def _sampling(req: Mapping[str, Any], cap: Capability, meta: RelayMeta, config: dict[str, Any]) -> None:
    for ours, theirs in SAMPLING:
        if ours in req and req[ours] is not None:
            if cap.accepts(ours):
                config[theirs] = req[ours]
            else:
                meta.drop(ours)
    for name in UNMAPPED:
        if req.get(name) not in (None, False):
            meta.drop(name)
    stop = req.get("stop")
    if stop and cap.accepts("stop"):
        sequences = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)]
        if len(sequences) > MAX_STOP_SEQUENCES:
            meta.drop(f"stop beyond {MAX_STOP_SEQUENCES}")
        config["stopSequences"] = sequences[:MAX_STOP_SEQUENCES]
    elif stop:
        meta.drop("stop")


def _output_limit(req: Mapping[str, Any], cap: Capability, meta: RelayMeta, config: dict[str, Any]) -> None:
    requested = req.get("max_completion_tokens", req.get("max_tokens"))
    wanted = requested if isinstance(requested, int) and not isinstance(requested, bool) else None
    limit = cap.output_limit(wanted)
    if limit:
        config["maxOutputTokens"] = limit
        if wanted and limit < wanted:
            meta.drop(f"max_tokens above {limit}")


def _json_output(req: Mapping[str, Any], config: dict[str, Any]) -> None:
    fmt = req.get("response_format")
    if not isinstance(fmt, Mapping) or fmt.get("type") not in ("json_object", "json_schema"):
        return
    config["responseMimeType"] = "application/json"
    spec = fmt.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if fmt.get("type") == "json_schema" and isinstance(schema, Mapping):
        config["responseSchema"] = to_gemini(schema)


# -- thinking ---------------------------------------------------------------------------------------


def _level_for_budget(budget: int) -> str:
    return next((level for limit, level in LEVEL_FOR_BUDGET if budget <= limit), "high")


def _lowest(efforts: tuple[str, ...]) -> str:
    return min(efforts, key=lambda e: EFFORT_ORDER.index(e) if e in EFFORT_ORDER else 99)


def _budget_range(model: str) -> tuple[int, int, bool]:
    name = base_name(model)
    return next(((low, high, off) for prefix, low, high, off in BUDGET_RANGES if name.startswith(prefix)),
                (0, 32768, True))


def _requested(req: Mapping[str, Any]) -> tuple[str | None, str | None, int | None]:
    """(effort, Claude-style thinking type, budget) the client asked for."""
    raw_effort, raw_thinking = req.get("reasoning_effort"), req.get("thinking")
    effort = raw_effort if isinstance(raw_effort, str) else None
    thinking: Mapping[str, Any] = raw_thinking if isinstance(raw_thinking, Mapping) else {}
    budget = thinking.get("budget_tokens")
    kind = thinking.get("type") if isinstance(thinking.get("type"), str) else None
    return effort, kind, budget if isinstance(budget, int) and not isinstance(budget, bool) else None


def thinking_config(req: Mapping[str, Any], meta: RelayMeta) -> dict[str, Any] | None:
    """generationConfig.thinkingConfig for the upstream model, or None (nothing to send)."""
    cap = meta.cap
    effort, kind, budget = _requested(req)
    if cap.reasoning not in ("gemini-level", "gemini-budget"):
        for name in ("reasoning_effort", "thinking"):
            if req.get(name) is not None:
                meta.drop(name)
        return None
    disabled = kind == "disabled" or effort == "none"
    if not (disabled or effort or kind or cap.thinks_by_default):
        return None
    config: dict[str, Any] = {} if disabled else {"includeThoughts": True}
    if cap.reasoning == "gemini-level":
        level = (_lowest(cap.efforts) if disabled and cap.efforts else cap.effort(effort) if effort else
                 cap.effort(_level_for_budget(budget)) if budget is not None else None)
        if level:
            config["thinkingLevel"] = level
        return config
    low, high, can_switch_off = _budget_range(meta.model)
    if disabled:
        config["thinkingBudget"] = 0 if can_switch_off else low
    elif budget is not None or effort:
        wanted = budget if budget is not None else cap.budget_for(cap.effort(effort) or effort) or high
        config["thinkingBudget"] = max(low, min(high, wanted))
    elif kind == "adaptive":
        config["thinkingBudget"] = -1
    return config


# -- tools ------------------------------------------------------------------------------------------


def _declaration(function: Mapping[str, Any]) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": str(function.get("name") or "")}
    if function.get("description"):
        declaration["description"] = function["description"]
    parameters = function.get("parameters")
    if isinstance(parameters, Mapping):
        reduced = to_gemini(parameters)
        if has_parameters(reduced):
            declaration["parameters"] = reduced
    return declaration


def _tool_config(choice: Any) -> dict[str, Any] | None:
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
    if isinstance(choice, str) and choice in modes:
        return {"functionCallingConfig": {"mode": modes[choice]}}
    function = choice.get("function") if isinstance(choice, Mapping) else None
    if isinstance(function, Mapping) and function.get("name"):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [function["name"]]}}
    return None


def combines_tools(meta: RelayMeta, combination: bool) -> bool:
    """Whether the target runs built-in tools beside functions: a Gemini 3 model (its row's thinking
    levels), on an API that takes the combination's switch."""
    return combination and meta.cap.reasoning == "gemini-level"


def _functions(declared: list[Any]) -> list[Any]:
    return [t["function"] for t in declared if isinstance(t, Mapping) and t.get("type", "function") == "function"
            and isinstance(t.get("function"), Mapping)]


def _searches(declared: list[Any]) -> list[Any]:
    return [t for t in declared if isinstance(t, Mapping) and t.get("type") == "web_search"]


def combined(req: Mapping[str, Any], meta: RelayMeta, combination: bool) -> bool:
    """Whether this request goes in the tool-combination mode (functions and web search together)."""
    raw = req.get("tools")
    declared: list[Any] = raw if isinstance(raw, list) else []
    return combines_tools(meta, combination) and bool(_searches(declared)) and bool(_functions(declared))


def tools(req: Mapping[str, Any], meta: RelayMeta,
          combination: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(tools, toolConfig) of the request; `combination`: the API takes built-in tools beside functions
    for the models that do (see the module's docstring)."""
    raw = req.get("tools")
    declared: list[Any] = raw if isinstance(raw, list) else []
    functions, searches = _functions(declared), _searches(declared)
    for tool in declared:
        if isinstance(tool, Mapping) and "cache_control" in tool:
            meta.drop("cache_control")
        if isinstance(tool, Mapping) and tool.get("type") not in ("function", "web_search", None):
            meta.drop(f"tools.{tool.get('type')}")
    out: list[dict[str, Any]] = []
    both = bool(functions and searches) and combines_tools(meta, combination)
    if functions:
        out.append({"functionDeclarations": [_declaration(f) for f in functions]})
        if searches and not both:
            meta.drop("tools.web_search")
    if searches and (both or not functions):
        out.append({"googleSearch": {}})
        for option in sorted({k for s in searches for k in s if k not in ("type", "name")}):
            meta.drop(f"tools.web_search.{option}")
    if req.get("parallel_tool_calls") is False:
        meta.drop("parallel_tool_calls")
    config = _tool_config(req.get("tool_choice")) if functions else None
    if both:
        config = {**(config or {}), "includeServerSideToolInvocations": True}
    return out, config


# -- the request ------------------------------------------------------------------------------------


def convert_request(req: Mapping[str, Any], meta: RelayMeta, combination: bool = False) -> dict[str, Any]:
    """`combination`: the API takes built-in tools beside functions (the Gemini API; not Vertex AI)."""
    cap = meta.cap
    contents, system = convert_contents(req.get("messages"), meta.drop, cap.thought_signatures,
                                        circulate=combined(req, meta, combination))
    body: dict[str, Any] = {"contents": contents, "safetySettings": SAFETY_SETTINGS}
    if system:
        body["systemInstruction"] = {"parts": system}
    config: dict[str, Any] = {}
    _sampling(req, cap, meta, config)
    _output_limit(req, cap, meta, config)
    _json_output(req, config)
    chat_output(req, meta, config)
    thinking = thinking_config(req, meta)
    if thinking:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    declared, tool_config = tools(req, meta, combination)
    if declared:
        body["tools"] = declared
    if tool_config:
        body["toolConfig"] = tool_config
    return body
