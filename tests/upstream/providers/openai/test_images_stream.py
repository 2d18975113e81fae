# ruff: noqa: F811  (pytest fixtures imported from tests.relay are test parameters)
"""`stream: true` on /v1/images/generations through the official openai SDK (`client.images.generate(
stream=True)`): OpenAI's `image_generation.partial_image` / `.completed` events relayed as they come from a
channel that streams images, billed from the completed event's usage or per image; a stream cut before its
completed event refunded (per call) or charged its prompt (by ratio); a channel type that does not stream
images is sent no `stream` and its whole answer reaches the client as the stream's completed events."""
from __future__ import annotations

from decimal import Decimal

import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.tokenizer import count_text
from models import User
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.openai.fake_images import KEY, OUTPUT_TOKENS, PNG, FakeImages
from tests.upstream.providers.openai.test_images_edit import START, consume_logs, fake, sdk, token_quota  # noqa: F401


async def test_generation_streamed_with_partial_images(gateway, fake: FakeImages) -> None:
    await add_channel(gateway, fake, models="gpt-image-1.5", key=KEY)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.images.generate(model="gpt-image-1.5", prompt="a lighthouse at dusk", stream=True,
                                              partial_images=2, quality="medium")
        events = [event async for event in stream]
    assert [e.type for e in events] == ["image_generation.partial_image"] * 2 + ["image_generation.completed"]
    assert [getattr(e, "partial_image_index", None) for e in events[:2]] == [0, 1]
    assert events[-1].b64_json == PNG and events[-1].usage.output_tokens == OUTPUT_TOKENS["medium"]
    sent = fake.seen[0]["fields"]
    assert (sent["stream"], sent["partial_images"], sent["model"]) == (True, 2, "gpt-image-1.5")
    quota = token_quota(images=0, output=OUTPUT_TOKENS["medium"])
    assert await live_balance(gateway, user.id) == START - quota
    await drain(gateway)
    [log] = await consume_logs(user)
    assert (log.quota, log.is_stream, log.completion_tokens) == (quota, True, OUTPUT_TOKENS["medium"])
    assert (await User.get(id=user.id)).quota == START - quota


async def test_generation_streamed_per_call_and_cut_short(gateway, fake: FakeImages) -> None:
    """Per call: a finished stream pays its images; a stream cut before its completed event is refunded.
    By ratio, cut: the prompt as counted locally, the log marked incomplete."""
    await add_channel(gateway, fake, models="gpt-image-1.5,gpt-image-1-mini", key=KEY)
    await gateway.server.app[keys.OPTIONS].update("ModelPrice", orjson.dumps({"gpt-image-1-mini": 0.01}).decode())
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.images.generate(model="gpt-image-1-mini", prompt="a red door", stream=True)
        assert [e.type async for e in stream] == ["image_generation.completed"]
        fake.cut_stream = True
        for model in ("gpt-image-1-mini", "gpt-image-1.5"):
            stream = await client.images.generate(model=model, prompt="a long prompt about cats", stream=True,
                                                  partial_images=1)
            with pytest.raises(openai.APIError):
                [event async for event in stream]
    await drain(gateway)
    finished, cut = await consume_logs(user)
    assert (finished.model_name, finished.quota) == ("gpt-image-1-mini", 5_000)  # 0.01 × 500000
    assert cut.model_name == "gpt-image-1.5" and orjson.loads(cut.other)["incomplete"]
    assert cut.quota == pricing.round_half_up(Decimal(count_text("a long prompt about cats")) * Decimal("2.5"))
    assert (await User.get(id=user.id)).quota == START - 5_000 - cut.quota
    assert await live_balance(gateway, user.id) == START - 5_000 - cut.quota


async def test_a_type_that_does_not_stream_images_answers_whole_as_events(gateway, fake: FakeImages) -> None:
    """xAI serves OpenAI's generations but not its image streams: `stream` and `partial_images` are not sent,
    and the whole answer reaches the client as one completed event per image, the usage on the last."""
    await add_channel(gateway, fake, models="gpt-image-1.5", key=KEY, type=int(ChannelType.XAI))
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.images.generate(model="gpt-image-1.5", prompt="two boats", stream=True,
                                              partial_images=3, n=2, quality="low")
        events = [event async for event in stream]
    assert [e.type for e in events] == ["image_generation.completed"] * 2
    assert getattr(events[0], "usage", None) is None and events[1].usage.output_tokens == 2 * OUTPUT_TOKENS["low"]
    assert [(e.size, e.quality, e.b64_json) for e in events] == [("1024x1024", "low", PNG)] * 2
    sent = fake.seen[0]["fields"]
    assert "stream" not in sent and "partial_images" not in sent and sent["n"] == 2
    await drain(gateway)
    [log] = await consume_logs(user)
    assert (log.quota, log.is_stream) == (token_quota(images=0, output=2 * OUTPUT_TOKENS["low"]), True)
