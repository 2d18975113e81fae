"""Drawing and async task lists: who may call which route, own rows only, filters, paging."""
from __future__ import annotations

import pytest

from models import Midjourney, Task
from models.enums import Role
from tests.helpers import ApiClient, both_databases, make_user

T0 = 1_700_000_000  # seconds; drawing tasks keep submit_time in milliseconds
MS = 1000


@pytest.fixture
async def people(login_as):
    alice_api, alice = await login_as("alice")
    admin_api, admin = await login_as("boss", role=Role.ADMIN)
    bob = await make_user("bob")
    # Inserted oldest first: ids grow with submit_time.
    await Midjourney.bulk_create([
        Midjourney(user_id=alice.id, mj_id="mj-a1", action="IMAGINE", prompt="a cat", channel_id=3,
                   submit_time=(T0 + 0) * MS, finish_time=(T0 + 30) * MS, status="SUCCESS", progress="100%",
                   code=1, image_url="https://img.example/a1.png", lease_until=123),
        Midjourney(user_id=bob.id, mj_id="mj-b1", action="UPSCALE", channel_id=5, submit_time=(T0 + 100) * MS,
                   status="IN_PROGRESS", progress="40%"),
        Midjourney(user_id=alice.id, mj_id="mj-a2", action="VARIATION", channel_id=5, submit_time=(T0 + 200) * MS,
                   status="FAILURE", progress="100%", fail_reason="banned prompt"),
        Midjourney(user_id=alice.id, mj_id="mj-a3", action="DESCRIBE", channel_id=3, submit_time=(T0 + 300) * MS,
                   status="SUBMITTED", progress="0%"),
    ])
    await Task.bulk_create([
        Task(user_id=alice.id, task_id="t-a1", platform="suno", action="MUSIC", status="SUCCESS", progress="100%",
             channel_id=7, submit_time=T0, finish_time=T0 + 60, data='{"clips": []}', lease_until=9),
        Task(user_id=bob.id, task_id="t-b1", platform="suno", action="LYRICS", status="FAILURE", progress="100%",
             channel_id=8, submit_time=T0 + 100, fail_reason="upstream"),
        Task(user_id=alice.id, task_id="t-a2", platform="kling", action="MUSIC", status="IN_PROGRESS",
             progress="50%", channel_id=8, submit_time=T0 + 200),
        Task(user_id=alice.id, task_id="t-a3", platform="suno", action="LYRICS", status="QUEUED",
             channel_id=7, submit_time=T0 + 300),
    ])
    return {"alice": alice_api, "admin": admin_api, "alice_id": alice.id, "bob_id": bob.id}


def mj_ids(body: dict) -> list[str]:
    assert body["success"], body
    return [i["mj_id"] for i in body["data"]["items"]]


def task_ids(body: dict) -> list[str]:
    assert body["success"], body
    return [i["task_id"] for i in body["data"]["items"]]


async def test_task_routes_role_matrix(people, anon: ApiClient) -> None:
    alice, admin = people["alice"], people["admin"]
    for path in ("/api/mj/", "/api/mj", "/api/task/", "/api/task"):
        assert await alice.get(path) == {"success": False, "message": "You are not allowed to do this", "data": None}
        await anon.get(path, expect_status=401)
        assert (await admin.get(path))["data"]["total"] == 4
    for path in ("/api/mj/self/", "/api/mj/self", "/api/task/self", "/api/task/self/"):
        await anon.get(path, expect_status=401)
        assert (await alice.get(path))["data"]["total"] == 3
        assert (await admin.get(path))["data"] == {"items": [], "total": 0, "page": 0, "page_size": 10}


async def test_a_user_sees_only_their_own_tasks_without_channel(people) -> None:
    alice = people["alice"]
    body = await alice.get("/api/mj/self/")
    assert mj_ids(body) == ["mj-a3", "mj-a2", "mj-a1"]  # newest first
    first = body["data"]["items"][-1]
    assert first["user_id"] == people["alice_id"] and first["submit_time"] == T0 * MS
    assert first["finish_time"] == (T0 + 30) * MS
    assert first["image_url"] == "/mj/image/mj-a1"  # MjForwardUrlEnabled: through the gateway, same origin
    assert first["prompt"] == "a cat" and first["code"] == 1 and first["progress"] == "100%"
    body = await alice.get("/api/task/self")
    assert task_ids(body) == ["t-a3", "t-a2", "t-a1"]
    assert body["data"]["items"][-1]["data"] == '{"clips": []}'
    for item in (await alice.get("/api/mj/self/"))["data"]["items"] + body["data"]["items"]:
        assert "channel_id" not in item and "lease_until" not in item and "billing" not in item
    # The channel is an admin filter: a user cannot narrow (nor widen) their view with it.
    assert mj_ids(await alice.get("/api/mj/self/?channel_id=5")) == ["mj-a3", "mj-a2", "mj-a1"]
    assert task_ids(await alice.get("/api/task/self?channel_id=8")) == ["t-a3", "t-a2", "t-a1"]
    # Another user's task id finds nothing.
    assert mj_ids(await alice.get("/api/mj/self/?mj_id=mj-b1")) == []
    assert task_ids(await alice.get("/api/task/self?task_id=t-b1")) == []
    # The admin view carries the channel.
    admin_items = (await people["admin"].get("/api/mj/"))["data"]["items"]
    assert [i["channel_id"] for i in admin_items] == [3, 5, 5, 3]
    assert all("lease_until" not in i for i in admin_items)


