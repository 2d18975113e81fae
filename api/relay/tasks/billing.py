"""How a task is charged and refunded (docs/billing.md, Tasks: charged at submission and refunded, to
user and key, when they fail or time out).

Charge: the submission reserves the task's price through the relay's pre-charge (limits and balance
in one Redis call) and settles it in full once the upstream has taken the task; the settlement
record reaches the database like any request's. What the charge was (its settlement id, whether the
key's own limit was taken, the group and prices) is kept on the task row (`billing`, JSON).

Refund: one Redis call (on the user's keys only) that (a) sets a marker
`{u<id>}:refunded:<platform>:<row id>` (NX: a second call for the same task does nothing), (b) adds
a settlement record with the negative amount to the user's pending records, and (c) gives the
amount back to the live balances of user and key (when they are loaded; an absent balance reloads
from the database minus pending records, which already counts the refund). The workers apply the
record like any other; the Settlement table's unique request id makes that once. So the refund
happens once however many pollers see the failure, and a poller killed after (b) leaves a record
that the sweep applies. (d) The charge and its request go back to the budget windows the charge
counted in (kept on the task row with the charge), the record carrying them to the database rows.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from api.services import redis_keys
from api.services.billing.balances import change_counter_key, token_quota_key, user_quota_key
from api.services.billing.records import REFUND, SettlementRecord, windows_of
from api.services.billing.settlement import pending_key
from api.services.budgets import scripts as budget_scripts
from api.services.budgets.plan import window_key
from api.services.store import Script, Store

REFUND_MARK_TTL = 7 * 86400  # seconds: far longer than a task can stay unfinished

# KEYS: 1 user quota, 2 key quota, 3 pending, 4 pending version, 5 the refund's mark, then the budget windows
# the charge counted in; ARGV: 1 record id, 2 record, 3 quota, 4 mark life, 5 key limited, 6 the number of
# windows, then each window's start
_REFUND = budget_scripts.REFUND + """
if not redis.call('SET', KEYS[5], '1', 'NX', 'EX', ARGV[4]) then return 0 end
refund_windows(5, tonumber(ARGV[6]), 6, tonumber(ARGV[3]))
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('INCR', KEYS[4])
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], ARGV[3]) end
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('INCRBY', KEYS[2], ARGV[3]) end
return 1
"""


@dataclass(frozen=True, slots=True)
class TaskCharge:
    """What a task's submission charged; kept on the task row as JSON."""

    settlement_id: str
    token_limited: bool
    group: str
    model: str
    group_ratio: float
    model_price: float
    username: str = ""
    token_name: str = ""
    windows: list[list[Any]] = field(default_factory=list)  # the budget windows the charge counted in

    def dumps(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def loads(cls, text: str) -> TaskCharge | None:
        try:
            data = orjson.loads(text) if text else None
            if not isinstance(data, dict):
                return None
            data["windows"] = windows_of(data.get("windows"))
            return cls(**data)
        except (orjson.JSONDecodeError, TypeError):
            return None


def refund_id(platform: str, row_id: int) -> str:
    return f"task-refund:{platform}:{row_id}"


@dataclass(frozen=True, slots=True)
class Refund:
    platform: str
    row_id: int
    task_id: str
    action: str
    user_id: int
    token_id: int
    channel_id: int
    quota: int
    charged_at: int  # seconds: the hour of the charge is the hour the refund is counted against
    reason: str


async def refund(store: Store, item: Refund, charge: TaskCharge | None) -> bool:
    """Return a failed task's charge to user and key; True when this call did it (False: done before)."""
    if item.quota <= 0:
        return False
    rid = refund_id(item.platform, item.row_id)
    limited = bool(item.token_id) and (charge.token_limited if charge else False)
    record = SettlementRecord(
        rid, -item.quota, kind=REFUND, token_id=item.token_id, token_limited=limited, channel_id=item.channel_id,
        used_channels=[item.channel_id], model=charge.model if charge else item.action, mode=item.platform,
        group=charge.group if charge else "", group_ratio=charge.group_ratio if charge else 1,
        model_price=_price_of(charge), username=charge.username if charge else "",
        token_name=charge.token_name if charge else "", task_id=item.task_id, action=item.action,
        reason=item.reason[:500], charged_at=item.charged_at, at=time.time(),
        windows=list(charge.windows) if charge else [])
    script = Script(store.redis, _REFUND)
    keys = [user_quota_key(store, item.user_id), token_quota_key(store, item.user_id, item.token_id),
            pending_key(store, item.user_id), change_counter_key(store, item.user_id),
            redis_keys.user_key(store, item.user_id, "refunded", item.platform, item.row_id)]
    args: list[object] = [rid, record.encode(), item.quota, REFUND_MARK_TTL, 1 if limited else 0, len(record.windows)]
    for part, identity, start, _ in record.windows:
        keys.append(window_key(store, item.user_id, part, identity, start))
        args.append(start)
    done = await script(keys=keys, args=args)
    return bool(int(done))


def _price_of(charge: TaskCharge | None) -> float | None:
    if charge is None or charge.model_price is None or charge.model_price < 0:
        return None
    return charge.model_price
