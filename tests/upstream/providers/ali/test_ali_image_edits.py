"""`/v1/images/edits` on Alibaba channels (type 17) through the official openai SDK against the strict
fake of tests/upstream/providers/ali/fake_dashscope_images.py: Qwen's image models synchronously, the Wan models as a
task polled to its end; the uploaded images sent inline as data URLs; billed per image produced (fewer
than asked: those); `b64_json` fetched under the media policy; an upstream refusal relayed and
refunded; what the model cannot take refused with a 400 naming the field, nothing sent or charged."""
from __future__ import annotations

import base64

import openai
import orjson
import pytest

from api import keys
from api.upstream.catalogue import ChannelType
from api.upstream.providers.ali import AliAdaptor
from models import User
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.ali.fake_dashscope_images import KEY, PNG, FakeDashScopeImages
from tests.upstream.providers.kit import consume_logs, sdk, settled_log

JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 32
PRICES = {"qwen-image-edit-plus": 0.03, "qwen-image-edit": 0.045, "wan2.5-i2i-preview": 0.04,
          "wanx2.1-imageedit": 0.02, "wan2.6-image": 0.03, "wan2.7-image": 0.03,
          "wan2.7-image-pro": 0.075}  # these tests' own prices (test_ali_wan_images.py's too)
START = 10_000_000


def per_image(model: str, images: int) -> int:
    """ModelPrice × images × QuotaPerUnit (group ratio 1), written out."""
    return round(PRICES[model] * images * 500_000)


def inline(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


@pytest.fixture
async def dashscope(aiohttp_server, gateway, monkeypatch) -> FakeDashScopeImages:
    monkeypatch.setattr(AliAdaptor, "poll_interval", 0.0)
    fake = FakeDashScopeImages()
    fake.server = await aiohttp_server(fake.app())
    await gateway.server.app[keys.OPTIONS].update("ModelPrice", orjson.dumps(PRICES).decode())
    await add_channel(gateway, fake, models=",".join(PRICES), type=int(ChannelType.ALI), key=KEY)
    return fake


async def customer() -> tuple[User, object]:
    user = await rich_user(quota=START)
    return user, await make_key(user)


async def test_qwen_edit_of_one_image_billed_per_image(gateway, dashscope) -> None:
    user, token = await customer()
    async with sdk(gateway, token) as client:
        raw = await client.images.with_raw_response.edit(
            model="qwen-image-edit-plus", image=("cat.png", PNG, "image/png"), prompt="Put a hat on the cat",
            n=2, size="1024x1536", quality="high")
    answer = raw.parse()
    assert [d.url for d in answer.data or ()] == [f"{dashscope.url}/files/qwen-1-{i}.png" for i in range(2)]
    assert raw.headers["X-Gateway-Dropped"] == "quality"  # DashScope has no such field
    [seen] = dashscope.seen
    assert seen["path"] == "/api/v1/services/aigc/multimodal-generation/generation"
    assert "X-DashScope-Async" not in seen["headers"]  # synchronous
    assert seen["body"] == {"model": "qwen-image-edit-plus", "input": {"messages": [{"role": "user", "content": [
        {"image": inline(PNG)}, {"text": "Put a hat on the cat"}]}]}, "parameters": {"n": 2, "size": "1024*1536"}}
    log = await settled_log(gateway, user)
    assert log.quota == per_image("qwen-image-edit-plus", 2) == 30_000
    assert orjson.loads(log.other)["model_price"] == 0.06
    assert (await User.get(id=user.id)).quota == START - 30_000


async def test_qwen_edit_of_several_images_fewer_produced_pays_those(gateway, dashscope) -> None:
    """Three images in, three asked for, one produced: DashScope bills the images generated, so do we."""
    dashscope.produce = 1
    user, token = await customer()
    async with sdk(gateway, token) as client:
        answer = await client.images.edit(
            model="qwen-image-edit-plus", prompt="The girl of image 1 in the dress of image 2, posed as in 3",
            image=[("a.png", PNG, "image/png"), ("b.jpg", JPEG, "image/jpeg"), ("c.png", PNG, "image/png")], n=3)
    assert len(answer.data or ()) == 1
    content = dashscope.seen[0]["body"]["input"]["messages"][0]["content"]
    assert [part.get("image") for part in content[:3]] == [inline(PNG), inline(JPEG, "image/jpeg"), inline(PNG)]
    assert dashscope.seen[0]["body"]["parameters"] == {"n": 3}
    log = await settled_log(gateway, user)
    assert log.quota == per_image("qwen-image-edit-plus", 1) == 15_000
    assert await live_balance(gateway, user.id) == START - 15_000


async def test_wan_edit_is_a_polled_task_billed_per_image(gateway, dashscope) -> None:
    user, token = await customer()
    async with sdk(gateway, token) as client:
        answer = await client.images.edit(model="wan2.5-i2i-preview", image=[("a.jpg", JPEG, "image/jpeg")],
                                          prompt="A lace dress instead", n=2, size="1024x1024")
        single = await client.images.edit(model="wanx2.1-imageedit", image=("a.png", PNG, "image/png"),
                                          prompt="Red hair")
    assert [d.url for d in answer.data or ()] == [f"{dashscope.url}/files/edit-task-1-{i}.png" for i in range(2)]
    assert [d.url for d in single.data or ()] == [f"{dashscope.url}/files/edit-task-2-0.png"]
    first, second = dashscope.seen
    assert first["path"] == "/api/v1/services/aigc/image2image/image-synthesis"
    assert first["headers"]["X-DashScope-Async"] == "enable"
    assert first["body"] == {"model": "wan2.5-i2i-preview", "input": {
        "prompt": "A lace dress instead", "images": [inline(JPEG, "image/jpeg")]},
        "parameters": {"n": 2, "size": "1024*1024"}}
    assert second["body"] == {"model": "wanx2.1-imageedit", "input": {
        "function": "description_edit", "prompt": "Red hair", "base_image_url": inline(PNG)}, "parameters": {"n": 1}}
    assert {task: state["polls"] for task, state in dashscope.tasks.items()} == {"edit-task-1": 2, "edit-task-2": 2}
    await drain(gateway)
    assert [log.quota for log in await consume_logs(user)] == [per_image("wan2.5-i2i-preview", 2),
                                                                per_image("wanx2.1-imageedit", 1)]


async def test_b64_json_is_fetched_under_the_media_policy(gateway, dashscope) -> None:
    user, token = await customer()
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="image URL refused"):  # the fake is on a private address
            await client.images.edit(model="qwen-image-edit", image=("a.png", PNG, "image/png"), prompt="Bluer",
                                     response_format="b64_json")
        assert dashscope.fetched == []
        await gateway.server.app[keys.OPTIONS].update("MediaFetchPrivateEnabled", "true")
        answer = await client.images.edit(model="qwen-image-edit", image=("a.png", PNG, "image/png"), prompt="Bluer",
                                          response_format="b64_json")
        stream = await client.images.edit(model="wan2.5-i2i-preview", image=("a.png", PNG, "image/png"),
                                          prompt="Bluer", response_format="b64_json", stream=True)
        events = [event async for event in stream]
    assert [base64.b64decode(d.b64_json or "") for d in answer.data or ()] == [PNG]
    assert "n" not in dashscope.seen[-2]["body"]["parameters"]  # qwen-image-edit makes one image, takes no n
    assert [e.type for e in events] == ["image_edit.completed"]  # answered whole, told as the stream's end
    assert base64.b64decode(events[0].b64_json) == PNG
    assert dashscope.fetched == ["qwen-2-0.png", "edit-task-1-0.png"]
    await drain(gateway)
    logs = await consume_logs(user)
    assert [log.quota for log in logs] == [per_image("qwen-image-edit", 1), per_image("wan2.5-i2i-preview", 1)]
    assert logs[1].is_stream


