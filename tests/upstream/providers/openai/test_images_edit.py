"""POST /v1/images/edits through the official openai SDK (`client.images.edit`), on OpenAI and Azure
channels, against the strict fake of fake_images.py beside this file: the form relayed as sent, streamed and
not, billed to the unit (per image for a per-call price; by the reported image tokens at their own
ratios for a model priced by ratio, generations included), refusals that change nothing, a cut stream."""
from __future__ import annotations

import io
from decimal import Decimal

import aiohttp
import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.tokenizer import count_text
from models import Log, User
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, headers_for, live_balance, make_key, rich_user
from tests.upstream.providers.openai.fake_images import (
    AZURE_KEY,
    IMAGE_TOKENS,
    KEY,
    OUTPUT_TOKENS,
    TEXT_TOKENS,
    FakeImages,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
START = 10_000_000


@pytest.fixture
async def fake(aiohttp_server) -> FakeImages:
    images = FakeImages()
    images.server = await aiohttp_server(images.app())
    return images


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


def files(count: int) -> list[tuple[str, bytes, str]]:
    return [(f"in{i}.png", PNG, "image/png") for i in range(count)]


def token_quota(images: int, output: int, ratio: float = 2.5, image_ratio: float = 1.6,
                output_ratio: float = 6.4) -> int:
    """gpt-image-1.5 by the fake's usage, written out: text at MR, input images at ImageRatio, output images at
    ImageOutputRatio (docs/billing.md, Image models)."""
    text, image = Decimal(TEXT_TOKENS), Decimal(IMAGE_TOKENS * images)
    weighted = text + image * Decimal(repr(image_ratio)) + Decimal(output) * Decimal(repr(output_ratio))
    return pricing.round_half_up(weighted * Decimal(repr(ratio)))


async def consume_logs(user: User) -> list[Log]:
    return await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")


async def test_edit_by_image_tokens_on_openai(gateway, fake) -> None:
    """Two images (`image[]`), a mask, every documented field: relayed as sent; billed by the reported
    usage, input and output image tokens at their own ratios; the log shows them with the ratios."""
    await add_channel(gateway, fake, models="gpt-image-1.5", key=KEY)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.images.edit(
            model="gpt-image-1.5", image=files(2), mask=("mask.png", PNG, "image/png"), prompt="put a hat on it",
            n=2, size="1024x1024", quality="low", background="opaque", input_fidelity="high", output_format="png",
            output_compression=90, user="u-1")
    assert len(result.data or []) == 2 and result.usage is not None and result.usage.output_tokens == 2 * 272
    seen = fake.seen[0]
    assert seen["path"] == "/v1/images/edits" and seen["headers"]["Authorization"] == f"Bearer {KEY}"
    assert [f[0] for f in seen["files"]] == ["image[]", "image[]", "mask"]
    assert seen["fields"]["model"] == "gpt-image-1.5" and seen["fields"]["input_fidelity"] == "high"
    quota = token_quota(images=2, output=2 * OUTPUT_TOKENS["low"])
    assert await live_balance(gateway, user.id) == START - quota
    await drain(gateway)
    [log] = await consume_logs(user)
    assert log.quota == quota and (await User.get(id=user.id)).quota == START - quota
    assert log.prompt_tokens == TEXT_TOKENS + 2 * IMAGE_TOKENS and log.completion_tokens == 2 * 272
    other = orjson.loads(log.other)
    assert other["image_tokens"] == 2 * IMAGE_TOKENS and other["image_ratio"] == 1.6
    assert other["image_output_tokens"] == 2 * 272 and other["image_output_ratio"] == 6.4


async def test_edit_per_call_price_per_image(gateway, fake) -> None:
    """A model with a ModelPrice pays per image × n (size and quality as generations do), usage or not."""
    await gateway.server.app[keys.OPTIONS].update("ModelPrice", orjson.dumps({"gpt-image-1.5": 0.04}).decode())
    await add_channel(gateway, fake, models="gpt-image-1.5", key=KEY)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.images.edit(model="gpt-image-1.5", image=files(1), prompt="a red door", n=3)
    await drain(gateway)
    [log] = await consume_logs(user)
    assert log.quota == 60_000  # 0.04 × 3 × 500000
    assert orjson.loads(log.other)["model_price"] == 0.12  # the log shows the price of the 3 images
    assert (await User.get(id=user.id)).quota == START - 60_000


async def test_edit_streamed_on_azure_v1(gateway, fake) -> None:
    """`stream=True`: the partial images and the completed event reach the SDK as OpenAI's events; billed
    from the completed event's usage; the Azure v1 API with the key in `api-key`, the deployment in `model`."""
    await add_channel(gateway, fake, models="gpt-image-1.5", type=3, key=AZURE_KEY)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.images.edit(model="gpt-image-1.5", image=files(1), prompt="snow", stream=True,
                                          partial_images=2, quality="medium")
        events = [event async for event in stream]
    assert [e.type for e in events] == ["image_edit.partial_image"] * 2 + ["image_edit.completed"]
    assert events[-1].usage.input_tokens_details.image_tokens == IMAGE_TOKENS  # type: ignore[union-attr]
    seen = fake.seen[0]
    assert seen["path"] == "/openai/v1/images/edits" and seen["headers"]["api-key"] == AZURE_KEY
    assert seen["fields"]["stream"] == "true" and "Authorization" not in seen["headers"]
    await drain(gateway)
    [log] = await consume_logs(user)
    assert log.quota == token_quota(images=1, output=OUTPUT_TOKENS["medium"]) and log.is_stream


async def test_edit_on_azure_deployment_url(gateway, fake) -> None:
    """A dated api-version: `/openai/deployments/{deployment}/images/edits?api-version=…`."""
    fake.deployments = {"gpt-image-15": "gpt-image-1.5"}
    await add_channel(gateway, fake, models="gpt-image-1.5", type=3, key=AZURE_KEY, other="2025-04-01-preview")
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.images.edit(model="gpt-image-1.5", image=files(1), prompt="snow", quality="high")
    assert fake.seen[0]["path"] == "/openai/deployments/gpt-image-15/images/edits"
    assert fake.seen[0]["query"] == {"api-version": "2025-04-01-preview"}
    await drain(gateway)
    [log] = await consume_logs(user)
    assert log.quota == token_quota(images=1, output=OUTPUT_TOKENS["high"])


async def test_cut_stream_billed_for_the_prompt_or_refunded(gateway, fake) -> None:
    """A stream cut before its completed event delivered no finished image: priced by ratio, the prompt
    as counted locally is charged (log marked incomplete); priced per call, it is refunded."""
    fake.cut_stream = True
    await add_channel(gateway, fake, models="gpt-image-1.5,gpt-image-1-mini", key=KEY)
    await gateway.server.app[keys.OPTIONS].update("ModelPrice", orjson.dumps({"gpt-image-1-mini": 0.01}).decode())
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        for model in ("gpt-image-1.5", "gpt-image-1-mini"):
            stream = await client.images.edit(model=model, image=files(1), prompt="a long prompt about cats",
                                              stream=True, partial_images=1)
            with pytest.raises(openai.APIError):
                [event async for event in stream]
    await drain(gateway)
    [log] = await consume_logs(user)
    assert log.model_name == "gpt-image-1.5"
    assert log.quota == pricing.round_half_up(Decimal(count_text("a long prompt about cats")) * Decimal("2.5"))
    assert orjson.loads(log.other)["incomplete"]
    assert (await User.get(id=user.id)).quota == START - log.quota
    assert await live_balance(gateway, user.id) == START - log.quota


async def test_generations_with_usage_billed_by_tokens(gateway, fake) -> None:
    """images.generate on a GPT image model priced by ratio: billed by the usage it reports."""
    await add_channel(gateway, fake, models="gpt-image-1.5", key=KEY)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.images.generate(model="gpt-image-1.5", prompt="a lighthouse", quality="low", n=2)
    await drain(gateway)
    [log] = await consume_logs(user)
    assert log.quota == token_quota(images=0, output=2 * OUTPUT_TOKENS["low"])


async def refused(gateway, token, form: aiohttp.FormData) -> tuple[int, dict]:
    resp = await gateway.post("/v1/images/edits", data=form, headers=headers_for(token))
    return resp.status, await resp.json()


def form_of(fields: dict[str, str], images: int = 1, mask: bool = False) -> aiohttp.FormData:
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for i in range(images):
        form.add_field("image[]", io.BytesIO(PNG), filename=f"in{i}.png", content_type="image/png")
    if mask:
        form.add_field("mask", io.BytesIO(PNG), filename="mask.png", content_type="image/png")
    return form


async def test_refusals_change_nothing(gateway, fake, monkeypatch) -> None:
    """Bad forms are 400 in OpenAI's shape naming the field (413 past the bound), before any charge;
    the upstream's own refusals (a size or an input_fidelity the model does not take) are relayed and
    refunded; a channel type that cannot edit is skipped and, alone, answers clearly."""
    from api import bodies

    await add_channel(gateway, fake, models="gpt-image-1.5,gpt-image-2", key=KEY)
    prices = {"gpt-image-2": 0.05, "dall-e-2": 0.02}
    await gateway.server.app[keys.OPTIONS].update("ModelPrice", orjson.dumps(prices).decode())
    user = await rich_user(quota=START)
    token = await make_key(user)
    base = {"model": "gpt-image-1.5", "prompt": "a hat"}
    cases = [
        ({"model": "gpt-image-1.5", "prompt": " "}, 1, "prompt"),
        (base, 0, "image"),
        (base, 17, "image"),
        ({**base, "n": "11"}, 1, "n"),
        ({**base, "partial_images": "4", "stream": "true"}, 1, "partial_images"),
        ({**base, "quality": "ultra"}, 1, "quality"),
        ({**base, "size": "99999x2"}, 1, "size"),
        ({**base, "colour": "red"}, 1, "colour"),
    ]
    for fields, images, param in cases:
        status, body = await refused(gateway, token, form_of(fields, images, mask=images == 0))
        assert status == 400 and body["error"]["param"] == param, (fields, body)
        assert body["error"]["type"] == "invalid_request_error"
    assert fake.seen == []
    for fields, param in (({**base, "size": "1536x864"}, "size"),
                          ({**base, "model": "gpt-image-2", "input_fidelity": "high"}, "input_fidelity")):
        status, body = await refused(gateway, token, form_of(fields))
        assert status == 400 and body["error"]["param"] == param, body
    assert len(fake.seen) == 2
    monkeypatch.setattr(bodies, "MAX_BODY", 1024 * 1024)
    big = form_of(base)
    big.add_field("image[]", io.BytesIO(b"\0" * (2 * 1024 * 1024)), filename="big.png", content_type="image/png")
    resp = await gateway.post("/v1/images/edits", data=big, headers=headers_for(token))
    assert resp.status == 413
    await add_channel(gateway, None, models="dall-e-2", type=43, base_url="http://127.0.0.1:9")  # DeepSeek
    status, body = await refused(gateway, token, form_of({**base, "model": "dall-e-2"}))
    assert status == 501 and body["error"]["message"], body
    assert len(fake.seen) == 2 and await drain(gateway) == 0
    assert await live_balance(gateway, user.id) == START and (await User.get(id=user.id)).quota == START
    assert await consume_logs(user) == []


def test_image_usage_and_the_arithmetic() -> None:
    """The usage shapes gpt-image reports, and the quota of each at the ratios (none, some, clamped)."""
    from api.services.billing.image_tokens import estimate_quota, output_tokens_per_image
    from api.services.billing.image_tokens import token_quota as quota_of
    from api.upstream.base import TokenUsage
    from api.upstream.image_usage import image_usage

    edit = {"input_tokens": 799, "input_tokens_details": {"text_tokens": 23, "image_tokens": 776},
            "output_tokens": 544, "total_tokens": 1343}
    assert image_usage(edit) == TokenUsage(799, 544, image_tokens=776, image_output_tokens=544)
    mixed = {**edit, "output_tokens_details": {"image_tokens": 500, "text_tokens": 44}}
    assert image_usage(mixed) == TokenUsage(799, 544, image_tokens=776, image_output_tokens=500)
    assert image_usage({"prompt_tokens": 3, "completion_tokens": 4}) == TokenUsage(3, 4)
    assert image_usage({"input_tokens": 0, "output_tokens": 0}) is None and image_usage(None) is None
    price = pricing.resolve_price("gpt-image-1.5")
    assert (price.image_ratio, price.image_output_ratio) == (1.6, 6.4)
    assert quota_of(price, image_usage(edit)) == token_quota(images=2, output=544)
    # 44 text output tokens at CR 8, 500 image output tokens at 6.4
    weighted = Decimal(23) + Decimal(776) * Decimal("1.6") + Decimal(44) * 8 + Decimal(500) * Decimal("6.4")
    assert quota_of(price, image_usage(mixed)) == pricing.round_half_up(weighted * Decimal("2.5"))
    plain = pricing.Price("m", 2.0, 3.0, 1.0)  # no image ratios: prompt and completion tokens
    assert quota_of(plain, TokenUsage(100, 10, image_tokens=90, image_output_tokens=10)) == (100 + 10 * 3) * 2
    assert quota_of(plain, TokenUsage(10, 1, image_tokens=999, image_output_tokens=999)) == (10 + 3) * 2  # clamped
    assert output_tokens_per_image("1024x1536", "medium") == 1584 and output_tokens_per_image(None, None) == 6240
    assert output_tokens_per_image("2048x2048", "low") == 272 * 4
    assert output_tokens_per_image("1024x1024", "max") == 16640
    assert estimate_quota(price, 10, 2, 2, "1024x1024", "low") >= token_quota(images=2, output=544)


@pytest.mark.parametrize("kind", [43, 20])  # DeepSeek (no image endpoints), OpenRouter (images through chat only)
async def test_a_type_that_cannot_edit_is_skipped(gateway, fake, kind: int) -> None:
    """An OpenAI-format channel of a type without OpenAI's edit endpoint, listing the model and preferred
    by priority, cannot serve the edit: it is never sent there (the fake would see it, with a key it
    refuses); the OpenAI channel takes it, and only it is billed."""
    await add_channel(gateway, fake, models="gpt-image-1.5", type=kind, key="sk-not-this-one", priority=10)
    await add_channel(gateway, fake, models="gpt-image-1.5", key=KEY)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.images.edit(model="gpt-image-1.5", image=files(1), prompt="a hat", quality="low")
    assert len(result.data or []) == 1 and len(fake.seen) == 1
    await drain(gateway)
    [log] = await consume_logs(user)
    assert log.quota == token_quota(images=1, output=OUTPUT_TOKENS["low"])
