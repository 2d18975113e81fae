"""The pre-charge's refusals (api.services.billing.quota: a limit over time, a rate limit, a balance
or a key's quota short, the balance not loaded), mapped once for every billed request: a model
request answers it as an HTTP error in the client's format (api.relay.admission), an MCP tool call
as a JSON-RPC error whose data names `reason` and `retry_after` (api.relay.mcp.calls). Both take
the same message, reason and seconds from here."""
from __future__ import annotations

from dataclasses import dataclass, field

from api.relay.auth import TokenInfo, UserInfo
from api.relay.budgets import refusal_params
from api.services.billing.quota import BalanceUnavailable, BudgetExceeded, QuotaRefused, QuotaService, RateLimited
from api.services.configuration.options import OptionsService
from api.upstream.metrics import Metrics

PreChargeRefused = BudgetExceeded | RateLimited | QuotaRefused | BalanceUnavailable
PRE_CHARGE_REFUSALS = (BudgetExceeded, RateLimited, QuotaRefused, BalanceUnavailable)

_QUOTA_MESSAGES = {"key_exhausted": "relay_key_exhausted", "key_insufficient": "relay_key_insufficient",
                   "user_in_flight": "relay_user_in_flight", "key_in_flight": "relay_key_in_flight"}


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refusal: `reason` (budget_exceeded, rate_limited, user_insufficient, key_insufficient,
    key_exhausted, user_in_flight, key_in_flight, balance_unavailable), the HTTP status, error code
    and type of a model request's answer, the message and its parameters, and the seconds after
    which the same request may pass (0: not by waiting)."""

    reason: str
    status: int
    message_key: str
    code: str
    error_type: str = "new_api_error"
    retry_after: int = 0
    params: dict[str, object] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        """A model request's headers: `Retry-After` on its 429 answers (the 503 of a balance not
        loaded carries none)."""
        return {"Retry-After": str(self.retry_after)} if self.status == 429 else {}


def refusal_of(exc: PreChargeRefused, quota: QuotaService, metrics: Metrics, options: OptionsService,
               token: TokenInfo | None, user: UserInfo) -> Refusal:
    """The refusal of a pre-charge that raised `exc` (a limit over time is counted in the metrics)."""
    if isinstance(exc, BudgetExceeded):
        seconds, params = refusal_params(quota, metrics, options, token, user, exc)
        return Refusal("budget_exceeded", 429, "relay_budget_exceeded", "budget_exceeded", "rate_limit_error",
                       seconds, {"seconds": seconds, **params})
    if isinstance(exc, RateLimited):
        return Refusal("rate_limited", 429, "relay_rate_limited", "rate_limit_exceeded", "rate_limit_error",
                       exc.retry_after, {"scope": exc.scope, "limit": exc.limit, "seconds": exc.retry_after})
    if isinstance(exc, BalanceUnavailable):
        return Refusal("balance_unavailable", 503, "relay_internal", "balance_unavailable", retry_after=1)
    message_key = _QUOTA_MESSAGES.get(exc.reason, "relay_user_insufficient")
    if exc.reason in ("user_in_flight", "key_in_flight"):  # served once those requests end
        return Refusal(exc.reason, 429, message_key, "insufficient_quota_in_flight", "insufficient_user_quota", 1,
                       {"remain": exc.remain, "pre": exc.pre, "held": exc.held})
    if exc.reason == "key_exhausted":
        return Refusal(exc.reason, 401, message_key, "key_exhausted", "invalid_request_error")
    if exc.reason == "key_insufficient":
        return Refusal(exc.reason, 403, message_key, "pre_consume_token_quota_failed",
                       params={"remain": exc.remain, "pre": exc.pre})
    return Refusal(exc.reason, 403, message_key, "insufficient_user_quota", "insufficient_user_quota",
                   params={"remain": exc.remain, "pre": exc.pre})
