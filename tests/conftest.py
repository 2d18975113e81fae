"""Shared fixtures: a real Redis (own key prefix), a real database (SQLite by default, PostgreSQL on
request), the app under test, logged-in clients and factories.

Everything a test writes to Redis carries the prefix `t<pid>:` and is deleted after the test; the
PostgreSQL database `gw_test_<pid>` is created for this run and dropped at its end.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis as sync_redis
from tortoise import Tortoise

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
PG_ADMIN_URL = os.environ.get("TEST_PG_URL", "postgres://postgres@127.0.0.1:5432")
PREFIX = f"t{os.getpid()}:"
PG_DATABASE = f"gw_test_{os.getpid()}"

# Processes started by tests (workers, a second API) read these.
os.environ.update({
    "REDIS_URL": REDIS_URL,
    "REDIS_PREFIX": PREFIX,
    "SESSION_SECRET": "test-session-secret",
    "BCRYPT_ROUNDS": "4",
})

from api.app import create_app  # noqa: E402
from models import User  # noqa: E402
from models.db import close_database, init_database  # noqa: E402
from models.enums import Role  # noqa: E402
from models.settings import Settings  # noqa: E402
from tests.helpers import ApiClient, make_user  # noqa: E402


def _delete_prefix(client: sync_redis.Redis, prefix: str) -> None:
    batch = []
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        batch.append(key)
        if len(batch) >= 500:
            client.delete(*batch)
            batch.clear()
    if batch:
        client.delete(*batch)


@pytest.fixture(scope="session")
def redis_sync() -> Iterator[sync_redis.Redis]:
    client = sync_redis.Redis.from_url(REDIS_URL)
    client.ping()
    yield client
    _delete_prefix(client, PREFIX)
    client.close()


@pytest.fixture(autouse=True)
def _clean_redis(redis_sync: sync_redis.Redis) -> Iterator[None]:
    yield
    _delete_prefix(redis_sync, PREFIX)


def _psql(sql: str) -> None:
    subprocess.run(["psql", PG_ADMIN_URL + "/postgres", "-qc", sql], check=True, capture_output=True)


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    _psql(f"DROP DATABASE IF EXISTS {PG_DATABASE}")
    _psql(f"CREATE DATABASE {PG_DATABASE}")
    yield f"{PG_ADMIN_URL}/{PG_DATABASE}"
    _psql(f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)")


@pytest.fixture
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database with the current schema: SQLite by default, or `postgres` via indirect param."""
    backend = getattr(request, "param", "sqlite")
    if backend == "postgres":
        url = request.getfixturevalue("postgres_database")
        await init_database(url, generate_schemas=True)  # safe: only creates what is missing
        conn = Tortoise.get_connection("default")
        tables = [m._meta.db_table for app in Tortoise.apps.values() for m in app.values()]
        await conn.execute_script("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY")
    else:
        url = f"sqlite://{tmp_path / 'test.sqlite3'}"
        await init_database(url, generate_schemas=True)
    await close_database()
    yield url


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    env = {
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS_URL,
        "REDIS_PREFIX": PREFIX,
        "SESSION_SECRET": "test-session-secret",
        "DATA_DIR": str(tmp_path),
        "FRONTEND_DIR": str(tmp_path / "no-frontend"),
        "RATE_LIMIT_API": "100000",
        "RATE_LIMIT_CRITICAL": "100000",
        "SHUTDOWN_TIMEOUT": "1",
    }
    return Settings.from_env(env)


@pytest.fixture
async def client(aiohttp_client, settings: Settings):
    """The whole application on a test server; the database and Redis are real."""
    return await aiohttp_client(create_app(settings))


@pytest.fixture
async def anon(client) -> ApiClient:
    return ApiClient(client)


@pytest.fixture
async def root(client) -> ApiClient:
    api = ApiClient(client)
    await api.login("root", "123456")
    return api


@pytest.fixture
async def login_as(client):
    """login_as(username, role, **user fields) → (ApiClient in its own browser, User)."""
    from aiohttp.test_utils import TestClient

    browsers: list[TestClient] = []

    async def _login(username: str, role: Role = Role.USER, **fields) -> tuple[ApiClient, User]:
        user = await make_user(username, role=role, **fields)
        browser = TestClient(client.server)
        browsers.append(browser)
        api = ApiClient(browser)
        await api.login(username, "password123")
        return api, user

    yield _login
    for browser in browsers:
        await browser.session.close()  # its cookie jar only; the server belongs to `client`


