"""The scheduled monitor (test all channels with the automatic rules) goes through each provider's
adaptor, as the relay does: a healthy Claude channel stays, a Gemini channel whose key was revoked is
disabled with the provider's reason, a task channel (Suno) is not tested."""
from __future__ import annotations

import orjson

from api import keys
from api.channels import monitor
from api.services import locks
from api.upstream.catalogue import ChannelType
from models import Channel
from models.enums import ChannelStatus
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini


class Sent(list):
    async def __call__(self, actor: str, *args: object) -> None:
        self.append((actor, *args))


async def test_test_all_through_the_providers_adaptors(client, aiohttp_server) -> None:
    app = client.app
    deps = monitor.Deps(app[keys.STORE], app[keys.OPTIONS], app[keys.EVENTS], app[keys.HTTP], Sent())
    await deps.options.update("AutomaticDisableChannelEnabled", "true")
    claude, gemini = FakeClaude(), FakeGemini()
    claude.server = await aiohttp_server(claude.app())
    gemini.server = await aiohttp_server(gemini.app())
    healthy = await Channel.create(name="claude", type=int(ChannelType.ANTHROPIC), key=claude.key,
                                   base_url=claude.url, models="claude-3-haiku-20240307")
    revoked = await Channel.create(name="gemini", type=int(ChannelType.GEMINI), key="AIza-revoked",
                                   base_url=gemini.url, models="gemini-2.0-flash")
    await Channel.create(name="suno", type=int(ChannelType.SUNO), key="k", base_url="http://127.0.0.1:9",
                         models="suno_music")
    token = await locks.acquire(deps.store, monitor.lock_key(deps.store, "channel_test_all"), 60)

    summary = await monitor.test_all(deps, token)

    assert (summary.tested, summary.succeeded, summary.disabled) == (2, 1, [revoked.id])
    assert claude.seen[0]["body"]["model"] == "claude-3-haiku-20240307"
    assert gemini.seen[0]["action"] == "generateContent"
    assert gemini.seen[0]["headers"]["x-goog-api-key"] == "AIza-revoked"
    assert (await Channel.get(id=healthy.id)).status == ChannelStatus.ENABLED
    stored = await Channel.get(id=revoked.id)
    assert stored.status == ChannelStatus.AUTO_DISABLED
    assert orjson.loads(stored.other_info)["status_reason"].startswith("API key not valid")
