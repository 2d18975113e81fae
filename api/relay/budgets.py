"""Budgets at admission (docs/billing.md, Budgets and limits): which windows a request counts in, from
the limits cached with its key and user and the GroupLimits option, and the refusal of one over a
limit — 429 in the client's own error shape, code `budget_exceeded`, `Retry-After` the seconds to the
window's reset; the error log row names the limit, the metrics count it by window."""
from __future__ import annotations

import math
from datetime import datetime

from api.relay.job import Job
from api.relay.refusals import refuse
from api.services.billing.quota import BudgetExceeded
from api.services.budgets.limits import group_limits
from api.services.budgets.plan import Counted, Planner, Rule, owner_kind
from api.services.budgets.windows import zone
from api.upstream.errors import RelayError

_planner = Planner()


def budget_rules(job: Job) -> tuple[Rule, ...]:
    """The rules of the limits that apply to this request (none: nothing more to do)."""
    caller = job.caller
    token, user = caller.token, caller.user
    groups = group_limits(job.options.get("GroupLimits") or "")
    return _planner.rules_for(token.id if token else 0, token.limits if token else (), user.limits, user.group,
                              groups.get(user.group, ()), job.model)


def budget_windows(job: Job, rules: tuple[Rule, ...]) -> list[Counted]:
    now = job.state.quota.clock()
    return _planner.windows(job.state.quota.store, job.caller.user.id, rules, now, time_zone(job))


def time_zone(job: Job) -> str:
    return job.options.get("BudgetTimeZone") or "UTC"


def budget_refusal(job: Job, exc: BudgetExceeded) -> RelayError:
    rule = exc.window.rule
    kind = owner_kind(rule.part)
    now = job.state.quota.clock()
    seconds = max(1, math.ceil(exc.resets_at - now))
    resets_at = datetime.fromtimestamp(exc.resets_at, zone(time_zone(job))).isoformat()
    job.state.metrics.budget_refused(rule.window, kind, exc.measure)
    return refuse(job.request, 429, "relay_budget_exceeded", "budget_exceeded", "rate_limit_error",
                  headers={"Retry-After": str(seconds)}, owner=owner_name(job, kind), window=rule.window,
                  measure=exc.measure, limit=exc.limit, used=exc.used, resets_at=resets_at, seconds=seconds,
                  model=f" ({rule.model})" if rule.model else "")


def owner_name(job: Job, kind: str) -> str:
    """`key "name"`, `user "name"`, `group "name"`: who holds the limit."""
    caller = job.caller
    if kind == "key" and caller.token is not None:
        return f'key "{caller.token.name}"'
    if kind == "group":
        return f'group "{caller.user.group}"'
    return f'user "{caller.user.username}"'
