"""The two decisions taken on a failed attempt: retry it on another channel, and disable the channel.

Both rules are new-api's, as docs/compatibility.md (Retries, Automatic disabling) describes them; the
retry status set is the configurable ranges string `AutomaticRetryStatusCodes`. What a type adds to
them (a 400 retried for Anthropic, a 403 fatal for Gemini) is its catalogue row's.
"""

from __future__ import annotations

from functools import lru_cache

from api.services.configuration.option_checks import parse_status_ranges
from api.services.configuration.option_rules import DEFAULTS
from api.upstream.blame import names_the_request
from api.upstream.catalogue import provider
from api.upstream.errors import RelayError

DEFAULT_RETRY_STATUS_RANGES = DEFAULTS["AutomaticRetryStatusCodes"]
# Timeouts: retrying them doubles the client's wait for an answer that will most likely time out again.
NEVER_RETRY_STATUSES = frozenset({504, 524})
NEVER_RETRY_CODES = frozenset({"bad_response_body"})

DISABLE_CODES = frozenset({"invalid_api_key", "account_deactivated", "billing_not_active"})
DISABLE_TYPES = frozenset(
    {"insufficient_quota", "insufficient_user_quota", "authentication_error", "permission_error", "forbidden"}
)
DISABLE_MESSAGE_PREFIXES = (
    "Your credit balance is too low",
    "This organization has been disabled.",
    "You exceeded your current quota",
    "Permission denied",
)
DISABLE_MESSAGE_SUBSTRINGS = (
    "The security token included in the request is invalid",
    "Operation not allowed",
    "Your account is not authorized",
)


@lru_cache(maxsize=32)
def status_in_ranges(status: int, ranges: str | tuple[tuple[int, int], ...]) -> bool:
    parsed = parse_status_ranges(ranges) if isinstance(ranges, str) else ranges
    return any(start <= status <= end for start, end in parsed)


def should_retry(
    status: int,
    channel_type: int,
    *,
    pinned: bool,
    remaining: int,
    ranges: str | tuple[tuple[int, int], ...] = DEFAULT_RETRY_STATUS_RANGES,
    local: bool = False,
    code: str | int | None = None,
) -> bool:
    """Whether a failed attempt may be retried on another channel (docs/compatibility.md, Retries).

    `status` is the upstream's (`status_code_mapping` changes only what the client is answered);
    `remaining` the retries left; `pinned` when the key pinned a channel (`sk-…-<id>`). 400 is retried
    for Anthropic only (its overload answers).
    """
    if local or pinned or remaining <= 0:
        return False
    if status in NEVER_RETRY_STATUSES or code in NEVER_RETRY_CODES:
        return False
    if status == 400:
        return provider(channel_type).retry_400
    if 200 <= status < 300:
        return False
    return status_in_ranges(status, ranges)


def should_retry_error(
    err: RelayError,
    channel_type: int,
    *,
    pinned: bool,
    remaining: int,
    ranges: str | tuple[tuple[int, int], ...] = DEFAULT_RETRY_STATUS_RANGES,
) -> bool:
    if names_the_request(err.status, err.type, err.code, err.message):
        return False  # every channel would answer the same (api/upstream/blame.py)
    return should_retry(
        err.status, channel_type, pinned=pinned, remaining=remaining, ranges=ranges, local=err.local, code=err.code
    )


def should_disable_channel(
    status: int,
    err_type: str | None,
    code: str | int | None,
    message: str | None,
    channel_type: int,
    *,
    local: bool = False,
) -> bool:
    """Whether the error proves the channel's credentials or account unusable (docs/compatibility.md,
    Automatic disabling).

    An error about something the request named (a Gemini 403 for another project's file…) proves
    nothing about the channel (api/upstream/blame.py). The caller also checks the option
    AutomaticDisableChannelEnabled and the channel's `auto_ban`.
    """
    if local or names_the_request(status, err_type, code, message):
        return False
    if status == 401 or (status == 403 and provider(channel_type).disable_on_403):
        return True
    if code in DISABLE_CODES or err_type in DISABLE_TYPES:
        return True
    if message:
        if message.startswith(DISABLE_MESSAGE_PREFIXES):
            return True
        if any(s in message for s in DISABLE_MESSAGE_SUBSTRINGS):
            return True
    return False


def should_disable_for_error(err: RelayError, channel_type: int) -> bool:
    return should_disable_channel(err.status, err.type, err.code, err.message, channel_type, local=err.local)
