# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The Wan image models on Alibaba channels (type 17) through the official openai SDK against the strict
fake of tests/upstream/providers/ali/fake_dashscope_images.py: wan2.6-image and wan2.7-image(-pro) edits, and wan2.7's
text-to-image on `/v1/images/generations`, sent as a task to DashScope's image-generation endpoint and
polled to its end; billed per image produced; an upstream refusal relayed and refunded; what the model
cannot take refused with a 400 naming the field, nothing sent or charged."""
from __future__ import annotations

from typing import Any

import openai
import pytest

from models import User
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user  # noqa: F401
from tests.upstream.providers.ali.fake_dashscope_images import PNG
from tests.upstream.providers.ali.test_ali_image_edits import JPEG, START, customer, dashscope, inline, per_image  # noqa: F401
from tests.upstream.providers.kit import consume_logs, sdk, settled_log

PATH = "/api/v1/services/aigc/image-generation/generation"


async def test_wan26_edit_is_a_task_with_the_text_first_billed_per_image(gateway, dashscope) -> None:
    user, token = await customer()
    async with sdk(gateway, token) as client:
        answer = await client.images.edit(model="wan2.6-image", prompt="The style of image 1, the background of 2",
                                          image=[("a.png", PNG, "image/png"), ("b.jpg", JPEG, "image/jpeg")],
                                          n=2, size="1024x1024")
    assert [d.url for d in answer.data or ()] == [f"{dashscope.url}/files/wan-image-task-1-{i}.png" for i in range(2)]
    [seen] = dashscope.seen
    assert seen["path"] == PATH and seen["headers"]["X-DashScope-Async"] == "enable"
    assert seen["body"] == {"model": "wan2.6-image", "input": {"messages": [{"role": "user", "content": [
        {"text": "The style of image 1, the background of 2"}, {"image": inline(PNG)},
        {"image": inline(JPEG, "image/jpeg")}]}]}, "parameters": {"n": 2, "size": "1024*1024"}}
    assert dashscope.tasks["wan-image-task-1"]["polls"] == 2
    log = await settled_log(gateway, user)
    assert log.quota == per_image("wan2.6-image", 2) == 30_000
    assert (await User.get(id=user.id)).quota == START - 30_000


async def test_wan27_edit_fewer_produced_pays_those(gateway, dashscope) -> None:
    """n is always sent (wan2.6-image makes 4 when it is left out); one of three produced: one paid."""
    dashscope.produce = 1
    user, token = await customer()
    async with sdk(gateway, token) as client:
        answer = await client.images.edit(model="wan2.7-image-pro", prompt="Graffiti of image 2 on the car of 1",
                                          image=[("a.png", PNG, "image/png")] * 9, n=3, size="2048x2048")
    assert len(answer.data or ()) == 1
    body = dashscope.seen[0]["body"]
    assert len(body["input"]["messages"][0]["content"]) == 10 and body["parameters"] == {"n": 3, "size": "2048*2048"}
    log = await settled_log(gateway, user)
    assert log.quota == per_image("wan2.7-image-pro", 1)
    assert await live_balance(gateway, user.id) == START - per_image("wan2.7-image-pro", 1)


async def test_wan27_text_to_image_on_generations(gateway, dashscope) -> None:
    user, token = await customer()
    async with sdk(gateway, token) as client:
        raw = await client.images.with_raw_response.generate(
            model="wan2.7-image-pro", prompt="A flower shop", n=2, size="4096x4096", quality="high")
        stream = await client.images.generate(model="wan2.7-image", prompt="A flower shop", size="1536x1024",
                                              stream=True)
        events = [event async for event in stream]
    answer = raw.parse()
    assert [d.url for d in answer.data or ()] == [f"{dashscope.url}/files/wan-image-task-1-{i}.png" for i in range(2)]
    assert raw.headers["X-Gateway-Dropped"] == "quality"
    first, second = dashscope.seen
    assert first["path"] == second["path"] == PATH
    assert first["body"] == {"model": "wan2.7-image-pro", "input": {"messages": [{"role": "user", "content": [
        {"text": "A flower shop"}]}]}, "parameters": {"n": 2, "size": "4096*4096"}}
    assert second["body"]["parameters"] == {"n": 1, "size": "1536*1024"}
    assert [e.type for e in events] == ["image_generation.completed"]  # answered whole, told as the stream's end
    await drain(gateway)
    logs = await consume_logs(user)
    assert [log.quota for log in logs] == [per_image("wan2.7-image-pro", 2), per_image("wan2.7-image", 1)]
    assert logs[1].is_stream


async def test_an_upstream_refusal_is_relayed_and_refunded(gateway, dashscope) -> None:
    dashscope.refuse_content = True
    user, token = await customer()
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="inappropriate content") as refused:
            await client.images.edit(model="wan2.6-image", image=("a.png", PNG, "image/png"), prompt="x")
        with pytest.raises(openai.BadRequestError, match="inappropriate content"):
            await client.images.generate(model="wan2.7-image", prompt="x")
    assert refused.value.code == "DataInspectionFailed"
    assert len(dashscope.seen) == 2
    await drain(gateway)
    assert await consume_logs(user) == []
    assert (await User.get(id=user.id)).quota == START


EDITS: list[tuple[str, dict[str, Any], str]] = [
    ("wan2.6-image", {"mask": ("m.png", PNG, "image/png")}, "mask"),
    ("wan2.6-image", {"image": [("a.png", PNG, "image/png")] * 5}, "image"),
    ("wan2.7-image", {"image": [("a.png", PNG, "image/png")] * 10}, "image"),
    ("wan2.6-image", {"n": 5}, "n"),
    ("wan2.6-image", {"size": "4096x4096"}, "size"),
    ("wan2.7-image-pro", {"size": "4096x4096"}, "size"),  # 4K: text-to-image only
    ("wan2.7-image", {"size": "512x512"}, "size"),
    ("wan2.7-image", {"image": ("a.gif", b"GIF89a" + b"\0" * 16, "image/gif")}, "image"),
    ("wan2.6-image", {"image": ("big.png", PNG + b"\0" * (10 * 1024 * 1024), "image/png")}, "image"),
]
GENERATIONS: list[tuple[str, dict[str, Any], str]] = [
    ("wan2.7-image", {"n": 5}, "n"),
    ("wan2.7-image", {"size": "4096x4096"}, "size"),
    ("wan2.7-image-pro", {"size": "8192x8192"}, "size"),
]


@pytest.mark.parametrize(("kind", "model", "request_fields", "param"),
                         [("edit", *case) for case in EDITS] + [("generate", *case) for case in GENERATIONS])
async def test_what_the_model_cannot_take_is_a_400_naming_the_field(gateway, dashscope, kind, model,
                                                                    request_fields, param) -> None:
    user, token = await customer()
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError) as refused:
            if kind == "edit":
                await client.images.edit(model=model, **{"image": ("a.png", PNG, "image/png"), "prompt": "x",
                                                          **request_fields})
            else:
                await client.images.generate(model=model, prompt="x", **request_fields)
    assert refused.value.status_code == 400 and refused.value.param == param, refused.value.body
    assert dashscope.seen == []
    await drain(gateway)
    assert await consume_logs(user) == []
    assert await live_balance(gateway, user.id) in (None, START)
    assert (await User.get(id=user.id)).quota == START
