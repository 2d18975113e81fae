"""What each model family accepts, as data: the one table every converter reads.

A row says, for the models whose (upstream) name matches its pattern:
- `output_param`: the name of the output limit in the OpenAI chat format (`max_tokens`, or
  `max_completion_tokens` for OpenAI's reasoning models, which refuse `max_tokens`);
- `max_output`: the largest output limit the model takes (a larger request is clamped, with a notice);
- `default_output`: the limit sent when the client sets none and the target needs one (Claude's
  `max_tokens` is required; Codex sends none): sized for a model that thinks before it answers;
- `sampling`: the sampling parameters the model accepts (`temperature`, `top_p`, `top_k`,
  `presence_penalty`, `frequency_penalty`, `seed`, `logprobs`, `stop`); `sampling_exclusive`: it
  refuses `temperature` and `top_p` together (then `temperature` is kept);
- `reasoning`: how thinking is controlled: `effort` (OpenAI's `reasoning_effort`), `claude-budget`
  (`thinking.budget_tokens`), `claude-adaptive` (`thinking: {type: adaptive}` +
  `output_config.effort`; a budget is refused), `gemini-budget` (`thinkingBudget`), `gemini-level`
  (`thinkingLevel`), `switch` (`thinking: {type: enabled|disabled}`, DeepSeek's and Kimi's own
  field, plus `reasoning_effort` when `efforts` has values), `none`; `efforts` the effort values it
  takes (others map to the nearest);
- `thinks_by_default`: it thinks when the request says nothing (the output limit must leave room);
- `forced_tool_choice`: `always`, `without-thinking` (a forced tool call is refused while thinking),
  or `never` (only `auto` and `none`);
- `replays_reasoning`: earlier turns' `reasoning_content` must go back with tool turns (DeepSeek,
  Kimi thinking mode); `thought_signatures`: Gemini 3's signatures must go back on function calls;
- `structured_output`: a native JSON-schema output (else an instruction in the system prompt);
- `web_search_options`: an OpenAI search model (it searches on every request; a hosted web search
  tool becomes `web_search_options`); `cache_breakpoints`: it takes explicit prompt-cache
  breakpoints on content parts (`prompt_cache_breakpoint`, OpenAI's gpt-5.6 and later).

Rows are matched on the model name without provider prefixes (`us.anthropic.`, `models/`,
`publishers/…/models/`) and without Bedrock's version suffix; the longest matching pattern wins
(a pattern ending in `*` is a prefix, otherwise the whole name). The option `ModelCapabilities`
(a JSON object: pattern → the fields to change) adds rows or changes shipped ones without a release;
`validate_overrides` checks it when it is saved. Rows are data: a family's shared fields are a
template row, and `like(template, pattern, **changes)` makes a row from it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

SAMPLING = frozenset({"temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty", "seed", "logprobs",
                      "top_logprobs", "stop", "logit_bias", "n"})
OPENAI_SAMPLING = SAMPLING - {"top_k"}
REASONING_KINDS = ("none", "effort", "switch", "claude-budget", "claude-adaptive", "gemini-budget", "gemini-level")
TOOL_CHOICE_KINDS = ("always", "without-thinking", "never")
EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
# Thinking budgets (tokens) for an effort, where the model takes a budget rather than an effort.
EFFORT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576, "xhigh": 32768, "max": 32768}


@dataclass(frozen=True, slots=True)
class Capability:
    pattern: str = "*"
    output_param: str = "max_tokens"
    max_output: int | None = None
    default_output: int | None = None
    sampling: frozenset[str] = SAMPLING
    sampling_exclusive: bool = False
    reasoning: str = "none"
    efforts: tuple[str, ...] = ()
    thinks_by_default: bool = False
    forced_tool_choice: str = "always"
    replays_reasoning: bool = False
    thought_signatures: bool = False
    structured_output: bool = True
    web_search_options: bool = False
    cache_breakpoints: bool = False

    def accepts(self, parameter: str) -> bool:
        """Whether a sampling parameter may be sent (non-sampling parameters are not this row's business)."""
        return parameter not in SAMPLING or parameter in self.sampling

    def output_limit(self, requested: int | None) -> int | None:
        """The output limit to send: the client's, clamped to the model's cap; else the row's default."""
        if requested is None or requested <= 0:
            return self.default_output
        return min(requested, self.max_output) if self.max_output else requested

    def effort(self, wanted: str | None) -> str | None:
        """The effort this model takes nearest to `wanted` (None: no effort to send)."""
        if not wanted or not self.efforts:
            return None
        if wanted in self.efforts:
            return wanted
        rank = EFFORT_ORDER.index(wanted) if wanted in EFFORT_ORDER else EFFORT_ORDER.index("medium")
        ranked = sorted(self.efforts, key=lambda e: (abs(EFFORT_ORDER.index(e) - rank) if e in EFFORT_ORDER else 99,
                                                      -EFFORT_ORDER.index(e) if e in EFFORT_ORDER else 0))
        return ranked[0]

    @staticmethod
    def budget_for(effort: str | None) -> int | None:
        return EFFORT_BUDGETS.get(effort or "")

    @staticmethod
    def effort_for(budget: int) -> str:
        """The effort a thinking budget stands for: the largest whose budget it reaches (`minimal` below all)."""
        reached = [effort for effort, tokens in EFFORT_BUDGETS.items() if budget >= tokens]
        return reached[-1] if reached else "minimal"


def like(template: Capability | Mapping[str, Any], pattern: str, **changes: Any) -> Capability:
    """A row for `pattern`: `template` (a row, or a mapping of fields) with `changes` applied."""
    base = template if isinstance(template, Capability) else Capability(**template)
    return replace(base, pattern=pattern, **changes)


NO_SAMPLING: frozenset[str] = frozenset({"stop"})
# OpenAI's chat models, and its reasoning models: `max_completion_tokens` (`max_tokens` refused), no
# sampling but `seed` and `n` (temperature/top_p other than 1, penalties, logprobs and `stop` refused).
OPENAI_CHAT = Capability(sampling=OPENAI_SAMPLING)
OPENAI_REASONING = Capability(output_param="max_completion_tokens", max_output=128000, reasoning="effort",
                              sampling=frozenset({"seed", "n"}), thinks_by_default=True)
LOW_TO_HIGH = ("low", "medium", "high")
DEEPSEEK_SAMPLING = frozenset({"temperature", "top_p", "presence_penalty", "frequency_penalty", "stop", "logprobs",
                               "top_logprobs"})
DEEPSEEK = Capability(reasoning="switch", sampling=frozenset({"stop"}), replays_reasoning=True)
KIMI = Capability(sampling=frozenset({"stop"}), thinks_by_default=True, forced_tool_choice="without-thinking",
                  replays_reasoning=True)
GROK_REASONING = Capability(sampling=frozenset({"temperature", "top_p", "seed", "logprobs", "top_logprobs", "n"}),
                            thinks_by_default=True)
# Claude (platform.claude.com/docs/en/about-claude/models/overview, …/build-with-claude/adaptive-thinking,
# …/effort, …/extended-thinking, …/structured-outputs, and each model's migration guide). On a
# `claude-adaptive` row, "none" among `efforts` means thinking may be switched off
# (`thinking: {type: disabled}`); it is never sent as an effort.
CLAUDE = Capability(max_output=8192, default_output=4096, sampling=frozenset({"temperature", "top_p", "top_k", "stop"}),
                    structured_output=False)
CLAUDE_BUDGET = like(CLAUDE, "*", max_output=64000, default_output=16000, reasoning="claude-budget",
                     forced_tool_choice="without-thinking")
CLAUDE_ADAPTIVE = like(CLAUDE, "*", max_output=128000, default_output=32000, reasoning="claude-adaptive",
                       efforts=("none", "low", "medium", "high", "xhigh", "max"), sampling=NO_SAMPLING,
                       forced_tool_choice="without-thinking", structured_output=True)
# Thinking always on (`disabled` → 400) and forced tool use refused (models/opus-5-5/whats-new-opus-5-5,
# models/sonnet-5-5/migration-guide; Fable and Mythos think always).
CLAUDE_ALWAYS = like(CLAUDE_ADAPTIVE, "*", efforts=("low", "medium", "high", "xhigh", "max"), thinks_by_default=True,
                     forced_tool_choice="never")
# Gemini (ai.google.dev/gemini-api/docs/models: output limits; …/thinking: `thinkingBudget` on 2.5 with
# per-model ranges, `thinkingLevel` on 3.x with the levels each model takes, "Thinking level is not
# supported for this model." on 2.5; …/thought-signatures: Gemini 3 refuses function calls replayed
# without them). Logprobs and logit_bias have no Gemini field in OpenAI's shape.
GEMINI = Capability(max_output=8192, sampling=frozenset({"temperature", "top_p", "top_k", "seed", "stop", "n",
                                                         "presence_penalty", "frequency_penalty"}))
GEMINI_25 = like(GEMINI, "*", max_output=65536, reasoning="gemini-budget", thinks_by_default=True,
                 efforts=("minimal", "low", "medium", "high"))
GEMINI_3 = like(GEMINI, "*", max_output=65536, reasoning="gemini-level", efforts=("minimal", "low", "medium", "high"),
                thinks_by_default=True, thought_signatures=True)

# -- the table ---------------------------------------------------------------------------------------
# One block per provider family; keep each block's rows together.

ROWS: tuple[Capability, ...] = (
    Capability("*"),
    # -- OpenAI ------------------------------------------------------------------------------------
    # Output caps: developers.openai.com/api/docs/models/<model> ("max output tokens"); a larger
    # request is refused ("max_tokens is too large: …"). Reasoning models: the reasoning guide
    # (platform.openai.com/docs/guides/reasoning) and the API's own refusals ("Unsupported parameter:
    # 'max_tokens' …", "'stop' is not supported with this model", "Supported values are: 'none', …").
    like(OPENAI_CHAT, "gpt-3.5-turbo*", max_output=4096),
    like(OPENAI_CHAT, "gpt-4", max_output=8192),
    like(OPENAI_CHAT, "gpt-4-0613", max_output=8192),
    like(OPENAI_CHAT, "gpt-4-turbo*", max_output=4096),
    like(OPENAI_CHAT, "gpt-4-1106*", max_output=4096),
    like(OPENAI_CHAT, "gpt-4-0125*", max_output=4096),
    like(OPENAI_CHAT, "gpt-4o*", max_output=16384),
    like(OPENAI_CHAT, "gpt-4o-2024-05-13", max_output=4096),
    like(OPENAI_CHAT, "chatgpt-4o*", max_output=16384),
    like(OPENAI_CHAT, "gpt-4.1*", max_output=32768),
    # Search models search on every request and refuse sampling ("Model incompatible request argument
    # supplied: temperature"): platform.openai.com/docs/guides/tools-web-search?api-mode=chat.
    like(OPENAI_CHAT, "gpt-4o-search-preview*", max_output=16384, sampling=frozenset(), web_search_options=True),
    like(OPENAI_CHAT, "gpt-4o-mini-search-preview*", max_output=16384, sampling=frozenset(),
         web_search_options=True),
    like(OPENAI_REASONING, "gpt-5-search-api*", reasoning="none", web_search_options=True),
    like(OPENAI_REASONING, "o1*", max_output=100000, efforts=LOW_TO_HIGH),
    like(OPENAI_REASONING, "o1-mini*", max_output=65536, reasoning="none"),  # reasoning_effort refused
    like(OPENAI_REASONING, "o1-preview*", max_output=32768, reasoning="none"),
    like(OPENAI_REASONING, "o3*", max_output=100000, efforts=LOW_TO_HIGH),
    like(OPENAI_REASONING, "o4-mini*", max_output=100000, efforts=LOW_TO_HIGH),
    like(OPENAI_REASONING, "gpt-5*", efforts=("minimal", "low", "medium", "high")),
    like(OPENAI_CHAT, "gpt-5-chat*", max_output=16384),
    like(OPENAI_REASONING, "gpt-5-pro*", max_output=272000, efforts=("high",)),
    like(OPENAI_REASONING, "gpt-5-codex*", efforts=LOW_TO_HIGH),
    like(OPENAI_REASONING, "gpt-5.1*", efforts=("none", *LOW_TO_HIGH)),
    like(OPENAI_REASONING, "gpt-5.1-codex*", efforts=LOW_TO_HIGH),
    like(OPENAI_REASONING, "gpt-5.1-codex-max*", efforts=(*LOW_TO_HIGH, "xhigh")),
    like(OPENAI_REASONING, "gpt-5.2*", efforts=("none", *LOW_TO_HIGH, "xhigh")),
    like(OPENAI_REASONING, "gpt-5.2-codex*", efforts=(*LOW_TO_HIGH, "xhigh")),
    like(OPENAI_REASONING, "gpt-5.3-codex*", efforts=(*LOW_TO_HIGH, "xhigh")),
    like(OPENAI_REASONING, "gpt-5.4*", efforts=("none", *LOW_TO_HIGH, "xhigh")),
    like(OPENAI_REASONING, "gpt-5.5*", efforts=("none", *LOW_TO_HIGH, "xhigh")),
    like(OPENAI_REASONING, "gpt-5.6*", efforts=("none", *LOW_TO_HIGH, "xhigh", "max"), cache_breakpoints=True),
    # GPT-6 (developers.openai.com/api/docs/models/gpt-6-sol, …/gpt-6.1-sol): 128K output; gpt-6.1
    # takes no `none` nor `minimal` (gpt-6.2 is given the same set: every effort in it is taken by both).
    like(OPENAI_REASONING, "gpt-6*", efforts=("none", *LOW_TO_HIGH, "xhigh", "max"), cache_breakpoints=True),
    like(OPENAI_REASONING, "gpt-6.1*", efforts=(*LOW_TO_HIGH, "xhigh", "max"), cache_breakpoints=True),
    like(OPENAI_REASONING, "gpt-6.2*", efforts=(*LOW_TO_HIGH, "xhigh", "max"), cache_breakpoints=True),
    # -- Anthropic Claude ----------------------------------------------------------------------------
    like(CLAUDE, "claude-*"),
    like(CLAUDE, "claude-3-haiku*", max_output=4096),
    like(CLAUDE, "claude-3-opus*", max_output=4096),
    like(CLAUDE, "claude-3-5-*", default_output=8192),
    like(CLAUDE_BUDGET, "claude-3-7-sonnet*"),
    like(CLAUDE_BUDGET, "claude-sonnet-4-*"),
    like(CLAUDE_BUDGET, "claude-opus-4-*", max_output=32000),
    # 4.5: `temperature` and `top_p` refused together (docs.aws.amazon.com/bedrock/latest/userguide/
    # model-parameters-anthropic-claude-messages-request-response.html; BerriAI/litellm#15097).
    like(CLAUDE_BUDGET, "claude-sonnet-4-5*", sampling_exclusive=True, structured_output=True),
    like(CLAUDE_BUDGET, "claude-haiku-4-5*", sampling_exclusive=True, structured_output=True),
    like(CLAUDE_BUDGET, "claude-opus-4-5*", sampling_exclusive=True, structured_output=True),
    # 4.6: adaptive (a budget is deprecated there), no `xhigh`, sampling as on 4.5, no thinking unless asked.
    like(CLAUDE_ADAPTIVE, "claude-opus-4-6*", efforts=("none", "low", "medium", "high", "max"),
         sampling=CLAUDE.sampling, sampling_exclusive=True),
    like(CLAUDE_ADAPTIVE, "claude-sonnet-4-6*", max_output=64000, efforts=("none", "low", "medium", "high", "max"),
         sampling=CLAUDE.sampling, sampling_exclusive=True),
    # 4.7 and later: adaptive only (a budget → 400), sampling parameters removed.
    like(CLAUDE_ADAPTIVE, "claude-opus-4-7*"),
    like(CLAUDE_ADAPTIVE, "claude-opus-4-8*"),
    # 5.x think by default; Opus 5, Sonnet 5 and Haiku 5.5 can still switch it off.
    like(CLAUDE_ADAPTIVE, "claude-opus-5*", thinks_by_default=True),
    like(CLAUDE_ADAPTIVE, "claude-sonnet-5*", thinks_by_default=True),
    like(CLAUDE_ADAPTIVE, "claude-haiku-5*", thinks_by_default=True),
    like(CLAUDE_ALWAYS, "claude-opus-5-5*"),
    like(CLAUDE_ALWAYS, "claude-sonnet-5-5*"),
    like(CLAUDE_ALWAYS, "claude-fable-5*"),
    like(CLAUDE_ALWAYS, "claude-mythos-*"),
    # -- Google Gemini -------------------------------------------------------------------------------
    like(GEMINI, "gemini-*"),
    like(GEMINI_25, "gemini-2.5-*"),
    like(GEMINI_25, "gemini-2.5-flash-lite*", thinks_by_default=False),  # thinks only when asked to
    like(GEMINI, "gemini-2.5-flash-image*", max_output=32768),  # takes no thinking budget
    like(GEMINI_3, "gemini-3*"),
    # MINIMAL refused by the Pro models ("thinking_level MEDIUM is not supported by this model" on 3 Pro,
    # jenslys/opencode-gemini-auth#14; dhyansraj/mcp-mesh#1346), by Flash from 3.7 (not Flash-Lite) and
    # the -latest aliases; the image models take MINIMAL and HIGH only.
    like(GEMINI_3, "gemini-3-pro*", efforts=("low", "high")),
    like(GEMINI_3, "gemini-3.1-pro*", efforts=LOW_TO_HIGH),
    like(GEMINI_3, "gemini-3.1-flash-image*", efforts=("minimal", "high")),
    like(GEMINI_3, "gemini-3.7-flash*", efforts=LOW_TO_HIGH),
    like(GEMINI_3, "gemini-3.7-flash-lite*"),
    like(GEMINI_3, "gemini-3.8-flash*", efforts=LOW_TO_HIGH),
    like(GEMINI_3, "gemini-3.8-flash-lite*"),
    like(GEMINI_3, "gemini-flash-latest", efforts=LOW_TO_HIGH),
    like(GEMINI_3, "gemini-pro-latest", efforts=LOW_TO_HIGH),
    # -- DeepSeek ----------------------------------------------------------------------------------
    # api-docs.deepseek.com: chat parameters (no n, seed, logit_bias); thinking mode (`thinking: {type}`,
    # guides/thinking_mode) ignores temperature/top_p/penalties and refuses logprobs, and needs the
    # `reasoning_content` of tool turns sent back (400 otherwise). deepseek-chat / deepseek-reasoner
    # (V3.2: 8K / 64K output) are the non-thinking / thinking aliases; V4 (2026-04-24) thinks by
    # default, takes `reasoning_effort` high or max and writes up to 384K tokens.
    like(DEEPSEEK, "deepseek-chat*", max_output=8192, sampling=DEEPSEEK_SAMPLING),
    like(DEEPSEEK, "deepseek-reasoner*", max_output=65536, thinks_by_default=True),
    like(DEEPSEEK, "deepseek-v4*", max_output=384000, efforts=("high", "max"), thinks_by_default=True,
         sampling=DEEPSEEK_SAMPLING - {"logprobs", "top_logprobs"}),
    # -- Moonshot Kimi -------------------------------------------------------------------------------
    # platform.kimi.ai/docs/api/models-overview and guide/use-kimi-k2-thinking-model: k2.5 and k2.6
    # think by default (`thinking: {type: disabled}` turns it off) and fix temperature, top_p, n and
    # the penalties; kimi-k2-thinking and kimi-k2.7-code always think; a thinking turn refuses a forced
    # tool_choice ("tool_choice 'required' is incompatible with thinking enabled") and needs the
    # `reasoning_content` of earlier tool turns back ("reasoning_content is missing in assistant tool
    # call message").
    like(KIMI, "kimi-k2*", sampling=OPENAI_SAMPLING, thinks_by_default=False, forced_tool_choice="always"),
    like(KIMI, "kimi-k2-thinking*", sampling=OPENAI_SAMPLING, reasoning="none", forced_tool_choice="never"),
    like(KIMI, "kimi-k2.5*", reasoning="switch"),
    like(KIMI, "kimi-k2.6*", reasoning="switch"),
    like(KIMI, "kimi-k2.7-code*", reasoning="none", forced_tool_choice="never"),
    # -- xAI Grok --------------------------------------------------------------------------------------
    # docs.x.ai/developers/model-capabilities/text/reasoning: reasoning models refuse presence_penalty,
    # frequency_penalty and stop; `reasoning_effort` only where listed (grok-3-mini low/high, grok-4.3
    # none…high, grok-4.5 low…high, grok-4.6 low…xhigh); grok-4, -fast, 4.20 and grok-code refuse it
    # ("Model does not support parameter reasoningEffort").
    like(OPENAI_CHAT, "grok-3*"),
    like(GROK_REASONING, "grok-3-mini*", reasoning="effort", efforts=("low", "high")),
    like(GROK_REASONING, "grok-4*"),
    like(OPENAI_CHAT, "grok-4-fast-non-reasoning*"),
    like(OPENAI_CHAT, "grok-4-1-fast-non-reasoning*"),
    like(OPENAI_CHAT, "grok-4.20-non-reasoning*"),
    like(OPENAI_CHAT, "grok-4.20-0309-non-reasoning*"),
    like(GROK_REASONING, "grok-4.3*", reasoning="effort", efforts=("none", *LOW_TO_HIGH)),
    like(GROK_REASONING, "grok-4.5*", reasoning="effort", efforts=LOW_TO_HIGH),
    like(GROK_REASONING, "grok-4.6*", reasoning="effort", efforts=(*LOW_TO_HIGH, "xhigh")),
    like(GROK_REASONING, "grok-code*"),
)

_PREFIXES = re.compile(r"^(?:(?:us|eu|apac|global|jp|au)\.)?(?:anthropic\.|google\.|models/|publishers/[^/]+/models/)")
_BEDROCK_SUFFIX = re.compile(r"-v\d+(?::\d+)?$")


def base_name(model: str) -> str:
    """The model's name as the table knows it: lower case, without provider prefixes or Bedrock's version."""
    name = _PREFIXES.sub("", model.strip().lower())
    name = _BEDROCK_SUFFIX.sub("", name)
    return name.split("@", 1)[0]  # Vertex's `claude-…@20250514`


def _matches(pattern: str, name: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


def _specificity(pattern: str) -> tuple[int, int]:
    return (len(pattern.rstrip("*")), 0 if pattern.endswith("*") else 1)


class CapabilityTable:
    """The shipped rows plus the operator's overrides; lookups cached per model name."""

    def __init__(self, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        rows = {row.pattern: row for row in ROWS}
        for pattern, changes in (overrides or {}).items():
            base = rows.get(pattern) or _lookup(tuple(rows.values()), pattern.rstrip("*"))
            rows[pattern] = replace(base, pattern=pattern, **_coerce(changes))
        self.rows = tuple(sorted(rows.values(), key=lambda r: _specificity(r.pattern), reverse=True))
        self._cache: dict[str, Capability] = {}

    def __call__(self, model: str) -> Capability:
        found = self._cache.get(model)
        if found is None:
            if len(self._cache) > 4096:
                self._cache.clear()
            found = self._cache[model] = _lookup(self.rows, base_name(model))
        return found


def _lookup(rows: tuple[Capability, ...], name: str) -> Capability:
    best: Capability | None = None
    for row in rows:
        if _matches(row.pattern, name) and (best is None or _specificity(row.pattern) > _specificity(best.pattern)):
            best = row
    return best or Capability()


_FIELDS = {f.name: f for f in fields(Capability) if f.name != "pattern"}


def _coerce(changes: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in changes.items():
        if name == "sampling":
            out[name] = frozenset(value)
        elif name == "efforts":
            out[name] = tuple(value)
        else:
            out[name] = value
    return out


def validate_overrides(value: Any) -> str | None:
    """Why the `ModelCapabilities` option is refused, or None when it is usable."""
    if not isinstance(value, Mapping):
        return "it must be a JSON object: model pattern → the fields to change"
    for pattern, changes in value.items():
        if not isinstance(pattern, str) or not pattern.strip() or "*" in pattern[:-1]:
            return f"{pattern!r}: a pattern is a model name, or a prefix ending in *"
        if not isinstance(changes, Mapping):
            return f"{pattern}: the fields to change must be a JSON object"
        for name, item in changes.items():
            problem = _field_problem(name, item)
            if problem:
                return f"{pattern}.{name}: {problem}"
    return None


def _field_problem(name: str, value: Any) -> str | None:
    if name not in _FIELDS:
        return f"unknown field (known: {', '.join(sorted(_FIELDS))})"
    if name in ("max_output", "default_output"):
        ok = value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10_000_000)
        return None if ok else "a positive whole number of tokens, or null"
    if name == "output_param":
        return None if value in ("max_tokens", "max_completion_tokens") else "max_tokens or max_completion_tokens"
    if name == "reasoning":
        return None if value in REASONING_KINDS else f"one of {', '.join(REASONING_KINDS)}"
    if name == "forced_tool_choice":
        return None if value in TOOL_CHOICE_KINDS else f"one of {', '.join(TOOL_CHOICE_KINDS)}"
    if name == "sampling":
        ok = isinstance(value, list) and all(v in SAMPLING for v in value)
        return None if ok else f"a list of: {', '.join(sorted(SAMPLING))}"
    if name == "efforts":
        ok = isinstance(value, list) and all(v in EFFORT_ORDER for v in value)
        return None if ok else f"a list of: {', '.join(EFFORT_ORDER)}"
    return None if isinstance(value, bool) else "true or false"


DEFAULT_TABLE = CapabilityTable()


def capability(model: str) -> Capability:
    """The shipped row for a model (without the operator's overrides: see `table_of`)."""
    return DEFAULT_TABLE(model)


_tables: dict[str, CapabilityTable] = {}


def table_of(raw_option: str) -> CapabilityTable:
    """The table with the `ModelCapabilities` option applied (one table per distinct option text)."""
    table = _tables.get(raw_option)
    if table is None:
        import orjson

        try:
            overrides = orjson.loads(raw_option) if raw_option.strip() else {}
        except orjson.JSONDecodeError:
            overrides = {}
        if validate_overrides(overrides) is not None:
            overrides = {}  # refused when saved; an invalid value from elsewhere changes nothing
        if len(_tables) > 8:
            _tables.clear()
        table = _tables[raw_option] = CapabilityTable(overrides)
    return table


__all__ = ["Capability", "CapabilityTable", "capability", "table_of", "validate_overrides", "base_name", "like",
           "EFFORT_BUDGETS", "SAMPLING"]
