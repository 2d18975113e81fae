"""Public site information: status, notice, about, home page content."""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from api import keys
from api.response import ok
from api.services.accounts.oidc_providers import enabled_providers
from api.services.configuration.options import OptionsService
from models.settings import VERSION


def payment_ready(options: OptionsService) -> bool:
    return (options.get_bool("PaymentEnabled") and bool(options.get("StripeApiSecret"))
            and bool(options.get("StripeWebhookSecret")) and bool(options.get("ServerAddress")))


def build_status(options: OptionsService, start_time: int) -> dict[str, Any]:
    payment = payment_ready(options)
    return {
        "version": VERSION,
        "start_time": start_time,
        "system_name": options.get("SystemName"),
        "logo": options.get("Logo"),
        "footer_html": options.get("Footer"),
        "quota_per_unit": options.get_float("QuotaPerUnit"),
        "display_in_currency": options.get_bool("DisplayInCurrencyEnabled"),
        "display_token_stat": options.get_bool("DisplayTokenStatEnabled"),
        "enable_drawing": options.get_bool("DrawingEnabled"),
        "enable_task": options.get_bool("TaskEnabled"),
        "enable_data_export": options.get_bool("DataExportEnabled"),
        "enable_batch_update": False,
        "chats": options.get_json("Chats"),
        "data_export_default_time": options.get("DataExportDefaultTime"),
        "default_collapse_sidebar": options.get_bool("DefaultCollapseSidebar"),
        "mj_notify_enabled": options.get_bool("MjNotifyEnabled"),
        "chat_link": options.get("ChatLink"),
        "chat_link2": options.get("ChatLink2"),
        "email_verification": options.get_bool("EmailVerificationEnabled"),
        "register_enabled": options.get_bool("RegisterEnabled"),
        "self_deletion": options.get_bool("UserSelfDeletionEnabled"),
        "password_login_enabled": options.get_bool("PasswordLoginEnabled"),
        "password_register_enabled": options.get_bool("PasswordRegisterEnabled"),
        "turnstile_check": options.get_bool("TurnstileCheckEnabled"),
        "turnstile_site_key": options.get("TurnstileSiteKey"),
        "github_oauth": options.get_bool("GitHubOAuthEnabled"),
        "github_client_id": options.get("GitHubClientId"),
        "linuxdo_oauth": options.get_bool("LinuxDoOAuthEnabled"),
        "linuxdo_client_id": options.get("LinuxDoClientId"),
        "wechat_login": options.get_bool("WeChatAuthEnabled"),
        "wechat_qrcode": options.get("WeChatAccountQRCodeImageURL"),
        "telegram_oauth": options.get_bool("TelegramOAuthEnabled"),
        "telegram_bot_name": options.get("TelegramBotName"),
        "passkey_login": options.get_bool("PasskeyLoginEnabled"),
        "server_address": options.get("ServerAddress"),
        "top_up_link": options.get("TopUpLink"),
        "min_topup": options.get_int("MinTopUp"),
        "price": options.get_float("StripeUnitPrice"),
        "payment_enabled": payment,
        "enable_online_topup": payment,
    }


class StatusCache:
    """The status object, rebuilt only after an option changed (in any process)."""

    def __init__(self, options: OptionsService, start_time: int) -> None:
        self.options = options
        self.start_time = start_time
        self._status: dict[str, Any] | None = None

    def invalidate(self, _message: dict[str, Any] | None = None) -> None:
        self._status = None

    def get(self) -> dict[str, Any]:
        if self._status is None:
            self._status = build_status(self.options, self.start_time)
        return self._status


STATUS_CACHE = web.AppKey("status_cache", StatusCache)


def setup_status_cache(app: web.Application) -> None:
    async def ctx(app: web.Application) -> AsyncIterator[None]:
        cache = StatusCache(app[keys.OPTIONS], app[keys.START_TIME])
        app[keys.EVENTS].subscribe("option", cache.invalidate)
        app[STATUS_CACHE] = cache
        yield

    app.cleanup_ctx.append(ctx)


async def get_status(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    cache = request.config_dict.get(STATUS_CACHE)
    data = cache.get() if cache is not None else build_status(options, request.config_dict[keys.START_TIME])
    # The enabled custom OAuth providers live in the database, not in the options: read each time.
    return ok({**data, "custom_oauth_providers": await enabled_providers()})


async def get_notice(request: web.Request) -> web.Response:
    return ok(request.config_dict[keys.OPTIONS].get("Notice"))


async def get_about(request: web.Request) -> web.Response:
    return ok(request.config_dict[keys.OPTIONS].get("About"))


async def get_home_page_content(request: web.Request) -> web.Response:
    return ok(request.config_dict[keys.OPTIONS].get("HomePageContent"))
