# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Soft limits' alerts, end to end: requests through the gateway, the settlement worker's actor body
and the alert actors run in this process on what they send, a webhook receiver of the test's own and
the fake SMTP server. One signed alert per crossed soft limit and window (retried after a 500), none
for a second crossing in the window, another in the next window; the owner's mail, root's by
option; a redelivered settlement, concurrent checks and the sweep still send once. The gateway's and
the alerts' clocks are moved, never waited for."""
from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections import Counter, deque
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from aiohttp import web
from dramatiq import Retry

from api import keys
from api.resources import Resources
from api.services.budgets import alerts, durable
from api.services.budgets.limits import normalise
from api.services.jobs import Jobs
from api.upstream.credentials import process_credentials
from models import BudgetUsage, Token, User
from models.enums import Role
from scheduler.jobs import JOBS
from tests.fakes.smtp import FakeSmtp
from tests.helpers import both_databases, eventually, make_user
from tests.relay.fakes import add_channel, drain, gateway, headers_for, make_key, relay_of, upstreams  # noqa: F401
from workers.actors import billing, budget, mail
from workers.context import ctx, set_context

SECRET = "whsec-budget-test"
CHARGE = 20  # gpt-4 at one quota per token; the fake upstream answers 13 + 7 tokens
DAY = 86400
TOMORROW = 1_900_000_000 // DAY * DAY + DAY  # a day well ahead of the real clock
T0 = TOMORROW + 10 * 3600
MIDNIGHT = TOMORROW + DAY


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Receiver:
    """A webhook endpoint: answers the statuses it is given (then 200) and keeps every request."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)
        self.calls: list[tuple[dict[str, str], bytes, int]] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        status = self.statuses.pop(0) if self.statuses else 200
        self.calls.append((dict(request.headers), body, status))
        return web.Response(status=status, text="ok")

    def accepted(self) -> list[dict[str, Any]]:
        """The bodies it answered 2xx to, each checked against its signature."""
        out = []
        for headers, body, status in self.calls:
            stamp = headers["X-Gateway-Timestamp"]
            expected = hmac.new(SECRET.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
            assert headers["X-Gateway-Signature"] == f"sha256={expected}"
            assert headers["Content-Type"] == "application/json"
            if 200 <= status < 300:
                out.append(orjson.loads(body))
        return out


class Worker:
    """A worker's actors run in this process: what they send queues here, `run()` processes it in
    order, and a message that raised Retry is processed again (as Dramatiq does after its back-off)."""

    BODIES: Any = {"budget.alert": budget.raise_alert, "budget.webhook": budget.deliver_webhook,
                   "mail.send": mail.send_mail, "budget.sweep": budget.sweep_alerts}

    def __init__(self) -> None:
        self.sent: list[tuple[str, tuple[Any, ...]]] = []
        self.pending: deque[tuple[str, tuple[Any, ...]]] = deque()
        self.retries: Counter[str] = Counter()

    def send(self, actor_name: str, *args: Any, delay_ms: int | None = None, **kwargs: Any) -> None:
        self.sent.append((actor_name, args))
        self.pending.append((actor_name, args))

    def count(self, actor_name: str) -> int:
        return sum(1 for name, _ in self.sent if name == actor_name)

    async def run(self) -> None:
        while self.pending:
            name, args = self.pending.popleft()
            try:
                await self.BODIES[name](*args)
            except Retry:
                self.retries[name] += 1
                assert self.retries[name] < 5, name
                self.pending.append((name, args))

    async def settle(self, *users: User) -> None:
        """What a billing.apply message does (the actor's own body)."""
        await billing.apply.fn.__wrapped__([u.id for u in users])  # type: ignore[attr-defined]


@pytest.fixture
def smtp() -> Iterator[FakeSmtp]:
    with FakeSmtp() as server:
        yield server


@pytest.fixture
async def site(gateway, upstreams, settings, smtp: FakeSmtp, aiohttp_server, monkeypatch: pytest.MonkeyPatch):
    """The gateway with a priced model, a clock, SMTP, a webhook receiver (answering 500 once) and a
    worker context whose messages queue in the test."""
    app = gateway.server.app
    options = app[keys.OPTIONS]
    receiver = Receiver(500)
    hook = web.Application()
    hook.router.add_post("/hook", receiver.handle)
    server = await aiohttp_server(hook)
    for name, value in {"ModelRatio": '{"gpt-4": 1}', "CompletionRatio": '{"gpt-4": 1}',
                        "SMTPServer": "127.0.0.1", "SMTPPort": str(smtp.port), "SMTPFrom": "gw@example.com",
                        "SystemName": "Test Gateway", "BudgetWebhookSecret": SECRET,
                        "BudgetWebhookUrl": str(server.make_url("/hook")),
                        "MediaFetchPrivateEnabled": "true"}.items():  # the receiver is on loopback
        await options.update(name, value)
    await add_channel(gateway, await upstreams())
    clock = Clock(T0)
    relay_of(gateway).quota.clock = clock
    monkeypatch.setattr(alerts, "clock", clock)
    worker = Worker()
    set_context(Resources(settings, app[keys.STORE], app[keys.EVENTS], options, app[keys.HTTP], Jobs(worker.send),
                          process_credentials()))
    yield gateway, clock, worker, receiver
    set_context(None)


async def chat(gateway, token: Token, times: int = 1) -> None:
    for _ in range(times):
        resp = await gateway.post("/v1/chat/completions", headers=headers_for(token), json={
            "model": "gpt-4", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10})
        assert resp.status == 200, await resp.text()


async def alice(**fields: Any) -> User:
    return await make_user("alice", quota=10_000_000, email="alice@example.com", **fields)


def received(smtp: FakeSmtp) -> list[tuple[list[str], str]]:
    return [(m.rcpt_tos, str(m.message["Subject"])) for m in smtp.messages]


@both_databases
async def test_one_signed_alert_per_window_retried_after_a_500(site, smtp: FakeSmtp) -> None:
    gateway, clock, worker, receiver = site
    user = await alice()
    token = await make_key(user, name="ci", limits=normalise([{"window": "day", "quota": 100, "soft": 50}]))
    await chat(gateway, token, 2)  # 40 of 100: under 50 %
    await worker.settle(user)
    assert worker.sent == [] and receiver.calls == []
    await chat(gateway, token)  # 60: the soft limit crossed
    await worker.settle(user)
    assert worker.count("budget.alert") == 1
    await worker.run()
    # the receiver answered 500 once: the webhook was sent again, each attempt signed
    assert worker.retries == {"budget.webhook": 1} and len(receiver.calls) == 2
    assert receiver.calls[0][1] == receiver.calls[1][1]
    assert receiver.calls[1][0]["X-Gateway-Timestamp"] == str(T0)
    [body] = receiver.accepted()
    assert body == {
        "type": "budget.soft_limit", "id": body["id"], "created_at": T0,
        "owner": {"kind": "key", "id": token.id, "name": "ci"}, "user": {"id": user.id, "username": "alice"},
        "limit": {"window": "day", "measure": "quota", "model": "", "limit": 100, "soft": 50},
        "used": 3 * CHARGE, "window_start": TOMORROW, "resets_at": MIDNIGHT}
    assert received(smtp) == [(["alice@example.com"], "Test Gateway: 50% of a day limit reached / 已用到日限额的 50%")]
    text = smtp.messages[0].html()
    assert "The key “ci” of alice has used 60 of the day limit of 100 quota: 60%" in text
    assert f"resets at {datetime.fromtimestamp(MIDNIGHT, UTC):%Y-%m-%d %H:%M:%S} UTC" in text
    assert "alice 的密钥“ci”在本日窗口已使用 60 / 100 额度" in text

    await chat(gateway, token)  # a second crossing in the same window: nothing more
    await worker.settle(user)
    await worker.run()
    assert worker.count("budget.alert") == 1 and len(receiver.accepted()) == 1 and len(smtp.messages) == 1

    clock.now = MIDNIGHT + 10 * 3600  # the next day: its own alert
    await chat(gateway, token, 3)
    await worker.settle(user)
    await worker.run()
    bodies = receiver.accepted()
    assert len(bodies) == 2 and bodies[1]["window_start"] == MIDNIGHT and bodies[1]["id"] != bodies[0]["id"]
    assert bodies[1]["used"] == 3 * CHARGE and bodies[1]["resets_at"] == MIDNIGHT + DAY
    assert len(smtp.messages) == 2
    rows = await BudgetUsage.filter(user_id=user.id).order_by("window_start").values_list("soft_alerts", flat=True)
    assert [row.partition("=")[0] for row in rows] == ["quota:100", "quota:100"]


async def test_a_group_limit_mails_the_user_concerned_and_root_by_option(site, smtp: FakeSmtp) -> None:
    gateway, _, worker, receiver = site
    options = gateway.server.app[keys.OPTIONS]
    await options.update("BudgetWebhookUrl", "")
    await options.update("GroupLimits", '{"default": [{"window": "day", "requests": 4, "soft": 50}]}')
    await make_user("boss", role=Role.ROOT, email="root@example.com")
    user, other = await alice(), await make_user("bob", quota=10_000_000, email="bob@example.com")
    await chat(gateway, await make_key(other))  # bob's allowance is his own: 1 of 4
    await chat(gateway, await make_key(user), 2)  # alice: 2 of 4, 50 %
    await worker.settle(user, other)
    await worker.run()
    assert received(smtp) == [(["alice@example.com"], "Test Gateway: 50% of a day limit reached / 已用到日限额的 50%")]
    assert "alice, within the allowance of group “default”, has used 2 of the day limit of 4 requests" in \
        smtp.messages[0].html()
    assert worker.count("budget.webhook") == 0 and receiver.calls == []  # no URL, no webhook

    await options.update("BudgetAlertRootEnabled", "true")
    await options.update("GroupLimits", '{"default": [{"window": "day", "requests": 4, "soft": 75}]}')
    await chat(gateway, await make_key(other), 2)  # bob: 3 of 4
    await worker.settle(other)
    await worker.run()
    assert [to for to, _ in received(smtp)[1:]] == [["bob@example.com"], ["root@example.com"]]


@both_databases
async def test_a_redelivered_settlement_concurrent_checks_and_the_sweep_send_once(site, smtp: FakeSmtp) -> None:
    gateway, _, worker, receiver = site
    user = await alice(limits=normalise([{"window": "hour", "tokens": 50, "soft": 80},
                                         {"window": "hour", "requests": 10, "soft": 20}]))
    await chat(gateway, await make_key(user), 2)  # 40 tokens (80 %) and 2 requests (20 %): both limits' alerts
    await worker.settle(user)
    await worker.settle(user)  # billing.apply redelivered: nothing left to apply, nothing sent
    row = await BudgetUsage.get(user_id=user.id)
    window = (user.id, "user", str(user.id), "hour", row.window_start, row.window_end)
    await budget.after_settlement(ctx(), {window})  # another worker checking the same window
    await budget.sweep_alerts()  # and the scheduler's sweep meanwhile
    assert worker.count("budget.alert") == 6  # three claims of each limit's alert
    await worker.run()
    bodies = receiver.accepted()
    assert sorted((b["limit"]["measure"], b["used"]) for b in bodies) == [("requests", 2), ("tokens", 40)]
    assert len(smtp.messages) == 2
    row = await BudgetUsage.get(user_id=user.id)
    assert sorted(e.partition("=")[0] for e in row.soft_alerts.split()) == ["requests:10", "tokens:50"]
    await budget.sweep_alerts()  # claimed: the sweep finds nothing more
    assert worker.count("budget.alert") == 6


async def test_the_sweep_sends_what_a_killed_worker_did_not(site, smtp: FakeSmtp) -> None:
    """The records applied (their usage written) by a worker killed before its check: the sweep finds
    the crossing. A window that has ended is left alone."""
    gateway, clock, worker, receiver = site
    user = await alice()
    token = await make_key(user, limits=normalise([{"window": "minute", "requests": 2, "soft": 100},
                                                   {"window": "day", "requests": 100, "soft": 1}]))
    await chat(gateway, token, 2)
    await drain(gateway)  # applied outside the worker: no check ran
    assert worker.sent == []
    clock.now = T0 + 120  # the minute window has ended: only the day's alert is still due
    await budget.sweep_alerts()
    await worker.run()
    [body] = receiver.accepted()
    assert body["limit"]["window"] == "day" and body["used"] == 2 and body["owner"]["kind"] == "key"
    assert len(smtp.messages) == 1


async def test_the_webhook_url_is_fetched_under_the_media_policy(site) -> None:
    gateway, _, worker, receiver = site
    options = gateway.server.app[keys.OPTIONS]
    await options.update("MediaFetchPrivateEnabled", "false")
    with pytest.raises(Retry):  # loopback refused: retried (the option may be changed), nothing sent
        await budget.deliver_webhook('{"type": "budget.soft_limit"}')
    assert receiver.calls == []
    await options.update("BudgetWebhookUrl", "")
    await budget.deliver_webhook("{}")  # no URL any more: dropped


def test_the_signature_is_an_hmac_of_the_timestamp_and_the_body() -> None:
    body = b'{"id":"x"}'
    expected = hmac.new(b"s3cret", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert alerts.signature("s3cret", 1_700_000_000, body) == f"sha256={expected}"
    headers = alerts.signed_headers("s3cret", 1_700_000_000, body)
    assert headers["X-Gateway-Timestamp"] == "1700000000" and headers["X-Gateway-Signature"] == f"sha256={expected}"


def test_the_sweep_is_on_the_timetable_and_the_actors_retry_with_back_off() -> None:
    assert any(job.actor == "budget.sweep" for job in JOBS)
    assert budget.webhook.options["max_retries"] >= 5 and budget.webhook.options["min_backoff"] >= 1000
    assert budget.webhook.queue_name == budget.alert.queue_name == "budget"


async def test_the_options_keep_the_secret_and_check_the_url(root) -> None:
    assert (await root.put("/api/option/", {"key": "BudgetWebhookSecret", "value": "hidden-value"}))["success"]
    assert (await root.put("/api/option/", {"key": "BudgetWebhookUrl", "value": "https://hooks.example.com/b"}))[
        "success"]
    assert not (await root.put("/api/option/", {"key": "BudgetWebhookUrl", "value": "ftp://x"}))["success"]
    assert (await root.put("/api/option/", {"key": "BudgetAlertRootEnabled", "value": "true"}))["success"]
    listed = {o["key"]: o["value"] for o in (await root.get("/api/option/"))["data"]}
    assert "BudgetWebhookSecret" not in listed and "hidden-value" not in str(listed)
    assert listed["BudgetWebhookUrl"] == "https://hooks.example.com/b" and listed["BudgetAlertRootEnabled"] == "true"


@both_databases
async def test_concurrent_claims_of_a_window_each_limit_won_once(site) -> None:
    gateway, _, _, _ = site
    user = await alice(limits=normalise([{"window": "day", "requests": 1}]))
    await chat(gateway, await make_key(user))
    await drain(gateway)
    window = (user.id, "user", str(user.id), "day", TOMORROW)
    claims = [(mark, f"c{i}") for i in range(6) for mark in ("quota:1", "requests:1", "tokens:1")]
    won = await asyncio.gather(*(durable.claim_soft_alert(*window, mark, claim) for mark, claim in claims))
    winners = sorted(mark for (mark, _), ok in zip(claims, won, strict=True) if ok)
    assert winners == ["quota:1", "requests:1", "tokens:1"]
    assert len((await BudgetUsage.get(user_id=user.id)).soft_alerts.split()) == 3


async def test_a_worker_process_sends_the_alert_and_retries_its_webhook(gateway, upstreams, worker, smtp: FakeSmtp,
                                                                        aiohttp_server) -> None:
    """The same through a real Dramatiq worker on the real clock: the relay's billing.apply, the hook,
    budget.alert, mail.send and budget.webhook, its retry after the 500 taken from Dramatiq's back-off."""
    from workers.broker import setup_broker

    receiver = Receiver(500)
    hook = web.Application()
    hook.router.add_post("/hook", receiver.handle)
    server = await aiohttp_server(hook)
    options = gateway.server.app[keys.OPTIONS]
    for name, value in {"ModelRatio": '{"gpt-4": 1}', "CompletionRatio": '{"gpt-4": 1}',
                        "SMTPServer": "127.0.0.1", "SMTPPort": str(smtp.port), "SMTPFrom": "gw@example.com",
                        "BudgetWebhookSecret": SECRET, "BudgetWebhookUrl": str(server.make_url("/hook")),
                        "MediaFetchPrivateEnabled": "true"}.items():
        await options.update(name, value)
    await add_channel(gateway, await upstreams())
    user = await alice()
    token = await make_key(user, limits=normalise([{"window": "day", "quota": 100, "soft": 50}]))
    await chat(gateway, token, 4)

    async def delivered() -> bool:
        return bool(receiver.accepted()) and len(smtp.messages) == 1

    await eventually(delivered, timeout=60, interval=0.1)
    broker = setup_broker()
    for queue in ("billing", "budget", "mail"):
        await asyncio.to_thread(broker.join, queue, timeout=30_000)
    assert [status for _, _, status in receiver.calls] == [500, 200]
    [body] = receiver.accepted()
    assert body["owner"] == {"kind": "key", "id": token.id, "name": "test key"} and body["used"] >= 60
    assert smtp.messages[0].rcpt_tos == ["alice@example.com"]
