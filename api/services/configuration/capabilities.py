"""What a model accepts, as data: the row of the capability table every converter reads.

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

The shipped rows are api/services/configuration/capability_rows.py; how a model finds its row (and
the operator's `ModelCapabilities` overrides) is capability_lookup.py.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
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
