"""What the gateway recorded, read straight from its database (no gateway CPU spent on it).

The smoke mode compares these figures, once the workers have drained every settlement, with the
billing formula of docs/billing.md ("Formulas") applied to the usage the mock reports.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from tortoise.functions import Count, Sum

from bench.mock_upstream import COMPLETION_TOKENS, PROMPT_TOKENS
from models import Channel, Log, Token, User
from models.db import close_database, init_database
from models.enums import LogType


@dataclass(frozen=True)
class Ledger:
    user_quota: int
    user_used: int
    request_count: int
    token_remain: int
    token_used: int
    channel_used: int
    logs: int
    logs_quota: int
    logs_prompt: int
    logs_completion: int


def expected_quota(model: str, group_ratio: float = 1.0) -> int:
    """docs/billing.md, "Formulas": round_half_up((P + C × CR) × MR × GR), at least 1; P, C = the mock's usage.

    MR and CR are the gateway's default tables (the bench changes no price)."""
    from api.services.billing.pricing import DEFAULT_MODEL_RATIO, completion_ratio_for

    mr = Decimal(repr(DEFAULT_MODEL_RATIO[model]))
    cr = Decimal(repr(completion_ratio_for(model)))
    quota = ((PROMPT_TOKENS + COMPLETION_TOKENS * cr) * mr * Decimal(repr(group_ratio))).quantize(
        Decimal(1), rounding=ROUND_HALF_UP)
    return max(int(quota), 1)


class Books:
    def __init__(self, database_url: str, user_id: int, token_id: int, channel_ids: list[int]) -> None:
        self.database_url = database_url
        self.user_id = user_id
        self.token_id = token_id
        self.channel_ids = channel_ids

    async def open(self) -> None:
        await init_database(self.database_url)

    async def close(self) -> None:
        await close_database()

    async def ledger(self) -> Ledger:
        user = await User.get(id=self.user_id)
        token = await Token.get(id=self.token_id)
        channel_used = sum(c.used_quota for c in await Channel.filter(id__in=self.channel_ids))
        rows = await (Log.filter(user_id=self.user_id, type=int(LogType.CONSUME))
                      .annotate(n=Count("id"), q=Sum("quota"), p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
                      .values("n", "q", "p", "c"))
        row = rows[0] if rows else {}
        return Ledger(user.quota, user.used_quota, user.request_count, token.remain_quota, token.used_quota,
                      channel_used, int(row.get("n") or 0), int(row.get("q") or 0), int(row.get("p") or 0),
                      int(row.get("c") or 0))

    async def request_count(self) -> int:
        rows = await User.filter(id=self.user_id).values_list("request_count", flat=True)
        return int(rows[0]) if rows else 0

    async def wait_count(self, target: int, timeout: float = 60.0) -> int:
        """Until the user's request_count reaches `target` (every settlement applied)."""
        deadline = time.monotonic() + timeout
        count = await self.request_count()
        while count < target and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            count = await self.request_count()
        return count

    async def wait_settled(self, quiet: float = 1.0, timeout: float = 60.0) -> int:
        """Until request_count has not moved for `quiet` seconds (the queue is drained)."""
        deadline = time.monotonic() + timeout
        last, since = await self.request_count(), time.monotonic()
        while time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            now = await self.request_count()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return last
