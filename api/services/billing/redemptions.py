"""Redemption codes: the admin's catalogue, and redeeming a code exactly once.

A code moves unused (1) ↔ disabled (2) by the admin and unused → used (3) by one redemption. Every
transition is a conditional UPDATE (`... WHERE status = <expected>`), so an admin edit and a
redemption, or twenty redemptions of one code, can never both win. The redemption marks the code,
credits the user and writes the top-up log in one transaction; the live balance in Redis follows
after the commit.
"""
from __future__ import annotations

import secrets
import time
from typing import Any, cast

from tortoise.expressions import F, Q
from tortoise.transactions import in_transaction

from api.errors import ApiError, TooManyRequests
from api.services.billing.balances import adjust_user
from api.services.columns import text_filter
from api.services.logs import log_event
from api.services.params import id_value, int_value
from api.services.ratelimit import RateLimiter
from api.services.store import Store
from models import Log, Redemption, User
from models.enums import LogType, RedemptionStatus

MAX_COUNT = 100
MAX_NAME_LENGTH = 20
MAX_QUOTA = 10**15
DEFAULT_QUOTA = 100000
KEY_LENGTH = 32
REDEEM_ATTEMPTS = 10  # per user per window, successful or not
REDEEM_WINDOW = 60


def redemption_dict(code: Redemption) -> dict[str, Any]:
    return {
        "id": code.id,
        "user_id": code.user_id,
        "key": code.key,
        "status": code.status,
        "name": code.name,
        "quota": code.quota,
        "created_time": code.created_time,
        "redeemed_time": code.redeemed_time,
        "used_user_id": code.used_user_id,
    }


def generate_key() -> str:
    """32 hex characters from `secrets` (the reference's UUID-hex format)."""
    return secrets.token_hex(KEY_LENGTH // 2)


# -- validation ------------------------------------------------------------------------------------


def clean_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ApiError("redemption_name_required")
    name = value.strip()
    if len(name) > MAX_NAME_LENGTH:
        raise ApiError("redemption_name_length", max=MAX_NAME_LENGTH)
    return name


def clean_quota(value: object) -> int:
    quota = int_value(value, "quota")
    if quota <= 0 or quota > MAX_QUOTA:
        raise ApiError("redemption_quota_invalid")
    return quota


def clean_count(value: object) -> int:
    count = int_value(value, "count")
    if count <= 0:
        raise ApiError("redemption_count_invalid")
    if count > MAX_COUNT:
        raise ApiError("redemption_count_too_many", max=MAX_COUNT)
    return count


# -- admin catalogue -------------------------------------------------------------------------------
async def list_codes(offset: int, limit: int) -> tuple[list[Redemption], int]:
    return await Redemption.all().order_by("-id").offset(offset).limit(limit), await Redemption.all().count()


async def search_codes(keyword: str, offset: int, limit: int) -> tuple[list[Redemption], int]:
    condition = text_filter(Redemption, "name", keyword, "icontains")
    if id_value(keyword) is not None:
        condition |= Q(id=int(keyword))
    query = Redemption.filter(condition)
    return await query.order_by("-id").offset(offset).limit(limit), await query.count()


async def get_code(code_id: int) -> Redemption:
    code = await Redemption.filter(id=code_id).first()
    if code is None:
        raise ApiError("redemption_not_found")
    return code


async def create_codes(admin: User, name: str, quota: int, count: int) -> list[str]:
    now = int(time.time())
    codes = [Redemption(user_id=admin.id, key=generate_key(), status=int(RedemptionStatus.UNUSED), name=name,
                        quota=quota, created_time=now) for _ in range(count)]
    async with in_transaction():
        await Redemption.bulk_create(codes)
    return [c.key for c in codes]


async def _explain(code_id: int) -> None:
    """Why a conditional change of an existing code matched nothing."""
    code = await get_code(code_id)
    if code.status == RedemptionStatus.USED:
        raise ApiError("redemption_used_locked")
    raise ApiError("redemption_not_unused")


async def update_code(code_id: int, fields: dict[str, Any]) -> Redemption:
    """Name and quota of an unused code only."""
    query = Redemption.filter(id=code_id, status=int(RedemptionStatus.UNUSED))
    if not (await query.update(**fields) if fields else await query.exists()):
        await _explain(code_id)
    return await get_code(code_id)


async def set_code_status(code_id: int, status: object) -> Redemption:
    """unused ↔ disabled; a used code stays used."""
    if isinstance(status, bool) or status not in (RedemptionStatus.UNUSED, RedemptionStatus.DISABLED):
        raise ApiError("redemption_status_invalid")
    source = RedemptionStatus.DISABLED if status == RedemptionStatus.UNUSED else RedemptionStatus.UNUSED
    target = int(cast(int, status))
    changed = await Redemption.filter(id=code_id, status__in=[int(source), target]).update(status=target)
    if not changed:
        code = await get_code(code_id)
        if code.status == RedemptionStatus.USED:
            raise ApiError("redemption_used_locked")
    return await get_code(code_id)


async def delete_code(code_id: int) -> None:
    if not await Redemption.filter(id=code_id).delete():
        raise ApiError("redemption_not_found")


# -- redeeming -------------------------------------------------------------------------------------
async def redeem(store: Store, limiter: RateLimiter, user: User, key: object, quota_per_unit: float) -> int:
    """Credit `user` with the code's quota; returns the quota added."""
    if not isinstance(key, str) or not key.strip():
        raise ApiError("redeem_key_required")
    if not await limiter.hit("redeem", str(user.id), REDEEM_ATTEMPTS, REDEEM_WINDOW):
        raise TooManyRequests()
    key = key.strip()
    if len(key) != KEY_LENGTH:
        raise ApiError("redeem_key_invalid")
    now = int(time.time())
    async with in_transaction() as conn:
        won = await Redemption.filter(key=key, status=int(RedemptionStatus.UNUSED)).using_db(conn).update(
            status=int(RedemptionStatus.USED), used_user_id=user.id, redeemed_time=now)
        if won:
            code = await Redemption.filter(key=key).using_db(conn).get()
            await User.filter(id=user.id).using_db(conn).update(quota=F("quota") + code.quota)
            await Log.create(user_id=user.id, type=int(LogType.TOPUP), username=user.username, quota=code.quota,
                             content=f"Redeemed code #{code.id} for {format_usd(code.quota, quota_per_unit)} "
                                     f"of quota ({code.quota})",
                             other=log_event("redeemed", id=code.id, quota=code.quota),
                             created_at=now, using_db=conn)
    if not won:
        found = await Redemption.filter(key=key).first()
        if found is None:
            raise ApiError("redeem_key_invalid")
        code = found
        if code.status == RedemptionStatus.DISABLED:
            raise ApiError("redeem_key_disabled")
        raise ApiError("redeem_key_used")
    quota: int = code.quota  # a BigIntField reads as Any (tortoise types it unparameterised)
    await adjust_user(store, user.id, quota)
    return quota


def format_usd(quota: int, quota_per_unit: float) -> str:
    return f"${quota / (quota_per_unit or 1):.6f}"
