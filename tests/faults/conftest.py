"""The fault suite's processes: a real API process (`python -m api`, as in production: handlers are
not cancelled by aiohttp when their client leaves), on the test's database and Redis."""
from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

import aiohttp
import pytest

from tests.conftest import Process, process_env
from tests.helpers import eventually
from tests.own_redis import free_port


@pytest.fixture
def api_process(settings, spawn) -> Callable[..., Awaitable[tuple[Process, str]]]:
    """api_process(**env) → (the process, its base URL), once it answers /healthz."""

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
