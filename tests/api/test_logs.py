"""Usage logs: filters, paging, what a plain user may see, statistics, clearing; the dashboard data."""
from __future__ import annotations

import time

import orjson
import pytest

from models import Log, QuotaData, User
from models.enums import LogType, Role
from tests.helpers import ApiClient, both_databases, make_user

HOUR = 3600
ADMIN_OTHER = orjson.dumps({"model_ratio": 2.5, "group_ratio": 1, "frt": 320,
                            "admin_info": {"use_channel": [3, 7]}}).decode()



def consume(user: User, now: int, *, ago: int = 0, token: str = "main", model: str = "gpt-4o", channel: int = 7,
            quota: int = 100, prompt: int = 10, completion: int = 20) -> Log:
    return Log(user_id=user.id, username=user.username, type=int(LogType.CONSUME), created_at=now - ago,
               token_name=token, model_name=model, channel_id=channel, quota=quota, prompt_tokens=prompt,
               completion_tokens=completion, other=ADMIN_OTHER, content="")


@pytest.fixture
async def people(login_as):
    now = int(time.time())  # when the rows are written: "the last minute" is this test's own
    alice_api, alice = await login_as("alice")
    admin_api, admin = await login_as("boss", role=Role.ADMIN)
    bob = await make_user("bob")
    await Log.bulk_create([
        consume(alice, now, ago=10),  # recent: counts in rpm/tpm
        consume(alice, now, ago=30, token="ci", model="gpt-4o-mini", channel=3, quota=7, prompt=1, completion=2),
        consume(alice, now, ago=2 * HOUR, quota=1000, prompt=400, completion=600),
        consume(bob, now, ago=5, model="claude-3-haiku-20240307", channel=3, quota=50, prompt=5, completion=5),
        consume(bob, now, ago=3 * HOUR, quota=9),
        Log(user_id=alice.id, username="alice", type=int(LogType.TOPUP), created_at=now - HOUR, quota=500000,
            content="Redeemed code #1"),
        Log(user_id=admin.id, username="boss", type=int(LogType.MANAGE), created_at=now - 4 * HOUR,
            content="option changed"),
    ])
    return {"alice": (alice_api, alice), "admin": (admin_api, admin), "bob": bob, "now": now}


def ids(body: dict) -> list[tuple[str, int]]:
    return [(i["username"], i["quota"]) for i in body["data"]["items"]]


@both_databases
async def test_admin_sees_every_log_with_filters(people) -> None:
    now = people["now"]
    admin, _ = people["admin"]
    body = await admin.get("/api/log/?p=1&page_size=3")
    assert body["data"]["total"] == 7 and body["data"]["page"] == 1 and body["data"]["page_size"] == 3
    assert ids(body) == [("bob", 50), ("alice", 100), ("alice", 7)]  # newest first
    assert ids(await admin.get("/api/log/?p=3&page_size=3")) == [("boss", 0)]
    first = (await admin.get("/api/log/"))["data"]["items"][0]
    assert first["channel"] == 3 and orjson.loads(first["other"])["admin_info"] == {"use_channel": [3, 7]}

    cases = {
        "type=2": 5, "type=1": 1, "type=3": 1, "type=0": 7,
        "username=alice": 4, "username=alice&type=2": 3,
        "token_name=ci": 1, "model_name=gpt-4o": 3, "channel=3": 2,
        f"start_timestamp={now - 60}": 3, f"end_timestamp={now - HOUR}": 4,
        f"start_timestamp={now - 3 * HOUR}&end_timestamp={now - HOUR}": 3,
        "username=alice&model_name=gpt-4o&channel=7&token_name=main": 2,
    }
    for query, total in cases.items():
        assert (await admin.get(f"/api/log/?{query}"))["data"]["total"] == total, query


@both_databases
async def test_a_user_sees_only_their_own_logs_without_admin_fields(people) -> None:
    now = people["now"]
    alice, _ = people["alice"]
    body = await alice.get("/api/log/self/?p=1&page_size=10")
    assert ids(body) == [("alice", 100), ("alice", 7), ("alice", 500000), ("alice", 1000)]
    for item in body["data"]["items"]:
        assert "channel" not in item
        assert "admin_info" not in item["other"]
    consume_item = body["data"]["items"][0]
    assert orjson.loads(consume_item["other"]) == {"model_ratio": 2.5, "group_ratio": 1, "frt": 320}
    # username and channel are admin filters: a user cannot widen their view with them.
    assert (await alice.get("/api/log/self/?username=bob"))["data"]["total"] == 4
    assert (await alice.get("/api/log/self/?channel=3"))["data"]["total"] == 4
    assert (await alice.get("/api/log/self?token_name=ci"))["data"]["total"] == 1
    assert (await alice.get("/api/log/self/?type=1"))["data"]["total"] == 1
    assert (await alice.get(f"/api/log/self/?start_timestamp={now - 60}"))["data"]["total"] == 2


