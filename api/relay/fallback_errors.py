"""Which reason of a chain of models (api/relay/fallbacks.py) a failed request's last error is, in
the providers' own words: the model is unavailable (no channel, or every channel failed with an
error another channel might not have had: 5xx, 429, timeouts, connections), the prompt is too long
for it (`context`), or it refused the content (`policy`). Anything else names the request itself
and would fail on any model: None, no fallback."""
from __future__ import annotations

from api.services.configuration.fallback_rules import CONTEXT, POLICY, UNAVAILABLE
from api.upstream.errors import RelayError

CONTEXT_CODES = frozenset({"context_length_exceeded", "string_above_max_length", "request_too_large"})
CONTEXT_WORDS = (
    "maximum context length",  # OpenAI chat, DeepSeek, vLLM: "This model's maximum context length is 128000 tokens"
    "exceeds the context window",  # OpenAI Responses: "Your input exceeds the context window of this model"
    "prompt is too long",  # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    "exceed context limit",  # Anthropic: "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
    "exceeds the maximum number of tokens allowed",  # Gemini: "The input token count (1200000) exceeds the maximum…"
    "input is too long for requested model",  # Bedrock
    "too large for model with",  # Mistral: "Prompt contains 40000 tokens … too large for model with 32768 maximum"
    "context length exceeded", "context_length_exceeded",
)
POLICY_CODES = frozenset({"content_policy_violation", "content_filter", "invalid_prompt", "data_inspection_failed"})
POLICY_WORDS = (
    "content management policy",  # Azure OpenAI: "…triggering Azure OpenAI's content management policy"
    "flagged as potentially violating",  # OpenAI: "Invalid prompt: your prompt was flagged as potentially violating…"
    "blocked by content filtering policy",  # Anthropic: "Output blocked by content filtering policy"
    "safety filters",  # Gemini/Vertex: "…blocked by our safety filters"
    "violates our usage policies", "content policy",
)
UNAVAILABLE_CODES = frozenset({"no_available_channel", "upstream_timeout", "do_request_failed", "stream_interrupted",
                               "bad_response_body"})


def reason_of(err: RelayError) -> str | None:
    """The chain's reason for `err` (the upstream's own error, before status_code_mapping), or None."""
    code = str(err.code or "")
    if err.local:
        return UNAVAILABLE if code == "no_available_channel" else None
    message = err.message.lower()
    if code in CONTEXT_CODES or any(words in message for words in CONTEXT_WORDS):
        return CONTEXT
    if code in POLICY_CODES or any(words in message for words in POLICY_WORDS):
        return POLICY
    if err.status == 429 or err.status == 408 or err.status >= 500 or code in UNAVAILABLE_CODES:
        return UNAVAILABLE
    return None
