# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""How Realtime sessions end, and what each ending bills: sessions per key over the limit refused before the
upgrade; a client that drops mid-response (the response cancelled upstream and its usage billed); the gateway's
task cancelled (what was used stays billed, the open reservation refunded); a balance used up (an error event and
a close); the idle limit; the server stopping (an error event and close 1001)."""
from __future__ import annotations

import asyncio
import contextlib

import orjson
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from api import keys
from api.services.billing.reservations import close_orphans
from models import Log
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, gateway, live_balance, make_key, relay_of, rich_user  # noqa: F401
from tests.relay.realtime.realtime_kit import (  # noqa: F401
    MODEL,
    QUOTA_1,
    QUOTA_2,
    USAGE_1,
    USAGE_2,
    USER_TEXT,
    hub_of,
    open_reservations,
    realtime_fakes,
    sdk,
    sessions_over,
    until,
)

START = 10_000_000


async def one_response(conn) -> None:
    await conn.conversation.item.create(item=USER_TEXT)
    await conn.response.create()
    await until(conn, "response.done")


async def test_sessions_per_key_over_the_limit(gateway, realtime_fakes) -> None:
    await gateway.server.app[keys.OPTIONS].update("RealtimeMaxSessionsPerKey", "1")
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token, other = await make_key(user), await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await until(conn, "session.created")
        with pytest.raises(InvalidStatus) as refused:
            async with sdk(gateway, token).realtime.connect(model=MODEL):
                pass
        assert refused.value.response.status_code == 429
        assert orjson.loads(refused.value.response.body)["error"]["code"] == "too_many_sessions"
        async with sdk(gateway, other).realtime.connect(model=MODEL) as second:  # another key has its own places
            await until(second, "session.created")
    assert len(fake.handshakes) == 2
    await sessions_over(gateway)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as again:  # the place was given back
        await until(again, "session.created")
    await sessions_over(gateway)
    assert await live_balance(gateway, user.id) == START and await open_reservations(gateway, user.id) == {}


async def test_sessions_per_user_over_the_limit_whatever_the_keys(gateway, realtime_fakes) -> None:
    """Keys are free: a user's sessions over all their keys have a bound of their own."""
    options = gateway.server.app[keys.OPTIONS]
    await options.update("RealtimeMaxSessionsPerKey", "2")
    await options.update("RealtimeMaxSessionsPerUser", "3")
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    tokens = [await make_key(user) for _ in range(3)]
    async with contextlib.AsyncExitStack() as stack:
        for token in (tokens[0], tokens[0], tokens[1]):
            await until(await stack.enter_async_context(sdk(gateway, token).realtime.connect(model=MODEL)),
                        "session.created")
        with pytest.raises(InvalidStatus) as refused:  # a fresh key, with places of its own, but not the user
            async with sdk(gateway, tokens[2]).realtime.connect(model=MODEL):
                pass
        assert refused.value.response.status_code == 429
        error = orjson.loads(refused.value.response.body)["error"]
        assert error["code"] == "too_many_sessions" and "3 open Realtime sessions in all" in error["message"]
        other = await make_key(await rich_user("bob", quota=START))
        async with sdk(gateway, other).realtime.connect(model=MODEL) as theirs:  # another user is not counted
            await until(theirs, "session.created")
    assert len(fake.handshakes) == 4
    await sessions_over(gateway)
    async with sdk(gateway, tokens[2]).realtime.connect(model=MODEL) as again:  # the places were given back
        await until(again, "session.created")
    await sessions_over(gateway)
    assert await live_balance(gateway, user.id) == START and await open_reservations(gateway, user.id) == {}


async def test_a_client_that_drops_mid_response_pays_what_it_used(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1, USAGE_2], hold=True)
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await until(conn, "response.output_text.delta")
        conn._connection.transport.abort()  # the connection drops mid-response
        with pytest.raises(ConnectionClosed):
            await until(conn, "response.done")
    await sessions_over(gateway)
    assert [e["type"] for e in fake.seen][-1] == "response.cancel"
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert log.quota == QUOTA_1 and orjson.loads(log.other)["incomplete"] == "response cancelled"
    assert await live_balance(gateway, user.id) == START - QUOTA_1
    assert await open_reservations(gateway, user.id) == {}


