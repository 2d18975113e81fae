# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A task counts in its owner's budget windows at submission, and its refund gives the window back
its charge and its request, live and in the database."""
from __future__ import annotations

from api import keys
from api.relay.tasks.poll import MIDJOURNEY, poll
from api.services.billing import pricing
from api.services.budgets.limits import normalise
from api.services.budgets.plan import window_key
from api.services.budgets.windows import bounds
from api.upstream.catalogue import ChannelType
from models import BudgetUsage
from tests.helpers import both_databases
from tests.relay.fakes import add_channel, drain, gateway, make_key, relay_of, rich_user  # noqa: F401
from tests.upstream.providers.fake_tasks import MJ_SECRET

IMAGINE = pricing.per_call_quota(0.1)


@both_databases
async def test_a_failed_tasks_refund_gives_its_window_back(gateway, proxy) -> None:
    user = await rich_user(quota=1_000_000, limits=normalise([{"window": "day", "quota": 2 * IMAGINE},
                                                              {"window": "day", "requests": 5}]))
    key = await make_key(user)
    await add_channel(gateway, None, models="mj_imagine", type=int(ChannelType.MIDJOURNEY), base_url=proxy.url,
                      key=MJ_SECRET)
    store = gateway.server.app[keys.STORE]
    start, _ = bounds("day", relay_of(gateway).quota.clock())
    name = window_key(store, user.id, "u", "day", start)
    for _ in range(2):
        resp = await gateway.post("/mj/submit/imagine", json={"prompt": "fox"}, headers={"mj-api-secret": key.key})
        assert (await resp.json())["code"] == 1
    refused = await gateway.post("/mj/submit/imagine", json={"prompt": "fox"}, headers={"mj-api-secret": key.key})
    assert refused.status == 429 and "day limit of" in (await refused.text())
    assert await store.redis.hmget(name, "q", "r") == [str(2 * IMAGINE), "2"]
    first = next(iter(proxy.tasks))
    proxy.finish(first, "FAILURE", progress="100%", failReason="Discord said no")
    result = await poll(MIDJOURNEY, store, gateway.server.app[keys.HTTP])
    assert len(result.refunded) == 1
    assert await store.redis.hmget(name, "q", "r") == [str(IMAGINE), "1"]
    await drain(gateway)
    [row] = await BudgetUsage.filter(user_id=user.id).values("quota", "requests")
    assert row == {"quota": IMAGINE, "requests": 1}
    resp = await gateway.post("/mj/submit/imagine", json={"prompt": "fox"}, headers={"mj-api-secret": key.key})
    assert (await resp.json())["code"] == 1  # the room the refund gave back
