"""Gemini's image models and Imagen through the gateway, against strict fakes of Google's APIs
(fake_gemini_images.py beside this file): images in chat answers (OpenAI's format streamed or not through the
openai SDK, Anthropic's through the anthropic SDK, Gemini's through google-genai), `/v1/images/generations`
on Gemini image models (Gemini API and Vertex AI express mode) and on Imagen (Gemini API and Vertex AI
with a service-account key), each billed to the unit; refusals change nothing."""
from __future__ import annotations

import base64

import anthropic
import openai
import orjson
import pytest
from aiohttp import web
from google import genai
from google.genai import types

from api import keys
from api.services.configuration.default_prices import DEFAULT_IMAGE_OUTPUT_RATIO, DEFAULT_MODEL_PRICE
from api.upstream.catalogue import ChannelType
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.gemini.fake_gemini_images import (
    IMAGE_TOKENS,
    PNG_B64,
    PROMPT_TOKENS,
    SIGNATURE,
    TEXT,
    TEXT_TOKENS,
    FakeGeminiImages,
    FakeVertexImages,
)
from tests.upstream.providers.kit import consume_logs, sdk, settled_log
from tests.upstream.providers.vertex.fake_vertex import API_KEY

FLASH_IMAGE = "gemini-2.5-flash-image"
PRO_IMAGE = "gemini-3-pro-image"
IMAGEN = "imagen-4.0-generate-001"
DATA_URL = f"data:image/png;base64,{PNG_B64}"
# Prices set by each test: input $0.30/M (ratio 0.15), text output ×8, image output ×100 ($30/M).
RATIOS = {"ModelRatio": {FLASH_IMAGE: 0.15, PRO_IMAGE: 0.15, "gemini-2.5-flash": 0.15},
          "CompletionRatio": {FLASH_IMAGE: 8, PRO_IMAGE: 8, "gemini-2.5-flash": 8},
          "ImageOutputRatio": {FLASH_IMAGE: 100, PRO_IMAGE: 100}, "ModelPrice": {IMAGEN: 0.04}}


