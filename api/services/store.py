"""The Redis connection of a process, with the key prefix every key of this deployment carries
(the keys themselves are built in api.services.redis_keys)."""
from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis._parsers import _AsyncHiredisParser
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

if TYPE_CHECKING:
    from redis.asyncio.cluster import RedisCluster

_hiredis_pack: Any
try:
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is in requirements.txt
    _hiredis_pack = None


class FastPack:
    """redis-py's asyncio connection packs commands in Python (~1 µs per argument; the relay's quota
    scripts send 20-30); hiredis packs them in C, with the same bytes (floats written as repr(x)
    writes them). What hiredis refuses (bools, None: redis-py raises its DataError for them) and
    multi-word command names keep redis-py's own packer. Mixed into a TCP, a TLS and a Unix socket
    connection."""

    is_connected: bool
    socket_timeout: float | None
    _writer: asyncio.StreamWriter | None

    def pack_command(self, *args: Any) -> list[bytes]:
        if _hiredis_pack is not None and not (isinstance(args[0], str) and " " in args[0]):
            try:
                return [_hiredis_pack(args)]
            except TypeError:
                pass
        packed: list[bytes] = super().pack_command(*args)  # type: ignore[misc]  # the class it is mixed into
        return packed

    async def send_packed_command(self, command: bytes | str | Iterable[bytes], check_health: bool = True) -> None:
        """redis-py bounds every write with `asyncio.wait_for(…, socket_timeout)`: a task and a timer
        per command, and a turn of the loop before the command leaves. The socket takes a short
        command whole in `writelines`; only a write it could not take at once (a full send buffer, a
        connection going away) waits for the drain, bounded by the same socket timeout. Replies are
        bounded as before (read_response's own timeout)."""
        connection: Any = self  # the connection class it is mixed into
        if not self.is_connected:
            await connection.connect_check_health(check_health=False)
        if check_health:
            await aioredis.Connection.check_health(connection)  # the class named: see get_connection below
        if isinstance(command, str):
            command = command.encode()
        if isinstance(command, bytes):
            command = [command]
        writer = self._writer
        assert writer is not None
        try:
            writer.writelines(command)
            transport = writer.transport
            if transport.is_closing() or transport.get_write_buffer_size():
                async with asyncio.timeout(self.socket_timeout):
                    await writer.drain()
        except TimeoutError:
            await connection.disconnect(nowait=True)
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as e:
            await connection.disconnect(nowait=True)
            err_no, errmsg = ("UNKNOWN", e.args[0]) if len(e.args) == 1 else (e.args[0], e.args[1])
            raise RedisConnectionError(f"Error {err_no} while writing to socket. {errmsg}.") from e
        except BaseException:  # a cancel mid-write: what was sent of the command is unknown
            await connection.disconnect(nowait=True)
            raise


class FastPackConnection(FastPack, aioredis.Connection):
    """A TCP connection (redis://) with FastPack's packing and writes."""


class FastPackSSLConnection(FastPack, aioredis.SSLConnection):
    """A TLS connection (rediss://) with the same."""


class FastPackUnixConnection(FastPack, aioredis.UnixDomainSocketConnection):
    """A Unix socket connection (unix:///path?db=N) with the same: to a Redis on the same host, a
    round trip costs the client about a fifth less CPU than over loopback TCP, Redis about a third."""


# The connection class redis-py picks for a URL's scheme → the same with FastPack.
FAST_PACK: dict[type, type] = {aioredis.Connection: FastPackConnection, aioredis.SSLConnection: FastPackSSLConnection,
                               aioredis.UnixDomainSocketConnection: FastPackUnixConnection}


class FastBlockingConnectionPool(aioredis.BlockingConnectionPool):
    """The blocking pool (a caller past `max_connections` waits instead of failing), with a fast path:
    when an idle connection is there and nobody waits, take or give it back without the condition
    lock, the timeout context and the pool's OpenTelemetry counters (about half of redis-py's CPU per
    command here). Waiters, maintenance mode and connections owing a re-auth keep the full path."""

    def _quiet(self) -> bool:
        return not self._condition._waiters and not getattr(self, "_in_maintenance", False)

    def take(self) -> Any:
        """An idle connection that is open, owes no re-auth and has nothing unread, taken at once (no
        await, none of connect()'s retry wrapper around an open connection); else None, and the
        caller takes the pool's own path."""
        if not self._available_connections or not self._quiet():
            return None
        connection = self._available_connections[-1]
        if not connection.is_connected or not isinstance(connection._parser, _AsyncHiredisParser):
            return None
        parser: Any = connection._parser  # hiredis's reader and the stream it reads (private, typed loosely)
        if (not parser._connected or parser._reader.has_data() or parser._stream.at_eof() or parser._stream._buffer
                or getattr(connection, "_re_auth_token", None) is not None or connection.should_reconnect()):
            return None
        self._available_connections.pop()
        self._in_use_connections.add(connection)
        return connection