@both_databases
async def test_task_list_filters(people) -> None:
    admin, alice = people["admin"], people["alice"]
    mj_cases = {
        "channel_id=5": ["mj-a2", "mj-b1"],
        "mj_id=mj-b1": ["mj-b1"],
        f"start_timestamp={(T0 + 100) * MS}": ["mj-a3", "mj-a2", "mj-b1"],
        f"end_timestamp={(T0 + 100) * MS}": ["mj-b1", "mj-a1"],
        f"start_timestamp={(T0 + 50) * MS}&end_timestamp={(T0 + 250) * MS}": ["mj-a2", "mj-b1"],
        f"channel_id=3&start_timestamp={(T0 + 1) * MS}": ["mj-a3"],
        "channel_id=&mj_id=": ["mj-a3", "mj-a2", "mj-b1", "mj-a1"],
    }
    for query, expected in mj_cases.items():
        assert mj_ids(await admin.get(f"/api/mj/?{query}")) == expected, query
    # Seconds given to the drawing list would select rows submitted around 1970: none.
    assert mj_ids(await admin.get(f"/api/mj/?end_timestamp={T0 + 400}")) == []
    assert mj_ids(await alice.get(f"/api/mj/self/?start_timestamp={(T0 + 150) * MS}")) == ["mj-a3", "mj-a2"]

    task_cases = {
        "channel_id=8": ["t-a2", "t-b1"],
        "task_id=t-a1": ["t-a1"],
        "platform=suno": ["t-a3", "t-b1", "t-a1"],
        "status=FAILURE": ["t-b1"],
        "action=LYRICS": ["t-a3", "t-b1"],
        f"start_timestamp={T0 + 100}": ["t-a3", "t-a2", "t-b1"],
        f"end_timestamp={T0 + 100}": ["t-b1", "t-a1"],
        f"start_timestamp={T0 + 50}&end_timestamp={T0 + 250}&platform=suno": ["t-b1"],
        "channel_id=7&action=MUSIC": ["t-a1"],
    }
    for query, expected in task_cases.items():
        assert task_ids(await admin.get(f"/api/task/?{query}")) == expected, query
    assert task_ids(await alice.get("/api/task/self?platform=suno&action=LYRICS")) == ["t-a3"]
    assert task_ids(await alice.get(f"/api/task/self?start_timestamp={T0 + 100}&status=IN_PROGRESS")) == ["t-a2"]


async def test_task_list_paging_is_zero_based(people) -> None:
    admin, alice = people["admin"], people["alice"]
    body = await admin.get("/api/mj/?p=0&page_size=3")
    assert body["data"]["total"] == 4 and body["data"]["page"] == 0 and body["data"]["page_size"] == 3
    assert mj_ids(body) == ["mj-a3", "mj-a2", "mj-b1"]
    assert mj_ids(await admin.get("/api/mj/?p=1&page_size=3")) == ["mj-a1"]
    assert mj_ids(await admin.get("/api/mj/?p=2&page_size=3")) == []
    assert mj_ids(await admin.get("/api/mj/?p=-4&page_size=3")) == ["mj-a3", "mj-a2", "mj-b1"]
    body = await alice.get("/api/task/self?p=1&page_size=2")
    assert task_ids(body) == ["t-a1"] and body["data"]["total"] == 3 and body["data"]["page"] == 1
    body = await admin.get("/api/task/?page_size=1000")
    assert body["data"]["page_size"] == 100 and len(body["data"]["items"]) == 4
    for path in ("/api/mj/?p=x", "/api/task/?start_timestamp=yesterday", "/api/mj/?channel_id=abc"):
        body = await admin.get(path)
        assert body["success"] is False and body["message"].startswith("Invalid parameter"), path


async def test_image_urls_as_stored_when_forwarding_is_off(people, root) -> None:
    assert (await root.put("/api/option/", {"key": "MjForwardUrlEnabled", "value": "false"}))["success"]
    items = (await people["alice"].get("/api/mj/self/"))["data"]["items"]
    assert items[-1]["image_url"] == "https://img.example/a1.png"


async def test_a_stored_callback_is_never_shown(people) -> None:
    """A row stored before callbacks were stripped on the way in keeps midjourney-proxy's
    `notifyHook` (a signed callback URL) in its properties: neither list shows it."""
    hook = "https://gw.example/mj/notify?channel=3&sig=0123456789abcdef"
    await Midjourney.filter(mj_id="mj-a1").update(
        properties=f'{{"notifyHook": "{hook}", "finalPrompt": "a cat", "note": "{hook}"}}')
    for api, path in ((people["alice"], "/api/mj/self"), (people["admin"], "/api/mj/")):
        body = await api.get(path)
        row = next(i for i in body["data"]["items"] if i["mj_id"] == "mj-a1")
        assert "sig=" not in str(body) and "notifyHook" not in row["properties"], row
        assert "a cat" in row["properties"]
