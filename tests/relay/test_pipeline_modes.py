# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Every relayed endpoint through the openai SDK, on OpenAI, Azure, Ollama, custom and compatible
channels; /v1/models, the legacy billing endpoints and the console playground."""
from __future__ import annotations

import asyncio

import aiohttp
import openai
import orjson

from api import keys
from api.services.billing import pricing
from api.upstream.tokenizer import count_input, count_text
from models import Log, Token, User
from models.enums import LogType
from tests.helpers import ApiClient
from tests.relay.fakes import (  # noqa: F401
    REPLY,
    add_channel,
    drain,
    gateway,
    headers_for,
    live_balance,
    make_key,
    rich_user,
    upstreams,
)


def sdk(gateway, token: Token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


async def only_log(user: User) -> Log:
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).all()
    assert len(logs) == 1, logs
    return logs[0]


async def test_completions_stream_and_not(gateway, upstreams) -> None:
    fake = await upstreams(usage=(5, 9))
    await add_channel(gateway, fake, models="gpt-3.5-turbo-instruct")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.completions.create(model="gpt-3.5-turbo-instruct", prompt="Once upon", max_tokens=20)
        stream = await client.completions.create(model="gpt-3.5-turbo-instruct", prompt="Once upon", stream=True)
        text = "".join([c.choices[0].text async for c in stream if c.choices])
    assert answer.choices[0].text == REPLY and text == REPLY
    await drain(gateway)
    price = pricing.resolve_price("gpt-3.5-turbo-instruct")
    logs = await Log.filter(user_id=user.id).order_by("id")
    assert [log.quota for log in logs] == [pricing.settle_quota(price, 5, 9)] * 2


async def test_embeddings_openai_engines_path_and_ollama(gateway, upstreams) -> None:
    openai_fake, ollama_fake = await upstreams(usage=(8, 0)), await upstreams()
    await add_channel(gateway, openai_fake, models="text-embedding-3-small")
    await add_channel(gateway, ollama_fake, models="nomic-embed-text", type=4)
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps(
        {**pricing.DEFAULT_MODEL_RATIO, "nomic-embed-text": 1}).decode())
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
        local = await client.embeddings.create(model="nomic-embed-text", input=["hello world", "again"])
    assert len(result.data) == 2 and result.data[0].embedding == [0.1, 0.2, 0.3]
    # Ollama's batched /api/embed, billed on its own count (prompt_eval_count: 4 a text in the fake)
    assert [d.embedding for d in local.data] == [[0.5, 0.25], [0.5, 0.25]] and local.usage.prompt_tokens == 8
    assert ollama_fake.seen[0].path == "/api/embed"
    assert ollama_fake.seen[0].body == {"model": "nomic-embed-text", "input": ["hello world", "again"]}
    resp = await gateway.post("/v1/engines/text-embedding-3-small/embeddings", json={"input": "x"},
                              headers=headers_for(token))
    assert resp.status == 200 and openai_fake.seen[-1].body["model"] == "text-embedding-3-small"
    await drain(gateway)
    logs = await Log.filter(user_id=user.id).order_by("id")
    small = pricing.resolve_price("text-embedding-3-small")
    assert [log.quota for log in logs] == [pricing.settle_quota(small, 8, 0), 8, pricing.settle_quota(small, 8, 0)]


async def test_moderations_default_model_billed_on_the_local_count(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="text-moderation-latest")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.moderations.create(input="I want to hug everyone")
    assert result.results[0].flagged is False
    assert fake.seen[0].body["model"] == "text-moderation-latest"
    await drain(gateway)
    price = pricing.resolve_price("text-moderation-latest")
    assert (await only_log(user)).quota == pricing.settle_quota(price, count_input("I want to hug everyone"), 0)


async def test_images_billed_by_size_quality_and_count(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="dall-e-3")
    user = await rich_user(quota=1_000_000)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.images.generate(model="dall-e-3", prompt="a cat", size="1792x1024", quality="hd", n=2)
    assert len(result.data) == 2
    await drain(gateway)
    # ModelPrice 0.04 × size 2 × hd 1.5 (wide) × n 2 × 500000
    assert (await only_log(user)).quota == 120_000
    assert (await User.get(id=user.id)).quota == 1_000_000 - 120_000


async def test_speech_billed_by_characters(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="tts-1")
    user = await rich_user()
    token = await make_key(user)
    text = "你好，world!"
    async with sdk(gateway, token) as client:
        audio = await client.audio.speech.create(model="tts-1", voice="alloy", input=text)
    assert audio.content == b"ID3fake-mp3-bytes"
    await drain(gateway)
    log = await only_log(user)
    assert (log.prompt_tokens, log.quota) == (len(text), pricing.round_half_up(len(text) * 7.5))


async def test_transcription_and_translation_multipart_billed_by_output(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="whisper-1,my-whisper", model_mapping='{"my-whisper": "whisper-1"}')
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps(
        {**pricing.DEFAULT_MODEL_RATIO, "my-whisper": 15}).decode())
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.audio.transcriptions.create(model="my-whisper", file=("a.mp3", b"RIFFfake", "audio/mpeg"))
    form = aiohttp.FormData()
    form.add_field("model", "whisper-1")
    form.add_field("response_format", "text")
    form.add_field("file", b"WAVfake", filename="b.wav", content_type="audio/wav")
    resp = await gateway.post("/v1/audio/translations", data=form, headers=headers_for(token))
    text = await resp.text()
    assert resp.status == 200 and resp.content_type == "text/plain"
    assert result.text == REPLY and text.strip() == REPLY
    first = fake.seen[0]
    assert first.path == "/v1/audio/transcriptions" and first.body["model"] == "whisper-1"
    assert first.body["file"] == ("a.mp3", b"RIFFfake")
    assert fake.seen[1].path == "/v1/audio/translations"
    await drain(gateway)
    logs = await Log.filter(user_id=user.id).order_by("id")
    tokens = count_text(REPLY)
    assert [(log.prompt_tokens, log.completion_tokens) for log in logs] == [(0, tokens), (0, count_text(REPLY + "\n"))]
    assert logs[0].quota == pricing.round_half_up(tokens * 15) and logs[0].model_name == "my-whisper"


async def test_rerank_on_a_compatible_channel(gateway, upstreams) -> None:
    fake = await upstreams(usage=(30, 0))
    await add_channel(gateway, fake, models="jina-reranker-v2-base-multilingual", type=40)
    user = await rich_user()
    token = await make_key(user)
    resp = await gateway.post("/v1/rerank", json={"model": "jina-reranker-v2-base-multilingual", "query": "q",
                                                  "documents": ["a", "b", "c"]}, headers=headers_for(token))
    body = await resp.json()
    assert resp.status == 200 and len(body["results"]) == 3
    await drain(gateway)
    assert (await only_log(user)).prompt_tokens == 30


async def test_azure_deployment_url_and_custom_channel(gateway, upstreams) -> None:
    azure, custom = await upstreams(), await upstreams()
    await add_channel(gateway, azure, models="gpt-3.5-turbo", type=3, other="2024-02-01", key="azure-key")
    await add_channel(gateway, None, models="gpt-4", type=8, base_url=custom.url + "/custom/{model}/chat")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model="gpt-3.5-turbo", messages=[{"role": "user", "content": "hi"}])
        await client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "hi"}])
    seen = azure.seen[0]
    assert seen.path == "/openai/deployments/gpt-35-turbo/chat/completions"
    assert seen.query == {"api-version": "2024-02-01"} and seen.headers["api-key"] == "azure-key"
    assert "Authorization" not in seen.headers
    assert custom.seen[0].path == "/custom/gpt-4/chat"


async def test_openai_organization_header(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, openai_organization="org-42")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "hi"}])
    assert fake.seen[0].headers["OpenAI-Organization"] == "org-42"


async def test_models_list_and_retrieve(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="gpt-4,gpt-3.5-turbo")
    await add_channel(gateway, fake, models="claude-3-opus-20240229", group="vip")
    user = await rich_user()
    token = await make_key(user)
    vip = await make_key(user, group="vip")
    limited = await make_key(user, model_limits_enabled=True, model_limits="gpt-4")

    def listing(t: Token) -> list[str]:
        with openai.OpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{t.key}", max_retries=0) as c:
            return sorted(m.id for m in c.models.list())

    assert await asyncio.to_thread(listing, token) == ["gpt-3.5-turbo", "gpt-4"]
    assert await asyncio.to_thread(listing, vip) == ["claude-3-opus-20240229"]
    assert await asyncio.to_thread(listing, limited) == ["gpt-4"]
    async with sdk(gateway, token) as client:
        model = await client.models.retrieve("gpt-4")
        assert (model.id, model.object, model.owned_by) == ("gpt-4", "model", "openai")
        try:
            await client.models.retrieve("gpt-5")
            raise AssertionError("expected 404")
        except openai.NotFoundError as exc:
            assert exc.body["code"] == "model_not_found"
    resp = await gateway.get("/v1/models", headers=headers_for(token))
    body = await resp.json()
    assert body["object"] == "list" and set(body["data"][0]) == {"id", "object", "created", "owned_by"}


async def test_dashboard_billing_subscription_and_usage(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams(usage=(10, 10)))
    user = await rich_user()
    token = await make_key(user, remain_quota=1_000_000, unlimited=False)
    resp = await gateway.post("/v1/chat/completions", json={"model": "gpt-4", "messages": [
        {"role": "user", "content": "hi"}]}, headers=headers_for(token))
    assert resp.status == 200
    spent = (10 + 20) * 15
    for prefix in ("", "/v1"):
        sub = await (await gateway.get(prefix + "/dashboard/billing/subscription", headers=headers_for(token))).json()
        assert sub["object"] == "billing_subscription" and sub["hard_limit_usd"] == 2.0  # (remain + used) / 500000
        usage = await (await gateway.get(prefix + "/dashboard/billing/usage", headers=headers_for(token))).json()
        assert usage == {"object": "list", "total_usage": spent / 500_000 * 100}  # pending records count too
    await drain(gateway)
    usage = await (await gateway.get("/dashboard/billing/usage", headers=headers_for(token))).json()
    assert usage["total_usage"] == spent / 500_000 * 100
    resp = await gateway.get("/dashboard/billing/usage")
    assert resp.status == 401 and (await resp.json())["error"]["code"] == "missing_api_key"


async def test_playground_charges_the_session_user_only(gateway, upstreams) -> None:
    fake = await upstreams(usage=(4, 4))
    await add_channel(gateway, fake, models="gpt-4o-mini", group="default,vip")
    user = await rich_user("player", quota=100_000)
    api = ApiClient(gateway)
    await api.login("player", "password123")
    body = {"model": "gpt-4o-mini", "group": "vip", "stream": True, "max_tokens": 50,
            "messages": [{"role": "user", "content": "hi"}]}
    resp = await gateway.post("/pg/chat/completions", json=body, headers={"New-Api-User": str(user.id)})
    assert resp.status == 200
    raw = await resp.read()
    assert raw.endswith(b"data: [DONE]\n\n") and "group" not in fake.seen[0].body
    await drain(gateway)
    log = await only_log(user)
    assert log.token_name == "playground-vip" and log.token_id == 0 and log.group == "vip"
    assert log.quota == pricing.settle_quota(pricing.resolve_price("gpt-4o-mini", "vip"), 4, 4)
    bad = await gateway.post("/pg/chat/completions", json={**body, "group": "svip"},
                             headers={"New-Api-User": str(user.id)})
    assert bad.status == 403 and (await bad.json())["error"]["code"] == "group_not_usable"
    async with aiohttp.ClientSession() as stranger:  # no session cookie
        anonymous = await stranger.post(gateway.make_url("/pg/chat/completions"), json=body)
        assert anonymous.status == 401
    assert await live_balance(gateway, user.id) == (await User.get(id=user.id)).quota


async def test_audio_forms_are_bounded_and_not_inflated(gateway, upstreams, monkeypatch) -> None:
    """A form is streamed, not read whole: its route's bound holds while its parts are read (413), and
    a part compressed on its own (a deflate bomb in a text field) is refused rather than inflated."""
    import io
    import zlib

    from api import bodies

    fake = await upstreams()
    await add_channel(gateway, fake, models="whisper-1")
    user = await rich_user()
    token = await make_key(user)
    monkeypatch.setattr(bodies, "MAX_BODY", 1024 * 1024)
    form = aiohttp.FormData()
    form.add_field("model", "whisper-1")
    form.add_field("file", io.BytesIO(b"\0" * (2 * 1024 * 1024)), filename="a.mp3", content_type="audio/mpeg")
    resp = await gateway.post("/v1/audio/transcriptions", data=form, headers=headers_for(token))
    assert resp.status == 413 and (await resp.json())["error"]["message"], await resp.text()
    with aiohttp.MultipartWriter("form-data") as writer:
        part = writer.append(b"x")
        part.set_content_disposition("form-data", name="file", filename="a.mp3")
        bomb = writer.append(zlib.compress(b" " * (8 * 1024 * 1024)))
        bomb.set_content_disposition("form-data", name="model")
        bomb.headers["Content-Encoding"] = "deflate"
    resp = await gateway.post("/v1/audio/transcriptions", data=writer, headers=headers_for(token))
    assert resp.status == 400 and "Content-Encoding" in (await resp.json())["error"]["message"]
    assert fake.seen == [] and await drain(gateway) == 0
