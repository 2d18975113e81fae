"""Soft limits and their alerts (README, Budgets and limits).

A limit with `soft` P has its alert due once its window's usage of the limit's measure reaches P % of
the limit (`used * 100 >= limit * P`); the alert is sent once per (owner, limit, window): a mail to
the user concerned (the key's user, the user, or for a group limit the user of the group whose
allowance it is), one to root when BudgetAlertRootEnabled is on, and a signed webhook when
BudgetWebhookUrl is set. Nothing of this runs on the request path:

- detection: the settlement worker, once its transaction is committed, looks at the windows it added
  to (`due`, with the windows `durable.watching` noted); the scheduler's `budget.sweep` looks at every
  open window of an owner with soft limits (`sweep`), for a crossing the worker missed (killed between
  its commit and its message). Each crossing found is sent as `budget.alert` with a fresh claim.
- `budget.alert` (`prepare`): reads the window and the owner's limits again and claims the limit's
  alert in the window's row (durable.claim_soft_alert, a conditional UPDATE): one claim wins, the
  others (a second worker, the sweep) find it taken, and the winner's own retries and redeliveries
  find it theirs. The winner hands the mails to `mail.send` and the webhook to `budget.webhook`,
  each retried with back-off on its own.

A limit is named in its row by `<measure>:<amount>`: a limit whose amount is changed within a window
is another limit, with an alert of its own.
"""
from __future__ import annotations

import hashlib
import hmac
import html
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from api.services.budgets import durable
from api.services.budgets.limits import Limit, group_limits, stored
from models import BudgetUsage, Token, User
from models.enums import Role

if TYPE_CHECKING:
    from api.services.configuration.options import OptionsService

clock: Callable[[], float] = time.time  # the alerts' "now" (created_at, the webhook's timestamp); tests move it
CACHE_TTL = 30.0  # seconds the settlement worker keeps an owner's soft limits
SOFT_TEXT = '"soft":'  # in a stored (normalised) limits text exactly when one of its limits is soft
CHUNK = 500  # owners per query of the sweep
EVENT = "budget.soft_limit"
ROW_FIELDS = ("user_id", "owner_kind", "owner_id", "identity", "window_start", "window_end", "quota", "requests",
              "tokens", "soft_alerts")


@dataclass(frozen=True, slots=True)
class Due:
    """A limit's soft alert found due in a window (the arguments of `budget.alert`, less its claim)."""

    user_id: int
    owner_kind: str  # key | user | group
    owner_id: str  # the key's id, the user's id, the group's name
    identity: str
    window_start: int
    measure: str
    amount: int

    @property
    def mark(self) -> str:
        return f"{self.measure}:{self.amount}"

    def args(self) -> list[object]:
        return [self.user_id, self.owner_kind, self.owner_id, self.identity, self.window_start, self.measure,
                self.amount]


@dataclass(frozen=True, slots=True)
class Alert:
    """A claimed alert: the webhook's body (JSON text) and the mails (to, subject, html)."""

    body: str
    mails: list[tuple[str, str, str]]


def mark_of(limit: Limit) -> str:
    return f"{limit.measure}:{limit.amount}"


def crossed(limit: Limit, used: int) -> bool:
    """Whether `used` reached the limit's soft percentage (a limit of 0 admits nothing: no alert)."""
    return limit.soft > 0 and limit.amount > 0 and used * 100 >= limit.amount * limit.soft


def soft(limits: Sequence[Limit]) -> tuple[Limit, ...]:
    return tuple(limit for limit in limits if limit.soft)


def _due_in(row: dict[str, Any], limits: Sequence[Limit]) -> list[Due]:
    taken = durable.claimed(row["soft_alerts"])
    out: dict[str, Due] = {}
    for limit in limits:
        mark = mark_of(limit)
        if limit.soft and limit.identity == row["identity"] and mark not in taken and mark not in out \
                and crossed(limit, int(row[limit.measure])):
            out[mark] = Due(int(row["user_id"]), row["owner_kind"], row["owner_id"], row["identity"],
                            int(row["window_start"]), limit.measure, limit.amount)
    return list(out.values())


