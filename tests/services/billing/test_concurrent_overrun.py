# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Requests whose answers cost more than their pre-charge, sent at once: the balance goes below zero
by at most one request's overrun, not one per request in flight (docs/billing.md, Pre-charge, "While
other requests run"). Every admitted request is charged exactly; a lone request of a low balance is
served as before."""
from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from api import keys
from api.services import redis_keys
from api.services.billing.quota import Charge, Limits, QuotaRefused, QuotaService
from api.services.billing.reservations import close_orphans
from models import Log, Token, User
from models.enums import LogType
from tests.helpers import eventually
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    drain,
    gateway,
    headers_for,
    live_balance,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

# gpt-4 at 0.02 quota per token: the pre-charge of a request without max_tokens is 500 × 0.02 = 10;
# an answer of 13 + 987 tokens costs 1000 × 0.02 = 20: 10 more than reserved.
RATIOS = {"ModelRatio": {"gpt-4": 0.02}, "CompletionRatio": {"gpt-4": 1}}
PRE, FINAL = 10, 20
OVERRUN = FINAL - PRE
BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "Write me a long story."}]}


async def priced(gateway) -> None:
    options = gateway.server.app[keys.OPTIONS]
    for name, table in RATIOS.items():
        await options.update(name, orjson.dumps(table).decode())


async def burst(gateway, fake, token: Token, n: int) -> list[int]:
    """`n` chats sent at once; all those admitted are held upstream until every one is answered or
    waiting there, so they are all in flight together."""
    calls = [asyncio.ensure_future(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token)))
             for _ in range(n)]

    async def all_in() -> bool:
        return fake.waiting + sum(1 for c in calls if c.done()) == n

    await eventually(all_in, timeout=30)
    assert fake.gate is not None
    fake.gate.set()
    statuses = []
    for call in calls:
        resp = await call
        await resp.read()
        statuses.append(resp.status)
    return statuses


async def charged_exactly(gateway, user: User, start: int, served: int) -> int:
    """After the workers: one consume log of FINAL per request served, the database balance the start
    minus them, the live balance equal to it, and no exposure left held."""
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).values_list("quota", flat=True)
    assert sorted(logs) == [FINAL] * served
    row = await User.get(id=user.id)
    assert row.quota == start - FINAL * served
    assert await live_balance(gateway, user.id) == row.quota
    store = gateway.server.app[keys.STORE]
    assert not await store.redis.exists(redis_keys.exposures(store, user.id))
    return row.quota


async def test_twenty_concurrent_overruns_take_the_user_below_zero_by_one_overrun_at_most(gateway, upstreams) -> None:
    await priced(gateway)
    fake = await upstreams(gate=asyncio.Event(), usage=(13, 987))
    await add_channel(gateway, fake)
    user = await rich_user(quota=100)
    token = await make_key(user)  # unlimited
    statuses = await burst(gateway, fake, token, 20)
    served = statuses.count(200)
    print(f"admitted {served} of 20")
    balance = await charged_exactly(gateway, user, 100, served)
    print(f"balance after: {balance}")
    assert balance >= -OVERRUN
    assert served >= 1 and set(statuses) <= {200, 429}  # the others are told to retry when those end


async def test_a_limited_key_with_little_left_is_overrun_by_one_request_at_most(gateway, upstreams) -> None:
    await priced(gateway)
    fake = await upstreams(gate=asyncio.Event(), usage=(13, 987))
    await add_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user, remain_quota=100, unlimited=False)
    statuses = await burst(gateway, fake, token, 20)
    served = statuses.count(200)
    print(f"admitted {served} of 20")
    await charged_exactly(gateway, user, 10_000_000, served)
    remain = (await Token.get(id=token.id)).remain_quota
    print(f"key's remaining quota after: {remain}")
    assert remain == 100 - FINAL * served and remain >= -OVERRUN
    assert await live_balance(gateway, user.id, token.id) == remain
    assert served >= 1 and set(statuses) <= {200, 429}


async def test_a_low_balance_alone_in_flight_is_served_as_before(gateway, upstreams) -> None:
    """Enough for the pre-charge, far from the most the answer may cost: served, charged in full
    below zero, and the next request refused for the balance (403), as without the rule."""
    await priced(gateway)
    await add_channel(gateway, await upstreams(usage=(13, 987)))
    user = await rich_user(quota=15)
    token = await make_key(user)
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert resp.status == 200
    assert await charged_exactly(gateway, user, 15, 1) == 15 - FINAL
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    body = await resp.json()
    assert resp.status == 403 and body["error"]["code"] == "insufficient_user_quota"


async def test_one_after_the_other_a_low_balance_is_served_each_time(gateway, upstreams) -> None:
    await priced(gateway)
    await add_channel(gateway, await upstreams(usage=(13, 987)))
    user = await rich_user(quota=100)
    token = await make_key(user, remain_quota=60, unlimited=False)
    for _ in range(3):
        resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
        assert resp.status == 200
    await charged_exactly(gateway, user, 100, 3)
    assert (await Token.get(id=token.id)).remain_quota == 0


async def test_a_balance_that_covers_the_worst_case_is_not_held_back(gateway, upstreams) -> None:
    """A rich balance runs its requests together: each one's worst case is covered."""
    await priced(gateway)
    fake = await upstreams(gate=asyncio.Event(), usage=(13, 987))
    await add_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user, remain_quota=1_000_000, unlimited=False)
    assert await burst(gateway, fake, token, 20) == [200] * 20
    await charged_exactly(gateway, user, 10_000_000, 20)


