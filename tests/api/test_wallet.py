"""The wallet's online top-up: quote (/api/user/amount) and order + Checkout Session (/api/user/pay)."""
from __future__ import annotations

import dataclasses

import orjson
import pytest

from api import keys
from models import TopUp, User
from models.enums import TopUpStatus
from models.settings import Settings
from tests.fakes.stripe import FakeStripe, StripeError, enable_stripe
from tests.helpers import ApiClient


@pytest.fixture
async def fake_stripe(aiohttp_server) -> FakeStripe:
    return await FakeStripe.start(aiohttp_server)


@pytest.fixture
def settings(settings: Settings, fake_stripe: FakeStripe) -> Settings:
    return dataclasses.replace(settings, stripe_api_base=fake_stripe.base_url)



@pytest.fixture
def options(client):
    return client.app[keys.OPTIONS]


async def test_payment_disabled_is_refused_with_the_spec_message(login_as) -> None:
    alice, _ = await login_as("alice")
    for path in ("/api/user/amount", "/api/user/pay"):
        body = await alice.post(path, {"amount": 10, "top_up_code": ""}, headers={"Accept-Language": "zh-CN"})
        assert body == {"success": False, "message": "管理员未开启在线充值！", "data": None}
        body = await alice.post(path, {"amount": 10})
        assert body["message"] == "The administrator has not enabled online top-up!"
    assert await TopUp.all().count() == 0


async def test_incomplete_stripe_configuration_is_refused(login_as, options) -> None:
    await enable_stripe(options)
    await options.update("StripeApiSecret", "")
    alice, _ = await login_as("alice")
    for path in ("/api/user/amount", "/api/user/pay"):
        body = await alice.post(path, {"amount": 10, "payment_method": "stripe"})
        assert body["message"] == "Online payment is not configured"
    assert await TopUp.all().count() == 0


async def test_quote_is_price_times_group_ratio_and_credit_is_full(login_as, options) -> None:
    await enable_stripe(options, TopupGroupRatio='{"default": 1, "vip": 0.8}')
    alice, _ = await login_as("alice")
    vip, _ = await login_as("victor", group="vip")
    body = await alice.post("/api/user/amount", {"amount": 10, "top_up_code": ""})
    assert body == {"success": True, "message": "success",
                    "data": {"payAmount": 80.0, "chargedAmount": 5000000, "currency": "cny"}}
    body = await vip.post("/api/user/amount", {"amount": 10, "top_up_code": ""})
    assert body["data"] == {"payAmount": 64.0, "chargedAmount": 5000000, "currency": "cny"}
    await options.update("StripeUnitPrice", "7.333")
    body = await alice.post("/api/user/amount", {"amount": 5})
    assert body["data"]["payAmount"] == 36.67  # 36.665: 2 decimals, half up (not to even)


@pytest.mark.parametrize(("amount", "message"), [
    (10.5, "充值数量必须是整数！"), ("ten", "充值数量必须是整数！"), (None, "充值数量必须是整数！"),
    (True, "充值数量必须是整数！"), (4, "充值数量不能小于5"), (100001, "充值数量不能大于100000"),
])
async def test_amount_rules(login_as, options, amount: object, message: str) -> None:
    await enable_stripe(options)
    alice, _ = await login_as("alice")
    for path in ("/api/user/amount", "/api/user/pay"):
        body = await alice.post(path, {"amount": amount, "payment_method": "stripe"},
                                headers={"Accept-Language": "zh-CN"})
        assert body == {"success": False, "message": message, "data": None}
    assert await TopUp.all().count() == 0


async def test_amount_bounds_follow_min_topup(login_as, options) -> None:
    await enable_stripe(options, MinTopUp="1")
    alice, _ = await login_as("alice")
    assert (await alice.post("/api/user/amount", {"amount": 1}))["data"]["payAmount"] == 8.0
    assert (await alice.post("/api/user/amount", {"amount": "100000"}))["data"]["chargedAmount"] == 100000 * 500000
    body = await alice.post("/api/user/amount", {"amount": 0})
    assert body["message"] == "The top-up amount cannot be less than 1"


