# ruff: noqa: F811  (pytest fixtures imported from tests.sdk.test_fallbacks are test parameters)
"""A session that fell back stays on the model that answered it (FallbackStickySeconds,
api/relay/fallback_sticky.py): its next requests go there first, the fake of the model that failed
sees no call, until the seconds are over on the gateway's clock (injected, never waited for); other
sessions are not affected, and a Claude Code tool loop with thinking stays on one model."""
from __future__ import annotations

from typing import Any

import aiohttp
import openai
import orjson
import pytest
from aiohttp import web

from api.upstream.catalogue import ChannelType
from tests.relay.fakes import add_channel, relay_of
from tests.sdk.conftest import START_QUOTA, Relay, options_of
from tests.sdk.test_fallbacks import (  # noqa: F401  (the fixtures)
    OPENAI_500,
    OPENAI_USAGE,
    Serve,
    chains,
    client_of,
    closed,
    consume_logs,
    serve,
)
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI

STICKY = 60


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Switch:
    """A fake behind a switch: while `down`, every call is answered 500 in OpenAI's words; each call
    is listed either way."""

    def __init__(self, target: str, down: bool = True) -> None:
        self.target, self.down = target, down
        self.seen: list[str] = []

    def app(self) -> web.Application:
        async def answer(request: web.Request) -> web.Response:
            self.seen.append(request.path)
            if self.down:
                return web.json_response(OPENAI_500, status=500)
            headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
            async with aiohttp.ClientSession() as session, session.post(
                    self.target + request.path_qs, data=await request.read(), headers=headers) as up:
                return web.Response(body=await up.read(), status=up.status,
                                    headers={"Content-Type": up.headers.get("Content-Type", "application/json")})
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", answer)
        return app


async def sticky(relay: Relay, seconds: int = STICKY) -> Clock:
    await options_of(relay.gateway).update("FallbackStickySeconds", str(seconds))
    await options_of(relay.gateway).update("RetryTimes", "0")
    clock = Clock()
    state = relay_of(relay.gateway)
    assert state.sticky is not None
    state.sticky.clock = clock
    return clock


async def switched(relay: Relay, serve: Serve, model: str, down: bool) -> tuple[Switch, FakeOpenAI]:
    fake = FakeOpenAI()
    switch = Switch(await serve(fake.app()), down)
    await add_channel(relay.gateway, None, models=model, type=int(ChannelType.OPENAI), key=fake.key,
                      base_url=await serve(switch.app()), name=f"switched {model}",
                      model_mapping=orjson.dumps({model: "gpt-5"}).decode())  # what the strict fake serves
    return switch, fake


async def ask(relay: Relay, session: str) -> Any:
    return await client_of(relay).chat.completions.with_raw_response.create(
        model="claude-opus-5-5", messages=[{"role": "user", "content": "hello"}],
        extra_headers={"X-Session-Id": session})


async def test_a_session_that_fell_back_goes_to_the_model_that_answered_until_its_time_is_over(
        relay: Relay, serve: Serve) -> None:
    clock = await sticky(relay)
    first, _ = await switched(relay, serve, "claude-opus-5-5", down=True)
    second, fake = await switched(relay, serve, "gpt-5", down=False)
    await chains(relay, {"claude-opus-5-5": {"models": ["gpt-5"]}})

    raw = await ask(relay, "s1")  # the chain falls back: the session sticks to gpt-5
    assert raw.headers["X-Gateway-Model"] == "gpt-5" and len(first.seen) == 1 and len(fake.seen) == 1
    raw = await ask(relay, "s1")  # straight to gpt-5: the model that failed sees nothing
    assert raw.headers["X-Gateway-Model"] == "gpt-5" and raw.parse().model == "gpt-5"
    assert len(first.seen) == 1 and len(fake.seen) == 2
    await ask(relay, "s2")  # another session starts on the model asked for
    assert len(first.seen) == 2 and len(fake.seen) == 3

    clock.now += STICKY - 1
    await ask(relay, "s1")
    assert len(first.seen) == 2 and len(fake.seen) == 4
    clock.now += 1  # the time is over: the model asked for is tried again (and, still down, falls back)
    await ask(relay, "s1")
    assert len(first.seen) == 3 and len(fake.seen) == 5
    await ask(relay, "s1")  # sticks again, from the new fallback
    assert len(first.seen) == 3 and len(fake.seen) == 6

    logs, balance = await consume_logs(relay)
    charge = relay.charge("gpt-5", OPENAI_USAGE)
    assert [log.model_name for log in logs] == ["gpt-5"] * 6
    assert [log.quota for log in logs] == [charge] * 6 and balance == START_QUOTA - 6 * charge
    fallbacks = [orjson.loads(log.other)["fallback"] for log in logs]
    assert all(f["requested"] == "claude-opus-5-5" and f["answered"] == "gpt-5" for f in fallbacks)
    sticky_rows = [i for i, f in enumerate(fallbacks) if f["passed"] == [{"model": "claude-opus-5-5",
                                                                           "skipped": "sticky"}]]
    assert sticky_rows == [1, 3, 5]
    assert fallbacks[0]["passed"][0]["reason"] == "unavailable"
    metrics = await (await relay.gateway.get("/metrics")).text()
    assert 'gateway_fallback_total{from="claude-opus-5-5",to="gpt-5",reason="sticky"} 3' in metrics