@pytest.mark.parametrize(("thinking", "admitted"), [({}, 20), ({"reasoning_effort": "high"}, 1)],
                         ids=["max_tokens", "max_tokens-and-thinking"])
async def test_requests_bounded_by_max_tokens_run_together_on_a_low_balance(gateway, upstreams, thinking,
                                                                            admitted) -> None:
    """max_tokens bounds the answer: its worst case is its pre-charge and nothing is held back —
    unless the request asks for thinking, whose budget may raise the limit sent: the model's cap
    bounds it then."""
    await priced(gateway)
    fake = await upstreams(gate=asyncio.Event(), usage=(15, 35))  # 50 tokens: round(50 × 0.02) = 1
    await add_channel(gateway, fake)
    user = await rich_user(quota=100)
    token = await make_key(user)
    body = {**BODY, "max_tokens": 50, **thinking}
    calls = [asyncio.ensure_future(gateway.post("/v1/chat/completions", json=body, headers=headers_for(token)))
             for _ in range(20)]

    async def all_in() -> bool:
        return fake.waiting + sum(1 for c in calls if c.done()) == 20

    await eventually(all_in, timeout=30)
    fake.gate.set()
    statuses = [(await c).status for c in calls]
    assert statuses.count(200) == admitted and set(statuses) <= {200, 429}


async def test_a_request_held_back_is_told_why_in_the_clients_language(gateway, upstreams) -> None:
    await priced(gateway)
    fake = await upstreams(gate=asyncio.Event(), usage=(13, 987))
    await add_channel(gateway, fake)
    user = await rich_user(quota=100)
    token = await make_key(user)
    running = asyncio.ensure_future(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token)))
    try:
        await eventually(lambda: asyncio.sleep(0, fake.waiting == 1))
        for language, words in (("en", "still running"), ("zh-CN", "仍在进行中")):
            call = asyncio.ensure_future(gateway.post("/v1/chat/completions", json=BODY,
                                                      headers={**headers_for(token), "Accept-Language": language}))
            await eventually(lambda call=call: asyncio.sleep(0, call.done() or fake.waiting > 1))
            assert call.done(), "admitted while the first request runs"
            resp = call.result()
            body = await resp.json()
            assert resp.status == 429 and resp.headers["Retry-After"] == "1"
            assert body["error"]["code"] == "insufficient_quota_in_flight" and words in body["error"]["message"]
            assert "(90)" in body["error"]["message"] or "（90）" in body["error"]["message"]
        assert await live_balance(gateway, user.id) == 90  # the refusals took nothing
    finally:
        fake.gate.set()
    assert (await running).status == 200
    await charged_exactly(gateway, user, 100, 1)