@pytest.fixture
async def google(aiohttp_server):
    async def start(**behaviour) -> FakeGeminiImages:
        fake = FakeGeminiImages(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


@pytest.fixture
async def vertex(aiohttp_server):
    async def start(**behaviour) -> FakeVertexImages:
        fake = FakeVertexImages(**behaviour)
        server = await aiohttp_server(fake.app())
        fake.url = str(server.make_url("")).rstrip("/")
        return fake
    return start


async def priced(gateway) -> None:
    options = gateway.server.app[keys.OPTIONS]
    for name, table in RATIOS.items():
        await options.update(name, orjson.dumps({**(options.get_json(name) or {}), **table}).decode())


async def setup(gateway, fake: FakeGeminiImages, models: str = f"{FLASH_IMAGE},{PRO_IMAGE},{IMAGEN}"):
    await priced(gateway)
    await add_channel(gateway, None, models=models, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    user = await rich_user()
    return user, await make_key(user)


def test_default_prices_cover_the_image_models() -> None:
    assert DEFAULT_IMAGE_OUTPUT_RATIO[FLASH_IMAGE] == 100 and DEFAULT_IMAGE_OUTPUT_RATIO["gemini-3-pro-image"] == 60
    assert DEFAULT_MODEL_PRICE[IMAGEN] == 0.04 and DEFAULT_MODEL_PRICE["imagen-4.0-fast-generate-001"] == 0.02


async def test_chat_answer_carries_the_image_and_is_billed_by_image_tokens(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=FLASH_IMAGE, n=2, messages=[
            {"role": "user", "content": "Draw a cat."}], extra_body={"image_config": {"aspect_ratio": "16:9"}})
    message = answer.choices[0].message
    assert message.content == TEXT
    assert message.model_extra["images"] == [{"type": "image_url", "image_url": {"url": DATA_URL}}]
    config = fake.seen[0]["body"]["generationConfig"]
    assert config["responseModalities"] == ["TEXT", "IMAGE"] and config["imageConfig"] == {"aspectRatio": "16:9"}
    assert "candidateCount" not in config  # one candidate per request for an image model: `n` left out
    completion = IMAGE_TOKENS + TEXT_TOKENS
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (PROMPT_TOKENS, completion)
    log = await settled_log(gateway, user)
    # (12 + 6 × 8 + 1290 × 100) × 0.15 = 19359
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (PROMPT_TOKENS, completion, 19359)


async def test_chat_stream_carries_the_signed_image_and_sends_it_back(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake)
    ask = [{"role": "user", "content": "Draw a cat."}]
    async with sdk(gateway, token) as client:
        stream = await client.chat.completions.create(model=PRO_IMAGE, messages=ask, stream=True,
                                                      extra_body={"modalities": ["image"]})
        chunks = [c async for c in stream]
        images = [i for c in chunks if c.choices for i in (c.choices[0].delta.model_extra or {}).get("images") or ()]
        assert images == [{"type": "image_url", "image_url": {"url": DATA_URL},
                           "extra_content": {"google": {"thought_signature": SIGNATURE}}}]
        follow = [*ask, {"role": "assistant", "content": "", "images": images}, {"role": "user", "content": "Bluer."}]
        await client.chat.completions.create(model=PRO_IMAGE, messages=follow)
    assert fake.seen[0]["body"]["generationConfig"]["responseModalities"] == ["IMAGE"]
    assert fake.seen[1]["body"]["contents"][1] == {"role": "model", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": PNG_B64}, "thoughtSignature": SIGNATURE}]}
    await drain(gateway)
    first = (await consume_logs(user))[0]
    assert (first.prompt_tokens, first.completion_tokens) == (PROMPT_TOKENS, IMAGE_TOKENS)
    assert first.quota == round((PROMPT_TOKENS + IMAGE_TOKENS * 100) * 0.15)  # 129012 × 0.15 = 19351.8


async def test_text_model_is_not_asked_for_images(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake, models="gemini-2.5-flash")
    async with sdk(gateway, token) as client:
        raw = await client.chat.completions.with_raw_response.create(
            model="gemini-2.5-flash", messages=[{"role": "user", "content": "Draw a cat."}],
            extra_body={"modalities": ["text", "image"]})
    assert raw.parse().choices[0].message.content == TEXT
    assert "responseModalities" not in fake.seen[0]["body"].get("generationConfig", {})  # refused by Gemini
    assert raw.headers["X-Gateway-Dropped"] == "modalities.image"


async def test_anthropic_and_gemini_clients_get_images_in_their_formats(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake)
    async with anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}",
                                        max_retries=0) as claude:
        message = await claude.messages.create(model=FLASH_IMAGE, max_tokens=1024,
                                               messages=[{"role": "user", "content": "Draw a cat."}])
        async with claude.messages.stream(model=FLASH_IMAGE, max_tokens=1024,
                                          messages=[{"role": "user", "content": "Draw a cat."}]) as stream:
            streamed = await stream.get_final_message()
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}
    assert [b.model_dump(exclude_none=True) for b in message.content] == [{"type": "text", "text": TEXT}, block]
    assert [b.model_dump(exclude_none=True) for b in streamed.content] == [{"type": "text", "text": TEXT}, block]
    google_client = genai.Client(api_key=f"sk-{token.key}", http_options=types.HttpOptions(
        base_url=str(gateway.make_url("")), api_version="v1beta"))
    answer = await google_client.aio.models.generate_content(
        model=FLASH_IMAGE, contents="Draw a cat.", config=types.GenerateContentConfig(
            response_modalities=["IMAGE"]))
    parts = answer.candidates[0].content.parts
    assert [p.inline_data.mime_type for p in parts if p.inline_data] == ["image/png"]
    assert answer.usage_metadata.candidates_token_count == IMAGE_TOKENS
    await drain(gateway)
    # two Anthropic answers (12 + 6 × 8 + 1290 × 100) × 0.15 = 19359, the native Gemini one 129012 × 0.15 → 19352
    assert [log.quota for log in await consume_logs(user)] == [19359, 19359, 19352]


