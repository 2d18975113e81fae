"""The Redis connection of a process, with the key prefix every key of this deployment carries
(the keys themselves are built in api.services.redis_keys)."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

if TYPE_CHECKING:
    from redis.asyncio.cluster import RedisCluster

_hiredis_pack: Any
try:
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is in requirements.txt
    _hiredis_pack = None


class FastPackConnection(aioredis.Connection):
    """redis-py's asyncio connection packs commands in Python (~1 µs per argument; the relay's quota
    scripts send 20-30); hiredis packs them in C, with the same bytes (floats written as repr(x)
    writes them). What hiredis refuses (bools, None: redis-py raises its DataError for them) and
    multi-word command names keep redis-py's own packer."""

    def pack_command(self, *args: Any) -> list[bytes]:
        if _hiredis_pack is not None and not (isinstance(args[0], str) and " " in args[0]):
            try:
                return [_hiredis_pack(args)]
            except TypeError:
                pass
        return super().pack_command(*args)


class FastBlockingConnectionPool(aioredis.BlockingConnectionPool):
    """The blocking pool (a caller past `max_connections` waits instead of failing), with a fast path:
    when an idle connection is there and nobody waits, take or give it back without the condition
    lock, the timeout context and the pool's OpenTelemetry counters (about half of redis-py's CPU per
    command here). Waiters, maintenance mode and connections owing a re-auth keep the full path."""

    def _quiet(self) -> bool:
        return not self._condition._waiters and not getattr(self, "_in_maintenance", False)

    async def get_connection(self, command_name: Any = None, *keys: Any, **options: Any) -> Any:
        if self._available_connections and self._quiet():
            connection = self._available_connections.pop()
            self._in_use_connections.add(connection)
            try:
                await self.ensure_connection(connection)
            except BaseException:
                await self.release(connection)
                raise
            return connection
        # The class named, not super(): mypy's untyped_calls_exclude does not reach calls through super().
        return await aioredis.BlockingConnectionPool.get_connection(self)

    async def release(self, connection: Any) -> None:
        if self._quiet() and getattr(connection, "_re_auth_token", None) is None:
            self._in_use_connections.remove(connection)
            if connection.should_reconnect():
                await connection.disconnect()
            self._available_connections.append(connection)
            return
        await super().release(connection)


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
                                                  connection_class=FastPackConnection,
                                                  retry=Retry(NoBackoff(), 2, (RedisConnectionError,)),
                                                  retry_on_error=[RedisConnectionError])
        return cls(aioredis.Redis(connection_pool=pool), prefix)

    async def call(self, *args: Any) -> Any:
        """One command whose reply needs no client-side parsing (GET, MGET, EVALSHA), sent and read on
        a pooled connection directly: without the client's retry wrapper and its per-command
        telemetry hooks, about a fifth of a short command's CPU. A cluster client, a busy pool, or a
        connection that fails take the client's own path (which sends it again on a new connection,
        as it would)."""
        pool = getattr(self.redis, "connection_pool", None)
        if not isinstance(pool, FastBlockingConnectionPool) or not pool._available_connections or not pool._quiet():
            return await self.redis.execute_command(*args)
        connection = await pool.get_connection()
        try:
            await connection.send_packed_command(connection.pack_command(*args), check_health=False)
            return await connection.read_response()
        except ResponseError:  # the server's error reply: the connection is fine
            raise
        except RedisConnectionError:
            await connection.disconnect(nowait=True)
            return await self.redis.execute_command(*args)
        except BaseException:  # a timeout or a cancel may leave the reply unread
            await connection.disconnect(nowait=True)
            raise
        finally:
            await pool.release(connection)

    async def close(self) -> None:
        if hasattr(self.redis, "get_nodes"):  # a cluster client owns its connections
            await self.redis.aclose()
            return
        await self.redis.aclose(close_connection_pool=True)  # the pool was passed in: close it too


class Script:
    """A Lua script called by EVALSHA straight through the client (redis-py's Script object adds a
    typing.Protocol isinstance check and two call layers per call); loaded again after a flush.
    With `store`: called through Store.call (for a script whose reply needs no parsing)."""

    __slots__ = ("redis", "sha", "source", "store")

    def __init__(self, redis: Any, source: str, store: Store | None = None) -> None:
        self.redis = redis
        self.source = source
        self.store = store
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(self, keys: Sequence[Any] = (), args: Sequence[Any] = ()) -> Any:
        send = self.store.call if self.store is not None else self.redis.execute_command
        try:
            return await send("EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            self.sha = await self.redis.script_load(self.source)
            return await send("EVALSHA", self.sha, len(keys), *keys, *args)
