"""The Stripe flow end to end against the local fake, and the webhook's guarantees."""
from __future__ import annotations

import asyncio
import dataclasses
import time

import orjson
import pytest
from aiohttp.test_utils import TestClient

from api import keys
from api.services.billing.balances import user_quota_key
from models import Log, TopUp, User
from models.enums import LogType, Role, TopUpStatus
from models.settings import Settings
from tests.fakes.stripe import WEBHOOK_SECRET, FakeStripe, enable_stripe, signature
from tests.helpers import ApiClient, both_databases, make_user

WEBHOOK = "/api/stripe/webhook"


@pytest.fixture
async def fake_stripe(aiohttp_server) -> FakeStripe:
    return await FakeStripe.start(aiohttp_server)


@pytest.fixture
def settings(settings: Settings, fake_stripe: FakeStripe) -> Settings:
    return dataclasses.replace(settings, stripe_api_base=fake_stripe.base_url)


@pytest.fixture
async def stripe_on(client) -> None:
    await enable_stripe(client.app[keys.OPTIONS])


@pytest.fixture
async def buyer(client, stripe_on):
    """A logged-in user in their own browser."""
    user = await make_user("alice", role=Role.USER, quota=1000)
    browser = TestClient(client.server)
    api = ApiClient(browser)
    await api.login("alice", "password123")
    yield api, user
    await browser.session.close()  # its cookie jar only; the server belongs to `client`


async def deliver(client, payload: bytes, secret: str = WEBHOOK_SECRET, header: str | None = None,
                  timestamp: int | None = None) -> tuple[int, dict]:
    sig = header if header is not None else signature(payload, secret, timestamp)
    resp = await client.post(WEBHOOK, data=payload, headers={"Stripe-Signature": sig,
                                                              "Content-Type": "application/json"})
    return resp.status, await resp.json(content_type=None)


async def place_order(api: ApiClient, amount: int = 10) -> TopUp:
    body = await api.post("/api/user/pay", {"amount": amount, "top_up_code": "", "payment_method": "stripe"})
    assert body["success"], body
    return await TopUp.get(session_id=body["data"]["payLink"].rsplit("/", 1)[1])


@both_databases
async def test_amount_pay_webhook_credit_and_log(client, buyer, fake_stripe: FakeStripe) -> None:
    api, user = buyer
    store = client.app[keys.STORE]
    await store.redis.set(user_quota_key(store, user.id), 800)  # the relay's live balance
    quote = await api.post("/api/user/amount", {"amount": 10, "top_up_code": ""})
    assert quote["data"]["payAmount"] == 80.0 and quote["data"]["chargedAmount"] == 5000000
    order = await place_order(api, 10)

    status, body = await deliver(client, fake_stripe.completed_event(order.session_id))
    assert status == 200 and body["data"] == "credited"
    order = await TopUp.get(id=order.id)
    assert order.status == TopUpStatus.SUCCESS and order.complete_time > 0
    assert (await User.get(id=user.id)).quota == 1000 + 5000000
    assert int(await store.redis.get(user_quota_key(store, user.id))) == 800 + 5000000
    [entry] = await Log.filter(user_id=user.id, type=int(LogType.TOPUP))
    assert entry.quota == 5000000 and entry.username == "alice"
    assert "$10.000000" in entry.content and "80.00 CNY" in entry.content
    assert orjson.loads(entry.other)["trade_no"] == order.trade_no
    own = (await api.get("/api/log/self/?type=1"))["data"]
    assert [i["quota"] for i in own["items"]] == [5000000]

    # A replay of the same event changes nothing.
    status, body = await deliver(client, fake_stripe.completed_event(order.session_id))
    assert status == 200 and body["data"] == "unchanged"
    assert (await User.get(id=user.id)).quota == 1000 + 5000000
    assert await Log.filter(user_id=user.id, type=int(LogType.TOPUP)).count() == 1


@both_databases
async def test_five_parallel_deliveries_credit_once(client, buyer, fake_stripe: FakeStripe) -> None:
    api, user = buyer
    order = await place_order(api, 20)
    payload = fake_stripe.completed_event(order.session_id)
    results = await asyncio.gather(*(deliver(client, payload) for _ in range(5)))
    assert all(status == 200 for status, _ in results), results
    assert sorted(body["data"] for _, body in results) == ["credited"] + ["unchanged"] * 4
    assert (await User.get(id=user.id)).quota == 1000 + 20 * 500000
    assert await Log.filter(user_id=user.id, type=int(LogType.TOPUP)).count() == 1


async def test_forged_signature_is_refused(client, buyer, fake_stripe: FakeStripe) -> None:
    api, user = buyer
    order = await place_order(api)
    payload = fake_stripe.completed_event(order.session_id)
    forged = [
        {"secret": "whsec_attacker"},
        {"header": ""},
        {"header": "t=123,v0=abc"},
        {"header": "garbage"},
        {"timestamp": int(time.time()) - 3600},  # a replay of an old, genuine delivery
    ]
    for case in forged:
        status, body = await deliver(client, payload, **case)
        assert status == 400 and body["success"] is False, case
    tampered = payload.replace(b'"amount_total":8000', b'"amount_total":1')
    status, _ = await deliver(client, tampered, header=signature(payload, WEBHOOK_SECRET))
    assert status == 400
    assert (await TopUp.get(id=order.id)).status == TopUpStatus.PENDING
    assert (await User.get(id=user.id)).quota == 1000


