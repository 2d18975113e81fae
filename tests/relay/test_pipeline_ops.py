# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Operations around the pipeline: /metrics, the low-balance mail, CORS, and the index's choice."""
from __future__ import annotations

import random
from collections import Counter

import orjson

from api import keys
from api.channels.index import ChannelIndex, ChannelInfo
from api.services.billing.settlement import apply_pending
from api.services.queues import Queue
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    gateway,
    headers_for,
    make_key,
    rich_user,
    upstreams,
)

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


async def test_metrics_count_requests_and_are_protected_by_a_token(gateway, upstreams) -> None:
    channel = await add_channel(gateway, await upstreams())
    token = await make_key(await rich_user())
    assert (await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))).status == 200
    assert (await gateway.post("/v1/chat/completions", json={**BODY, "stream": True},
                               headers=headers_for(token))).status == 200
    resp = await gateway.get("/metrics")  # from 127.0.0.1: allowed without a token
    text = await resp.text()
    assert resp.status == 200 and resp.content_type == "text/plain"
    labels = f'route="/v1/chat/completions",model="gpt-4",channel="{channel.id}"'
    assert f"gateway_relay_requests_total{{{labels},code=\"200\"}} 2" in text
    assert f"gateway_relay_streams_total{{{labels}}} 1" in text
    assert f"gateway_relay_request_duration_seconds_count{{{labels}}} 2" in text
    assert 'gateway_queue_depth{queue="billing"}' in text
    await gateway.server.app[keys.OPTIONS].update("MetricsToken", "scrape-me")
    assert (await gateway.get("/metrics")).status == 403
    assert (await gateway.get("/metrics", headers={"Authorization": "Bearer scrape-me"})).status == 200


async def test_metrics_report_the_depth_of_every_queue(gateway) -> None:
    text = await (await gateway.get("/metrics")).text()
    reported = {line.split('"')[1] for line in text.splitlines() if line.startswith("gateway_queue_depth{")}
    assert reported == {str(q) for q in Queue}


async def test_low_balance_mail_when_crossing_the_threshold(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams(usage=(10, 10)))  # 450 quota per request
    user = await rich_user(quota=1200, email="alice@example.com")
    token = await make_key(user)
    app = gateway.server.app
    mails: list[tuple[str, str, str]] = []

    async def send_mail(to: str, subject: str, html: str) -> None:
        mails.append((to, subject, html))

    await app[keys.OPTIONS].update("PreConsumedQuota", "10")
    assert (await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))).status == 200
    await apply_pending(app[keys.STORE], app[keys.OPTIONS], user.id, send_mail)
    assert len(mails) == 1  # 1200 → 750 crossed QuotaRemindThreshold (1000)
    to, subject, html = mails[0]
    assert to == "alice@example.com" and "balance is low" in subject and "$0.00" in html
    assert (await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))).status == 200
    await apply_pending(app[keys.STORE], app[keys.OPTIONS], user.id, send_mail)
    assert len(mails) == 1  # 750 → 300: already below, no second mail


async def test_cors_preflight_and_header(gateway) -> None:
    resp = await gateway.options("/v1/chat/completions", headers={
        "Origin": "https://chat.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type"})
    assert resp.status == 204 and resp.headers["Access-Control-Allow-Origin"] == "*"
    assert resp.headers["Access-Control-Allow-Headers"] == "authorization,content-type"
    resp = await gateway.get("/v1/models")
    assert resp.status == 401 and resp.headers["Access-Control-Allow-Origin"] == "*"
    assert orjson.loads(await resp.read())["error"]["code"] == "missing_api_key"


def info(channel_id: int, priority: int = 0, weight: int = 0, groups=("default",), models=("m",)) -> ChannelInfo:
    return ChannelInfo(channel_id, 1, f"c{channel_id}", "k", "", "", "", {}, {}, priority, weight, True,
                       tuple(groups), tuple(models))


def test_index_tiers_weights_and_exclusions() -> None:
    index = ChannelIndex(random.Random(7))
    index.replace([info(1, priority=10, weight=0), info(2, priority=10, weight=90), info(3, priority=0),
                   info(4, groups=("vip",), models=("gpt-4-gizmo-*",))])
    picks = Counter(index.pick("default", "m").id for _ in range(2000))
    assert set(picks) == {1, 2}  # the lower tier only when the upper one is used up
    assert 0.05 < picks[1] / 2000 < 0.15  # weights 0+10 vs 90+10
    assert index.pick("default", "m", exclude=[1, 2]).id == 3
    assert index.pick("default", "m", exclude=[1, 2, 3]) is None
    assert index.pick("vip", "gpt-4-gizmo-g-abc").id == 4
    assert index.models("default") == ("m",)
    index.disable_locally(2)
    assert {index.pick("default", "m").id for _ in range(50)} == {1}