async def test_a_sticky_model_that_fails_goes_back_to_the_model_asked_for_which_then_comes_first(
        relay: Relay, serve: Serve) -> None:
    await sticky(relay)
    first, claude_side = await switched(relay, serve, "claude-opus-5-5", down=True)
    second, gpt = await switched(relay, serve, "gpt-5", down=False)
    await chains(relay, {"claude-opus-5-5": {"models": ["gpt-5"]}})
    await ask(relay, "s1")
    first.down, second.down = False, True  # the first model is back, the second one fails
    raw = await ask(relay, "s1")  # sticky to gpt-5, which fails: the model asked for answers
    assert raw.headers["X-Gateway-Model"] == "claude-opus-5-5"
    assert len(second.seen) == 2 and len(first.seen) == 2
    second.down = False
    raw = await ask(relay, "s1")  # no longer sticky: the model asked for first
    assert raw.headers["X-Gateway-Model"] == "claude-opus-5-5" and len(second.seen) == 2 and len(first.seen) == 3
    logs, balance = await consume_logs(relay)
    assert [log.model_name for log in logs] == ["gpt-5", "claude-opus-5-5", "claude-opus-5-5"]
    assert balance == START_QUOTA - sum(log.quota for log in logs)
    assert orjson.loads(logs[1].other)["fallback"]["passed"] == [
        {"model": "claude-opus-5-5", "skipped": "sticky"},
        {"model": "gpt-5", "reason": "unavailable", "status": 500, "code": "server_error"}]
    assert "fallback" not in orjson.loads(logs[2].other)


async def test_a_sticky_model_no_longer_in_the_chain_or_stickiness_off_is_not_used(
        relay: Relay, serve: Serve) -> None:
    await sticky(relay)
    first, _ = await switched(relay, serve, "claude-opus-5-5", down=True)
    _, gpt = await switched(relay, serve, "gpt-5", down=False)
    await chains(relay, {"claude-opus-5-5": {"models": ["gpt-5"]}})
    await ask(relay, "s1")
    with pytest.raises(openai.InternalServerError):  # the operator took gpt-5 out of the chain
        await client_of(relay).chat.completions.create(
            model="claude-opus-5-5", messages=[{"role": "user", "content": "hello"}],
            extra_headers={"X-Session-Id": "s1"}, extra_body={"fallbacks": ["deepseek-reasoner"]})
    assert len(first.seen) == 2
    await options_of(relay.gateway).update("FallbackStickySeconds", "0")
    await ask(relay, "s1")
    assert len(first.seen) == 3 and len(gpt.seen) == 2


@pytest.mark.parametrize("stream", [False, True])
async def test_a_thinking_tool_loop_that_fell_back_stays_on_the_model_that_answered(
        relay: Relay, serve: Serve, stream: bool) -> None:
    """Claude Code's loop (its session found from its prompt's prefix): the first turn falls back to
    gpt-5, the second goes to gpt-5 too, so no turn of another model reaches Claude's strict fake."""
    from tests.sdk.clients import anthropic_messages
    from tests.sdk.scenario import ANSWER, WeatherScript
    from tests.sdk.test_fallbacks import down_once

    await sticky(relay)
    claude = FakeClaude(script=WeatherScript())
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.ANTHROPIC), key=claude.key,
                      base_url=await serve(down_once(await serve(claude.app()), seen, 1)), name="claude")
    gpt = FakeOpenAI(script=WeatherScript())
    await add_channel(relay.gateway, None, models="gpt-5", type=int(ChannelType.OPENAI), key=gpt.key,
                      base_url=await serve(gpt.app()), name="gpt")
    await chains(relay, {"claude-opus-5-5": {"models": ["gpt-5"]}})
    assert await anthropic_messages(relay.loop("claude-opus-5-5", stream)) == ANSWER
    assert len(seen) == 1 and claude.seen == [] and len(gpt.seen) == 2
    logs, balance = await consume_logs(relay)
    assert [log.model_name for log in logs] == ["gpt-5", "gpt-5"]
    assert balance == START_QUOTA - sum(log.quota for log in logs)