async def test_refused_unless_stripe_is_fully_configured(client, buyer, fake_stripe: FakeStripe) -> None:
    api, user = buyer
    order = await place_order(api)
    options = client.app[keys.OPTIONS]
    await options.update("StripeWebhookSecret", "")
    payload = fake_stripe.completed_event(order.session_id)
    # new-api accepted an HMAC made with the empty key: here nothing is even looked at.
    for secret in ("", WEBHOOK_SECRET):
        status, body = await deliver(client, payload, secret=secret)
        assert status == 403 and body["message"] == "Online payment is not configured"
    await options.update("StripeWebhookSecret", WEBHOOK_SECRET)
    await options.update("StripeApiSecret", "")
    status, _ = await deliver(client, payload)
    assert status == 403
    assert (await User.get(id=user.id)).quota == 1000


async def test_paid_orders_are_credited_even_after_payment_is_switched_off(client, buyer,
                                                                            fake_stripe: FakeStripe) -> None:
    api, user = buyer
    order = await place_order(api)
    await client.app[keys.OPTIONS].update("PaymentEnabled", "false")
    status, body = await deliver(client, fake_stripe.completed_event(order.session_id))
    assert status == 200 and body["data"] == "credited"


@pytest.mark.parametrize("forgery", [{"amount_total": 7999}, {"currency": "usd"}, {"amount_total": None}])
async def test_amount_and_currency_are_checked(client, buyer, fake_stripe: FakeStripe, forgery: dict) -> None:
    api, user = buyer
    order = await place_order(api)
    status, body = await deliver(client, fake_stripe.completed_event(order.session_id, **forgery))
    assert status == 200 and body["data"] == "mismatch"
    assert (await TopUp.get(id=order.id)).status == TopUpStatus.FAILED
    assert (await User.get(id=user.id)).quota == 1000


async def test_expired_session_closes_the_order(client, buyer, fake_stripe: FakeStripe) -> None:
    api, user = buyer
    order = await place_order(api)
    status, body = await deliver(client, fake_stripe.expired_event(order.session_id))
    assert status == 200 and body["data"] == "expired"
    assert (await TopUp.get(id=order.id)).status == TopUpStatus.EXPIRED
    status, body = await deliver(client, fake_stripe.completed_event(order.session_id))
    assert body["data"] == "unchanged"
    assert (await User.get(id=user.id)).quota == 1000


async def test_expiry_never_overwrites_a_success(client, buyer, fake_stripe: FakeStripe) -> None:
    api, _ = buyer
    order = await place_order(api)
    await deliver(client, fake_stripe.completed_event(order.session_id))
    status, body = await deliver(client, fake_stripe.expired_event(order.session_id))
    assert status == 200 and body["data"] == "unchanged"
    assert (await TopUp.get(id=order.id)).status == TopUpStatus.SUCCESS


async def test_asynchronous_payment_waits_for_its_outcome(client, buyer, fake_stripe: FakeStripe) -> None:
    api, user = buyer
    order = await place_order(api)
    status, body = await deliver(client, fake_stripe.completed_event(order.session_id, payment_status="unpaid"))
    assert status == 200 and body["data"] == "waiting"
    assert (await TopUp.get(id=order.id)).status == TopUpStatus.PENDING
    event = orjson.loads(fake_stripe.completed_event(order.session_id))
    event["type"] = "checkout.session.async_payment_succeeded"
    status, body = await deliver(client, orjson.dumps(event))
    assert body["data"] == "credited"
    assert (await User.get(id=user.id)).quota == 1000 + 5000000

    second = await place_order(api)
    event = orjson.loads(fake_stripe.completed_event(second.session_id, payment_status="unpaid"))
    event["type"] = "checkout.session.async_payment_failed"
    status, body = await deliver(client, orjson.dumps(event))
    assert body["data"] == "failed"
    assert (await TopUp.get(id=second.id)).status == TopUpStatus.FAILED


async def test_unknown_orders_and_events_are_acknowledged_and_ignored(client, buyer, fake_stripe: FakeStripe) -> None:
    api, user = buyer
    order = await place_order(api)
    unknown = fake_stripe.completed_event(order.session_id, client_reference_id="ref_nobody")
    other_session = fake_stripe.completed_event(order.session_id, id="cs_test_someone_else")
    other_event = orjson.dumps({"id": "evt_1", "type": "customer.created", "data": {"object": {"id": "cus_1"}}})
    for payload in (unknown, other_session, other_event, b"{}"):
        status, body = await deliver(client, payload)
        assert status == 200 and body["data"] == "ignored", payload
    assert (await TopUp.get(id=order.id)).status == TopUpStatus.PENDING
    assert (await User.get(id=user.id)).quota == 1000