# -- the rule, to the unit (api.services.billing.exposure) ------------------------------------------


def quota_of(gateway) -> QuotaService:
    return relay_of(gateway).quota


async def admit(quota: QuotaService, rid: str, user: User, token: Token | None = None, *, pre: int = 10,
                worst: int = 50) -> Charge:
    token_id = token.id if token else 0
    reservation = orjson.dumps({"rid": rid, "t": token_id, "tl": 1 if token else 0, "m": "gpt-4", "pre": pre})
    return await quota.pre_charge(settlement_id=rid, user_id=user.id, token_id=token_id,
                                  token_limited=token is not None, pre=pre, group="default", limits=Limits(),
                                  reservation=reservation, worst=worst)


async def held(gateway, user: User) -> dict[str, str]:
    store = gateway.server.app[keys.STORE]
    return await store.redis.hgetall(redis_keys.exposures(store, user.id))


async def test_the_balance_after_the_pre_charge_must_cover_what_runs(gateway) -> None:
    """pre 10, worst 50 (each may still take 40), balance 100: two run together, the third waits;
    settled at their worst, the balance ends at 0, never below."""
    quota = quota_of(gateway)
    user = await rich_user(quota=100)
    first = await admit(quota, "r-1", user)  # 100 − 10 ≥ 0 held
    second = await admit(quota, "r-2", user)  # 90 − 10 ≥ 40 held
    assert await live_balance(gateway, user.id) == 80
    assert (await held(gateway, user))["user"] == "80"
    with pytest.raises(QuotaRefused) as refused:  # 80 − 10 < 80 held
        await admit(quota, "r-3", user)
    assert (refused.value.reason, refused.value.remain, refused.value.pre, refused.value.held) == \
        ("user_in_flight", 80, 10, 80)
    await quota.settle(first, 50, None, 0)
    assert await live_balance(gateway, user.id) == 40 and (await held(gateway, user))["user"] == "40"
    with pytest.raises(QuotaRefused):  # 40 − 10 < 40 held
        await admit(quota, "r-3", user)
    await quota.settle(second, 50, None, 0)
    assert await live_balance(gateway, user.id) == 0 and await held(gateway, user) == {}
    with pytest.raises(QuotaRefused) as refused:
        await admit(quota, "r-3", user)
    assert refused.value.reason == "user_insufficient"


async def test_a_limited_key_is_held_to_the_same_rule(gateway) -> None:
    quota = quota_of(gateway)
    user = await rich_user()
    token = await make_key(user, remain_quota=100, unlimited=False)
    await admit(quota, "k-1", user, token)
    await admit(quota, "k-2", user, token)
    with pytest.raises(QuotaRefused) as refused:
        await admit(quota, "k-3", user, token)
    assert (refused.value.reason, refused.value.remain, refused.value.held) == ("key_in_flight", 80, 80)
    assert await held(gateway, user) == {"k-1": f"40|key:{token.id}", "k-2": f"40|key:{token.id}",
                                         "user": "80", f"key:{token.id}": "80"}


async def test_a_refund_a_settlement_sent_twice_and_the_sweep_release_exactly_once(gateway) -> None:
    quota = quota_of(gateway)
    store = gateway.server.app[keys.STORE]
    user = await rich_user(quota=1_000)
    token = await make_key(user, remain_quota=1_000, unlimited=False)
    refunded = await admit(quota, "a-1", user, token)
    settled = await admit(quota, "a-2", user, token)
    await admit(quota, "a-3", user, token)  # its process "dies": left to the sweep
    await quota.refund(refunded)
    await quota.settle(settled, 30, None, 0)
    settled.settled = False
    await quota.settle(settled, 30, None, 0)  # sent again: nothing more
    assert await held(gateway, user) == {"a-3": f"40|key:{token.id}", "user": "40", f"key:{token.id}": "40"}
    closed = await close_orphans(store, 500_000, now_ms=int((time.time() + 3600) * 1000))
    assert closed == ["a-3"] and await held(gateway, user) == {}
    assert await live_balance(gateway, user.id) == 1_000 - 30
    assert await live_balance(gateway, user.id, token.id) == 1_000 - 30