async def test_an_upstream_refusal_is_relayed_and_refunded(gateway, dashscope) -> None:
    dashscope.refuse_content = True
    user, token = await customer()
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="inappropriate content") as refused:
            await client.images.edit(model="qwen-image-edit-plus", image=("a.png", PNG, "image/png"), prompt="x")
        with pytest.raises(openai.BadRequestError, match="inappropriate content"):
            await client.images.edit(model="wan2.5-i2i-preview", image=("a.png", PNG, "image/png"), prompt="x")
    assert refused.value.code == "DataInspectionFailed"
    assert len(dashscope.seen) == 2
    await drain(gateway)
    assert await consume_logs(user) == []
    assert await live_balance(gateway, user.id) in (None, START)
    assert (await User.get(id=user.id)).quota == START


@pytest.mark.parametrize(("model", "request_fields", "param"), [
    ("qwen-image-edit-plus", {"mask": ("m.png", PNG, "image/png")}, "mask"),
    ("qwen-image-edit-plus", {"image": [("a.png", PNG, "image/png")] * 4}, "image"),
    ("wanx2.1-imageedit", {"image": [("a.png", PNG, "image/png")] * 2}, "image"),
    ("qwen-image-edit", {"n": 2}, "n"),
    ("wan2.5-i2i-preview", {"n": 5}, "n"),
    ("qwen-image-edit", {"size": "1024x1024"}, "size"),
    ("qwen-image-edit-plus", {"size": "256x256"}, "size"),
    ("wan2.5-i2i-preview", {"size": "2048x2048"}, "size"),
    ("qwen-image-edit-plus", {"image": ("a.txt", b"hello", "text/plain")}, "image"),
    ("wan2.5-i2i-preview", {"image": ("a.gif", b"GIF89a" + b"\0" * 16, "image/gif")}, "image"),
    ("qwen-image-edit-plus", {"image": ("big.png", PNG + b"\0" * (10 * 1024 * 1024), "image/png")}, "image"),
])
async def test_what_the_model_cannot_take_is_a_400_naming_the_field(gateway, dashscope, model, request_fields,
                                                                    param) -> None:
    user, token = await customer()
    edit = {"image": ("a.png", PNG, "image/png"), "prompt": "x", **request_fields}
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError) as refused:
            await client.images.edit(model=model, **edit)
    assert refused.value.status_code == 400 and refused.value.param == param, refused.value.body
    assert dashscope.seen == []
    await drain(gateway)
    assert await consume_logs(user) == []
    assert await live_balance(gateway, user.id) in (None, START)
    assert (await User.get(id=user.id)).quota == START
