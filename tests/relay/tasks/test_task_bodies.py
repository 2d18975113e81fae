# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Task bodies the gateway cannot use answer 400 in the task API's own shape, nothing charged:
known fields of the wrong type (unhashable ones included), non-object bodies, NUL characters, task
ids no task can have. A property-based run over every task route's body checks the same: no 5xx,
the route's error shape, balances and task rows unchanged on a 4xx; and a well-formed body of each
route that takes one is accepted in every run."""
from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from api.upstream.catalogue import ChannelType
from api.upstream.providers import midjourney as mj
from models import Midjourney, Task
from tests.helpers import both_databases
from tests.relay.fakes import add_channel, gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.upstream.providers.fake_tasks import MJ_SECRET, SUNO_KEY, FakeMidjourney, FakeSuno

MJ_MODELS = "mj_imagine,mj_upscale,mj_variation,mj_reroll,mj_blend,mj_describe,mj_modal,mj_upload,mj_shorten," \
            "mj_video,mj_edits,mj_pan,mj_zoom,mj_custom_zoom,mj_inpaint,mj_low_variation,mj_high_variation,swap_face"
EXAMPLES = 200  # the whole run stays well under 30 s


@pytest.fixture
async def world(gateway, aiohttp_server):
    """A Plus channel and a Suno channel on strict fakes, a user with a limited key, and one finished
    drawing and one finished song of theirs (for follow-ups)."""
    proxy, suno_api = FakeMidjourney(), FakeSuno()
    proxy.server, suno_api.server = await aiohttp_server(proxy.app()), await aiohttp_server(suno_api.app())
    drawing = await add_channel(gateway, None, models=MJ_MODELS, type=int(ChannelType.MIDJOURNEY_PLUS),
                                base_url=proxy.url, key=MJ_SECRET)
    music = await add_channel(gateway, None, models="suno_music,suno_lyrics", type=int(ChannelType.SUNO),
                              base_url=suno_api.url, key=SUNO_KEY, name="suno")
    user = await rich_user("alice", quota=100_000_000)
    key = await make_key(user, remain_quota=50_000_000, unlimited=False)
    await Midjourney.create(user_id=user.id, token_id=key.id, action="IMAGINE", mj_id="mj-done", status="SUCCESS",
                            progress="100%", channel_id=drawing.id, submit_time=int(time.time() * 1000))
    await Task.create(task_id="suno-done", platform="suno", user_id=user.id, token_id=key.id, channel_id=music.id,
                      action="MUSIC", status="SUCCESS", progress="100%", submit_time=int(time.time()),
                      data=orjson.dumps([{"id": "clip-1"}]).decode())
    return {"user": user, "key": key, "headers": {"Authorization": f"Bearer sk-{key.key}"}}


async def send(gateway, world, method: str, path: str, raw: bytes | None = None) -> tuple[int, Any]:
    """One call; (status, JSON answer), with the balances and rows checked unchanged on a 4xx."""
    user, key = world["user"], world["key"]
    before = (await live_balance(gateway, user.id), await live_balance(gateway, user.id, key.id),
              await Midjourney.all().count(), await Task.all().count())
    headers = {**world["headers"], "Content-Type": "application/json"}
    resp = await gateway.request(method, path, data=raw, headers=headers)
    text = await resp.read()
    assert resp.status < 500, (path, raw, resp.status, text)
    assert resp.content_type == "application/json", (path, raw, text)
    body = orjson.loads(text)
    platform = "suno" if path.startswith("/suno") else "mj"
    if resp.status >= 400:
        after = (await live_balance(gateway, user.id), await live_balance(gateway, user.id, key.id),
                 await Midjourney.all().count(), await Task.all().count())
        assert after == before, (path, raw, body)
    if platform == "mj" and (resp.status >= 400 or isinstance(body, dict)):
        assert isinstance(body.get("code"), int) and isinstance(body.get("description"), str), (path, raw, body)
    if platform == "suno":
        assert set(body) == {"code", "message", "data"}, (path, raw, body)
    return resp.status, body


CRASHES = [
    ("POST", "/mj/submit/change", {"taskId": "mj-done", "action": [], "index": 1}),
    ("POST", "/mj/submit/change", {"taskId": "mj-done", "action": {"a": 1}, "index": 1}),
    ("POST", "/mj/submit/change", {"taskId": ["mj-done"], "action": "UPSCALE", "index": 1}),
    ("POST", "/mj/submit/imagine", {"prompt": "a fox", "botType": {"a": 1}}),
    ("POST", "/mj/submit/imagine", {"prompt": "a fox", "base64Array": [1, 2]}),
    ("POST", "/mj/submit/imagine", {"prompt": "a fox", "accountFilter": "x"}),
    ("POST", "/mj/submit/imagine", {"prompt": "a fox\u0000"}),
    ("POST", "/mj/submit/blend", {"base64Array": ["a", "b"], "dimensions": []}),
    ("POST", "/mj/submit/action", {"taskId": "mj-done", "customId": "MJ::JOB::upsample::1::x", "chooseSameChannel": 1}),
    ("POST", "/mj/submit/video", {"prompt": "a", "index": "1"}),
    ("POST", "/mj/task/list-by-condition", {"ids": ["a\u0000"]}),
    ("POST", "/mj/submit/imagine", [1, 2]),
    ("POST", "/mj/submit/imagine", "a fox"),
    ("POST", "/mj/submit/imagine", None),
    ("POST", "/suno/submit/music", {"prompt": "x", "mv": ["chirp"]}),
    ("POST", "/suno/submit/music", {"prompt": "x", "tags": {"a": 1}}),
    ("POST", "/suno/submit/music", {"prompt": "x", "continue_clip_id": ["clip-1"], "task_id": "suno-done"}),
    ("POST", "/suno/submit/music", {"prompt": "x", "continue_clip_id": "clip-1", "task_id": {"a": 1}}),
    ("POST", "/suno/submit/music", {"prompt": "x", "make_instrumental": "yes"}),
    ("POST", "/suno/submit/lyrics", {"prompt": 5}),
    ("POST", "/suno/fetch", {"ids": ["x"], "action": []}),
    ("POST", "/suno/fetch", 7),
    ("GET", "/mj/task/%00/fetch", None),
    ("GET", "/mj/task/%00/image-seed", None),
    ("GET", "/suno/fetch/%00", None),
    ("GET", f"/suno/fetch/{'x' * 300}", None),
]


@both_databases
async def test_bodies_the_gateway_cannot_use_are_a_400(gateway, world) -> None:
    for method, path, body in CRASHES:
        status, answer = await send(gateway, world, method, path, None if method == "GET" else orjson.dumps(body))
        assert status in (400, 404), (path, body, answer)


# -- the property-based run --------------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=12)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                          max_size=3), max_leaves=6)
_GOOD: dict[str, st.SearchStrategy[Any]] = {
    "prompt": st.text(min_size=1, max_size=20), "base64": st.just("data:image/png;base64,AA=="),
    "base64Array": st.lists(st.just("data:image/png;base64,AA=="), min_size=1, max_size=5),
    "taskId": st.sampled_from(["mj-done", "mj-nope"]), "action": st.sampled_from(["UPSCALE", "VARIATION", "REROLL"]),
    "index": st.integers(0, 5), "customId": st.sampled_from(["MJ::JOB::upsample::1::x", "MJ::JOB::reroll::0::x::SOLO"]),
    "content": st.sampled_from(["mj-done U1", "mj-done V4", "mj-done R", "mj-nope U1"]),
    "sourceBase64": st.just("AA=="), "targetBase64": st.just("AA=="), "ids": st.lists(st.text(max_size=8), max_size=3),
    "gpt_description_prompt": st.text(min_size=1, max_size=20), "mv": st.sampled_from(["chirp-v3-5"]),
    "task_id": st.sampled_from(["suno-done", "suno-nope"]), "continue_clip_id": st.sampled_from(["clip-1", "clip-x"]),
    "continue_at": st.integers(0, 120), "make_instrumental": st.booleans(), "notifyHook": st.text(max_size=10),
}
_MJ_FIELDS = ["prompt", "base64", "base64Array", "taskId", "action", "index", "customId", "content", "sourceBase64",
              "targetBase64", "ids", "notifyHook", "accountFilter", "botType", "state", "dimensions", "maskBase64",
              "chooseSameChannel", "whatever"]
_SUNO_FIELDS = ["prompt", "gpt_description_prompt", "mv", "task_id", "continue_clip_id", "continue_at",
                "make_instrumental", "title", "tags", "ids", "action", "whatever"]
ROUTES = [f"/mj{p}" for p in mj.SUBMIT_ACTIONS] + ["/mj/task/list-by-condition", "/mj-fast/mj/submit/imagine",
                                                   "/suno/submit/music", "/suno/submit/lyrics", "/suno/fetch"]


# One accepted body per route that takes one (mj_video and mj_edits have no price here): the run
# always sends these first, whatever the generated examples are, so the accepted path is exercised and
# asserted in every run; the generated ones seldom hold only fields of the right types.
IMAGE = "data:image/png;base64,AA=="
WELL_FORMED: list[tuple[str, dict[str, Any]]] = [
    ("/mj/submit/imagine", {"prompt": "a fox"}),
    ("/mj-fast/mj/submit/imagine", {"prompt": "a fox"}),
    ("/mj/submit/change", {"taskId": "mj-done", "action": "UPSCALE", "index": 1}),
    ("/mj/submit/simple-change", {"content": "mj-done V4"}),
    ("/mj/submit/describe", {"base64": IMAGE}),
    ("/mj/submit/blend", {"base64Array": [IMAGE, IMAGE]}),
    ("/mj/submit/action", {"taskId": "mj-done", "customId": "MJ::JOB::upsample::1::x"}),
    ("/mj/submit/modal", {"taskId": "mj-done", "prompt": "a fox"}),
    ("/mj/submit/shorten", {"prompt": "a fox"}),
    ("/mj/submit/upload-discord-images", {"base64Array": [IMAGE]}),
    ("/mj/insight-face/swap", {"sourceBase64": "AA==", "targetBase64": "AA=="}),
    ("/mj/task/list-by-condition", {"ids": ["mj-done"]}),
    ("/suno/submit/music", {"prompt": "a song"}),
    ("/suno/submit/lyrics", {"prompt": "foxes"}),
    ("/suno/fetch", {"ids": ["suno-done"]}),
]


def _field(name: str) -> st.SearchStrategy[Any]:
    good = _GOOD.get(name)
    return _json if good is None else st.one_of(good, _json)


def _fields(path: str) -> st.SearchStrategy[dict[str, Any]]:
    names = _SUNO_FIELDS if path.startswith("/suno") else _MJ_FIELDS
    return st.fixed_dictionaries({}, optional={n: _field(n) for n in names})


def _encoded(path: str, body: Any) -> tuple[str, bytes]:
    return path, body if isinstance(body, bytes) else json.dumps(body).encode()  # integers past 64 bits too


@st.composite
def _request(draw: st.DrawFn) -> tuple[str, bytes]:
    """Any route's fields of any value, any JSON, raw bytes; or a well-formed body with such fields added."""
    if draw(st.integers(0, 3)) == 0:
        path, base = draw(st.sampled_from(WELL_FORMED))
        return _encoded(path, {**draw(_fields(path)), **base})
    path = draw(st.sampled_from(ROUTES))
    return _encoded(path, draw(st.one_of(_fields(path), _json, st.binary(max_size=16).map(lambda b: b"RAW" + b))))


