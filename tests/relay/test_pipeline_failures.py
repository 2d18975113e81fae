# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Retries, refusals, refunds and streams that end badly: each charged for what was produced,
refunded otherwise, nothing left pre-charged."""
from __future__ import annotations

import asyncio
import time

import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.services.billing.settlement import pending_key
from api.upstream.tokenizer import count_chat_request, count_text
from models import Channel, Log, Token, User
from models.enums import LogType, Role, TokenStatus, UserStatus
from tests.helpers import both_databases, eventually
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    announce_channel,
    drain,
    gateway,
    headers_for,
    idle_gateway,
    live_balance,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "Say hello."}]}
PROMPT = count_chat_request(BODY)


def gpt4_quota(prompt: int, completion: int) -> int:
    return pricing.round_half_up((prompt + completion * 2) * 15)


async def set_option(gateway, key: str, value: str) -> None:
    await gateway.server.app[keys.OPTIONS].update(key, value)


async def post(gateway, token: Token | None, body: dict, path: str = "/v1/chat/completions",
               headers: dict | None = None):
    hdrs = {**(headers_for(token) if token else {}), **(headers or {})}
    resp = await gateway.post(path, json=body, headers=hdrs)
    return resp, await resp.read()


def error_of(resp, raw: bytes) -> dict:
    body = orjson.loads(raw)
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}, body
    request_id = resp.headers["X-Oneapi-Request-Id"]
    assert body["error"]["message"].endswith(f"(request id: {request_id})")
    return body["error"]


async def assert_untouched(gateway, user: User, token: Token | None = None) -> None:
    """Refunded to the unit, no record waiting, no log written."""
    assert await live_balance(gateway, user.id) == (await User.get(id=user.id)).quota
    if token is not None and not token.unlimited_quota:
        assert await live_balance(gateway, user.id, token.id) == (await Token.get(id=token.id)).remain_quota
    store = gateway.server.app[keys.STORE]
    assert await store.redis.hlen(pending_key(store, user.id)) == 0
    assert not await Log.filter(user_id=user.id, type=LogType.CONSUME).exists()


# -- retries ------------------------------------------------------------------------------------------


@both_databases
async def test_retry_skips_tried_and_disabled_channels_and_logs_the_path(gateway, upstreams) -> None:
    bad1, bad2, good, off = (await upstreams(fail_status=500), await upstreams(fail_status=502),
                             await upstreams(), await upstreams())
    await add_channel(gateway, off, priority=100, status=2, name="manually disabled")
    late = await add_channel(gateway, off, priority=50, name="disabled later")
    a = await add_channel(gateway, bad1, priority=10)
    b = await add_channel(gateway, bad2, priority=5)
    c = await add_channel(gateway, good, priority=0)
    await Channel.filter(id=late.id).update(status=3)
    await announce_channel(gateway, late.id)
    await set_option(gateway, "RetryTimes", "3")
    user = await rich_user()
    token = await make_key(user)
    resp, raw = await post(gateway, token, BODY)
    assert resp.status == 200, raw
    assert len(bad1.seen) == 1 and len(bad2.seen) == 1 and len(good.seen) == 1 and not off.seen
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert orjson.loads(log.other)["admin_info"]["use_channel"] == [a.id, b.id, c.id]
    assert log.channel_id == c.id and log.quota == gpt4_quota(13, 7)  # failed attempts cost nothing
    assert (await Channel.get(id=a.id)).used_quota == 0


async def test_same_tier_retry_never_repeats_a_channel(gateway, upstreams) -> None:
    fakes = [await upstreams(fail_status=503) for _ in range(3)]
    for fake in fakes:
        await add_channel(gateway, fake)
    await set_option(gateway, "RetryTimes", "5")
    user = await rich_user()
    token = await make_key(user)
    resp, raw = await post(gateway, token, BODY)
    assert resp.status == 503 and error_of(resp, raw)["message"].startswith("fake failure 503")
    assert [len(f.seen) for f in fakes] == [1, 1, 1]
    await assert_untouched(gateway, user)


async def test_no_retry_when_retry_times_is_zero_and_everything_refunded(gateway, upstreams) -> None:
    bad, good = await upstreams(fail_status=500), await upstreams()
    await add_channel(gateway, bad, priority=1)
    await add_channel(gateway, good, priority=0)
    user = await rich_user()
    token = await make_key(user, remain_quota=50_000, unlimited=False)
    resp, raw = await post(gateway, token, BODY)
    assert resp.status == 500 and error_of(resp, raw)["type"] == "server_error"
    assert not good.seen
    await assert_untouched(gateway, user, token)


async def test_timeout_status_is_not_retried_and_429_is_reworded_and_mapped(gateway, upstreams) -> None:
    slow, busy, good = await upstreams(fail_status=504), await upstreams(fail_status=429), await upstreams()
    await add_channel(gateway, slow, priority=2, models="gpt-4")
    await add_channel(gateway, good, priority=0)
    await set_option(gateway, "RetryTimes", "2")
    user = await rich_user()
    token = await make_key(user)
    resp, raw = await post(gateway, token, BODY)
    assert resp.status == 504 and not good.seen
    await add_channel(gateway, busy, priority=0, models="gpt-3.5-turbo", status_code_mapping='{"429": "503"}')
    resp, raw = await post(gateway, token, {**BODY, "model": "gpt-3.5-turbo"},
                           headers={"Accept-Language": "zh-CN"})
    assert resp.status == 503
    assert error_of(resp, raw)["message"].startswith("当前分组上游负载已饱和")
    await assert_untouched(gateway, user)


async def test_model_mapping_bills_the_requested_model_and_logs_the_upstream_one(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, model_mapping='{"gpt-4": "gpt-4-0613"}')
    user = await rich_user()
    token = await make_key(user)
    resp, _ = await post(gateway, token, BODY)
    assert resp.status == 200 and fake.seen[0].body["model"] == "gpt-4-0613"
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    other = orjson.loads(log.other)
    assert log.model_name == "gpt-4" and other["upstream_model_name"] == "gpt-4-0613" and other["is_model_mapped"]
    assert log.quota == gpt4_quota(13, 7)


async def test_admin_pins_a_channel_and_a_user_may_not(gateway, upstreams) -> None:
    first, second = await upstreams(), await upstreams(fail_status=500)
    await add_channel(gateway, first, priority=5)
    pinned = await add_channel(gateway, second, priority=0)
    await set_option(gateway, "RetryTimes", "3")
    admin = await rich_user("boss", role=Role.ADMIN)
    token = await make_key(admin)
    auth = {"Authorization": f"Bearer sk-{token.key}-{pinned.id}"}
    resp, raw = await post(gateway, None, BODY, headers=auth)
    assert resp.status == 500 and len(second.seen) == 1 and not first.seen  # pinned: no retry elsewhere
    user = await rich_user("pleb")
    plain = await make_key(user)
    resp, raw = await post(gateway, None, BODY, headers={"Authorization": f"sk-{plain.key}-{pinned.id}"})
    assert resp.status == 403 and error_of(resp, raw)["code"] == "channel_pin_forbidden"


# -- refusals -----------------------------------------------------------------------------------------


async def test_each_key_refusal_has_its_own_status_and_message(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="gpt-4,gpt-3.5-turbo")
    user = await rich_user()
    banned = await rich_user("banned", status=UserStatus.DISABLED)
    cases: list[tuple[dict, int, str, dict]] = []
    cases.append(({}, 401, "missing_api_key", BODY))
    cases.append(({"Authorization": "Bearer sk-" + "x" * 48}, 401, "invalid_api_key", BODY))
    for length in (49, 64, 4000):  # longer than any key's column: no key (once a 500 from the database)
        cases.append(({"Authorization": "Bearer sk-" + "x" * length}, 401, "invalid_api_key", BODY))
    disabled = await make_key(user, status=TokenStatus.DISABLED)
    cases.append((headers_for(disabled), 401, "key_disabled", BODY))
    expired = await make_key(user, expired_time=int(time.time()) - 10)
    cases.append((headers_for(expired), 401, "key_expired", BODY))
    exhausted = await make_key(user, remain_quota=0, unlimited=False)
    cases.append((headers_for(exhausted), 401, "key_exhausted", BODY))
    small = await make_key(user, remain_quota=100, unlimited=False)
    cases.append((headers_for(small), 403, "pre_consume_token_quota_failed", BODY))
    cases.append((headers_for(await make_key(banned)), 403, "user_banned", BODY))
    limited = await make_key(user, model_limits_enabled=True, model_limits="gpt-3.5-turbo")
    cases.append((headers_for(limited), 403, "model_not_allowed", BODY))
    elsewhere = await make_key(user, allow_ips="10.0.0.0/8\n192.168.1.7")
    cases.append((headers_for(elsewhere), 403, "ip_not_allowed", BODY))
    svip = await make_key(user, group="svip")
    cases.append((headers_for(svip), 403, "group_not_usable", BODY))
    ok = await make_key(user)
    cases.append((headers_for(ok), 503, "no_available_channel", {**BODY, "model": "gpt-4o"}))
    cases.append((headers_for(ok), 400, "model_price_error", {**BODY, "model": "my-own-model"}))
    cases.append((headers_for(ok), 400, "invalid_request_body", "not an object"))
    for headers, status, code, body in cases:
        resp = await gateway.post("/v1/chat/completions", json=body, headers=headers)
        raw = await resp.read()
        assert resp.status == status, (code, raw)
        assert error_of(resp, raw)["code"] == code, raw
    assert not fake.seen
    resp = await gateway.post("/v1/chat/completions", json={**BODY, "model": "my-own-model"}, headers=headers_for(ok))
    assert "my-own-model" in orjson.loads(await resp.read())["error"]["message"]
    inside = await make_key(user, allow_ips="10.0.0.0/8\n127.0.0.0/8")
    resp, _ = await post(gateway, inside, BODY)
    assert resp.status == 200


async def test_user_quota_below_the_pre_charge_is_refused(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams())
    user = await rich_user(quota=7499)  # pre-charge: PreConsumedQuota 500 × ratio 15 = 7500
    token = await make_key(user)
    resp, raw = await post(gateway, token, BODY)
    assert resp.status == 403 and error_of(resp, raw)["code"] == "insufficient_user_quota"
    await User.filter(id=user.id).update(quota=7500)
    from api.services.billing.balances import adjust_user

    await adjust_user(gateway.server.app[keys.STORE], user.id, 1)
    resp, raw = await post(gateway, token, BODY)
    assert resp.status == 200, raw


async def test_self_use_mode_prices_unknown_models(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams(), models="my-own-model")
    await set_option(gateway, "SelfUseModeEnabled", "true")
    user = await rich_user()
    token = await make_key(user)
    resp, _ = await post(gateway, token, {**BODY, "model": "my-own-model"})
    assert resp.status == 200
    await drain(gateway)
    log = await Log.get(user_id=user.id)
    assert log.quota == pricing.round_half_up((13 + 7) * pricing.SELF_USE_DEFAULT_RATIO)


async def test_sensitive_words_refuse_the_prompt(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake)
    await set_option(gateway, "SensitiveWords", "forbidden thing\nsecret plan")
    await set_option(gateway, "CheckSensitiveEnabled", "true")
    user = await rich_user()
    token = await make_key(user)
    body = {**BODY, "messages": [{"role": "user", "content": [{"type": "text", "text": "our SECRET PLAN"}]}]}
    resp, raw = await post(gateway, token, body)
    assert resp.status == 400 and error_of(resp, raw)["code"] == "sensitive_words_detected"
    assert not fake.seen
    resp, _ = await post(gateway, token, BODY)
    assert resp.status == 200


async def test_unsupported_and_unknown_routes(gateway) -> None:
    user = await rich_user()
    token = await make_key(user)
    resp, raw = await post(gateway, token, {}, path="/v1/images/variations")
    assert resp.status == 501 and error_of(resp, raw)["code"] == "api_not_implemented"
    resp = await gateway.get("/v1/no/such/thing", headers=headers_for(token))
    raw = await resp.read()
    assert resp.status == 404 and error_of(resp, raw)["type"] == "invalid_request_error"
    resp = await gateway.get("/v1/chat/completions", headers=headers_for(token))
    assert resp.status == 405 and error_of(resp, await resp.read())["message"].startswith("Invalid URL (GET")



@pytest.mark.parametrize("path", ["/v1beta/nothing/here", "/v1beta", "/mj/submit/nothing", "/mj-fast/mj/x",
                                  "/mj-relax/mj/image/1", "/suno/nothing", "/pg/nothing", "/dashboard/x", "/api/x",
                                  "/v1"])
async def test_api_paths_never_fall_to_the_console_page(gateway, path: str) -> None:
    resp = await gateway.get(path)
    body = await resp.json()  # never the console's HTML
    assert resp.status == 404 and resp.content_type == "application/json", body
    if path.startswith("/api"):
        assert body["success"] is False
    elif path.startswith("/v1beta"):
        assert body["error"]["status"] == "NOT_FOUND"
    elif path.startswith("/mj"):  # midjourney-proxy's shape
        assert body["code"] == 4 and body["description"] and body["result"] is None
    elif path.startswith("/suno"):  # suno-api's shape
        assert body["code"] and body["message"] and body["data"] is None
    else:
        assert body["error"]["type"] == "invalid_request_error"


# -- streams that end badly ---------------------------------------------------------------------------


async def read_sse(resp) -> list[bytes]:
    raw = await resp.read()
    return [line[6:] for line in raw.split(b"\n") if line.startswith(b"data: ")]


def streamed_text(frames: list[bytes]) -> str:
    text = ""
    for frame in frames:
        if frame == b"[DONE]":
            continue
        data = orjson.loads(frame)
        for choice in data.get("choices") or ():
            text += choice.get("delta", {}).get("content") or ""
    return text


@pytest.mark.parametrize("behaviour", [{"cut_after": 3}, {"hang_after": 3}])
async def test_stream_stopping_early_is_charged_for_what_was_produced(idle_gateway, upstreams, behaviour) -> None:
    gateway = idle_gateway
    fake = await upstreams(**behaviour)
    await add_channel(gateway, fake)
    user = await rich_user(quota=1_000_000)
    token = await make_key(user, remain_quota=200_000, unlimited=False)
    resp = await gateway.post("/v1/chat/completions", json={**BODY, "stream": True}, headers=headers_for(token))
    assert resp.status == 200
    frames = await read_sse(resp)
    produced = "".join(fake.pieces()[:3])
    assert streamed_text(frames) == produced
    assert frames[-1] == b"[DONE]" and b"stream_interrupted" in frames[-2]
    completion = count_text(produced)
    quota = gpt4_quota(PROMPT, completion)
    assert await live_balance(gateway, user.id) == 1_000_000 - quota
    assert await live_balance(gateway, user.id, token.id) == 200_000 - quota
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (PROMPT, completion, quota)
    assert orjson.loads(log.other)["incomplete"]
    assert (await User.get(id=user.id)).quota == 1_000_000 - quota


async def test_one_malformed_line_is_skipped_and_the_rest_of_the_answer_arrives(gateway, upstreams) -> None:
    fake = await upstreams(malformed_after=3, usage=None)
    await add_channel(gateway, fake)
    user = await rich_user(quota=1_000_000)
    token = await make_key(user)
    resp = await gateway.post("/v1/chat/completions", json={**BODY, "stream": True}, headers=headers_for(token))
    frames = await read_sse(resp)
    assert streamed_text(frames) == fake.reply  # every piece, the broken line left out
    assert frames[-1] == b"[DONE]" and not any(b"stream_interrupted" in f for f in frames)
    quota = gpt4_quota(PROMPT, count_text(fake.reply))
    assert await live_balance(gateway, user.id) == 1_000_000 - quota
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert log.quota == quota and "incomplete" not in orjson.loads(log.other)


async def test_stream_failing_before_any_output_is_refunded(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams(cut_after=0, reply="x"))
    await add_channel(gateway, await upstreams(fail_status=500), models="gpt-3.5-turbo")
    user = await rich_user()
    token = await make_key(user, remain_quota=100_000, unlimited=False)
    resp, raw = await post(gateway, token, {**BODY, "model": "gpt-3.5-turbo", "stream": True})
    assert resp.status == 500 and error_of(resp, raw)
    await assert_untouched(gateway, user, token)


async def test_client_leaving_mid_stream_cancels_upstream_and_pays_what_was_produced(gateway, upstreams) -> None:
    feed: asyncio.Queue = asyncio.Queue()
    fake = await upstreams(feed=feed, usage=None)
    await add_channel(gateway, fake)
    user = await rich_user(quota=1_000_000)
    token = await make_key(user)
    sent: list[str] = []
    resp = await gateway.post("/v1/chat/completions", json={**BODY, "stream": True}, headers=headers_for(token))
    for piece in ("Once ", "upon ", "a "):
        sent.append(piece)
        await feed.put(piece)
    received = ""
    while received != "Once upon a ":
        line = await resp.content.readline()
        if line.startswith(b"data: {"):
            data = orjson.loads(line[6:])
            received += "".join(c["delta"].get("content") or "" for c in data["choices"])
    resp.close()  # the client goes away
    store = gateway.server.app[keys.STORE]

    async def settled() -> bool:
        if await store.redis.hlen(pending_key(store, user.id)):
            return True
        sent.append("time ")
        await feed.put("time ")
        return False

    await eventually(settled, timeout=10)
    await eventually(lambda: asyncio.sleep(0, fake.client_gone), timeout=10)
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    # Charged for what the upstream produced up to the cancellation, never more than it sent.
    assert count_text("Once upon a ") <= log.completion_tokens <= count_text("".join(sent))
    assert log.quota == gpt4_quota(PROMPT, log.completion_tokens)
    assert orjson.loads(log.other)["incomplete"] == "the client went away"
    assert await live_balance(gateway, user.id) == (await User.get(id=user.id)).quota == 1_000_000 - log.quota


async def test_openai_sdk_sees_an_interrupted_stream_as_an_error(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams(cut_after=2))
    user = await rich_user()
    token = await make_key(user)
    client = openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)
    async with client:
        stream = await client.chat.completions.create(model="gpt-4", messages=BODY["messages"], stream=True)
        text = ""
        with pytest.raises(openai.APIError, match="interrupted"):
            async for chunk in stream:
                text += chunk.choices[0].delta.content or ""
    assert text == "Hello! I "