class Store:
    def __init__(self, redis: aioredis.Redis | RedisCluster, prefix: str) -> None:
        # Any: connections decode replies (every reply is a str), which redis-py's annotations cannot
        # express (they say bytes | str everywhere); and a cluster client stands in for a Redis one.
        self.redis: Any = redis
        self.prefix = prefix

    @classmethod
    def from_settings(cls, settings: Any) -> Store:
        return cls.from_url(settings.redis_url, settings.redis_prefix, settings.redis_pool_size,
                            cluster=settings.redis_cluster)

    @classmethod
    def from_url(cls, url: str, prefix: str, pool_size: int = 256, cluster: bool = False) -> Store:
        if cluster:
            # Every script and transaction touches the keys of one hash tag ({u42}…): one slot each.
            from redis.asyncio.cluster import RedisCluster

            client = RedisCluster.from_url(url, decode_responses=True, max_connections=pool_size,
                                           retry=Retry(NoBackoff(), 2, (RedisConnectionError,)))
            return cls(client, prefix)
        # A blocking pool: past `pool_size` busy connections a caller waits for one (up to 10 s)
        # instead of failing; redis-py's default pool raises "Too many connections" at 100.
        # After a Redis restart every pooled connection is dead: a command on one fails with a
        # connection error before the server could run it, so it is sent again on a new connection
        # (twice at most). Timeouts are not retried: the server may have run the command.
        pool = FastBlockingConnectionPool.from_url(url, max_connections=pool_size, timeout=10,
                                                  decode_responses=True, health_check_interval=30,
                                                  retry=Retry(NoBackoff(), 2, (RedisConnectionError,)),
                                                  retry_on_error=[RedisConnectionError])
        # The URL's scheme chose the class (TCP, TLS or a Unix socket); no connection is made yet.
        pool.connection_class = FAST_PACK.get(pool.connection_class, pool.connection_class)
        return cls(aioredis.Redis(connection_pool=pool), prefix)

    async def call(self, *args: Any) -> Any:
        """One command whose reply needs no client-side parsing (GET, MGET, EVALSHA): `call_on`."""
        return await call_on(self.redis, args)

    async def close(self) -> None:
        if hasattr(self.redis, "get_nodes"):  # a cluster client owns its connections
            await self.redis.aclose()
            return
        await self.redis.aclose(close_connection_pool=True)  # the pool was passed in: close it too


async def call_on(redis: Any, args: Sequence[Any]) -> Any:
    """`args`, one command whose reply needs no client-side parsing (GET, MGET, EVALSHA: redis-py
    has no reply callback for them), sent and read on an idle pooled connection directly: without
    the client's retry wrapper, its per-command telemetry hooks and the pool's checks of an open
    connection, about a third of a short command's CPU. A cluster client, a busy pool, a connection
    not ready, or one that fails before its reply take the client's own path (which sends it again
    on a new connection, as it would). The reply is bounded by the connection's socket timeout."""
    pool = getattr(redis, "connection_pool", None)
    if not isinstance(pool, FastBlockingConnectionPool) or (connection := pool.take()) is None:
        return await redis.execute_command(*args)
    try:
        await connection.send_packed_command(connection.pack_command(*args), check_health=False)
        return await connection.read_response()
    except ResponseError:  # the server's error reply: the connection is fine
        raise
    except RedisConnectionError:
        await connection.disconnect(nowait=True)
        return await redis.execute_command(*args)
    except BaseException:  # a timeout or a cancel may leave the reply unread
        await connection.disconnect(nowait=True)
        raise
    finally:
        await pool.release(connection)


class Script:
    """A Lua script called by EVALSHA through `call_on` (redis-py's Script object adds a
    typing.Protocol isinstance check and two call layers per call, its client the retry and
    telemetry layers); loaded again after a flush. `store`, when given, supplies the client."""

    __slots__ = ("redis", "sha", "source")

    def __init__(self, redis: Any, source: str, store: Store | None = None) -> None:
        self.redis = store.redis if store is not None else redis
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(self, keys: Sequence[Any] = (), args: Sequence[Any] = ()) -> Any:
        try:
            return await call_on(self.redis, ("EVALSHA", self.sha, len(keys), *keys, *args))
        except NoScriptError:
            self.sha = await self.redis.script_load(self.source)
            return await call_on(self.redis, ("EVALSHA", self.sha, len(keys), *keys, *args))
