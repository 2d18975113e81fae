"""The store's lean command path (api.services.store.call_on, Script): the same replies as the client's
own path, scripts loaded again after a flush, dead connections replaced after a restart, writes without
a wait_for per command and replies still bounded by the socket timeout (a Redis of the test's own, over
TCP, a Unix socket and TLS)."""
from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
import redis.asyncio.connection as redis_connection
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from api.services.store import FastPack, Script, Store, call_on

# Each over TCP, a Unix socket and TLS (api.services.store.FAST_PACK: the lean path on each).
TRANSPORTS = pytest.mark.parametrize("own_redis", ["tcp", "unix", "tls"], indirect=True)
ECHO = "redis.call('SET', KEYS[1], ARGV[1]) return {redis.call('GET', KEYS[1]), tonumber(ARGV[2]) + 1}"


@pytest.fixture
async def own_store(own_redis) -> AsyncIterator[Store]:
    store = Store.from_url(own_redis.url, "t:")
    yield store
    await store.close()


@TRANSPORTS
async def test_call_on_answers_as_the_client_does(own_store) -> None:
    await own_store.redis.set("a", "1")
    assert await own_store.call("GET", "a") == await own_store.redis.get("a") == "1"
    assert await own_store.call("MGET", "a", "missing") == ["1", None]
    with pytest.raises(ResponseError):
        await own_store.call("INCR", "a", "b")  # the server's error reply, raised as the client raises it
    assert await call_on(own_store.redis, ("GET", "a")) == "1"  # the connection went on serving
    pool = own_store.redis.connection_pool
    assert not pool._in_use_connections and len(pool._available_connections) == 1  # one connection, given back
    assert isinstance(pool._available_connections[0], FastPack)  # the lean writes, whichever the transport


@TRANSPORTS
async def test_a_script_is_loaded_again_after_a_flush(own_store) -> None:
    script = Script(own_store.redis, ECHO)
    assert await script(keys=["k"], args=["v", 41]) == ["v", 42]
    await own_store.redis.script_flush()  # this test's own Redis
    assert await script(keys=["k"], args=["w", 1]) == ["w", 2]
    assert await own_store.redis.script_exists(script.sha) == [True]


@TRANSPORTS
async def test_many_scripts_at_once_over_a_restart(own_store, own_redis) -> None:
    script = Script(own_store.redis, ECHO)
    assert await asyncio.gather(*(script(keys=[f"k{i}"], args=[i, i]) for i in range(64))) == [
        [str(i), i + 1] for i in range(64)]  # 64 pooled connections
    own_redis.restart()
    for _ in range(5):  # every dead connection replaced, the script loaded again (a restart forgets scripts)
        assert await asyncio.gather(*(script(keys=[f"k{i}"], args=[i, i]) for i in range(32))) == [
            [str(i), i + 1] for i in range(32)]


@TRANSPORTS
async def test_commands_are_written_without_a_wait_for(own_store, monkeypatch) -> None:
    await own_store.redis.ping()  # a connection open in the pool

    def no_wait_for(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("asyncio.wait_for called for a command")

    monkeypatch.setattr(redis_connection.asyncio, "wait_for", no_wait_for)
    await own_store.redis.set("a", "2")  # the client's own path
    assert await own_store.call("GET", "a") == "2"  # the lean path
    assert await Script(own_store.redis, ECHO)(keys=["k"], args=["x", 0]) == ["x", 1]
    async with own_store.redis.pipeline(transaction=True) as pipe:
        pipe.incr("n").get("n")
        assert await pipe.execute() == [1, "1"]


@pytest.fixture
async def silent_server() -> AsyncIterator[tuple[int, list[bytes]]]:
    """A TCP server that answers the client's connection handshake (PING, CLIENT SETINFO) and never
    a command: a Redis that hangs mid-command. Yields its port and what it was sent."""
    held: list[asyncio.StreamWriter] = []
    received: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while data := await reader.read(65536):
            received.append(data)
            writer.write(b"+PONG\r\n" * data.count(b"PING") + b"+OK\r\n" * data.count(b"CLIENT"))

    server = await asyncio.start_server(serve, "127.0.0.1", 0, family=socket.AF_INET)
    yield server.sockets[0].getsockname()[1], received
    for writer in held:
        writer.close()
    server.close()
    await server.wait_closed()


async def test_a_redis_that_never_answers_a_command_times_out(silent_server) -> None:
    port, received = silent_server
    store = Store.from_url(f"redis://127.0.0.1:{port}/0?socket_timeout=0.2&protocol=2", "t:")
    try:
        await store.redis.connection_pool.get_connection()  # handshake answered: an open connection...
        for call in (lambda: store.call("GET", "a"), lambda: Script(store.redis, ECHO)(keys=["k"], args=["v", 1]),
                     lambda: store.redis.get("a")):
            with pytest.raises(RedisTimeoutError):
                await call()
        sent = b"".join(received)
        assert b"GET" in sent and b"EVALSHA" in sent  # ...and each command written, its reply never came
    finally:
        await store.close()
