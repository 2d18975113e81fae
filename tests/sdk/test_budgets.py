# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Budgets and limits over time through the official SDKs (openai and anthropic): a window with no
room left is refused with 429 `budget_exceeded`, the reset time and Retry-After; the next window
admits again (the gateway's clock moved, never waited for); model-scoped, user, group, rolling,
request and token limits each hold, and a key's limit never lifts its user's."""
from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import anthropic
import openai
import orjson
import pytest

from api import keys
from api.services.budgets.durable import claim_soft_alert
from api.services.budgets.limits import normalise
from api.services.budgets.usage import usage_of
from api.services.error_logs import write_pending
from models import BudgetUsage, Log, Token, User
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, gateway, make_key, relay_of, rich_user, upstreams  # noqa: F401

# gpt-4 at one quota per token; the fake answers 13 prompt + 7 completion tokens: 20 per request.
RATIOS = {"ModelRatio": {"gpt-4": 1, "gpt-4o-mini": 1}, "CompletionRatio": {"gpt-4": 1, "gpt-4o-mini": 1}}
CHARGE = 20
# The gateway's clock is moved by the tests, near the real one (Redis expires the windows' hashes by its own):
# tomorrow at 10:00 UTC, and the midnight after it.
TOMORROW = (int(time.time()) // 86400 + 1) * 86400
T0 = TOMORROW + 10 * 3600
MIDNIGHT = TOMORROW + 86400


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def site(gateway, upstreams) -> Any:
    options = gateway.server.app[keys.OPTIONS]
    for name, table in RATIOS.items():
        await options.update(name, orjson.dumps(table).decode())
    await add_channel(gateway, await upstreams(), models="gpt-4,gpt-4o-mini")
    clock = Clock(T0)
    relay_of(gateway).quota.clock = clock
    return gateway, clock


def base(gateway) -> str:
    return str(gateway.make_url("")).rstrip("/")


async def chat(gateway, token: Token, model: str = "gpt-4", stream: bool = False) -> Any:
    """One chat by the openai SDK; the answer, or the APIStatusError it raised."""
    async with openai.AsyncOpenAI(base_url=base(gateway) + "/v1", api_key=f"sk-{token.key}", max_retries=0) as client:
        try:
            if stream:
                chunks = [c async for c in await client.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": "hi"}], max_tokens=10, stream=True)]
                return chunks
            return await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}],
                                                        max_tokens=10)
        except openai.APIStatusError as exc:
            return exc


async def message(gateway, token: Token, model: str = "gpt-4") -> Any:
    async with anthropic.AsyncAnthropic(base_url=base(gateway), api_key=f"sk-{token.key}", max_retries=0) as client:
        try:
            return await client.messages.create(model=model, max_tokens=10,
                                                messages=[{"role": "user", "content": "hi"}])
        except anthropic.APIStatusError as exc:
            return exc


async def error_rows(gateway, user: User) -> list[Log]:
    """The error log rows the workers write from the queue (once the background pushes are done)."""
    state = relay_of(gateway)
    while state.background:
        await asyncio.gather(*list(state.background))
    await write_pending(gateway.server.app[keys.STORE])
    return await Log.filter(user_id=user.id, type=LogType.ERROR).order_by("id")


def refused(answer: Any) -> dict[str, Any]:
    assert isinstance(answer, openai.APIStatusError | anthropic.APIStatusError), answer
    assert answer.status_code == 429
    return orjson.loads(answer.response.content)


async def key_with(user: User, limits: list[dict[str, Any]], **fields: Any) -> Token:
    return await make_key(user, limits=normalise(limits), **fields)


async def test_a_daily_quota_limit_refuses_with_429_and_the_reset_then_admits_the_next_day(site) -> None:
    gateway, clock = site
    user = await rich_user()
    # each request reserves its prompt + max_tokens (about 18) and settles 20: two fit in 55, a third does not
    token = await key_with(user, [{"window": "day", "quota": 55}])
    assert not isinstance(await chat(gateway, token), Exception)
    assert not isinstance(await message(gateway, token), Exception)
    answer = await chat(gateway, token)
    body = refused(answer)
    assert body["error"]["code"] == "budget_exceeded"
    text = body["error"]["message"]
    assert 'key "test key"' in text and "day" in text and "55 quota" in text and "(40 used)" in text
    assert datetime.fromtimestamp(MIDNIGHT, UTC).isoformat() in text
    assert answer.response.headers["Retry-After"] == str(int(MIDNIGHT - T0))
    anthropic_refusal = refused(await message(gateway, token))  # the client's own error shape
    assert anthropic_refusal["type"] == "error" and anthropic_refusal["error"]["type"] == "rate_limit_error"
    assert "Budget exceeded" in anthropic_refusal["error"]["message"]
    clock.now = MIDNIGHT + 1  # the next day: a fresh window
    assert not isinstance(await chat(gateway, token, stream=True), Exception)
    await drain(gateway)
    rows = await BudgetUsage.filter(user_id=user.id).order_by("window_start").values(
        "owner_kind", "owner_id", "identity", "window_start", "window_end", "quota", "requests", "tokens")
    assert rows == [
        {"owner_kind": "key", "owner_id": str(token.id), "identity": "day", "window_start": int(MIDNIGHT) - 86400,
         "window_end": int(MIDNIGHT), "quota": 2 * CHARGE, "requests": 2, "tokens": 40},
        {"owner_kind": "key", "owner_id": str(token.id), "identity": "day", "window_start": int(MIDNIGHT),
         "window_end": int(MIDNIGHT) + 86400, "quota": CHARGE, "requests": 1, "tokens": 20}]
    errors = await error_rows(gateway, user)
    assert len(errors) == 2 and all("day limit of 55 quota" in row.content for row in errors)
    metrics = relay_of(gateway).metrics.render()
    assert 'gateway_budget_refusals_total{window="day",owner="key",measure="quota"} 2' in metrics


async def test_a_model_scoped_limit_counts_only_its_models(site) -> None:
    gateway, _ = site
    user = await rich_user()
    token = await key_with(user, [{"window": "day", "model": "gpt-4o*", "requests": 1}])
    assert not isinstance(await chat(gateway, token, "gpt-4o-mini"), Exception)
    body = refused(await chat(gateway, token, "gpt-4o-mini"))
    assert "day limit of 1 requests (gpt-4o*)" in body["error"]["message"]
    for _ in range(3):  # another model is not counted there
        assert not isinstance(await message(gateway, token, "gpt-4"), Exception)


async def test_a_keys_limit_never_lifts_its_users(site) -> None:
    gateway, _ = site
    user = await rich_user(limits=normalise([{"window": "hour", "requests": 2}]))
    generous = await key_with(user, [{"window": "hour", "requests": 100}])
    other = await make_key(user)
    assert not isinstance(await chat(gateway, generous), Exception)
    assert not isinstance(await chat(gateway, other), Exception)
    body = refused(await chat(gateway, generous))
    assert 'user "alice"' in body["error"]["message"] and "hour limit of 2 requests" in body["error"]["message"]


async def test_a_group_limit_holds_for_each_user_of_the_group(site) -> None:
    gateway, _ = site
    await gateway.server.app[keys.OPTIONS].update("GroupLimits", '{"default": [{"window": "week", "requests": 1}]}')
    alice, bob = await rich_user(), await rich_user("bob")
    a, b = await make_key(alice), await make_key(bob)
    assert not isinstance(await chat(gateway, a), Exception)
    assert not isinstance(await message(gateway, b), Exception)  # an allowance per user
    body = refused(await chat(gateway, a))
    assert 'group "default"' in body["error"]["message"] and "week limit of 1 requests" in body["error"]["message"]


async def test_a_rolling_window_opens_with_the_first_request_and_lasts_its_hours(site) -> None:
    gateway, clock = site
    user = await rich_user()
    token = await key_with(user, [{"window": "5h", "requests": 2}])
    opened = clock.now
    assert not isinstance(await chat(gateway, token), Exception)
    clock.now = opened + 4 * 3600
    assert not isinstance(await chat(gateway, token), Exception)
    answer = await chat(gateway, token)
    refused(answer)
    assert answer.response.headers["Retry-After"] == str(3600)  # five hours after the first request
    clock.now = opened + 5 * 3600  # it closed: the next request opens the next one
    assert not isinstance(await chat(gateway, token), Exception)
    assert not isinstance(await chat(gateway, token), Exception)
    refused(await chat(gateway, token))
    await drain(gateway)
    rows = await BudgetUsage.filter(user_id=user.id).order_by("window_start").values_list(
        "window_start", "window_end", "requests")
    assert rows == [(int(opened), int(opened) + 5 * 3600, 2),
                    (int(opened) + 5 * 3600, int(opened) + 10 * 3600, 2)]


async def test_request_and_token_measures(site) -> None:
    gateway, _ = site
    user = await rich_user()
    # a request takes its prompt's tokens at admission and settles prompt + completion (20)
    tokens = await key_with(user, [{"window": "minute", "tokens": 45}])
    assert not isinstance(await chat(gateway, tokens), Exception)
    assert not isinstance(await chat(gateway, tokens, stream=True), Exception)
    body = refused(await message(gateway, tokens))
    assert "minute limit of 45 tokens" in body["error"]["message"] and "(40 used)" in body["error"]["message"]
    requests = await key_with(user, [{"window": "month", "requests": 3}])
    for _ in range(3):
        assert not isinstance(await message(gateway, requests), Exception)
    assert "month limit of 3 requests" in refused(await chat(gateway, requests))["error"]["message"]


async def test_usage_of_reads_each_limit_live_and_the_soft_alert_is_claimed_once(site) -> None:
    gateway, clock = site
    await gateway.server.app[keys.OPTIONS].update("GroupLimits", '{"default": [{"window": "month", "requests": 9}]}')
    user = await rich_user(limits=normalise([{"window": "day", "quota": 1000, "soft": 50}]))
    token = await key_with(user, [{"window": "5h", "tokens": 100}, {"window": "minute", "requests": 5}])
    opened = clock.now
    for _ in range(2):
        assert not isinstance(await chat(gateway, token), Exception)
    store, options = gateway.server.app[keys.STORE], gateway.server.app[keys.OPTIONS]
    found = await usage_of(store, user_id=user.id, user_limits=user.limits, group=user.group,
                           group_limits_option=options.get("GroupLimits"), token_id=token.id,
                           token_limits=token.limits, now=clock.now)
    minute = int(clock.now) // 60 * 60
    assert found == [
        {"index": 0, "owner": "key", "window": "5h", "measure": "tokens", "model": "", "limit": 100,
         "used": 40, "soft": 0, "window_start": int(opened), "resets_at": int(opened) + 5 * 3600},
        {"index": 1, "owner": "key", "window": "minute", "measure": "requests", "model": "", "limit": 5,
         "used": 2, "soft": 0, "window_start": minute, "resets_at": minute + 60},
        {"index": 0, "owner": "user", "window": "day", "measure": "quota", "model": "", "limit": 1000,
         "used": 40, "soft": 50, "window_start": TOMORROW, "resets_at": MIDNIGHT},
        {"index": 0, "owner": "group", "window": "month", "measure": "requests", "model": "", "limit": 9,
         "used": 2, "soft": 0, "window_start": found[3]["window_start"], "resets_at": found[3]["resets_at"]}]
    later = await usage_of(store, user_id=user.id, user_limits=user.limits, token_id=token.id,
                           token_limits=token.limits, now=opened + 6 * 3600)
    assert later[0]["used"] == 0 and later[0]["window_start"] is None  # the rolling window closed
    await drain(gateway)
    window = (user.id, "user", str(user.id), "day", TOMORROW)
    assert await claim_soft_alert(*window, "quota:1000", "first") is True
    assert await claim_soft_alert(*window, "quota:1000", "first") is True  # the same claim again (its retry)
    assert await claim_soft_alert(*window, "quota:1000", "second") is False
    assert (await BudgetUsage.get(user_id=user.id, owner_kind="user")).soft_alerts == "quota:1000=first"
