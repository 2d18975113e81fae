"""A local fake of the Stripe API, speaking its real protocol.

Requests are form-encoded with bracketed nesting (`line_items[0][price_data][currency]=cny`), authenticated
by `Authorization: Bearer <secret key>`; answers are Stripe's JSON objects, errors Stripe's
`{"error": {"type", "code", "message"}}` with its status codes; `Idempotency-Key` replays the first
answer; bodies are gzip-compressed when the client accepts it, as Stripe's servers do.

It also plays Stripe's side of the webhook: `completed_event()` / `expired_event()` build the event a
real account would send, `signature()` signs a payload like Stripe does (`t=<ts>,v1=<hmac-sha256>`).
"""
from __future__ import annotations

import gzip
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

_KEY_PART = re.compile(r"\[([^\[\]]*)\]")


def parse_form(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Stripe's bracket encoding → nested dicts, with dicts of 0..n keys turned into lists."""
    root: dict[str, Any] = {}
    for key, value in pairs:
        head = key.split("[", 1)[0]
        parts = [head, *_KEY_PART.findall(key[len(head):])]
        node = root
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return _listify(root)


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    converted = {k: _listify(v) for k, v in node.items()}
    if converted and all(k.isdigit() for k in converted):
        return [converted[k] for k in sorted(converted, key=int)]
    return converted


def signature(payload: bytes, secret: str, timestamp: int | None = None) -> str:
    ts = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{ts}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={ts},v1={mac}"


class StripeError(Exception):
    def __init__(self, status: int, error_type: str, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.error_type, self.message, self.code = status, error_type, message, code


@dataclass
class FakeStripe:
    secret_key: str = "sk_test_fake"
    prices: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_next: StripeError | None = None
    base_url: str = ""
    _idempotent: dict[str, tuple[int, bytes]] = field(default_factory=dict)

    @classmethod
    async def start(cls, aiohttp_server: Any, **kwargs: Any) -> FakeStripe:
        fake = cls(**kwargs)
        server = await aiohttp_server(fake.app())
        fake.base_url = str(server.make_url("")).rstrip("/")
        return fake

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/checkout/sessions", self._create_session)
        app.router.add_get("/v1/checkout/sessions/{id}", self._get_session)
        app.router.add_get("/v1/prices/{id}", self._get_price)
        return app

    def add_price(self, unit_amount: int, currency: str = "cny") -> str:
        price_id = "price_" + secrets.token_hex(8)
        self.prices[price_id] = {"id": price_id, "object": "price", "active": True, "currency": currency,
                                 "unit_amount": unit_amount, "product": "prod_" + secrets.token_hex(6),
                                 "type": "one_time", "livemode": False}
        return price_id

    # -- HTTP ----------------------------------------------------------------------------------------
    def _respond(self, request: web.Request, status: int, body: bytes) -> web.Response:
        headers = {"Content-Type": "application/json", "Request-Id": "req_" + secrets.token_hex(7)}
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        return web.Response(status=status, body=body, headers=headers)

    def _error(self, request: web.Request, exc: StripeError) -> web.Response:
        error: dict[str, Any] = {"type": exc.error_type, "message": exc.message}
        if exc.code:
            error["code"] = exc.code
        return self._respond(request, exc.status, orjson.dumps({"error": error}))

    async def _guard(self, request: web.Request) -> dict[str, Any]:
        form = parse_form(list((await request.post()).items())) if request.method == "POST" else {}
        self.requests.append({"method": request.method, "path": request.path, "form": form,
                              "headers": dict(request.headers)})
        if request.headers.get("Authorization") != f"Bearer {self.secret_key}":
            raise StripeError(401, "invalid_request_error", "Invalid API Key provided: sk_****")
        if self.fail_next is not None:
            failure, self.fail_next = self.fail_next, None
            raise failure
        return form

    async def _create_session(self, request: web.Request) -> web.Response:
        try:
            form = await self._guard(request)
            key = request.headers.get("Idempotency-Key")
            if key and key in self._idempotent:
                return self._respond(request, *self._idempotent[key])
            session = self._new_session(form)
        except StripeError as exc:
            return self._error(request, exc)
        body = orjson.dumps(session)
        if key:
            self._idempotent[key] = (200, body)
        return self._respond(request, 200, body)

    async def _get_session(self, request: web.Request) -> web.Response:
        try:
            await self._guard(request)
            session = self.sessions.get(request.match_info["id"])
            if session is None:
                raise StripeError(404, "invalid_request_error", "No such checkout.session", "resource_missing")
        except StripeError as exc:
            return self._error(request, exc)
        return self._respond(request, 200, orjson.dumps(session))

    async def _get_price(self, request: web.Request) -> web.Response:
        try:
            await self._guard(request)
            price = self.prices.get(request.match_info["id"])
            if price is None:
                raise StripeError(404, "invalid_request_error", "No such price", "resource_missing")
        except StripeError as exc:
            return self._error(request, exc)
        return self._respond(request, 200, orjson.dumps(price))

    def _new_session(self, form: dict[str, Any]) -> dict[str, Any]:
        if form.get("mode") != "payment":
            raise StripeError(400, "invalid_request_error", "mode must be payment", "parameter_invalid")
        if not form.get("success_url"):
            raise StripeError(400, "invalid_request_error", "Missing required param: success_url.",
                              "parameter_missing")
        items = form.get("line_items")
        if not isinstance(items, list) or not items:
            raise StripeError(400, "invalid_request_error", "Missing required param: line_items.",
                              "parameter_missing")
        total, currency = 0, None
        for item in items:
            quantity = int(item.get("quantity", "0"))
            if quantity <= 0:
                raise StripeError(400, "invalid_request_error", "Invalid quantity", "parameter_invalid")
            if "price" in item:
                price = self.prices.get(item["price"])
                if price is None:
                    raise StripeError(400, "invalid_request_error", "No such price", "resource_missing")
                unit, item_currency = price["unit_amount"], price["currency"]
            else:
                data = item.get("price_data") or {}
                if not data.get("currency") or "unit_amount" not in data:
                    raise StripeError(400, "invalid_request_error", "Missing price_data", "parameter_missing")
                if "product" not in data and not (data.get("product_data") or {}).get("name"):
                    raise StripeError(400, "invalid_request_error", "Missing product", "parameter_missing")
                if "product" in data and data["product"] not in {p["product"] for p in self.prices.values()}:
                    raise StripeError(400, "invalid_request_error", "No such product", "resource_missing")
                unit, item_currency = int(data["unit_amount"]), data["currency"]
            if currency not in (None, item_currency):
                raise StripeError(400, "invalid_request_error", "Currencies differ", "parameter_invalid")
            currency = item_currency
            total += unit * quantity
        session_id = "cs_test_" + secrets.token_hex(16)
        now = int(time.time())
        session = {
            "id": session_id, "object": "checkout.session", "mode": "payment", "livemode": False,
            "amount_subtotal": total, "amount_total": total, "currency": currency,
            "client_reference_id": form.get("client_reference_id"), "customer": None,
            "customer_email": form.get("customer_email"), "metadata": form.get("metadata") or {},
            "success_url": form["success_url"], "cancel_url": form.get("cancel_url"),
            "status": "open", "payment_status": "unpaid", "created": now, "expires_at": now + 86400,
            "url": f"https://checkout.stripe.com/c/pay/{session_id}", "line_items_form": items,
        }
        self.sessions[session_id] = session
        return session

    # -- Stripe's side of the webhook ----------------------------------------------------------------
    def _event(self, kind: str, session: dict[str, Any]) -> bytes:
        public = {k: v for k, v in session.items() if k != "line_items_form"}
        return orjson.dumps({"id": "evt_" + secrets.token_hex(12), "object": "event", "type": kind,
                             "api_version": "2025-01-01", "created": int(time.time()), "livemode": False,
                             "pending_webhooks": 1, "data": {"object": public}})

    def completed_event(self, session_id: str, **overrides: Any) -> bytes:
        """The customer paid: the session is complete and paid (`overrides` forge other values)."""
        session = self.sessions[session_id]
        session.update(status="complete", payment_status="paid", customer="cus_" + secrets.token_hex(6))
        return self._event("checkout.session.completed", {**session, **overrides})

    def expired_event(self, session_id: str) -> bytes:
        session = self.sessions[session_id]
        session.update(status="expired")
        return self._event("checkout.session.expired", session)


SECRET_KEY = "sk_test_fake"
WEBHOOK_SECRET = "whsec_test_fake"


async def enable_stripe(options: Any, *, api_secret: str = SECRET_KEY, webhook_secret: str = WEBHOOK_SECRET,
                        **extra: str) -> None:
    """Payment options as an admin sets them (through the options service, so they are validated)."""
    await options.update("ServerAddress", "https://gw.example.com")
    await options.update("StripeApiSecret", api_secret)
    await options.update("StripeWebhookSecret", webhook_secret)
    for key, value in extra.items():
        await options.update(key, value)
    await options.update("PaymentEnabled", "true")
