# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The admission and settlement scripts (api/services/billing/quota.py) as they read each key once and
write each hash back in one command: a concurrency slot of a process that died frees itself once its
lease ends (the set is cleaned only when it looks full); balances stay exact past 2^53; an exposure
held by the former per-field writes is released exactly; the values read for the caller come back with
the admission; and an entry to keep goes with the settlement, expiring and indexed."""
from __future__ import annotations

import pytest

from api import keys
from api.services import redis_keys
from api.services.billing import exposure
from api.services.billing.quota import CONCURRENCY_LEASE_MS, Kept, Limits, QuotaService, RateLimited
from api.services.store import Script
from tests.relay.fakes import gateway, make_key, rich_user  # noqa: F401


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def quota_of(gateway) -> tuple[QuotaService, Clock]:
    quota, clock = QuotaService(gateway.server.app[keys.STORE]), Clock()
    quota.clock = clock
    return quota, clock


async def admit(quota: QuotaService, rid: str, user_id: int, token_id: int = 0, *, pre: int = 10,
                limits: Limits = Limits(), worst: int = 0, read: tuple[str, ...] = ()):
    return await quota.pre_charge(settlement_id=rid, user_id=user_id, token_id=token_id, token_limited=bool(token_id),
                                  pre=pre, group="default", limits=limits, worst=worst, read=read)


async def test_a_slot_of_a_process_that_died_frees_itself_when_its_lease_ends(gateway) -> None:
    quota, clock = quota_of(gateway)
    user = await rich_user()
    one = Limits(user_concurrency=1)
    await admit(quota, "gone", user.id, limits=one)  # its process dies: never settled
    with pytest.raises(RateLimited):
        await admit(quota, "second", user.id, limits=one)
    clock.now += CONCURRENCY_LEASE_MS / 1000 - 1
    with pytest.raises(RateLimited):
        await admit(quota, "third", user.id, limits=one)
    clock.now += 2  # the lease has ended
    charge = await admit(quota, "fourth", user.id, limits=one)
    store = quota.store
    assert await store.redis.zrange(redis_keys.user_key(store, user.id, "conc"), 0, -1) == ["fourth"]
    await quota.settle(charge, 10, None, 0)
    assert not await store.redis.exists(redis_keys.user_key(store, user.id, "conc"))


async def test_balances_stay_exact_past_two_to_the_53(gateway) -> None:
    quota, _ = quota_of(gateway)
    user = await rich_user()
    token = await make_key(user)
    store = quota.store
    big = 2**60 + 1
    for key in (redis_keys.quota(store, user.id), redis_keys.token_quota(store, user.id, token.id)):
        await store.redis.set(key, big)
    charge = await admit(quota, "r1", user.id, token.id, pre=7, worst=19)
    await quota.settle(charge, 5, None, 0)
    assert await store.redis.get(redis_keys.quota(store, user.id)) == str(big - 5)
    assert await store.redis.get(redis_keys.token_quota(store, user.id, token.id)) == str(big - 5)


async def test_an_exposure_held_by_the_former_writes_is_released_exactly(gateway) -> None:
    """The same `{u}:expo` layout: an entry and sums written field by field (hold()) by a process running
    the former scripts is released by the new settlement, the other request's share left held."""
    quota, _ = quota_of(gateway)
    user = await rich_user()
    token = await make_key(user, remain_quota=1_000_000)
    store = quota.store
    expo = redis_keys.exposures(store, user.id)
    mine = await admit(quota, "mine", user.id, token.id, pre=10, worst=50)  # holds 40
    former = Script(store.redis, exposure.FUNCTIONS + "hold(KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3])")
    await former([expo], ["old", 25, exposure.key_field(token.id)])
    assert await store.redis.hmget(expo, "user", exposure.key_field(token.id)) == ["65", "65"]
    await quota.settle(mine, 30, None, 0)
    assert await store.redis.hgetall(expo) == {"old": f"25|{exposure.key_field(token.id)}", "user": "25",
                                              exposure.key_field(token.id): "25"}
    release = Script(store.redis, exposure.FUNCTIONS + "release_read(KEYS[1], ARGV[1], ARGV[2])")
    await release([expo], ["old", exposure.key_field(token.id)])
    assert not await store.redis.exists(expo)


async def test_keys_read_with_the_admission_and_an_entry_kept_with_the_settlement(gateway) -> None:
    quota, clock = quota_of(gateway)
    user = await rich_user()
    store = quota.store
    here, missing = redis_keys.user_key(store, user.id, "x", "a"), redis_keys.user_key(store, user.id, "x", "b")
    await store.redis.set(here, "v")
    charge = await admit(quota, "r1", user.id, read=(here, missing))
    assert charge.read == {here: "v", missing: None}
    index, entry = redis_keys.user_key(store, user.id, "x"), redis_keys.user_key(store, user.id, "x", "c")
    now_ms = int(clock.now * 1000)
    await quota.settle(charge, 10, None, 0, Kept(index, [(entry, b"kept")], 60, 8, now_ms))
    assert await store.redis.get(entry) == "kept" and 0 < await store.redis.ttl(entry) <= 60
    assert await store.redis.zrange(index, 0, -1, withscores=True) == [(entry, float(now_ms))]
    assert 0 < await store.redis.ttl(index) <= 60
