"""Stripe's calls to us: checkout.session.* events, signed with StripeWebhookSecret (no session auth)."""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.i18n import language, translate
from api.response import fail, ok
from api.services.billing import payments

MAX_EVENT_BYTES = 1024 * 1024


async def stripe_webhook(request: web.Request) -> web.Response:
    """403 unless Stripe is configured, 400 on a bad signature, 200 once handled (500 → Stripe retries)."""
    if request.content_length is not None and request.content_length > MAX_EVENT_BYTES:
        return fail("payload too large", status=413)
    payload = await request.read()
    signature = request.headers.get("Stripe-Signature")
    if signature is not None and not signature.isascii():
        signature = ""  # Stripe's are ASCII (the signature check cannot compare others): no signature, 400
    try:
        outcome = await payments.handle_webhook(request.config_dict[keys.STORE], request.config_dict[keys.OPTIONS],
                                                payload, signature)
    except payments.WebhookRefused as exc:
        return fail(translate(exc.message, language(request)), status=exc.status)
    return ok(outcome)