async def test_images_of_an_openai_format_upstream_reach_gemini_and_anthropic_clients(gateway, aiohttp_server) -> None:
    """An OpenRouter channel answers images in `message.images` (openrouter.ai/docs/guides/overview/
    multimodal/image-generation); the fake refuses a body without `model` or `messages`, as OpenRouter's
    chat completions reference requires both (openrouter.ai/docs/api/api-reference/chat/
    send-chat-completion-request)."""
    seen: list[dict] = []

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        if not body.get("model") or not isinstance(body.get("messages"), list):
            return web.json_response({"error": {"code": 400, "message": "model and messages are required"}},
                                     status=400)
        message = {"role": "assistant", "content": TEXT,
                   "images": [{"type": "image_url", "image_url": {"url": DATA_URL}}]}
        return web.json_response({"id": "gen-1", "object": "chat.completion", "created": 1, "model": body["model"],
                                  "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}})

    app = web.Application()
    app.router.add_post("/api/v1/chat/completions", completions)
    server = await aiohttp_server(app)
    model = FLASH_IMAGE  # OpenRouter's name for it by the channel's mapping
    await add_channel(gateway, None, models=model, type=int(ChannelType.OPENROUTER),
                      base_url=str(server.make_url("/api")).rstrip("/"),
                      model_mapping=orjson.dumps({model: "google/gemini-2.5-flash-image"}).decode())
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps({model: 0.15}).decode())
    user = await rich_user()
    token = await make_key(user)
    google_client = genai.Client(api_key=f"sk-{token.key}", http_options=types.HttpOptions(
        base_url=str(gateway.make_url("")), api_version="v1beta"))
    answer = await google_client.aio.models.generate_content(model=model, contents="Draw a cat.")
    parts = answer.candidates[0].content.parts
    assert parts[0].text == TEXT and parts[1].inline_data.mime_type == "image/png"
    assert parts[1].inline_data.data == base64.b64decode(PNG_B64)
    async with anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}",
                                        max_retries=0) as claude:
        message = await claude.messages.create(model=model, max_tokens=256,
                                               messages=[{"role": "user", "content": "Draw a cat."}])
    assert message.content[1].model_dump(exclude_none=True) == {
        "type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}
    assert [body["model"] for body in seen] == ["google/gemini-2.5-flash-image"] * 2


async def test_images_generate_on_an_image_model_n_requests_billed_by_tokens(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake)
    async with sdk(gateway, token) as client:
        answer = await client.images.generate(model=FLASH_IMAGE, prompt="A red fox", n=2, size="1536x1024")
    assert [d.b64_json for d in answer.data] == [PNG_B64, PNG_B64]
    assert len(fake.seen) == 2 and all(s["action"] == "generateContent" for s in fake.seen)
    body = fake.seen[0]["body"]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "A red fox"}]}]
    assert body["generationConfig"] == {"responseModalities": ["IMAGE"], "imageConfig": {"aspectRatio": "3:2"}}
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (2 * PROMPT_TOKENS, 2 * IMAGE_TOKENS)
    assert answer.usage.output_tokens_details.image_tokens == 2 * IMAGE_TOKENS
    log = await settled_log(gateway, user)
    # (24 + 2580 × 100) × 0.15 = 38703.6 → 38704
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (24, 2 * IMAGE_TOKENS, 38704)
    assert await live_balance(gateway, user.id) == user.quota - 38704


async def test_reservation_of_an_image_model_is_its_own_most(gateway, google) -> None:
    fake = await google()
    await priced(gateway)
    await add_channel(gateway, None, models=FLASH_IMAGE, type=int(ChannelType.GEMINI), base_url=fake.url,
                      key=fake.key)
    user = await rich_user(quota=20_000)  # one image reserved at (0 + 1290 × 100) × 0.15 = 19350
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.images.generate(model=FLASH_IMAGE, prompt="A red fox")
        with pytest.raises(openai.PermissionDeniedError):  # two images: 38700 reserved, more than is left
            await client.images.generate(model=FLASH_IMAGE, prompt="A red fox", n=2)
    log = await settled_log(gateway, user)
    assert log.quota == 19352 and len(fake.seen) == 1


async def test_an_image_blocked_by_gemini_is_refunded(gateway, google) -> None:
    fake = await google()
    fake.unsafe = True
    user, token = await setup(gateway, fake)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="Unable to show the generated image") as refused:
            await client.images.generate(model=FLASH_IMAGE, prompt="Something unsafe")
    assert refused.value.body["code"] == "content_policy_violation"
    await drain(gateway)
    assert await consume_logs(user) == []
    assert await live_balance(gateway, user.id) in (None, user.quota)


async def test_imagen_on_the_gemini_api_per_image_and_refusals_change_nothing(gateway, google) -> None:
    fake = await google()
    user, token = await setup(gateway, fake)
    async with sdk(gateway, token) as client:
        answer = await client.images.generate(model=IMAGEN, prompt="A lighthouse", n=3, size="1024x1536",
                                              output_format="jpeg")
        with pytest.raises(openai.BadRequestError, match="from 1 to 4") as refused:
            await client.images.generate(model=IMAGEN, prompt="A lighthouse", n=5)
        with pytest.raises(openai.BadRequestError, match="WIDTHxHEIGHT"):
            await client.images.generate(model=IMAGEN, prompt="A lighthouse", size="large")
        with pytest.raises(openai.APIStatusError) as chat:  # Imagen does not chat: answered here
            await client.chat.completions.create(model=IMAGEN, messages=[{"role": "user", "content": "Hi"}])
    assert chat.value.status_code == 501
    assert refused.value.status_code == 400
    assert [d.b64_json for d in answer.data] == [PNG_B64] * 3
    [seen] = fake.seen  # the refusals sent nothing
    assert seen["path"] == f"/v1beta/models/{IMAGEN}:predict" and seen["headers"]["x-goog-api-key"] == fake.key
    assert seen["body"] == {"instances": [{"prompt": "A lighthouse"}], "parameters": {
        "sampleCount": 3, "includeRaiReason": True, "aspectRatio": "3:4", "sampleImageSize": "2K",
        "outputOptions": {"mimeType": "image/jpeg"}}}
    log = await settled_log(gateway, user)  # the refusals left no consume row
    assert log.quota == 3 * 20000  # 3 × $0.04 × 500000
    assert await live_balance(gateway, user.id) == user.quota - 3 * 20000


