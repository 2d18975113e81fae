"""The wallet: redeem a code, quote and pay an online top-up."""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import critical, the_user, user_required
from api.errors import ApiError
from api.response import ok, read_json
from api.services.billing import payments, redemptions


@user_required
async def redeem_code(request: web.Request) -> web.Response:
    body = await read_json(request)
    options = request.config_dict[keys.OPTIONS]
    quota = await redemptions.redeem(request.config_dict[keys.STORE], request.config_dict[keys.LIMITER],
                                     the_user(request), body.get("key"), options.get_float("QuotaPerUnit"))
    return ok(quota)


@user_required
async def quote_topup(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    payments.require_checkout(options)
    body = await read_json(request)
    amount = payments.parse_amount(body.get("amount"), options)
    return ok(payments.quote_dict(payments.checked_quote(options, the_user(request).group, amount)), "success")


@user_required
@critical("pay")
async def pay_topup(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    payments.require_checkout(options)
    body = await read_json(request)
    method = body.get("payment_method") or "stripe"
    if method != "stripe":
        raise ApiError("payment_method_unsupported")
    amount = payments.parse_amount(body.get("amount"), options)
    link = await payments.create_checkout(request.config_dict[keys.HTTP], request.config_dict[keys.SETTINGS],
                                          options, the_user(request), amount)
    return ok({"payLink": link}, "success")