async def test_pay_creates_an_order_and_a_session_charging_exactly_the_quote(login_as, options,
                                                                             fake_stripe: FakeStripe) -> None:
    await enable_stripe(options, TopupGroupRatio='{"default": 1, "vip": 1.25}')
    vip, user = await login_as("victor", group="vip", email="victor@example.com")
    quote = (await vip.post("/api/user/amount", {"amount": 12}))["data"]
    body = await vip.post("/api/user/pay", {"amount": 12, "top_up_code": "", "payment_method": "stripe"})
    assert body["success"] and body["message"] == "success"
    [order] = await TopUp.filter(user_id=user.id)
    session = fake_stripe.sessions[order.session_id]
    assert body["data"] == {"payLink": session["url"]}
    assert order.status == TopUpStatus.PENDING and order.amount == 12 and order.quota == 6000000
    assert order.money == quote["payAmount"] == 120.0 and order.currency == "cny"
    assert order.trade_no.startswith("ref_") and len(order.trade_no) == 44
    assert session["amount_total"] == 12000 and session["currency"] == "cny"
    [create] = [r for r in fake_stripe.requests if r["path"] == "/v1/checkout/sessions"]
    form = create["form"]
    assert form["client_reference_id"] == order.trade_no and form["mode"] == "payment"
    assert form["line_items"] == [{"quantity": "1", "price_data": {
        "currency": "cny", "unit_amount": "12000", "product_data": {"name": "AI Gateway top-up $12"}}}]
    assert form["success_url"] == "https://gw.example.com/log"
    assert form["cancel_url"] == "https://gw.example.com/topup"
    assert form["customer_email"] == "victor@example.com"
    assert form["metadata"] == {"trade_no": order.trade_no, "user_id": str(user.id)}
    assert create["headers"]["Idempotency-Key"] == order.trade_no
    assert create["headers"]["Accept-Encoding"] == "identity"  # the shared session does not decompress
    assert (await User.get(id=user.id)).quota == 0  # nothing is credited before Stripe says it is paid


async def test_price_id_names_the_product_but_the_quote_is_charged(login_as, options,
                                                                  fake_stripe: FakeStripe) -> None:
    price_id = fake_stripe.add_price(unit_amount=100, currency="cny")
    await enable_stripe(options, StripePriceId=price_id, StripeCurrency="usd", StripeUnitPrice="1.1")
    alice, user = await login_as("alice")
    body = await alice.post("/api/user/pay", {"amount": 7, "payment_method": "stripe"})
    assert body["success"], body
    [order] = await TopUp.filter(user_id=user.id)
    session = fake_stripe.sessions[order.session_id]
    assert (session["amount_total"], session["currency"]) == (770, "usd")
    assert session["line_items_form"][0]["price_data"]["product"] == fake_stripe.prices[price_id]["product"]
    assert order.currency == "usd" and order.money == 7.7


async def test_stripe_refusal_fails_the_order(login_as, options, fake_stripe: FakeStripe) -> None:
    await enable_stripe(options)
    alice, user = await login_as("alice")
    fake_stripe.fail_next = StripeError(400, "invalid_request_error", "Amount too small", "amount_too_small")
    body = await alice.post("/api/user/pay", {"amount": 10, "payment_method": "stripe"})
    assert body == {"success": False, "message": "Could not start the payment, try again later", "data": None}
    [order] = await TopUp.filter(user_id=user.id)
    assert order.status == TopUpStatus.FAILED and order.session_id == ""


async def test_wrong_api_key_is_a_failed_payment_not_a_crash(login_as, options) -> None:
    await enable_stripe(options, api_secret="sk_test_not_the_right_one")
    alice, user = await login_as("alice")
    body = await alice.post("/api/user/pay", {"amount": 10, "payment_method": "stripe"})
    assert body["message"] == "Could not start the payment, try again later"
    assert (await TopUp.get(user_id=user.id)).status == TopUpStatus.FAILED


async def test_only_stripe_is_a_payment_method(login_as, options) -> None:
    await enable_stripe(options)
    alice, _ = await login_as("alice")
    body = await alice.post("/api/user/pay", {"amount": 10, "payment_method": "alipay"})
    assert body["message"] == "Unsupported payment method"
    assert await TopUp.all().count() == 0


async def test_wallet_routes_need_a_login(anon: ApiClient, options) -> None:
    await enable_stripe(options)
    for path in ("/api/user/amount", "/api/user/pay"):
        body = await anon.post(path, {"amount": 10, "payment_method": "stripe"}, expect_status=401)
        assert body["success"] is False


async def test_secrets_never_reach_the_option_list(root: ApiClient, options) -> None:
    await enable_stripe(options)
    listed = {item["key"]: item["value"] for item in (await root.get("/api/option/"))["data"]}
    assert "StripeApiSecret" not in listed and "StripeWebhookSecret" not in listed
    assert listed["StripeCurrency"] == "cny"
    body = await root.put("/api/option/", {"key": "StripeCurrency", "value": "CNY!"})
    assert body["success"] is False and "currency" in body["message"]
    assert orjson.loads(orjson.dumps(listed))["PaymentEnabled"] == "true"
