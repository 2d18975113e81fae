"""The gateway on a real port with the current models priced, a user with a key, and channels whose
upstream is a scripted strict fake seen through a recorder."""
from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from api import keys
from api.services.billing import pricing
from models import Log, Token, User
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401
from tests.sdk.channels import ChannelKit, Usage
from tests.sdk.clients import Loop
from tests.sdk.recorder import Recorder
from tests.upstream.providers.agent_script import Script

START_QUOTA = 50_000_000
# The models of the matrix, priced (none of them is in the shipped tables); cache reads at a tenth,
# writes at 1.25 where the provider bills them.
MODEL_RATIO = {"claude-opus-5-5": 2.5, "gemini-3-pro-preview": 1.0, "deepseek-reasoner": 0.275, "gpt-5": 0.625}
COMPLETION_RATIO = {"claude-opus-5-5": 5, "gemini-3-pro-preview": 6, "deepseek-reasoner": 4, "gpt-5": 8}
CACHE_RATIO = {model: 0.1 for model in MODEL_RATIO}
CREATE_CACHE_RATIO = {"claude-opus-5-5": 1.25}


def options_of(client: TestClient) -> Any:
    server = client.server
    assert isinstance(server, TestServer)
    return server.app[keys.OPTIONS]


@dataclass
class Relay:
    """The gateway, priced, and one user's key."""

    gateway: TestClient
    user: User
    token: Token

    def loop(self, model: str, stream: bool) -> Loop:
        return Loop(str(self.gateway.make_url("")).rstrip("/"), f"sk-{self.token.key}", model, stream)

    def charge(self, model: str, usage: Usage) -> int:
        """The billing formula on what the provider reported."""
        price = pricing.resolve_configured(options_of(self.gateway), model)
        return pricing.settle_quota(price, usage.prompt, usage.completion, cached_tokens=usage.cached,
                                    cache_creation_tokens=usage.cache_writes)

    async def settled(self) -> tuple[list[Log], int]:
        """The consume logs once every pending settlement is applied, and the user's balance."""
        await drain(self.gateway)
        logs = await Log.filter(user_id=self.user.id, type=LogType.CONSUME).order_by("id")
        return logs, (await User.get(id=self.user.id)).quota


@pytest.fixture
async def relay(gateway: TestClient) -> Relay:  # noqa: F811
    options = options_of(gateway)
    for key, table in (("ModelRatio", MODEL_RATIO), ("CompletionRatio", COMPLETION_RATIO),
                       ("CacheRatio", CACHE_RATIO), ("CreateCacheRatio", CREATE_CACHE_RATIO)):
        await options.update(key, orjson.dumps(table).decode())
    user = await rich_user(quota=START_QUOTA)
    return Relay(gateway, user, await make_key(user))


UpstreamFactory = Callable[[ChannelKit, Script], Awaitable[Recorder]]


@pytest.fixture
async def upstream(relay: Relay, aiohttp_server) -> AsyncIterator[UpstreamFactory]:
    """upstream(kit, script) → the recorder in front of a fake of the kit's provider, as a channel."""
    recorders: list[Recorder] = []

    async def start(kit: ChannelKit, script: Script) -> Recorder:
        fake = kit.make(script)
        fake_server = await aiohttp_server(fake.app())
        recorder = Recorder(str(fake_server.make_url("")).rstrip("/"))
        recorders.append(recorder)
        server = await aiohttp_server(recorder.app())
        await add_channel(relay.gateway, None, models=kit.model, type=int(kit.type), key=fake.key,
                          base_url=str(server.make_url("")).rstrip("/"), name=kit.name)
        return recorder

    yield start
    for recorder in recorders:
        await recorder.close()
