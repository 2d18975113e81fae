"""What the Realtime tests share: the fake's fixture, the SDK client, reading events until one type, the
expected price of a usage, and the user's open reservations."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import openai
import pytest

from api import keys
from api.relay.realtime.hub import HUB, Hub
from api.services import redis_keys
from api.services.billing import pricing
from api.services.billing.realtime_pricing import RealtimeUsage, audio_price_of, realtime_quota
from models import Token
from tests.helpers import eventually
from tests.relay.realtime.fake_realtime import FakeRealtime

MODEL = "gpt-realtime-1.5"
USER_TEXT = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hello?"}]}
# Response 1: 30 text + 10 audio in, 5 text + 15 audio out. gpt-realtime-1.5 (MR 2, CR 4, CacheRatio 0.1, AudioRatio 8,
# AudioCompletionRatio 2, AudioCacheRatio 0.0125): (30 + 10×8 + 5×4 + 15×8×2) × 2 = 370 × 2 = 740 quota
# = $0.00148 = 30×$4 + 10×$32 + 5×$16 + 15×$64 per 1M tokens.
USAGE_1: dict[str, Any] = {
    "total_tokens": 60, "input_tokens": 40, "output_tokens": 20,
    "input_token_details": {"text_tokens": 30, "audio_tokens": 10, "image_tokens": 0, "cached_tokens": 0,
                            "cached_tokens_details": {"text_tokens": 0, "audio_tokens": 0, "image_tokens": 0}},
    "output_token_details": {"text_tokens": 5, "audio_tokens": 15},
}
QUOTA_1 = 740
# Response 2: 100 text (80 cached) + 200 audio (170 cached) in, 10 text + 40 audio out:
# (20 + 80×0.1 + 30×8 + 170×8×0.0125 + 10×4 + 40×16) × 2 = 965 × 2 = 1930 quota
# = 20×$4 + 80×$0.40 + 30×$32 + 170×$0.40 + 10×$16 + 40×$64 per 1M tokens = $0.00386.
USAGE_2: dict[str, Any] = {
    "total_tokens": 350, "input_tokens": 300, "output_tokens": 50,
    "input_token_details": {"text_tokens": 100, "audio_tokens": 200, "image_tokens": 0, "cached_tokens": 250,
                            "cached_tokens_details": {"text_tokens": 80, "audio_tokens": 170, "image_tokens": 0}},
    "output_token_details": {"text_tokens": 10, "audio_tokens": 40},
}
QUOTA_2 = 1930


@pytest.fixture
async def realtime_fakes(aiohttp_server: Any) -> Callable[..., Awaitable[FakeRealtime]]:
    async def start(**behaviour: Any) -> FakeRealtime:
        fake = FakeRealtime(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake

    return start


def sdk(gateway: Any, token: Token | str) -> openai.AsyncOpenAI:
    key = token if isinstance(token, str) else f"sk-{token.key}"
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=key, max_retries=0)


async def until(conn: Any, kind: str) -> list[Any]:
    """Events received up to and including the first of type `kind`."""
    events = []
    async for event in conn:
        events.append(event)
        if event.type == kind:
            return events
    raise AssertionError(f"the session ended before {kind}: {[e.type for e in events]}")


def price_of(gateway: Any, usage: dict[str, Any], model: str = MODEL) -> int:
    options = gateway.server.app[keys.OPTIONS]
    parsed = RealtimeUsage.from_realtime(usage)
    assert parsed is not None
    return realtime_quota(pricing.resolve_configured(options, model), audio_price_of(options, model), parsed,
                          quota_per_unit=options.get_int("QuotaPerUnit"))


async def open_reservations(gateway: Any, user_id: int) -> dict[str, str]:
    store = gateway.server.app[keys.STORE]
    held: dict[str, str] = await store.redis.hgetall(redis_keys.reservations(store, user_id))
    return held


def hub_of(gateway: Any) -> Hub:
    for sub in gateway.server.app._subapps:
        if HUB in sub:
            hub: Hub = sub[HUB]
            return hub
    raise AssertionError("no realtime hub")


async def sessions_over(gateway: Any) -> None:
    """Every session of the gateway ended (closed, settled, its place given back)."""
    hub = hub_of(gateway)

    async def over() -> bool:
        return not hub.sessions

    await eventually(over, timeout=20)
