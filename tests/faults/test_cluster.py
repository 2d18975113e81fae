# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Scale-out: two API processes that share nothing but a 3-master Redis Cluster (quota, limits,
key caches, reservations, settlement records, sessions, option events) and the database; the
Dramatiq queues stay on a plain Redis (BROKER_URL), which Dramatiq needs."""
from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from api.services.store import Store
from api.upstream.catalogue import ChannelType
from models import Channel, Option, Token
from tests.faults.ledger import KEY_START, START, Books, check_books, report
from tests.own_redis import OwnRedisCluster
from tests.relay.fakes import make_key, rich_user, upstreams  # noqa: F401

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def redis_cluster() -> Iterator[OwnRedisCluster]:
    directory = Path(tempfile.mkdtemp(prefix="gw-cluster-"))
    cluster = OwnRedisCluster(directory)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)


async def test_two_api_processes_on_a_redis_cluster(client, settings, api_process, redis_cluster, upstreams) -> None:
    fake = await upstreams()
    await Channel.create(name="fake", key="sk-upstream", base_url=fake.url, models="gpt-4",
                         type=int(ChannelType.OPENAI))
    await Option.update_or_create(key="RateLimitTokenRPM", defaults={"value": "6"})
    users = [await rich_user(f"user{i}", quota=START) for i in range(3)]
    tokens = [await make_key(u, remain_quota=KEY_START, unlimited=False) for u in users]
    books = Books(users, tokens)
    env = {"REDIS_URL": redis_cluster.url, "REDIS_CLUSTER": "1", "BROKER_URL": settings.redis_url}
    (_, a), (_, b) = await api_process(**env), await api_process(**env)
    store = Store.from_url(redis_cluster.url, settings.redis_prefix, cluster=True)
    try:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async def chat(url: str, token: Token, stream: bool = False) -> int:
                async with http.post(f"{url}/v1/chat/completions", json={**BODY, "stream": stream},
                                     headers={"Authorization": f"Bearer sk-{token.key}"}) as resp:
                    await resp.read()
                    return resp.status

            # Quota, reservations and settlement, through both processes, streamed and not.
            results = await asyncio.gather(*(chat(url, t, stream) for t in tokens for url in (a, b)
                                             for stream in (False, True)))
            assert results == [200] * 12
            # A key's per-minute limit counts its requests on both processes together: 6 in all.
            limited = tokens[0]
            more = [await chat(url, limited) for url in (a, b, a)]
            assert more == [200, 200, 429]
            # A user disabled through one process's console is refused by the other at once.
            async with http.post(f"{a}/api/user/login", json={"username": "root", "password": "123456"}) as resp:
                assert (await resp.json())["success"]
            async with http.post(f"{a}/api/user/manage", headers={"New-Api-User": "1"}, json={
                    "id": users[1].id, "action": "disable"}) as resp:
                assert (await resp.json())["success"], await resp.text()
            assert await chat(b, tokens[1]) == 403  # its key was cached there: the event reached it
            # The session made by `a`, read by `b`.
            async with http.get(f"{b}/api/user/self", headers={"New-Api-User": "1"}) as resp:
                assert (await resp.json())["data"]["username"] == "root"
            async with http.get(f"{a}/metrics") as resp:  # queue depths from the queues' own Redis
                assert resp.status == 200 and 'gateway_queue_depth{queue="billing"}' in await resp.text()
        summary = await check_books(store, books)  # records applied from the cluster's nodes
        assert summary.logs == 12 + 2
        nodes = {node.port for node in store.redis.get_nodes()}
        assert len(nodes) == 3
    finally:
        await store.close()
    report("Two API processes on a 3-master Redis Cluster (queues on a plain Redis)",
           "every request answered by either process; a key's RPM limit counted across both; a user "
           "disabled on one refused by the other; a session made on one valid on the other",
           "every request, once", summary)
