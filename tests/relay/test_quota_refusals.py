"""The pre-charge's refusals, mapped once for model requests and MCP tool calls alike."""
from __future__ import annotations

from typing import Any, cast

import pytest

from api.relay.auth import UserInfo
from api.relay.quota_refusals import PreChargeRefused, refusal_of
from api.services.billing.quota import BalanceUnavailable, QuotaRefused, RateLimited

USER = UserInfo(id=1, username="ann", status=1, role=1, group="default", deleted=False)
UNUSED = cast(Any, None)  # quota, metrics and options are read for a limit over time only


@pytest.mark.parametrize(("exc", "reason", "status", "code", "retry_after"), [
    (RateLimited("user", 3, 17), "rate_limited", 429, "rate_limit_exceeded", 17),
    (QuotaRefused("user_in_flight", 5, 9, 4), "user_in_flight", 429, "insufficient_quota_in_flight", 1),
    (QuotaRefused("key_in_flight", 5, 9, 4), "key_in_flight", 429, "insufficient_quota_in_flight", 1),
    (QuotaRefused("key_exhausted", 0, 9), "key_exhausted", 401, "key_exhausted", 0),
    (QuotaRefused("key_insufficient", 5, 9), "key_insufficient", 403, "pre_consume_token_quota_failed", 0),
    (QuotaRefused("user_insufficient", 5, 9), "user_insufficient", 403, "insufficient_user_quota", 0),
    (BalanceUnavailable(), "balance_unavailable", 503, "balance_unavailable", 1),
])
def test_each_refusal_has_one_reason_status_and_wait(exc: PreChargeRefused, reason: str, status: int, code: str,
                                                     retry_after: int) -> None:
    refusal = refusal_of(exc, UNUSED, UNUSED, UNUSED, None, USER)
    assert (refusal.reason, refusal.status, refusal.code, refusal.retry_after) == (reason, status, code, retry_after)
    assert refusal.headers == ({"Retry-After": str(retry_after)} if status == 429 else {})


def test_in_flight_names_what_the_requests_in_flight_hold() -> None:
    refusal = refusal_of(QuotaRefused("user_in_flight", 5, 9, 4), UNUSED, UNUSED, UNUSED, None, USER)
    assert (refusal.message_key, refusal.params) == ("relay_user_in_flight", {"remain": 5, "pre": 9, "held": 4})
