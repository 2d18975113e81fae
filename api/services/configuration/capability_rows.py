"""The shipped capability rows: what each model family accepts (api/services/configuration/capabilities.py
says what each field means). One block per provider family, each citing its sources; a family's shared
fields are a template row, and `like(template, pattern, **changes)` makes a row from it."""
from __future__ import annotations

from api.services.configuration.capabilities import OPENAI_SAMPLING, Capability, like

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