async def test_the_gateway_task_cancelled_keeps_what_was_used(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1])
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    hub = hub_of(gateway)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await one_response(conn)
        assert len(await open_reservations(gateway, user.id)) == 2  # the next response's, held
        (session,) = hub.sessions
        session.task.cancel()
        with pytest.raises(ConnectionClosed) as closed:
            await conn.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
    await sessions_over(gateway)
    await drain(gateway)
    assert [log.quota for log in await Log.filter(user_id=user.id, type=LogType.CONSUME)] == [QUOTA_1]
    assert await live_balance(gateway, user.id) == START - QUOTA_1
    assert await open_reservations(gateway, user.id) == {}


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_a_killed_process_leaves_the_used_part_billed(gateway, realtime_fakes) -> None:
    """A process that dies mid-session: the responses done are settled already; the reservation still open
    (no response settled on it) is closed by the sweep, refunded."""
    fake = await realtime_fakes(usages=[USAGE_1])
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    app = gateway.server.app
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await one_response(conn)
        held = await open_reservations(gateway, user.id)
        assert len(held) == 2
        assert await relay_of(gateway).keeper.renew() == 1  # the next response's reservation, renewed while it stands
        await drain(gateway)
        # The process dies here: nothing renews the reservation, and the sweep finds it expired.
        closed = await close_orphans(app[keys.STORE], app[keys.OPTIONS].get_int("QuotaPerUnit"),
                                     now_ms=10**15)
        assert len(closed) == 1
        assert await live_balance(gateway, user.id) == START - QUOTA_1
    await sessions_over(gateway)  # its end refunds nothing twice: the sweep closed that reservation
    assert await live_balance(gateway, user.id) == START - QUOTA_1
    assert [log.quota for log in await Log.filter(user_id=user.id, type=LogType.CONSUME)] == [QUOTA_1]


async def test_a_balance_used_up_mid_session_ends_it(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1])
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=1500)  # the first reservation (500 tokens × MR 2 = 1000) fits, the second not
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await one_response(conn)
        refused = (await until(conn, "error"))[-1]
        assert refused.error.code == "insufficient_user_quota"
        with pytest.raises(ConnectionClosed) as closed:
            await conn.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    await sessions_over(gateway)
    await drain(gateway)
    assert [log.quota for log in await Log.filter(user_id=user.id, type=LogType.CONSUME)] == [QUOTA_1]
    assert await live_balance(gateway, user.id) == 1500 - QUOTA_1
    assert await open_reservations(gateway, user.id) == {}


@pytest.mark.parametrize(("option", "code", "reason"), [
    ("RealtimeIdleTimeoutSeconds", "idle_timeout", "idle timeout"),
    ("RealtimeMaxSessionSeconds", "session_expired", "session time limit reached"),
])
async def test_idle_and_long_sessions_are_closed(gateway, realtime_fakes, option, code, reason) -> None:
    await gateway.server.app[keys.OPTIONS].update(option, "1")
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        said = (await until(conn, "error"))[-1]
        assert said.error.code == code
        with pytest.raises(ConnectionClosed) as closed:
            await conn.recv()
        assert closed.value.rcvd is not None and (closed.value.rcvd.code, closed.value.rcvd.reason) == (1000, reason)
    await sessions_over(gateway)
    assert await live_balance(gateway, user.id) == START and await open_reservations(gateway, user.id) == {}


async def test_shutdown_closes_sessions_cleanly(gateway, realtime_fakes) -> None:
    """The server stops while a response is in progress: it is cancelled upstream and billed, then the client
    gets an `error` event and close 1001; a new session is refused."""
    fake = await realtime_fakes(usages=[USAGE_2], hold=True)
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await until(conn, "response.output_text.delta")
        stopping = asyncio.get_running_loop().create_task(gateway.server.app.shutdown())  # the server's on_shutdown
        events = await until(conn, "response.done")  # the reason first, then the cancelled response
        said = [e for e in events if e.type == "error"]
        assert [e.error.code for e in said] == ["server_shutdown"] and events[-1].response.status == "cancelled"
        with pytest.raises(ConnectionClosed) as closed:
            await conn.recv()
        assert closed.value.rcvd is not None and (closed.value.rcvd.code, closed.value.rcvd.reason) == (
            1001, "server shutting down")
        await stopping
        assert hub_of(gateway).stopping and not hub_of(gateway).sessions
    with pytest.raises(InvalidStatus) as refused:  # a stopping server opens no new session
        async with sdk(gateway, token).realtime.connect(model=MODEL):
            pass
    assert refused.value.response.status_code == 503
    await drain(gateway)
    assert [log.quota for log in await Log.filter(user_id=user.id, type=LogType.CONSUME)] == [QUOTA_2]
    assert await live_balance(gateway, user.id) == START - QUOTA_2
    assert await open_reservations(gateway, user.id) == {}