class SoftLimits:
    """The soft limits of keys and users, read from their rows and kept `ttl` seconds each: the
    settlement worker asks for every batch, and an owner without soft limits then costs it a
    dictionary lookup (a limit made soft is seen within `ttl`, or by the sweep)."""

    def __init__(self, ttl: float = CACHE_TTL, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.monotonic = monotonic
        self._kept: dict[tuple[str, str], tuple[float, tuple[Limit, ...]]] = {}

    async def of(self, owners: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[Limit, ...]]:
        now = self.monotonic()
        out: dict[tuple[str, str], tuple[Limit, ...]] = {}
        missing: dict[str, set[int]] = {"key": set(), "user": set()}
        for owner in owners:
            hit = self._kept.get(owner)
            if hit is not None and hit[0] > now:
                out[owner] = hit[1]
            elif owner[0] in missing and owner[1].isdigit():
                missing[owner[0]].add(int(owner[1]))
        found: list[tuple[str, int, str]] = []
        if missing["key"]:
            found += [("key", int(i), str(t)) for i, t in
                      await Token.filter(id__in=sorted(missing["key"])).values_list("id", "limits")]
        if missing["user"]:
            found += [("user", int(i), str(t)) for i, t in
                      await User.filter(id__in=sorted(missing["user"])).values_list("id", "limits")]
        if len(self._kept) > 65536:
            self._kept.clear()
        for kind, ids in missing.items():
            for ref in ids:  # an owner gone from the database has none
                self._kept[(kind, str(ref))] = (now + self.ttl, ())
        for kind, ref, text in found:
            limits = soft(stored(text))
            self._kept[(kind, str(ref))] = (now + self.ttl, limits)
        for kind, ids in missing.items():
            for ref in ids:
                out[(kind, str(ref))] = self._kept[(kind, str(ref))][1]
        return out


async def due(windows: Iterable[durable.Window], group_limits_text: str, cache: SoftLimits) -> list[Due]:
    """The soft alerts due in these windows (the settlement worker's, once committed): nothing read
    from the database unless one of their owners has a soft limit of that window."""
    windows = list(windows)
    if not windows:
        return []
    groups = group_limits(group_limits_text) if SOFT_TEXT in group_limits_text else {}
    owned = await cache.of({(kind, ref) for _, kind, ref, _, _, _ in windows if kind != "group"})
    wanted: dict[tuple[int, str, str, str, int], tuple[Limit, ...]] = {}
    for user_id, kind, ref, identity, start, _ in windows:
        limits = soft(groups.get(ref, ())) if kind == "group" else owned.get((kind, ref), ())
        limits = tuple(limit for limit in limits if limit.identity == identity)
        if limits:
            wanted[(user_id, kind, ref, identity, start)] = limits
    if not wanted:
        return []
    rows = await BudgetUsage.filter(user_id__in=sorted({k[0] for k in wanted}),
                                    window_start__in=sorted({k[4] for k in wanted})).values(*ROW_FIELDS)
    out: list[Due] = []
    for row in rows:
        held = wanted.get((row["user_id"], row["owner_kind"], row["owner_id"], row["identity"],
                           row["window_start"]))
        if held:
            out += _due_in(row, held)
    return out


async def sweep(group_limits_text: str, now: float) -> list[Due]:
    """Every soft alert due and not claimed in an open window (the scheduler's safety net): the keys
    and users whose limits have a soft one, the groups of GroupLimits with one, their open rows."""
    owners: dict[str, dict[str, tuple[Limit, ...]]] = {"key": {}, "user": {}, "group": {}}
    for ref, text in await Token.filter(limits__contains=SOFT_TEXT).values_list("id", "limits"):
        owners["key"][str(ref)] = soft(stored(str(text)))
    for ref, text in await User.filter(limits__contains=SOFT_TEXT, deleted_at=None).values_list("id", "limits"):
        owners["user"][str(ref)] = soft(stored(str(text)))
    if SOFT_TEXT in group_limits_text:
        owners["group"] = {name: soft(limits) for name, limits in group_limits(group_limits_text).items()}
    out: list[Due] = []
    for kind, table in owners.items():
        refs = sorted(ref for ref, limits in table.items() if limits)
        for i in range(0, len(refs), CHUNK):
            rows = await BudgetUsage.filter(owner_kind=kind, owner_id__in=refs[i:i + CHUNK],
                                            window_end__gt=int(now)).values(*ROW_FIELDS)
            for row in rows:
                out += _due_in(row, table[row["owner_id"]])
    return out


async def _owner_limits(options: OptionsService, kind: str, ref: str, user: User) -> tuple[tuple[Limit, ...], str]:
    """The owner's limits now, and its name."""
    if kind == "key":
        token = await Token.filter(id=int(ref), user_id=user.id).first() if ref.isdigit() else None
        return (stored(token.limits), token.name) if token is not None else ((), "")
    if kind == "group":
        return group_limits(options.get("GroupLimits") or "").get(ref, ()), ref
    return stored(user.limits), user.username


async def prepare(options: OptionsService, found: Due, claim: str) -> Alert | None:
    """Claim a due alert for `claim` and compose it; None when it is not (or no longer) due, or
    another claim holds it. A claim that already holds it (a retry) composes it again."""
    row = await BudgetUsage.filter(user_id=found.user_id, owner_kind=found.owner_kind, owner_id=found.owner_id,
                                   identity=found.identity, window_start=found.window_start).first()
    user = await User.filter(id=found.user_id).first()
    if row is None or user is None:
        return None
    limits, name = await _owner_limits(options, found.owner_kind, found.owner_id, user)
    limit = next((lim for lim in limits if lim.soft and lim.identity == found.identity
                  and mark_of(lim) == found.mark), None)
    if limit is None:
        return None  # the owner's limits changed since
    used = int(getattr(row, limit.measure))
    holder = next((e.partition("=")[2] for e in row.soft_alerts.split() if e.partition("=")[0] == found.mark), None)
    if holder is None and not crossed(limit, used):
        return None
    if not await durable.claim_soft_alert(found.user_id, found.owner_kind, found.owner_id, found.identity,
                                          found.window_start, found.mark, claim):
        return None
    body = payload(found, limit, name, user, used, row.window_end, int(clock()))
    return Alert(orjson.dumps(body).decode(), await _mails(options, body, user))


def alert_id(found: Due) -> str:
    """The alert's stable id (the same in every delivery of it: receivers may drop repeats by it)."""
    text = f"{found.user_id}|{found.owner_kind}|{found.owner_id}|{found.identity}|{found.window_start}|{found.mark}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def payload(found: Due, limit: Limit, name: str, user: User, used: int, resets_at: int, now: int) -> dict[str, Any]:
    owner_id: int | str = int(found.owner_id) if found.owner_kind != "group" else found.owner_id
    return {
        "type": EVENT,
        "id": alert_id(found),
        "created_at": now,
        "owner": {"kind": found.owner_kind, "id": owner_id, "name": name},
        "user": {"id": user.id, "username": user.username},
        "limit": {"window": limit.window, "measure": limit.measure, "model": limit.model, "limit": limit.amount,
                  "soft": limit.soft},
        "used": used,
        "window_start": found.window_start,
        "resets_at": resets_at,
    }


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """`sha256=<hex>`: HMAC-SHA256 with the secret over `<timestamp>.<body>`."""
    digest = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signed_headers(secret: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {"Content-Type": "application/json", "X-Gateway-Timestamp": str(timestamp),
            "X-Gateway-Signature": signature(secret, timestamp, body)}


WINDOWS_ZH = {"minute": "分钟", "hour": "小时", "day": "日", "week": "周", "month": "月"}
MEASURES_ZH = {"quota": "额度", "requests": "次请求", "tokens": "tokens"}


async def _mails(options: OptionsService, body: dict[str, Any], user: User) -> list[tuple[str, str, str]]:
    to = [user.email] if user.email and user.deleted_at is None else []
    if options.get_bool("BudgetAlertRootEnabled"):
        root = await User.filter(role=int(Role.ROOT), deleted_at=None).exclude(email="").order_by("id").first()
        if root is not None and root.email not in to:
            to.append(root.email)
    if not to:
        return []
    subject, text = compose(body, options.get("SystemName") or "AI Gateway")
    return [(address, subject, text) for address in to]


def compose(body: dict[str, Any], system_name: str) -> tuple[str, str]:
    """The alert's mail (subject, html), in English and Chinese as the gateway's other mails."""
    limit, owner = body["limit"], body["owner"]
    window = str(limit["window"])
    window_zh = WINDOWS_ZH.get(window) or f"{window[:-1]} 小时滚动"
    model = f" ({limit['model']})" if limit["model"] else ""
    name = html.escape(str(owner["name"]))
    username = html.escape(str(body["user"]["username"]))
    if owner["kind"] == "key":
        who, who_zh = f"The key “{name}” of {username}", f"{username} 的密钥“{name}”"
    elif owner["kind"] == "group":
        who, who_zh = f"{username}, within the allowance of group “{name}”,", f"{username}（分组“{name}”的额度）"
    else:
        who, who_zh = username, username
    used, amount, measure = body["used"], limit["limit"], limit["measure"]
    share = used * 100 // amount if amount else 0
    reset = f"{datetime.fromtimestamp(int(body['resets_at']), UTC):%Y-%m-%d %H:%M:%S} UTC"
    subject = (f"{system_name}: {limit['soft']}% of a {window} limit reached / "
               f"已用到{window_zh}限额的 {limit['soft']}%")
    text = (f"<p>{who} has used {used} of the {window} limit of {amount} {measure}{html.escape(model)}: "
            f"{share}% (the alert is set at {limit['soft']}%). The window resets at {reset}.</p>"
            f"<p>{who_zh}在本{window_zh}窗口已使用 {used} / {amount} {MEASURES_ZH.get(measure, measure)}"
            f"{html.escape(model)}，即 {share}%（提醒阈值 {limit['soft']}%）。窗口将于 {reset} 重置。</p>")
    return subject, text
