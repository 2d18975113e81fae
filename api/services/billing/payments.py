"""Online top-up through Stripe Checkout: quotes, orders, and the webhook that credits them.

Money rules (doing better than new-api's: docs/compatibility.md, Stripe top-up):
- the user pays `amount × StripeUnitPrice × TopupGroupRatio[group]` (2 decimals, StripeCurrency) and
  Stripe charges exactly that (one line item with an inline price; StripePriceId, when set, only
  names the product); the user receives `amount × QuotaPerUnit` quota whatever the group;
- the order row is written before the Checkout Session, so a session never lacks its order;
- the webhook refuses everything unless Stripe is fully configured, checks the signature with
  StripeWebhookSecret, checks amount and currency against the order, and credits inside one
  transaction guarded by the conditional transition pending → success, so replays, duplicates and
  parallel deliveries credit once; a failure while crediting answers 500 so Stripe retries.
"""
from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, cast

import aiohttp
import orjson
from tortoise.expressions import F
from tortoise.transactions import in_transaction

from api.errors import ApiError
from api.services.billing.balances import adjust_user
from api.services.configuration.options import OptionsService
from api.services.logs import log_event
from api.services.params import json_int
from api.services.store import Store
from models import Log, TopUp, User
from models.enums import LogType, TopUpStatus
from models.settings import Settings

if TYPE_CHECKING:  # the SDK (30 MiB with its HTTP stacks) is loaded by the first payment, not by every process
    import stripe

log = logging.getLogger(__name__)

MAX_AMOUNT = 100000
WEBHOOK_TOLERANCE = 300  # seconds, as Stripe's own libraries
STRIPE_TIMEOUT = aiohttp.ClientTimeout(total=30)
CENT = Decimal("0.01")
# ISO currencies Stripe counts in whole units (https://docs.stripe.com/currencies#zero-decimal)
ZERO_DECIMAL = frozenset({"bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd",
                          "vuv", "xaf", "xof", "xpf"})
COMPLETED_EVENTS = frozenset({"checkout.session.completed", "checkout.session.async_payment_succeeded"})


@dataclass(frozen=True, slots=True)
class Quote:
    amount: int  # dollars of quota bought
    pay_amount: Decimal  # what the user pays, in `currency`
    quota: int  # what is credited
    currency: str

    @property
    def minor_units(self) -> int:
        return to_minor_units(self.pay_amount, self.currency)


def to_minor_units(value: Decimal, currency: str) -> int:
    if currency in ZERO_DECIMAL:
        return int(value.to_integral_value(ROUND_HALF_UP))
    return int((value * 100).to_integral_value(ROUND_HALF_UP))