async def test_imagen_on_vertex_filtered_images_refunded(gateway, vertex) -> None:
    fake = await vertex(filtered=4)
    await priced(gateway)
    await add_channel(gateway, None, models=IMAGEN, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=fake.service_account())
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="safety filters") as refused:
            await client.images.generate(model=IMAGEN, prompt="A lighthouse", n=2)
        fake.images.filtered = 1
        answer = await client.images.generate(model=IMAGEN, prompt="A lighthouse", n=2, size="1024x1024")
    assert refused.value.body["code"] == "content_policy_violation"
    assert [d.b64_json for d in answer.data] == [PNG_B64]
    seen = fake.images.seen[-1]
    assert seen["path"] == f"/v1/projects/proj-7/locations/us-central1/publishers/google/models/{IMAGEN}:predict"
    assert seen["headers"]["Authorization"] == "Bearer ya29.token-1"
    assert seen["body"]["parameters"] == {"sampleCount": 2, "includeRaiReason": True, "aspectRatio": "1:1"}
    log = await settled_log(gateway, user)  # the refused request was refunded: one consume row
    assert log.quota == 2 * 20000  # per image asked for
    assert await live_balance(gateway, user.id) == user.quota - 2 * 20000


async def test_image_model_on_vertex_express_mode(gateway, vertex) -> None:
    fake = await vertex()
    await priced(gateway)
    await add_channel(gateway, None, models=PRO_IMAGE, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=API_KEY)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.images.generate(model=PRO_IMAGE, prompt="A red fox", size="4096x2304")
    assert [d.b64_json for d in answer.data] == [PNG_B64]
    [seen] = fake.images.seen
    assert seen["path"] == f"/v1/publishers/google/models/{PRO_IMAGE}:generateContent"
    assert seen["body"]["generationConfig"]["imageConfig"] == {"aspectRatio": "16:9", "imageSize": "4K"}
    log = await settled_log(gateway, user)
    assert log.quota == round((PROMPT_TOKENS + IMAGE_TOKENS * 100) * 0.15)


async def test_the_fake_refuses_what_google_refuses(google, aiohttp_client) -> None:
    fake = await google()
    http = await aiohttp_client(fake.server)
    headers = {"x-goog-api-key": fake.key}
    ask = {"contents": [{"role": "user", "parts": [{"text": "Draw"}]}]}
    cases = [
        ("gemini-2.5-flash", "generateContent", {**ask, "generationConfig": {"responseModalities": ["TEXT", "IMAGE"]}},
         "does not support the requested response modalities"),
        (FLASH_IMAGE, "generateContent", {**ask, "generationConfig": {"candidateCount": 2}}, "Multiple candidates"),
        (FLASH_IMAGE, "generateContent", {**ask, "generationConfig": {"imageConfig": {"aspectRatio": "7:3"}}},
         "Unsupported aspect ratio"),
        (PRO_IMAGE, "generateContent", {"contents": [*ask["contents"], {"role": "model", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": PNG_B64}}]}, *ask["contents"]]}, "thought_signature"),
        (IMAGEN, "predict", {"instances": [{"prompt": "x"}], "parameters": {"sampleCount": 5}}, "out of range"),
        (IMAGEN, "predict", {"instances": [{"prompt": "x"}], "parameters": {"aspectRatio": "3:2"}},
         "Unsupported aspect ratio"),
        ("imagen-4.0-fast-generate-001", "predict",
         {"instances": [{"prompt": "x"}], "parameters": {"sampleImageSize": "2K"}}, "Unsupported image size"),
    ]
    for model, action, body, message in cases:
        resp = await http.post(f"/v1beta/models/{model}:{action}", json=body, headers=headers)
        error = (await resp.json())["error"]
        assert (resp.status, error["status"]) == (400, "INVALID_ARGUMENT") and message in error["message"], model
