"""What the provider tests share: the official openai SDK pointed at the gateway, a fake
provider started on a local port (`serve`, a fixture of every provider's tests through
tests/upstream/providers/conftest.py), and the consume log of a request once settled."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import openai
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from models import Log
from models.enums import LogType
from tests.relay.fakes import drain


def sdk(gateway: Any, token: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


class Fake(Protocol):
    server: TestServer | None

    def app(self) -> web.Application: ...


F = TypeVar("F", bound=Fake)


@pytest.fixture
async def serve(aiohttp_server: Any) -> Callable[[F], Awaitable[F]]:
    """Starts a fake on a local port (its `server`, and so its `url`) and gives it back."""
    async def start(fake: F) -> F:
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


class FakeBase:
    """A fake provider: `seen` holds what it received; `url` is where it listens."""

    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")


async def consume_logs(user: Any) -> list[Log]:
    return await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")


async def settled_log(gateway: Any, user: Any) -> Log:
    """The user's one consume log, once the pending settlements are applied."""
    await drain(gateway)
    logs = await consume_logs(user)
    assert len(logs) == 1, logs
    return logs[0]


async def stream_chat(client: openai.AsyncOpenAI, **request: Any) -> tuple[str, list[Any]]:
    """(the streamed text, the chunks) of a chat stream."""
    stream = await client.chat.completions.create(stream=True, **request)
    chunks = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, chunks


def finish_reasons(chunks: list[Any]) -> list[str]:
    return [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