def _decimal(text: str, default: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal(default)
    return value if value.is_finite() else Decimal(default)


# -- configuration ---------------------------------------------------------------------------------
def stripe_configured(options: OptionsService) -> bool:
    """Secret key, webhook secret and the server address (the return URLs) are all set."""
    return all(options.get(k).strip() for k in ("StripeApiSecret", "StripeWebhookSecret", "ServerAddress"))


def require_checkout(options: OptionsService) -> None:
    if not options.get_bool("PaymentEnabled"):
        raise ApiError("payment_disabled")
    if not stripe_configured(options):
        raise ApiError("payment_not_configured")


_session_client: type[Any] | None = None


def _shared_session_client() -> type[Any]:
    """Stripe over the app's shared session, which does not decompress bodies (the relay forwards them
    as they are): ask Stripe for identity encoding so its JSON arrives readable."""
    global _session_client
    if _session_client is None:
        import stripe

        class SharedSessionClient(stripe.AIOHTTPClient):
            def _get_request_args_kwargs(self, method: str, url: str, headers: Any, post_data: Any) -> Any:
                args, kwargs = super()._get_request_args_kwargs(method, url, headers, post_data)
                kwargs["headers"] = {**kwargs["headers"], "Accept-Encoding": "identity"}
                return args, kwargs

        _session_client = SharedSessionClient
    return _session_client


def stripe_client(http: aiohttp.ClientSession, settings: Settings, options: OptionsService) -> stripe.StripeClient:
    import stripe

    http_client = _shared_session_client()(session=http, timeout=STRIPE_TIMEOUT,
                                       proxy=options.get("OutProxyUrl") or None)
    base: Any = {"api": settings.stripe_api_base} if settings.stripe_api_base else None
    return stripe.StripeClient(options.get("StripeApiSecret"), http_client=http_client, base_addresses=base,
                               max_network_retries=0)


# -- quotes ----------------------------------------------------------------------------------------
def parse_amount(value: object, options: OptionsService) -> int:
    """A whole number of dollars between MinTopUp and 100000."""
    amount = json_int(value)
    if amount is None:
        raise ApiError("topup_amount_integer")
    minimum = max(options.get_int("MinTopUp"), 1)
    if amount < minimum:
        raise ApiError("topup_amount_min", min=minimum)
    if amount > MAX_AMOUNT:
        raise ApiError("topup_amount_max", max=MAX_AMOUNT)
    return amount


def topup_group_ratio(options: OptionsService, group: str) -> Decimal:
    """TopupGroupRatio[group]; a missing or zero ratio counts 1, as the reference does."""
    table = options.get_json("TopupGroupRatio")
    value = table.get(group) if isinstance(table, dict) else None
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return Decimal(1)
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def quote(options: OptionsService, group: str, amount: int) -> Quote:
    unit_price = _decimal(options.get("StripeUnitPrice"), "8")
    pay = (Decimal(amount) * unit_price * topup_group_ratio(options, group)).quantize(CENT, ROUND_HALF_UP)
    quota_per_unit = _decimal(options.get("QuotaPerUnit"), "500000")
    quota = int((Decimal(amount) * quota_per_unit).to_integral_value(ROUND_HALF_UP))
    currency = (options.get("StripeCurrency") or "cny").lower()
    if currency in ZERO_DECIMAL:
        pay = pay.to_integral_value(ROUND_HALF_UP)
    return Quote(amount, pay, quota, currency)


def checked_quote(options: OptionsService, group: str, amount: int) -> Quote:
    result = quote(options, group, amount)
    if result.minor_units <= 0:
        raise ApiError("topup_pay_too_low")
    return result


def quote_dict(result: Quote) -> dict[str, Any]:
    return {"payAmount": float(result.pay_amount), "chargedAmount": result.quota, "currency": result.currency}


# -- checkout --------------------------------------------------------------------------------------
def new_trade_no() -> str:
    return "ref_" + secrets.token_hex(20)


async def _line_item(client: stripe.StripeClient, options: OptionsService, result: Quote) -> dict[str, Any]:
    price_data: dict[str, Any] = {"currency": result.currency, "unit_amount": result.minor_units}
    price_id = options.get("StripePriceId").strip()
    if price_id:
        price = await client.v1.prices.retrieve_async(price_id)
        product = price.product
        price_data["product"] = product if isinstance(product, str) else product.id
    else:
        name = f"{options.get('SystemName') or 'AI Gateway'} top-up ${result.amount}"
        price_data["product_data"] = {"name": name}
    return {"price_data": price_data, "quantity": 1}


async def create_checkout(http: aiohttp.ClientSession, settings: Settings, options: OptionsService, user: User,
                          amount: int) -> str:
    """A pending order and its Checkout Session; returns the URL the browser goes to."""
    result = checked_quote(options, user.group, amount)
    order = await TopUp.create(user_id=user.id, amount=amount, money=float(result.pay_amount), quota=result.quota,
                               currency=result.currency, trade_no=new_trade_no(), payment_method="stripe",
                               status=TopUpStatus.PENDING.value)
    server = options.get("ServerAddress").rstrip("/")
    params: dict[str, Any] = {
        "mode": "payment",
        "client_reference_id": order.trade_no,
        "success_url": f"{server}/log",
        "cancel_url": f"{server}/topup",
        "metadata": {"trade_no": order.trade_no, "user_id": str(user.id)},
    }
    if user.email:
        params["customer_email"] = user.email
    import stripe

    client = stripe_client(http, settings, options)
    try:
        params["line_items"] = [await _line_item(client, options, result)]
        session = await client.v1.checkout.sessions.create_async(cast(Any, params),
                                                                 {"idempotency_key": order.trade_no})
    except stripe.APIConnectionError as exc:
        # Stripe may have created the session anyway: the order stays pending, a webhook may still come.
        log.warning("stripe checkout for order %s: connection failed (%s)", order.trade_no, type(exc).__name__)
        raise ApiError("payment_create_failed") from exc
    except stripe.StripeError as exc:
        log.warning("stripe checkout for order %s refused: %s %s", order.trade_no, exc.http_status, exc.code)
        await TopUp.filter(id=order.id, status=TopUpStatus.PENDING.value).update(
            status=TopUpStatus.FAILED.value, complete_time=int(time.time()))
        raise ApiError("payment_create_failed") from exc
    await TopUp.filter(id=order.id).update(session_id=session.id)
    if not session.url:
        raise ApiError("payment_create_failed")
    return session.url


# -- webhook ---------------------------------------------------------------------------------------
class WebhookRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def handle_webhook(store: Store, options: OptionsService, payload: bytes, signature: str | None) -> str:
    """Verify and apply one Stripe event; returns what was done. WebhookRefused for 403/400."""
    if not stripe_configured(options):
        raise WebhookRefused(403, "payment_not_configured")
    import stripe

    try:
        stripe.WebhookSignature.verify_header(payload.decode("utf-8"), signature, options.get("StripeWebhookSecret"),
                                              WEBHOOK_TOLERANCE)
        event = orjson.loads(payload)
    except (stripe.SignatureVerificationError, UnicodeDecodeError, orjson.JSONDecodeError) as exc:
        raise WebhookRefused(400, "stripe_signature_invalid") from exc
    kind = event.get("type") if isinstance(event, dict) else None
    data = event.get("data") if isinstance(event, dict) else None
    session = data.get("object") if isinstance(data, dict) else None
    if not isinstance(kind, str) or not isinstance(session, dict):
        return "ignored"
    if kind in COMPLETED_EVENTS:
        if session.get("status") != "complete" or session.get("payment_status") != "paid":
            return "waiting"  # an asynchronous payment method: async_payment_succeeded follows
        return await fulfil(store, options, session)
    if kind == "checkout.session.expired":
        return await close_order(session, TopUpStatus.EXPIRED)
    if kind == "checkout.session.async_payment_failed":
        return await close_order(session, TopUpStatus.FAILED)
    return "ignored"


async def _order_of(session: dict[str, Any]) -> TopUp | None:
    trade_no = session.get("client_reference_id")
    if not isinstance(trade_no, str) or not trade_no:
        return None
    order = await TopUp.filter(trade_no=trade_no, payment_method="stripe").first()
    if order is None:
        log.warning("stripe webhook: no stripe order %s", trade_no[:64])
        return None
    if order.session_id and session.get("id") != order.session_id:
        log.warning("stripe webhook: session of order %s does not match", order.trade_no)
        return None
    return order


async def close_order(session: dict[str, Any], status: TopUpStatus) -> str:
    order = await _order_of(session)
    if order is None:
        return "ignored"
    closed = await TopUp.filter(id=order.id, status=TopUpStatus.PENDING.value).update(
        status=status.value, complete_time=int(time.time()))
    return status.value if closed else "unchanged"


async def fulfil(store: Store, options: OptionsService, session: dict[str, Any]) -> str:
    order = await _order_of(session)
    if order is None:
        return "ignored"
    expected = to_minor_units(Decimal(repr(order.money)).quantize(CENT, ROUND_HALF_UP), order.currency)
    currency = session.get("currency")
    if session.get("amount_total") != expected or not isinstance(currency, str) or currency.lower() != order.currency:
        log.error("stripe webhook: order %s paid %r %r, expected %d %s; not credited", order.trade_no,
                  session.get("amount_total"), currency, expected, order.currency)
        await TopUp.filter(id=order.id, status=TopUpStatus.PENDING.value).update(
            status=TopUpStatus.FAILED.value, complete_time=int(time.time()))
        return "mismatch"
    now = int(time.time())
    async with in_transaction() as conn:
        won = await TopUp.filter(id=order.id, status=TopUpStatus.PENDING.value).using_db(conn).update(
            status=TopUpStatus.SUCCESS.value, complete_time=now)
        if won:
            await User.filter(id=order.user_id).using_db(conn).update(quota=F("quota") + order.quota)
            user = await User.filter(id=order.user_id).using_db(conn).first()
            paid = f"{Decimal(repr(order.money)).quantize(CENT)} {order.currency.upper()}"
            usd = order.quota / (options.get_float("QuotaPerUnit") or 1)
            await Log.create(user_id=order.user_id, type=int(LogType.TOPUP), username=user.username if user else "",
                             quota=order.quota, created_at=now,
                             content=f"Online top-up succeeded: ${usd:.6f} of quota ({order.quota}), paid {paid}",
                             other=log_event("topup_online", {"trade_no": order.trade_no, "payment_method": "stripe"},
                                             quota=order.quota, paid=paid),
                             using_db=conn)
    if not won:
        return "unchanged"
    await adjust_user(store, order.user_id, order.quota)
    return "credited"
