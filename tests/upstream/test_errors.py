"""RelayError body, retry rule and auto-disable rule (docs/compatibility.md, "Relay errors", "Retries" and
"Automatic disabling")."""

import pytest

from api.channels.error_rules import (
    DEFAULT_RETRY_STATUS_RANGES,
    should_disable_channel,
    should_disable_for_error,
    should_retry,
    should_retry_error,
    status_in_ranges,
)
from api.services.configuration.option_checks import parse_status_ranges
from api.upstream.catalogue import ChannelType
from api.upstream.errors import RelayError

OPENAI = ChannelType.OPENAI


def test_to_body_with_request_id() -> None:
    err = RelayError(429, "slow down", "rate_limit_error", "rate_limited", "model")
    assert err.to_body("20240101abc") == {
        "error": {
            "message": "slow down (request id: 20240101abc)",
            "type": "rate_limit_error",
            "param": "model",
            "code": "rate_limited",
        }
    }
    assert err.to_body()["error"]["message"] == "slow down"
    assert str(err) == "slow down" and not err.local


def test_local_error() -> None:
    err = RelayError.local_error(403, "insufficient quota", "insufficient_user_quota")
    assert err.local and err.type == "new_api_error" and err.status == 403
    assert "local=True" in repr(err)


def test_parse_ranges() -> None:
    assert parse_status_ranges("401-407, 429,500-503") == ((401, 407), (429, 429), (500, 503))
    assert parse_status_ranges("") == ()
    for bad in ("abc", "500-400", "99", "600"):
        with pytest.raises(ValueError):
            parse_status_ranges(bad)
    assert status_in_ranges(429, DEFAULT_RETRY_STATUS_RANGES)
    assert not status_in_ranges(408, DEFAULT_RETRY_STATUS_RANGES)


@pytest.mark.parametrize(
    ("status", "retry"),
    [
        (429, True),
        (307, True),
        (500, True),
        (502, True),
        (503, True),
        (504, False),
        (524, False),
        (525, True),
        (401, True),
        (403, True),
        (404, True),
        (413, True),
        (422, True),
        (400, False),
        (408, False),
        (200, False),
        (204, False),
        (150, True),
    ],
)
def test_retry_by_status(status: int, retry: bool) -> None:
    assert should_retry(status, OPENAI, pinned=False, remaining=2) is retry


def test_400_retried_for_anthropic_only() -> None:
    assert should_retry(400, ChannelType.ANTHROPIC, pinned=False, remaining=1)
    assert not should_retry(400, ChannelType.AZURE, pinned=False, remaining=1)


def test_never_retry_local_pinned_or_exhausted() -> None:
    assert not should_retry(500, OPENAI, pinned=False, remaining=1, local=True)
    assert not should_retry(500, OPENAI, pinned=True, remaining=1)
    assert not should_retry(500, OPENAI, pinned=False, remaining=0)
    assert not should_retry(500, OPENAI, pinned=False, remaining=1, code="bad_response_body")


def test_configured_ranges() -> None:
    assert not should_retry(429, OPENAI, pinned=False, remaining=1, ranges="500-599")
    assert should_retry(408, OPENAI, pinned=False, remaining=1, ranges="408")
    assert not should_retry(504, OPENAI, pinned=False, remaining=1, ranges="500-599")  # timeouts never
    assert should_retry(502, OPENAI, pinned=False, remaining=1, ranges=((500, 503),))


def test_retry_from_error() -> None:
    assert should_retry_error(RelayError(502, "bad gateway"), OPENAI, pinned=False, remaining=1)
    assert not should_retry_error(RelayError.local_error(500, "x"), OPENAI, pinned=False, remaining=1)


@pytest.mark.parametrize(
    ("status", "err_type", "code", "message", "channel_type", "disable"),
    [
        (401, None, None, "", OPENAI, True),
        (403, None, None, "", ChannelType.GEMINI, True),
        (403, None, None, "", OPENAI, False),
        (400, None, "invalid_api_key", "", OPENAI, True),
        (400, None, "account_deactivated", "", OPENAI, True),
        (400, None, "billing_not_active", "", OPENAI, True),
        (429, "insufficient_quota", None, "", OPENAI, True),
        (400, "authentication_error", None, "", OPENAI, True),
        (400, "permission_error", None, "", OPENAI, True),
        (400, "forbidden", None, "", OPENAI, True),
        (400, "insufficient_user_quota", None, "", OPENAI, True),
        (400, "invalid_request_error", None, "Your credit balance is too low to access the API", OPENAI, True),
        (400, None, None, "This organization has been disabled.", OPENAI, True),
        (429, None, None, "You exceeded your current quota, please check", OPENAI, True),
        (400, None, None, "Permission denied: x", OPENAI, True),
        (403, None, None, "xx The security token included in the request is invalid.", ChannelType.AWS, True),
        (400, None, None, "Operation not allowed here", OPENAI, True),
        (400, None, None, "Sorry, Your account is not authorized", OPENAI, True),
        (429, "rate_limit_error", "rate_limited", "Rate limit reached", OPENAI, False),
        (500, "server_error", None, "Internal error", OPENAI, False),
        (504, None, None, "timeout", OPENAI, False),
    ],
)
def test_disable_rules(status, err_type, code, message, channel_type, disable) -> None:
    assert should_disable_channel(status, err_type, code, message, channel_type) is disable


def test_local_errors_never_disable() -> None:
    assert not should_disable_channel(401, None, None, "", OPENAI, local=True)
    assert not should_disable_for_error(RelayError.local_error(401, "no key"), OPENAI)
    assert should_disable_for_error(RelayError(401, "bad key"), OPENAI)