@both_databases
async def test_stat_quota_and_last_minute_rates(people) -> None:
    now = people["now"]
    admin, _ = people["admin"]
    alice, _ = people["alice"]
    assert (await admin.get("/api/log/stat"))["data"] == {"quota": 1166, "rpm": 3, "tpm": 43, "fallbacks": 0}
    assert (await admin.get("/api/log/stat?username=bob"))["data"] == {"quota": 59, "rpm": 1, "tpm": 10, "fallbacks": 0}
    assert (await admin.get("/api/log/stat?channel=3"))["data"] == {"quota": 57, "rpm": 2, "tpm": 13, "fallbacks": 0}
    assert (await alice.get("/api/log/self/stat"))["data"] == {"quota": 1107, "rpm": 2, "tpm": 33, "fallbacks": 0}
    assert (await alice.get("/api/log/self/stat?model_name=gpt-4o"))["data"] == {
        "quota": 1100, "rpm": 1, "tpm": 30, "fallbacks": 0}
    body = await alice.get(f"/api/log/self/stat?start_timestamp={now - 60}&username=bob")
    assert body["data"] == {"quota": 107, "rpm": 2, "tpm": 33, "fallbacks": 0}
    assert (await alice.get("/api/log/self/stat?token_name=none"))["data"] == {
        "quota": 0, "rpm": 0, "tpm": 0, "fallbacks": 0}
    # A request another model of its chain answered is counted (its `other.fallback`).
    row = await Log.filter(type=int(LogType.CONSUME), username="alice").order_by("-created_at").first()
    assert row is not None
    fallback = {"requested": "a", "answered": "b"}
    row.other = orjson.dumps({**orjson.loads(row.other or "{}"), "fallback": fallback}).decode()
    await row.save()
    assert (await alice.get("/api/log/self/stat"))["data"]["fallbacks"] == 1
    assert (await admin.get("/api/log/stat?username=bob"))["data"]["fallbacks"] == 0


async def test_log_routes_role_matrix(people, anon: ApiClient) -> None:
    now = people["now"]
    alice, _ = people["alice"]
    admin, _ = people["admin"]
    for path in ("/api/log/", "/api/log/stat"):
        body = await alice.get(path)
        assert body == {"success": False, "message": "You are not allowed to do this", "data": None}
        await anon.get(path, expect_status=401)
    for path in ("/api/log/self/", "/api/log/self/stat"):
        await anon.get(path, expect_status=401)
        assert (await admin.get(path))["success"]
    for api in (alice, admin):
        body = await api.delete(f"/api/log/?target_timestamp={now}")
        assert body["message"] == "You are not allowed to do this"
    assert await Log.all().count() == 7


@both_databases
async def test_root_clears_logs_older_than_a_time(people, root: ApiClient) -> None:
    now = people["now"]
    body = await root.delete(f"/api/log/?target_timestamp={now - HOUR}")
    assert body == {"success": True, "message": "", "data": 3}
    assert await Log.filter(created_at__lt=now - HOUR).count() == 0 and await Log.all().count() == 4
    assert (await root.delete(f"/api/log/?target_timestamp={now - HOUR}"))["data"] == 0
    body = await root.delete("/api/log/")
    assert body["message"] == "Please choose the log record time"
    body = await root.delete("/api/log/?target_timestamp=yesterday")
    assert body["message"] == "Invalid parameter: target_timestamp"


async def test_page_size_is_bounded(people) -> None:
    admin, _ = people["admin"]
    data = (await admin.get("/api/log/?p=0&page_size=100000"))["data"]
    assert data["page"] == 1 and data["page_size"] == 100 and len(data["items"]) == 7


# -- dashboard data --------------------------------------------------------------------------------
NO_CACHE = {"prompt_tokens": 0, "cache_tokens": 0, "saved_quota": 0}  # rows written without the cache's figures


@pytest.fixture
async def hourly(people):
    now = people["now"]
    alice = people["alice"][1]
    bob = people["bob"]
    hour = now - now % HOUR
    await QuotaData.bulk_create([
        QuotaData(user_id=alice.id, username="alice", model_name="gpt-4o", created_at=hour, count=3, quota=300,
                  token_used=90),
        QuotaData(user_id=bob.id, username="bob", model_name="gpt-4o", created_at=hour, count=1, quota=50,
                  token_used=10),
        QuotaData(user_id=alice.id, username="alice", model_name="gpt-4o-mini", created_at=hour - HOUR, count=2,
                  quota=20, token_used=6),
        QuotaData(user_id=alice.id, username="alice", model_name="gpt-4o", created_at=hour - 40 * 86400, count=9,
                  quota=900, token_used=99),
    ])
    return hour


