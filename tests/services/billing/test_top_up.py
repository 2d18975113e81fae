# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""An open reservation topped up for a dearer model of a chain (api/services/billing/top_up.py): the
difference taken from user and key in one step, refused when either cannot cover it (nothing
changed then), the settlement charging the final amount exactly, a refund returning everything."""
from __future__ import annotations

import orjson
import pytest

from api import keys
from api.services import redis_keys
from api.services.billing.top_up import TopUpRefused, top_up
from tests.relay.fakes import gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.services.billing.test_concurrent_overrun import admit, held, quota_of


def record(pre: int) -> bytes:
    return orjson.dumps({"m": "claude-opus-5-5", "pre": pre})


async def test_a_top_up_takes_the_difference_and_the_settlement_charges_exactly(gateway) -> None:
    quota, store = quota_of(gateway), gateway.server.app[keys.STORE]
    user = await rich_user(quota=1000)
    token = await make_key(user, remain_quota=500, unlimited=False)
    charge = await admit(quota, "t-1", user, token, pre=10, worst=50)
    await top_up(store, charge, 100, record(100), 300)
    assert charge.pre == 100
    assert await live_balance(gateway, user.id) == 900
    assert await live_balance(gateway, user.id, token.id) == 400
    assert (await held(gateway, user))["t-1"] == f"200|key:{token.id}"
    resv = await store.redis.hget(redis_keys.reservations(store, user.id), "t-1")
    assert resv.endswith(record(100).decode())
    await top_up(store, charge, 40, record(40), 40)  # a cheaper model: what is held stays held
    assert charge.pre == 100 and await live_balance(gateway, user.id) == 900
    await quota.settle(charge, 73, None, 0)
    assert await live_balance(gateway, user.id) == 1000 - 73
    assert await live_balance(gateway, user.id, token.id) == 500 - 73
    assert await held(gateway, user) == {}


async def test_a_top_up_the_key_cannot_cover_changes_nothing_and_a_refund_returns_all(gateway) -> None:
    quota, store = quota_of(gateway), gateway.server.app[keys.STORE]
    user = await rich_user(quota=1000)
    token = await make_key(user, remain_quota=50, unlimited=False)
    charge = await admit(quota, "t-2", user, token, pre=10, worst=10)
    with pytest.raises(TopUpRefused) as refused:
        await top_up(store, charge, 100, record(100), 100)
    assert refused.value.reason == "key" and charge.pre == 10
    assert await live_balance(gateway, user.id) == 990 and await live_balance(gateway, user.id, token.id) == 40
    await top_up(store, charge, 45, record(45), 45)
    await quota.refund(charge)
    assert await live_balance(gateway, user.id) == 1000 and await live_balance(gateway, user.id, token.id) == 50


async def test_a_closed_reservation_is_not_topped_up(gateway) -> None:
    quota, store = quota_of(gateway), gateway.server.app[keys.STORE]
    user = await rich_user(quota=1000)
    charge = await admit(quota, "t-3", user, pre=10, worst=10)
    await quota.settle(charge, 5, None, 0)
    with pytest.raises(TopUpRefused) as refused:
        await top_up(store, charge, 100, record(100), 100)
    assert refused.value.reason == "lost" and await live_balance(gateway, user.id) == 995
