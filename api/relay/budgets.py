"""Budgets at admission (docs/billing.md, Budgets and limits): which windows a request counts in, from
the limits cached with its key and user and the GroupLimits option, and the refusal of one over a
limit's parameters — 429 in the client's own error shape, code `budget_exceeded`, `Retry-After` the
seconds to the window's reset (api.relay.quota_refusals); the error log row names the limit, the
metrics count it by window."""
from __future__ import annotations

import math
from datetime import datetime

from api.relay.auth import TokenInfo, UserInfo
from api.relay.job import Job
from api.services.billing.quota import BudgetExceeded, QuotaService
from api.services.budgets.limits import group_limits
from api.services.budgets.plan import Counted, Planner, Rule, owner_kind
from api.services.budgets.windows import zone
from api.services.configuration.options import OptionsService
from api.upstream.metrics import Metrics

_planner = Planner()


def budget_rules(job: Job) -> tuple[Rule, ...]:
    """The rules of the limits that apply to this request (none: nothing more to do)."""
    return rules_for(job.options, job.caller.token, job.caller.user, job.model)


def rules_for(options: OptionsService, token: TokenInfo | None, user: UserInfo, model: str) -> tuple[Rule, ...]:
    """The rules of the key's, the user's and the user's group's limits that apply to `model` (a model
    request's, or an MCP tool call's `<server>__<tool>`)."""
    groups = group_limits(options.get("GroupLimits") or "")
    return _planner.rules_for(token.id if token else 0, token.limits if token else (), user.limits, user.group,
                              groups.get(user.group, ()), model)


def budget_windows(job: Job, rules: tuple[Rule, ...]) -> list[Counted]:
    return windows_for(job.state.quota, job.caller.user.id, rules, time_zone_of(job.options))


def windows_for(quota: QuotaService, user_id: int, rules: tuple[Rule, ...], time_zone: str) -> list[Counted]:
    return _planner.windows(quota.store, user_id, rules, quota.clock(), time_zone)


def time_zone(job: Job) -> str:
    return time_zone_of(job.options)


def time_zone_of(options: OptionsService) -> str:
    return options.get("BudgetTimeZone") or "UTC"


def refusal_params(quota: QuotaService, metrics: Metrics, options: OptionsService, token: TokenInfo | None,
                   user: UserInfo, exc: BudgetExceeded) -> tuple[int, dict[str, object]]:
    """(seconds to the window's reset, what the refusal's message names), the refusal counted."""
    rule = exc.window.rule
    kind = owner_kind(rule.part)
    seconds = max(1, math.ceil(exc.resets_at - quota.clock()))
    resets_at = datetime.fromtimestamp(exc.resets_at, zone(time_zone_of(options))).isoformat()
    metrics.budget_refused(rule.window, kind, exc.measure)
    return seconds, {"owner": owner_name(token, user, kind), "window": rule.window, "measure": exc.measure,
                     "limit": exc.limit, "used": exc.used, "resets_at": resets_at,
                     "model": f" ({rule.model})" if rule.model else ""}


def owner_name(token: TokenInfo | None, user: UserInfo, kind: str) -> str:
    """`key "name"`, `user "name"`, `group "name"`: who holds the limit."""
    if kind == "key" and token is not None:
        return f'key "{token.name}"'
    if kind == "group":
        return f'group "{user.group}"'
    return f'user "{user.username}"'