@pytest.fixture
def own_redis(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A redis-server of this test's own (AOF on), stopped at the end: for tests that stop or restart it.
    Parametrized indirectly with "unix" or "tls", its URL names its Unix socket (unix://…?db=0) or a
    TLS port with a self-signed certificate (rediss://…)."""
    from tests.own_redis import OwnRedis

    server = OwnRedis(tmp_path / "redis", transport=getattr(request, "param", "tcp"))
    server.start()
    yield server
    server.remove()


@pytest.fixture
def python() -> str:
    return sys.executable


class Process:
    """A child process of the gateway (worker, scheduler, API) with its output kept for failures."""

    def __init__(self, args: list[str], env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = 15) -> None:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(sig)  # the parent forwards it to its children (dramatiq does)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # orphans of a parent that died
        self.log.close()


def process_env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url,
           "BROKER_URL": settings.broker_url or settings.redis_url, "REDIS_PREFIX": settings.redis_prefix,
           "SESSION_SECRET": settings.session_secret, "DATA_DIR": str(settings.data_dir), "PYTHONUNBUFFERED": "1"}
    env.update(extra)
    return env


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator:
    """spawn(args, env) → Process; every process is stopped at the end of the test."""
    started: list[Process] = []

    def _spawn(args: list[str], env: dict[str, str], name: str = "proc") -> Process:
        proc = Process(args, env, tmp_path / f"{name}-{len(started)}.log")
        started.append(proc)
        return proc

    yield _spawn
    for proc in started:
        proc.stop()


async def start_worker(spawn, settings: Settings, name: str = "worker", **extra: str) -> Process:
    """`python -m workers` on these settings (`extra`: more of its environment), ready when it has
    consumed a heartbeat sent after its start (written to its Redis, settings.redis_url)."""
    from tests.helpers import eventually
    from workers.broker import setup_broker

    proc = spawn([sys.executable, "-m", "workers", "--processes", "1", "--threads", "4"],
                 process_env(settings, **extra), name=name)
    setup_broker(settings)
    redis = sync_redis.Redis.from_url(settings.redis_url)
    heartbeat = f"{settings.redis_prefix}heartbeat:worker"
    redis.delete(heartbeat)  # an earlier worker's

    async def beaten() -> bool:
        if proc.proc.poll() is not None:
            raise AssertionError("worker exited:\n" + proc.output())
        await asyncio.to_thread(_send_heartbeat)
        return redis.exists(heartbeat) == 1

    try:
        await eventually(beaten, timeout=30, interval=0.3)
    finally:
        redis.close()
    return proc


@pytest.fixture
async def worker(settings: Settings, spawn, redis_sync: sync_redis.Redis) -> Process:
    """A real Dramatiq worker process on the test's database and Redis prefix, ready to consume."""
    return await start_worker(spawn, settings)


def _send_heartbeat() -> None:
    import time

    from workers.broker import send

    send("system.heartbeat", time.time())


@pytest.fixture
def api_process(settings: Settings, spawn):
    """api_process(**env) → (the process, its base URL), once it answers /healthz: a real API process
    (`python -m api`, as in production: handlers are not cancelled when their client leaves)."""
    import aiohttp

    from tests.helpers import eventually
    from tests.own_redis import free_port

    async def start(**extra: str) -> tuple[Process, str]:
        port = free_port()
        env = process_env(settings, HOST="127.0.0.1", PORT=str(port), LOG_LEVEL="INFO", **extra)
        proc = spawn([sys.executable, "-m", "api"], env, name="api")
        url = f"http://127.0.0.1:{port}"

        async def up() -> bool:
            if proc.proc.poll() is not None:
                raise AssertionError("the API process exited:\n" + proc.output())
            try:
                async with aiohttp.ClientSession() as http, http.get(f"{url}/healthz") as resp:
                    return resp.status == 200
            except aiohttp.ClientError:
                return False

        await eventually(up, timeout=30, interval=0.1)
        return proc, url

    return start
