"""Test helpers: an envelope-aware client and data factories."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import bcrypt
from aiohttp.test_utils import TestClient

from models import User
from models.enums import Role, UserStatus

both_databases = __import__("pytest").mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)

_HASHES: dict[str, str] = {}


def quick_hash(password: str) -> str:
    """bcrypt at the lowest cost, memoised: factories need valid hashes, not slow ones."""
    if password not in _HASHES:
        _HASHES[password] = bcrypt.hashpw(password.encode(), bcrypt.gensalt(4)).decode()
    return _HASHES[password]


async def make_user(username: str, password: str = "password123", role: Role = Role.USER,
                    status: UserStatus = UserStatus.ENABLED, **fields: Any) -> User:
    return await User.create(username=username, password=quick_hash(password), role=int(role),
                             status=int(status), display_name=fields.pop("display_name", username), **fields)


class ApiClient:
    """Calls the console API like the browser does: cookie session + New-Api-User header."""

    def __init__(self, client: TestClient, user_id: int | None = None) -> None:
        self.client = client
        self.user_id = user_id
        self.headers: dict[str, str] = {}

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = dict(self.headers)
        if self.user_id is not None:
            headers["New-Api-User"] = str(self.user_id)
        headers.update(extra or {})
        return headers

    async def request(self, method: str, path: str, json: Any = None, headers: dict[str, str] | None = None,
                      expect_status: int | None = 200, **kwargs: Any) -> dict:
        resp = await self.client.request(method, path, json=json, headers=self._headers(headers), **kwargs)
        body = await resp.json(content_type=None)
        if expect_status is not None:
            assert resp.status == expect_status, (resp.status, body)
        self.last_response = resp
        return body

    async def get(self, path: str, **kw: Any) -> dict:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, json: Any = None, **kw: Any) -> dict:
        return await self.request("POST", path, json=json, **kw)

    async def put(self, path: str, json: Any = None, **kw: Any) -> dict:
        return await self.request("PUT", path, json=json, **kw)

    async def delete(self, path: str, **kw: Any) -> dict:
        return await self.request("DELETE", path, **kw)

    async def login(self, username: str, password: str) -> dict:
        body = await self.post("/api/user/login", {"username": username, "password": password})
        assert body["success"], body
        self.user_id = body["data"]["id"]
        return body["data"]

    def fork(self) -> ApiClient:
        """Another browser: its own cookie jar on the same server."""
        from aiohttp.test_utils import TestClient as _TC

        return ApiClient(_TC(self.client.server))


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float = 20.0, interval: float = 0.05) -> Any:
    """Poll `check` until it returns a truthy value (the awaited result) or the timeout passes."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last result: {result!r})")
        await asyncio.sleep(interval)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_api_process(spawn, settings, name: str = "api2", **env: str) -> str:
    """A second `python -m api` on the test's database and Redis; returns its base URL once it answers."""
    import sys

    import aiohttp

    from tests.conftest import process_env

    port = free_port()
    proc = spawn([sys.executable, "-m", "api"], process_env(settings, PORT=str(port), HOST="127.0.0.1", **env),
                 name=name)
    base = f"http://127.0.0.1:{port}"

    async def up() -> bool:
        if proc.proc.poll() is not None:
            raise AssertionError(f"{name} exited:\n{proc.output()}")
        try:
            async with aiohttp.ClientSession() as session, session.get(base + "/healthz") as resp:
                return resp.status == 200
        except aiohttp.ClientError:
            return False

    await eventually(up, timeout=30, interval=0.1)
    return base