_REQUEST_ID = re.compile(r"\s*\(request id: [^)]*\)")


# Examples are drawn on a thread while the gateway's event loop runs on; its own use of `random`
# (channel picks) then looks to hypothesis like a strategy using it.
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
@both_databases
async def test_no_task_body_breaks_the_gateway(gateway, world) -> None:
    loop = asyncio.get_running_loop()
    statuses: list[int] = []
    answered: dict[tuple[str, bytes], int] = {}
    refusals: dict[str, int] = {}

    def check(request: tuple[str, bytes]) -> None:
        path, raw = request
        status, body = asyncio.run_coroutine_threadsafe(send(gateway, world, "POST", path, raw), loop).result(60)
        statuses.append(status)
        answered[request] = status
        if status >= 400:
            said = str(body.get("description") or body.get("message") or body) if isinstance(body, dict) else ""
            said = _REQUEST_ID.sub("", said)[:120]
            refusals[said] = refusals.get(said, 0) + 1

    run = given(_request())(check)
    for path, body in WELL_FORMED:
        run = example(_encoded(path, body))(run)
    run = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))(run)
    started = time.monotonic()
    await asyncio.to_thread(run)
    elapsed = time.monotonic() - started
    common = sorted(refusals.items(), key=lambda kv: -kv[1])[:8]
    well_formed = {path: answered.get(_encoded(path, body)) for path, body in WELL_FORMED}
    assert all(status == 200 for status in well_formed.values()), (well_formed, common)
    assert len(statuses) >= EXAMPLES // 2 and {200, 400} <= set(statuses), (sorted(set(statuses)), common)
    print(f"{len(statuses)} task bodies in {elapsed:.1f} s")
