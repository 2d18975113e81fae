# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Failed relay calls leave one error log row (no charge, the reason masked, the status, the channel
tried, the request id), written by the workers from a Redis queue and bounded per key; filters,
what a user sees, retention. Refunds read as refunds: negative, linked to the charge they give
back, and the log page's "consumed" equal to the dashboard's total."""
from __future__ import annotations

import asyncio
import time
from dataclasses import asdict

import orjson
import pytest

from api import keys
from api.relay.tasks.billing import refund_id
from api.relay.tasks.poll import SUNO, poll
from api.services import error_logs, logs, redis_keys
from api.services.error_logs import ErrorLogQueue, ErrorRow, write_pending
from api.services.set_aside import kept
from api.upstream.catalogue import ChannelType
from models import Log, QuotaData, Task, User
from models.enums import LogType, Role
from tests.helpers import ApiClient, both_databases, eventually, make_user
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    drain,
    gateway,
    headers_for,
    live_balance,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)
from tests.upstream.providers.fake_tasks import SUNO_KEY, FakeSuno
from workers.actors.logs import purge_consume_logs

CHAT = {"model": "gpt-4", "messages": [{"role": "user", "content": "Say hello."}]}
UPSTREAM_KEY = "sk-upstream-secret-0123456789"


async def call(gateway, token, body: dict = CHAT, path: str = "/v1/chat/completions", headers: dict | None = None):
    resp = await gateway.post(path, json=body, headers={**(headers_for(token) if token else {}), **(headers or {})})
    return resp, orjson.loads(await resp.read())


async def written(gateway) -> list[Log]:
    """What the workers write: the queued rows (once the background pushes are done) into the table."""
    state = relay_of(gateway)
    while state.background:
        await asyncio.gather(*list(state.background))
    await write_pending(gateway.server.app[keys.STORE])
    return await Log.filter(type=LogType.ERROR).order_by("id")


async def set_option(gateway, key: str, value: str) -> None:
    await gateway.server.app[keys.OPTIONS].update(key, value)


# -- one row per failure, each with its facts ----------------------------------------------------------


@both_databases
async def test_every_failure_class_writes_one_error_row_without_charge(gateway, upstreams) -> None:
    user = await rich_user()
    token = await make_key(user, name="ci-key")
    before = (await User.get(id=user.id)).quota

    # No price configured for the model (a channel offers it).
    plain = await upstreams()
    await add_channel(gateway, plain, models="my-own-model,jina-reranker-v2-base-multilingual")
    resp, body = await call(gateway, token, {**CHAT, "model": "my-own-model"})
    assert resp.status == 400 and body["error"]["code"] == "model_price_error"
    no_price_id = resp.headers["X-Oneapi-Request-Id"]
    # No channel for a priced model.
    resp, body = await call(gateway, token, {**CHAT, "model": "gpt-4o"})
    assert resp.status == 503 and body["error"]["code"] == "no_available_channel"
    # A conversion the channel cannot do (rerank on an OpenAI channel).
    resp, body = await call(gateway, token, {"model": "jina-reranker-v2-base-multilingual", "query": "q",
                                             "documents": ["a"]}, "/v1/rerank")
    assert resp.status == 501
    # The upstream's 5xx after a retry on a second channel; its text quotes the key and the address.
    await set_option(gateway, "RetryTimes", "1")
    bad1, bad2 = await upstreams(fail_status=502), await upstreams(fail_status=500)
    first = await add_channel(gateway, bad1, priority=5, key=UPSTREAM_KEY, name="first")
    second = await add_channel(gateway, bad2, priority=1, key=UPSTREAM_KEY, name="second")
    bad2.fail_body = {"error": {"message": f"key {UPSTREAM_KEY} refused by {bad2.url}/v1", "type": "server_error",
                                "code": "boom"}}
    resp, body = await call(gateway, token, {**CHAT, "stream": True})
    assert resp.status == 500 and UPSTREAM_KEY not in body["error"]["message"]
    upstream_id = resp.headers["X-Oneapi-Request-Id"]
    # The upstream's 4xx (not retried: 400 on an OpenAI channel).
    bad1.fail_status = 400
    resp, body = await call(gateway, token)
    assert resp.status == 400

    rows = await written(gateway)
    assert [(r.model_name, orjson.loads(r.other)["status_code"]) for r in rows] == [
        ("my-own-model", 400), ("gpt-4o", 503), ("jina-reranker-v2-base-multilingual", 501), ("gpt-4", 500),
        ("gpt-4", 400)]
    for row in rows:
        assert (row.user_id, row.username, row.token_id, row.token_name) == (user.id, "alice", token.id, "ci-key")
        assert (row.quota, row.prompt_tokens, row.completion_tokens, row.group) == (0, 0, 0, "default")
        assert row.request_id.startswith(error_logs.REQUEST_ID_PREFIX) and row.content
    no_price, no_channel, refused, upstream, client_error = rows
    assert "my-own-model" in no_price.content and no_price.channel_id == 0
    assert orjson.loads(no_price.other)["request_id"] == no_price_id
    assert orjson.loads(no_channel.other)["error_code"] == "no_available_channel" and no_channel.channel_id == 0
    assert refused.channel_id != 0 and orjson.loads(refused.other)["error_type"] == "unsupported"
    other = orjson.loads(upstream.other)
    assert upstream.channel_id == second.id and other["admin_info"]["use_channel"] == [first.id, second.id]
    assert (other["channel_name"], other["channel_type"], other["request_id"]) == ("second", 1, upstream_id)
    assert upstream.is_stream and other["request_path"] == "/v1/chat/completions"
    assert UPSTREAM_KEY not in upstream.content and bad2.url not in upstream.content and "***" in upstream.content
    assert client_error.channel_id == first.id and orjson.loads(client_error.other)["admin_info"] == {
        "use_channel": [first.id]}
    # No charge, nothing pending, no consumption row.
    assert await live_balance(gateway, user.id) == before
    await drain(gateway)
    assert (await User.get(id=user.id)).quota == before
    assert not await Log.filter(type=LogType.CONSUME).exists()
    assert not await QuotaData.all().exists()


async def test_refusals_that_write_nothing(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams())
    user = await rich_user()
    token = await make_key(user)
    resp, _ = await call(gateway, None)  # no key
    assert resp.status == 401
    resp, _ = await call(gateway, None, headers={"Authorization": "Bearer sk-" + "x" * 48})  # unknown key
    assert resp.status == 401
    resp = await gateway.post("/v1/chat/completions", data=b"{not json", headers=headers_for(token))
    assert resp.status == 400  # the client's own unreadable body
    resp, _ = await call(gateway, token, {"messages": CHAT["messages"]})  # no model
    assert resp.status == 400
    resp, _ = await call(gateway, token, {**CHAT, "temperature": "hot"})  # an invalid parameter
    assert resp.status == 400
    await set_option(gateway, "RateLimitTokenRPM", "1")
    assert (await call(gateway, token))[0].status == 200
    assert (await call(gateway, token))[0].status == 429  # a limit doing its job
    assert await written(gateway) == []


async def test_a_worker_writes_the_row_of_a_failed_call(gateway, upstreams, worker) -> None:
    """The whole way: the relay queues the row and asks for a message, a real worker writes it."""
    await add_channel(gateway, await upstreams(fail_status=503))
    user = await rich_user()
    assert (await call(gateway, await make_key(user)))[0].status == 503
    row = await eventually(lambda: Log.filter(type=LogType.ERROR).first(), timeout=30, interval=0.1)
    assert (row.user_id, row.quota, orjson.loads(row.other)["status_code"]) == (user.id, 0, 503)


async def test_rows_are_bounded_per_key_and_in_total(gateway) -> None:
    store = gateway.server.app[keys.STORE]
    queue = ErrorLogQueue(store, per_key_minute=2, max_pending=3)

    def row(n: int, token_id: int) -> ErrorRow:
        return ErrorRow(f"req-{n}", 7, "alice", token_id, "k", "gpt-4", "default", 503, "no channel")

    assert await queue.push(row(1, 1)) == error_logs.SEND  # the first row asks for a message
    assert await queue.push(row(2, 1)) == error_logs.PUSHED
    assert await queue.push(row(3, 1)) == error_logs.OVER_KEY_LIMIT
    assert await queue.push(row(4, 2)) == error_logs.PUSHED  # another key has its own bound
    assert await queue.push(row(5, 3)) == error_logs.FULL
    assert await write_pending(store, batch=2) == (3, False)
    assert sorted(await Log.filter(type=LogType.ERROR).values_list("request_id", flat=True)) == [
        "error:req-1", "error:req-2", "error:req-4"]
    # Drained: the next row asks for a message again; a row delivered twice is written once.
    assert await queue.push(row(6, 4)) == error_logs.SEND
    await store.redis.rpush(f"{store.prefix}{{errlog}}:rows", row(6, 4).encode())
    assert await write_pending(store) == (1, False)
    assert await Log.filter(type=LogType.ERROR).count() == 4


# -- what cannot be written never holds up the rest ----------------------------------------------------


@both_databases
async def test_a_too_long_model_in_a_refused_request_is_written_cut_to_its_column(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams())
    user = await rich_user()
    token = await make_key(user)
    long_model = "m" * 300 + "\u0000" + "tail"
    resp, body = await call(gateway, token, {**CHAT, "model": long_model})
    assert 400 <= resp.status < 600 and body["error"]["message"]
    resp, _ = await call(gateway, token, {**CHAT, "model": "gpt-4o"})  # another user's row, after it
    assert resp.status == 503
    rows = await written(gateway)
    assert [r.model_name for r in rows] == ["m" * 255, "gpt-4o"]
    assert "\x00" not in rows[0].content
    assert await kept(gateway.server.app[keys.STORE], error_logs.WRITER) == []


def raw_row(n: int, **fields) -> bytes:
    """A queued row as the list holds it, with these fields as given (not as ErrorRow would make them)."""
    return orjson.dumps({**asdict(ErrorRow(f"req-{n}", 7, "alice", 1, "k", "gpt-4", "default", 503, "no channel")),
                         **fields})


@both_databases
async def test_a_poisoned_row_is_set_aside_and_the_rows_after_it_are_written(gateway) -> None:
    store = gateway.server.app[keys.STORE]
    rows_key = redis_keys.error_log_rows(store)
    poisoned = [
        raw_row(2, user_id=2 ** 63),  # beyond any integer column
        raw_row(3, token_id=2 ** 63),
        b"{not json",
        orjson.dumps(["a", "list"]),
    ]
    long_model = raw_row(5, model="x" * 400)  # queued by an older version, before rows were cut
    await store.redis.rpush(rows_key, raw_row(1), *poisoned, raw_row(4), long_model, raw_row(6))
    assert await write_pending(store, batch=50) == (4, False)
    rows = await Log.filter(type=LogType.ERROR).order_by("id")
    assert [r.request_id for r in rows] == ["error:req-1", "error:req-4", "error:req-5", "error:req-6"]
    assert rows[2].model_name == "x" * 255
    aside = await kept(store, error_logs.WRITER)
    assert sorted(e["row"] for e in aside) == sorted(p.decode() for p in poisoned)
    assert {e["id"] for e in aside} == {"error:req-2", "error:req-3", ""}
    assert all(e["error"] and e["writer"] == "errlog" for e in aside)
    assert await store.redis.llen(rows_key) == 0
    # The queue goes on: the next rows are written, nothing more set aside.
    await store.redis.rpush(rows_key, raw_row(7))
    assert await write_pending(store) == (1, False)
    assert len(await kept(store, error_logs.WRITER)) == 4


async def test_the_database_away_sets_nothing_aside_and_keeps_the_batch(gateway, monkeypatch) -> None:
    store = gateway.server.app[keys.STORE]
    rows_key = redis_keys.error_log_rows(store)
    queued = [raw_row(1), raw_row(2, token_id=2 ** 63), raw_row(3)]
    await store.redis.rpush(rows_key, *queued)

    async def away(rows):
        raise ConnectionRefusedError("connection refused")

    monkeypatch.setattr(error_logs, "_insert", away)
    with pytest.raises(ConnectionRefusedError):
        await write_pending(store)
    assert await store.redis.lrange(rows_key, 0, -1) == [q.decode() for q in queued]  # back at the head, in order
    assert await kept(store, error_logs.WRITER) == []
    monkeypatch.undo()
    assert await write_pending(store) == (2, False)  # back: the good ones written, the bad one set aside
    assert [e["id"] for e in await kept(store, error_logs.WRITER)] == ["error:req-2"]


# -- reading them ---------------------------------------------------------------------------------------


@both_databases
async def test_error_rows_filtered_shown_to_their_user_without_the_channel_and_retained(gateway, upstreams) -> None:
    fake = await upstreams(fail_status=502)
    channel = await add_channel(gateway, fake, name="secret-channel")
    alice = await make_user("alice", quota=10_000_000)
    token = await make_key(alice)
    assert (await call(gateway, token))[0].status == 502
    [row] = await written(gateway)
    bob = await make_user("bob", quota=10_000_000)
    assert (await call(gateway, await make_key(bob), {**CHAT, "model": "gpt-4o"}))[0].status == 503
    assert len(await written(gateway)) == 2
    await Log.create(user_id=alice.id, username="alice", type=int(LogType.TOPUP), quota=5, content="top-up")

    user = ApiClient(gateway)
    await user.login("alice", "password123")
    body = await user.get("/api/log/self/?type=5")
    [item] = body["data"]["items"]
    assert (item["id"], item["type"], item["quota"], item["model_name"]) == (row.id, 5, 0, "gpt-4")
    assert "channel" not in item
    other = orjson.loads(item["other"])
    assert not {"admin_info", "channel_id", "channel_name", "channel_type"} & set(other)
    assert other["status_code"] == 502 and other["request_path"] == "/v1/chat/completions"
    assert (await user.get("/api/log/self/?type=2"))["data"]["total"] == 0
    assert (await user.get("/api/log/self/"))["data"]["total"] == 2
    assert (await user.get("/api/log/self/stat"))["data"]["quota"] == 0  # an error costs nothing

    await make_user("boss", role=Role.ADMIN)
    admin = ApiClient(gateway)
    await admin.login("boss", "password123")
    items = (await admin.get("/api/log/?type=5"))["data"]["items"]
    assert [(i["username"], i["channel"]) for i in items] == [("bob", 0), ("alice", channel.id)]
    assert orjson.loads(items[1]["other"])["channel_name"] == "secret-channel"
    assert (await admin.get("/api/log/?type=5&username=alice"))["data"]["total"] == 1
    assert (await admin.get(f"/api/log/?type=5&channel={channel.id}"))["data"]["total"] == 1
    assert (await admin.get("/api/log/?type=5&model_name=gpt-4o"))["data"]["total"] == 1

    # Retention: the automatic one deletes old error rows like consumption rows, not the top-up.
    old = int(time.time()) - 10 * 86400
    await Log.filter(type=LogType.ERROR).update(created_at=old)
    await Log.filter(type=LogType.TOPUP).update(created_at=old)
    assert await purge_consume_logs(int(time.time()) - 7 * 86400) == 2
    assert await Log.filter(type=LogType.ERROR).count() == 0 and await Log.filter(type=LogType.TOPUP).count() == 1


async def test_clear_old_logs_deletes_error_rows(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams(fail_status=500))
    user = await rich_user()
    assert (await call(gateway, await make_key(user)))[0].status == 500
    assert len(await written(gateway)) == 1
    root = ApiClient(gateway)
    await root.login("root", "123456")
    body = await root.delete(f"/api/log/?target_timestamp={int(time.time()) + 5}")
    assert body["success"] and body["data"] >= 1
    assert not await Log.filter(type=LogType.ERROR).exists()


# -- refunds ---------------------------------------------------------------------------------------------


@pytest.fixture
async def suno_api(aiohttp_server):
    fake = FakeSuno()
    fake.server = await aiohttp_server(fake.app())
    return fake


@both_databases
async def test_a_refund_is_negative_marks_its_charge_and_both_totals_agree(gateway, upstreams, suno_api) -> None:
    user = await rich_user(quota=1_000_000)
    token = await make_key(user)
    await add_channel(gateway, None, models="suno_music", type=int(ChannelType.SUNO), base_url=suno_api.url,
                      key=SUNO_KEY)
    await add_channel(gateway, await upstreams())
    assert (await call(gateway, token))[0].status == 200  # a chat request, charged
    resp = await gateway.post("/suno/submit/music", json={"prompt": "foxes"}, headers=headers_for(token))
    music = (await resp.json())["data"]
    resp = await gateway.post("/suno/submit/music", json={"prompt": "kept"}, headers=headers_for(token))
    kept = (await resp.json())["data"]
    await drain(gateway)
    suno_api.tasks[music].update(status="failed", fail_reason="no clips")
    suno_api.tasks[kept].update(status="processing")
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    assert len((await poll(SUNO, store, http)).refunded) == 1
    await drain(gateway)

    api = ApiClient(gateway)
    await api.login("alice", "password123")
    items = (await api.get("/api/log/self/"))["data"]["items"]
    [refund] = [i for i in items if i["type"] == LogType.SYSTEM]
    charges = [i for i in items if i["type"] == LogType.CONSUME]
    [music_charge] = [i for i in charges if orjson.loads(i["other"]).get("task_id") == music]
    task_row = await Task.get(task_id=music)
    stored = await Log.get(id=refund["id"])
    assert stored.request_id == refund_id("suno", task_row.id) and stored.quota == music_charge["quota"] > 0
    assert refund["quota"] == -music_charge["quota"]  # a cost of minus the charge
    assert refund["refund_of"] == music_charge["id"] and music_charge["refunded"] == refund["id"]
    assert [i.get("refunded") for i in charges if i["id"] != music_charge["id"]] == [None, None]
    # On a page without the charge, the refund still reads as one (and names it).
    page = (await api.get("/api/log/self/?p=1&page_size=1"))["data"]["items"]
    assert page[0]["id"] == refund["id"] and page[0]["quota"] < 0 and page[0]["refund_of"] == music_charge["id"]

    # The log page's "consumed" is net of the refund, as the dashboard's total is.
    spent = sum(i["quota"] for i in charges)
    stat = (await api.get("/api/log/self/stat"))["data"]["quota"]
    dashboard = sum(r["quota"] for r in (await api.get("/api/data/self/"))["data"])
    assert stat == dashboard == spent - music_charge["quota"] == (await User.get(id=user.id)).used_quota
    await make_user("boss", role=Role.ADMIN)
    admin = ApiClient(gateway)
    await admin.login("boss", "password123")
    assert (await admin.get("/api/log/stat?username=alice"))["data"]["quota"] == stat
    assert sum(r["quota"] for r in (await admin.get("/api/data/?username=alice"))["data"]) == stat
    admin_items = (await admin.get("/api/log/"))["data"]["items"]
    assert {i["id"]: i.get("refund_of", i.get("refunded")) for i in admin_items if i["id"] in (
        refund["id"], music_charge["id"])} == {refund["id"]: music_charge["id"], music_charge["id"]: refund["id"]}


def test_the_refund_id_format_is_the_one_the_logs_read() -> None:
    assert refund_id("mj", 12).startswith(logs.REFUND_ID_PREFIX)
    assert refund_id("mj", 12) == f"{logs.REFUND_ID_PREFIX}{logs.MIDJOURNEY_PLATFORM}:12"
