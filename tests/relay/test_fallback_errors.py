"""The reasons of a chain of models (api/relay/fallback_errors.py), in the providers' own words."""
from __future__ import annotations

import pytest

from api.relay.fallback_errors import reason_of
from api.upstream.errors import RelayError


@pytest.mark.parametrize(("err", "reason"), [
    (RelayError(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in "
                "130000 tokens.", "invalid_request_error", "context_length_exceeded"), "context"),
    (RelayError(400, "Your input exceeds the context window of this model. Please adjust your input and try again.",
                "invalid_request_error"), "context"),
    (RelayError(400, "prompt is too long: 208310 tokens > 200000 maximum", "invalid_request_error"), "context"),
    (RelayError(400, "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000",
                "invalid_request_error"), "context"),
    (RelayError(400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                "INVALID_ARGUMENT"), "context"),
    (RelayError(400, "Invalid prompt: your prompt was flagged as potentially violating our usage policy.",
                "invalid_request_error", "invalid_prompt"), "policy"),
    (RelayError(400, "The response was filtered due to the prompt triggering Azure OpenAI's content management "
                "policy.", "invalid_request_error", "content_filter"), "policy"),
    (RelayError(500, "The server had an error", "server_error"), "unavailable"),
    (RelayError(529, "Overloaded", "overloaded_error"), "unavailable"),
    (RelayError(429, "Rate limit reached", "requests", "rate_limit_exceeded"), "unavailable"),
    (RelayError(504, "the upstream did not answer in time", "upstream_error", "upstream_timeout"), "unavailable"),
    (RelayError(502, "do request failed: connection refused", "upstream_error", "do_request_failed"), "unavailable"),
    (RelayError.local_error(503, "no channel", "no_available_channel"), "unavailable"),
    (RelayError(400, "messages: field required", "invalid_request_error"), None),
    (RelayError(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"), None),
    (RelayError.local_error(403, "model not allowed", "model_not_allowed"), None),
])
def test_each_failure_has_its_reason(err: RelayError, reason: str | None) -> None:
    assert reason_of(err) == reason
