# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""`/v1/images/edits` on Gemini's image models through the official openai SDK: the form's prompt and
images become the parts of one generateContent request per image of `n` (Gemini API and Vertex AI
express mode), billed by the tokens Gemini reports; a mask Gemini cannot take is said; a streamed edit is
answered whole as the stream's completed events; a refusal charges nothing."""
from __future__ import annotations

import base64

import openai
import pytest

from api.upstream.catalogue import ChannelType
from tests.relay.fakes import add_channel, live_balance, make_key, rich_user
from tests.upstream.providers.gemini.fake_gemini_images import (
    IMAGE_TOKENS,
    INPUT_IMAGE_TOKENS,
    PNG,
    PNG_B64,
    PROMPT_TOKENS,
)
from tests.upstream.providers.gemini.test_gemini_images import FLASH_IMAGE, PRO_IMAGE, google, priced, setup, vertex  # noqa: F401
from tests.upstream.providers.kit import consume_logs, sdk, settled_log
from tests.upstream.providers.vertex.fake_vertex import API_KEY

JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 32


async def test_edit_sends_the_images_as_parts_and_is_billed_by_tokens(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake)
    async with sdk(gateway, token) as client:
        raw = await client.images.with_raw_response.edit(
            model=FLASH_IMAGE, image=[("a.png", PNG, "image/png"), ("b.jpg", JPEG, "application/octet-stream")],
            mask=("mask.png", PNG, "image/png"), prompt="Put a hat on the cat", n=2, size="1024x1536")
    answer = raw.parse()
    assert [d.b64_json for d in answer.data] == [PNG_B64, PNG_B64]
    assert raw.headers["X-Gateway-Dropped"] == "mask"  # Gemini edits from the prompt
    assert len(fake.seen) == 2
    body = fake.seen[0]["body"]
    assert body["contents"] == [{"role": "user", "parts": [
        {"text": "Put a hat on the cat"},
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}},
        {"inlineData": {"mimeType": "image/jpeg", "data": base64.b64encode(JPEG).decode()}}]}]
    assert body["generationConfig"] == {"responseModalities": ["IMAGE"], "imageConfig": {"aspectRatio": "2:3"}}
    prompt = 2 * (PROMPT_TOKENS + 2 * INPUT_IMAGE_TOKENS)
    assert (answer.usage.input_tokens, answer.usage.input_tokens_details.image_tokens) == (
        prompt, 4 * INPUT_IMAGE_TOKENS)
    log = await settled_log(gateway, user)
    # (1056 + 2580 × 100) × 0.15 = 38858.4: input images at the prompt price (no ImageRatio entry)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (prompt, 2 * IMAGE_TOKENS, 38858)
    assert await live_balance(gateway, user.id) == user.quota - 38858


async def test_a_streamed_edit_is_told_as_completed_events(gateway, google) -> None:
    """Gemini answers whole: the SDK's stream gets one `image_edit.completed` per image, the usage on the
    last, and no partial image; billed as the same edit unstreamed."""
    fake = await google()
    user, token = await setup(gateway, fake)
    async with sdk(gateway, token) as client:
        stream = await client.images.edit(model=FLASH_IMAGE, image=[("a.png", PNG, "image/png")],
                                          prompt="Put a hat on the cat", n=2, stream=True, partial_images=2)
        events = [event async for event in stream]
    assert [e.type for e in events] == ["image_edit.completed"] * 2
    assert [e.b64_json for e in events] == [PNG_B64, PNG_B64]
    assert getattr(events[0], "usage", None) is None
    prompt = 2 * (PROMPT_TOKENS + INPUT_IMAGE_TOKENS)
    assert (events[1].usage.input_tokens, events[1].usage.output_tokens) == (prompt, 2 * IMAGE_TOKENS)
    assert all("partial_images" not in str(seen["body"]) for seen in fake.seen) and len(fake.seen) == 2
    log = await settled_log(gateway, user)
    quota = round((prompt + 2 * IMAGE_TOKENS * 100) * 0.15)
    assert (log.prompt_tokens, log.completion_tokens, log.quota, log.is_stream) == (
        prompt, 2 * IMAGE_TOKENS, quota, True)
    assert await live_balance(gateway, user.id) == user.quota - quota


async def test_edit_on_vertex_express_mode(gateway, vertex) -> None:
    fake = await vertex()
    await priced(gateway)
    await add_channel(gateway, None, models=PRO_IMAGE, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=API_KEY)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.images.edit(model=PRO_IMAGE, image=("a.png", PNG, "image/png"), prompt="Bluer")
    assert [d.b64_json for d in answer.data] == [PNG_B64]
    [seen] = fake.images.seen
    assert seen["path"] == f"/v1/publishers/google/models/{PRO_IMAGE}:generateContent"
    log = await settled_log(gateway, user)
    assert log.quota == 19391  # (12 + 258 + 1290 × 100) × 0.15 = 19390.5 → half up


async def test_refusals_charge_nothing(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="PNG, JPEG, WebP or GIF"):
            await client.images.edit(model=FLASH_IMAGE, image=("a.txt", b"hello", "text/plain"), prompt="x")
    assert fake.seen == []
    assert await consume_logs(user) == []
    assert await live_balance(gateway, user.id) in (None, user.quota)