@both_databases
async def test_admin_dashboard_sums_per_model_and_hour(people, hourly: int) -> None:
    now = people["now"]
    admin, _ = people["admin"]
    body = await admin.get(f"/api/data/?start_timestamp={hourly - 2 * HOUR}&end_timestamp={now}")
    assert body["data"] == [
        {"model_name": "gpt-4o-mini", "created_at": hourly - HOUR, "count": 2, "quota": 20, "token_used": 6,
         **NO_CACHE},
        {"model_name": "gpt-4o", "created_at": hourly, "count": 4, "quota": 350, "token_used": 100,
         **NO_CACHE},
    ]
    body = await admin.get(f"/api/data/?start_timestamp={hourly - 2 * HOUR}&end_timestamp={now}&username=bob")
    assert body["data"] == [{"model_name": "gpt-4o", "created_at": hourly, "count": 1, "quota": 50, "token_used": 10,
                             **NO_CACHE}]
    span = f"start_timestamp={hourly - 2 * HOUR}&end_timestamp={now}"
    per_user = (await admin.get(f"/api/data/?{span}&by_user=1"))["data"]
    assert {"username": "bob", "model_name": "gpt-4o", "created_at": hourly, "count": 1, "quota": 50,
            "token_used": 10, **NO_CACHE} in per_user
    assert sum(r["quota"] for r in per_user) == 370 and len({r["username"] for r in per_user}) > 1
    whole = await admin.get(f"/api/data/?start_timestamp={hourly - 50 * 86400}&end_timestamp={now}")
    assert sum(r["quota"] for r in whole["data"]) == 1270  # no span limit for the admin view


async def test_own_dashboard_and_its_span_limit(people, hourly: int, anon: ApiClient) -> None:
    now = people["now"]
    alice, _ = people["alice"]
    body = await alice.get(f"/api/data/self?start_timestamp={hourly - 2 * HOUR}&end_timestamp={now}")
    assert [(r["model_name"], r["quota"], r["token_used"]) for r in body["data"]] == [
        ("gpt-4o-mini", 20, 6), ("gpt-4o", 300, 90)]
    assert len((await alice.get("/api/data/self"))["data"]) == 2  # default: the last 7 days
    body = await alice.get(f"/api/data/self?start_timestamp={now - 31 * 86400}&end_timestamp={now}")
    assert body == {"success": False, "message": "The time span cannot exceed 30 days", "data": None}
    body = await alice.get(f"/api/data/self?start_timestamp={now}&end_timestamp={now - 10}",
                           headers={"Accept-Language": "zh"})
    assert body["message"] == "开始时间不能晚于结束时间"
    assert (await alice.get("/api/data/"))["message"] == "You are not allowed to do this"
    await anon.get("/api/data/self", expect_status=401)


@both_databases
async def test_dashboard_sums_the_prompt_cache_figures(people, hourly: int) -> None:
    """Input tokens, the cached ones among them and what the cache saved, summed like the other
    figures: per (model, hour), per user for the admin, and the user's own."""
    admin, _ = people["admin"]
    alice_api, alice = people["alice"]
    bob = people["bob"]
    hour = hourly - 5 * HOUR
    await QuotaData.create(user_id=alice.id, username="alice", model_name="claude-sonnet-4", created_at=hour,
                           count=4, quota=8000, token_used=12000, prompt_tokens=10000, cache_tokens=7500,
                           saved_quota=2700)
    await QuotaData.create(user_id=bob.id, username="bob", model_name="claude-sonnet-4", created_at=hour,
                           count=1, quota=1500, token_used=2100, prompt_tokens=2000, cache_tokens=0, saved_quota=0)
    await QuotaData.create(user_id=alice.id, username="alice", model_name="claude-sonnet-4", created_at=hour + HOUR,
                           count=2, quota=3000, token_used=5000, prompt_tokens=4000, cache_tokens=3600,
                           saved_quota=1296)
    span = f"start_timestamp={hour}&end_timestamp={hour + HOUR}"
    body = await admin.get(f"/api/data/?{span}")
    assert body["data"] == [
        {"model_name": "claude-sonnet-4", "created_at": hour, "count": 5, "quota": 9500, "token_used": 14100,
         "prompt_tokens": 12000, "cache_tokens": 7500, "saved_quota": 2700},
        {"model_name": "claude-sonnet-4", "created_at": hour + HOUR, "count": 2, "quota": 3000, "token_used": 5000,
         "prompt_tokens": 4000, "cache_tokens": 3600, "saved_quota": 1296},
    ]
    per_user = (await admin.get(f"/api/data/?{span}&by_user=1"))["data"]
    assert [(r["username"], r["prompt_tokens"], r["cache_tokens"], r["saved_quota"]) for r in per_user] == [
        ("alice", 10000, 7500, 2700), ("bob", 2000, 0, 0), ("alice", 4000, 3600, 1296)]
    own = (await alice_api.get(f"/api/data/self?{span}"))["data"]
    assert [(r["prompt_tokens"], r["cache_tokens"], r["saved_quota"]) for r in own] == [
        (10000, 7500, 2700), (4000, 3600, 1296)]
