"""Streams left open by an API process killed with SIGKILL, their output checkpointed in their
reservations: the start shared by the sweep's fault tests (tests/faults/test_reservations.py and
test_budget_sweep.py), and the invariant they end with."""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from api.services.billing.reservations import reservations_key
from api.services.billing.settlement import apply_pending, users_with_pending
from api.services.configuration.options import OptionsService
from api.services.store import Store
from api.upstream.catalogue import ChannelType
from models import Channel, Token, User
from models.settings import Settings
from tests.helpers import eventually
from tests.relay.fakes import headers_for, make_key, rich_user

MESSAGES = [{"role": "user", "content": "Tell me a long story."}]
BODY = {"model": "gpt-4", "messages": MESSAGES, "stream": True}
USER_QUOTA, KEY_QUOTA = 1_000_000, 300_000


@dataclass(frozen=True, slots=True)
class Killed:
    """What the killed process leaves: its callers, and the Redis holding their reservations."""

    users: list[User]
    tokens: list[Token]
    store: Store


@contextlib.asynccontextmanager
async def streams_of_a_killed_process(settings: Settings, api_process: Callable[..., Awaitable[tuple[Any, str]]],
                                      upstreams: Callable[..., Awaitable[Any]], count: int,
                                      **user_fields: Any) -> AsyncIterator[Killed]:
    """`count` users (USER_QUOTA, `user_fields`), each with a limited key (KEY_QUOTA) and a stream open
    on a real API process (checkpoints every 0.1 s, reservations live 60 s) to an upstream that hangs
    after four pieces; once every stream's output so far is checkpointed in its reservation, the process
    is killed with SIGKILL and the streams closed. The store is closed on the way out."""
    fake = await upstreams(hang_after=4, usage=None)  # four pieces, then the upstream works on and on
    await Channel.create(name="fake", key="sk-upstream", base_url=fake.url, models="gpt-4",
                         type=int(ChannelType["OPENAI"]))
    users = [await rich_user(f"u{i}", quota=USER_QUOTA, **user_fields) for i in range(count)]
    tokens = [await make_key(u, remain_quota=KEY_QUOTA, unlimited=False) for u in users]
    proc, url = await api_process(CHECKPOINT_INTERVAL="0.1", RESERVATION_TTL="60")
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    try:
        async with aiohttp.ClientSession() as http:
            streams = [await http.post(f"{url}/v1/chat/completions", json=BODY, headers=headers_for(t))
                       for t in tokens]
            for resp in streams:
                got = b""
                while got.count(b'"content"') < 5:  # the role chunk and four pieces
                    got += await resp.content.readline()

            async def checkpointed() -> bool:  # every stream's output so far is in its reservation
                for user in users:
                    entries = await store.redis.hgetall(reservations_key(store, user.id))
                    renewals = [v for k, v in entries.items() if k.endswith("#")]
                    if len(renewals) != 1 or int(renewals[0].split("|")[1]) == 0:
                        return False
                return True

            await eventually(checkpointed, timeout=20)
            os.killpg(proc.proc.pid, signal.SIGKILL)
            await asyncio.to_thread(proc.proc.wait)
            for resp in streams:
                resp.close()
        yield Killed(users, tokens, store)
    finally:
        await store.close()


async def books_balance(store: Store, users: list[User], tokens: list[Token]) -> None:
    """The invariant: once every record is applied, each live balance equals the database's."""
    options = OptionsService(store)
    await options.load()
    for user_id in await users_with_pending(store):
        await apply_pending(store, options, user_id)
    for user in users:
        assert int(await store.redis.get(f"{store.prefix}{{u{user.id}}}:quota")) == (await User.get(id=user.id)).quota
    for token in tokens:
        live = await store.redis.get(f"{store.prefix}{{u{token.user_id}}}:tq:{token.id}")
        assert live is not None and int(live) == (await Token.get(id=token.id)).remain_quota
