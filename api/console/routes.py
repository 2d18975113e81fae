"""The console route table: every route of /api, its handler and the least role it requires, paths as
new-api's (docs/compatibility.md).

Trailing slashes: a row marked EITHER is answered at its path and at its path with a trailing slash
(new-api's clients use both forms of those); every other row only as written, slash included.

Roles: each handler checks its own with its `require` decorator (api/console/auth.py), where that
sits among the handler's other wrappers (a critical-route limit counts before or after it);
`add_console_routes` refuses a row whose role is not the one its handler requires, so the table
can be read as the console's role matrix.
"""
from __future__ import annotations

from typing import NamedTuple

from aiohttp import web

from api.console.auth import ROLE_ATTRIBUTE, Handler
from api.console.handlers import (
    audit,
    budgets,
    channels,
    custom_oauth,
    custom_oauth_login,
    data,
    groups,
    logs,
    mcp,
    oauth,
    openapi,
    options,
    passkeys,
    pricing,
    redemptions,
    secure_verify,
    status,
    stripe_webhook,
    tasks,
    tokens,
    topup,
    two_factor,
    user_admin,
    user_self,
    users,
    verification,
    videos,
)
from api.relay.dashboard import token_usage
from models.enums import Role

ANYONE = None  # no login needed
USER, ADMIN, ROOT = Role.USER, Role.ADMIN, Role.ROOT
EITHER = True  # also answered with a trailing slash


class Route(NamedTuple):
    method: str
    path: str  # under /api
    handler: Handler
    role: Role | None  # the least role the handler requires (ANYONE: none)
    either_slash: bool = False

    def paths(self) -> tuple[str, ...]:
        return (self.path, self.path + "/") if self.either_slash else (self.path,)


ROUTES: tuple[Route, ...] = (
    # audit
    Route("GET", "/audit", audit.list_entries, ADMIN, EITHER),
    Route("GET", "/audit/export", audit.export_entries, ADMIN),
    # channels
    Route("GET", "/models", channels.list_type_models, USER),
    Route("GET", "/channel/types", channels.list_channel_types, ADMIN),
    Route("GET", "/channel/models", channels.list_all_models, ADMIN),
    Route("POST", "/channel/unpriced", channels.list_unpriced_models, ADMIN),
    Route("GET", "/channel", channels.list_channels, ADMIN, EITHER),
    Route("GET", "/channel/search", channels.search_channels, ADMIN),
    Route("GET", r"/channel/{id:\d+}", channels.get_channel, ADMIN, EITHER),
    Route("POST", r"/channel/{id:\d+}/key", channels.reveal_channel_key, ROOT),
    Route("POST", "/channel", channels.create_channel, ADMIN, EITHER),
    Route("PUT", "/channel", channels.update_channel, ADMIN, EITHER),
    Route("POST", r"/channel/copy/{id:\d+}", channels.copy_channel, ADMIN),
    Route("DELETE", "/channel/disabled", channels.delete_disabled_channels, ADMIN),
    Route("DELETE", r"/channel/{id:\d+}", channels.delete_channel, ADMIN, EITHER),
    Route("POST", "/channel/batch", channels.delete_channel_batch, ADMIN),
    Route("POST", "/channel/fix", channels.fix_channels, ADMIN),
    Route("POST", "/channel/multi_key/manage", channels.manage_channel_keys, ADMIN),
    Route("POST", "/channel/tag/disabled", channels.disable_tag_channels, ADMIN),
    Route("POST", "/channel/tag/enabled", channels.enable_tag_channels, ADMIN),
    Route("PUT", "/channel/tag", channels.edit_tag_channels, ADMIN),
    Route("POST", "/channel/batch/tag", channels.set_channel_tags, ADMIN),
    Route("GET", r"/channel/test/{id:\d+}", channels.test_channel, ADMIN, EITHER),
    Route("GET", "/channel/test", channels.test_all_channels, ADMIN, EITHER),
    Route("GET", r"/channel/update_balance/{id:\d+}", channels.update_channel_balance, ADMIN, EITHER),
    Route("GET", "/channel/update_balance", channels.update_all_balances, ADMIN, EITHER),
    Route("POST", "/channel/fetch_models", channels.fetch_models_for_form, ADMIN),
    Route("GET", r"/channel/fetch_models/{id:\d+}", channels.fetch_channel_models, ADMIN),
    # custom_oauth
    Route("GET", "/custom-oauth-provider", custom_oauth.list_providers, ROOT, EITHER),
    Route("GET", r"/custom-oauth-provider/{id:\d+}", custom_oauth.get_provider, ROOT),
    Route("POST", "/custom-oauth-provider", custom_oauth.create_provider, ROOT, EITHER),
    Route("PUT", r"/custom-oauth-provider/{id:\d+}", custom_oauth.update_provider, ROOT),
    Route("DELETE", r"/custom-oauth-provider/{id:\d+}", custom_oauth.delete_provider, ROOT),
    Route("POST", "/custom-oauth-provider/discovery", custom_oauth.fetch_discovery, ROOT),
    # custom_oauth_login
    Route("GET", "/oauth/{slug:[a-z0-9-]{1,64}}/authorize", custom_oauth_login.authorize, ANYONE),
    Route("GET", "/oauth/{slug:[a-z0-9-]{1,64}}", custom_oauth_login.callback, ANYONE),
    Route("GET", "/user/oauth/bindings", custom_oauth_login.my_bindings, USER),
    Route("DELETE", r"/user/oauth/bindings/{provider_id:\d+}", custom_oauth_login.unbind_mine, USER),
    Route("GET", r"/user/{id:\d+}/oauth/bindings", custom_oauth_login.user_bindings, ADMIN),
    Route("DELETE", r"/user/{id:\d+}/oauth/bindings/{provider_id:\d+}", custom_oauth_login.unbind_user, ADMIN),
    # data
    Route("GET", "/data", data.all_quota_data, ADMIN, EITHER),
    Route("GET", "/data/self", data.own_quota_data, USER, EITHER),
    # groups
    Route("GET", "/group/", groups.list_groups, ADMIN),
    # logs
    Route("GET", "/log", logs.list_all_logs, ADMIN, EITHER),
    Route("GET", "/log/self", logs.list_own_logs, USER, EITHER),
    Route("GET", "/log/stat", logs.all_logs_stat, ADMIN),
    Route("GET", "/log/self/stat", logs.own_logs_stat, USER),
    Route("DELETE", "/log", logs.delete_old_logs, ROOT, EITHER),
    # mcp
    Route("GET", "/mcp", mcp.list_servers, ADMIN, EITHER),
    Route("GET", r"/mcp/{id:\d+}", mcp.get_server, ADMIN, EITHER),
    Route("POST", "/mcp", mcp.create_server, ADMIN, EITHER),
    Route("PUT", "/mcp", mcp.update_server, ADMIN, EITHER),
    Route("DELETE", r"/mcp/{id:\d+}", mcp.delete_server, ADMIN, EITHER),
    Route("POST", r"/mcp/{id:\d+}/test", mcp.test_server, ADMIN),
    # oauth
    Route("GET", "/oauth/state", oauth.get_state, ANYONE),
    Route("GET", "/oauth/github", oauth.github_callback, ANYONE),
    Route("GET", "/oauth/linuxdo", oauth.linuxdo_callback, ANYONE),
    Route("GET", "/oauth/wechat", oauth.wechat_login, ANYONE),
    Route("GET", "/oauth/wechat/bind", oauth.wechat_bind, USER),
    Route("GET", "/oauth/email/bind", oauth.email_bind, USER),
    Route("GET", "/oauth/telegram/login", oauth.telegram_login, ANYONE),
    Route("GET", "/oauth/telegram/bind", oauth.telegram_bind, ANYONE),
    # openapi
    Route("GET", "/openapi.json", openapi.describe, ANYONE),
    # options
    Route("GET", "/option/", options.list_options, ROOT),
    Route("PUT", "/option/", options.update_option, ROOT),
    Route("POST", "/option/rest_model_ratio", options.reset_model_ratio, ROOT),
    # passkeys
    Route("GET", "/user/passkey", passkeys.passkey_status, USER),
    Route("POST", "/user/passkey/register/begin", passkeys.register_begin, USER),
    Route("POST", "/user/passkey/register/finish", passkeys.register_finish, USER),
    Route("DELETE", "/user/passkey", passkeys.delete_passkey, USER),
    Route("POST", "/user/passkey/login/begin", passkeys.login_begin, ANYONE),
    Route("POST", "/user/passkey/login/finish", passkeys.login_finish, ANYONE),
    Route("POST", "/user/passkey/verify/begin", passkeys.verify_begin, USER),
    Route("POST", "/user/passkey/verify/finish", passkeys.verify_finish, USER),
    Route("DELETE", r"/user/{id:\d+}/reset_passkey", passkeys.reset_passkey, ADMIN),
    # pricing
    Route("GET", "/pricing", pricing.get_pricing, ANYONE),
    # redemptions
    Route("GET", "/redemption", redemptions.list_redemptions, ADMIN, EITHER),
    Route("GET", "/redemption/search", redemptions.search_redemptions, ADMIN),
    Route("GET", r"/redemption/{id:\d+}", redemptions.get_redemption, ADMIN),
    Route("POST", "/redemption", redemptions.create_redemptions, ADMIN, EITHER),
    Route("PUT", "/redemption", redemptions.update_redemption, ADMIN, EITHER),
    Route("DELETE", r"/redemption/{id:\d+}", redemptions.delete_redemption, ADMIN, EITHER),
    # secure_verify
    Route("POST", "/verify", secure_verify.verify, USER),
    Route("GET", "/verify/status", secure_verify.verify_status, USER),
    # status
    Route("GET", "/status", status.get_status, ANYONE),
    Route("GET", "/notice", status.get_notice, ANYONE),
    Route("GET", "/about", status.get_about, ANYONE),
    Route("GET", "/home_page_content", status.get_home_page_content, ANYONE),
    # stripe_webhook
    Route("POST", "/stripe/webhook", stripe_webhook.stripe_webhook, ANYONE),
    # tasks
    Route("GET", "/mj", tasks.list_all_mj, ADMIN, EITHER),
    Route("GET", "/mj/self", tasks.list_own_mj, USER, EITHER),
    Route("GET", "/task", tasks.list_all_tasks, ADMIN, EITHER),
    Route("GET", "/task/self", tasks.list_own_tasks, USER, EITHER),
    # tokens (and new-api's usage of the calling key, answered by its key)
    Route("GET", "/usage/token", token_usage, ANYONE),
    Route("GET", "/token", tokens.list_tokens, USER, EITHER),
    Route("GET", "/token/search", tokens.search_tokens, USER),
    Route("GET", r"/token/{id:\d+}", tokens.get_token, USER),
    Route("POST", "/token", tokens.create_token, USER, EITHER),
    Route("PUT", "/token", tokens.update_token, USER, EITHER),
    Route("DELETE", r"/token/{id:\d+}", tokens.delete_token, USER, EITHER),
    # topup
    Route("POST", "/user/topup", topup.redeem_code, USER),
    Route("POST", "/user/amount", topup.quote_topup, USER),
    Route("POST", "/user/pay", topup.pay_topup, USER),
    # two_factor
    Route("GET", "/user/2fa/status", two_factor.get_status, USER),
    Route("POST", "/user/2fa/setup", two_factor.setup, ANYONE),
    Route("POST", "/user/2fa/enable", two_factor.enable, ANYONE),
    Route("POST", "/user/2fa/disable", two_factor.disable, USER),
    Route("POST", "/user/2fa/backup_codes", two_factor.regenerate_backup_codes, USER),
    Route("GET", "/user/2fa/stats", two_factor.get_stats, ADMIN),
    # user_admin
    Route("GET", "/user/", user_admin.list_users, ADMIN),
    Route("GET", "/user/search", user_admin.search_users, ADMIN),
    Route("GET", r"/user/{id:\d+}", user_admin.get_user, ADMIN),
    Route("POST", "/user/", user_admin.create_user, ADMIN),
    Route("PUT", "/user/", user_admin.update_user, ADMIN),
    Route("POST", "/user/manage", user_admin.manage_user, ADMIN),
    Route("DELETE", r"/user/{id:\d+}", user_admin.delete_user, ADMIN),
    Route("DELETE", r"/user/{id:\d+}/2fa", user_admin.reset_two_factor, ADMIN),
    # user_self
    Route("GET", "/user/self", user_self.get_self, USER),
    Route("PUT", "/user/self", user_self.update_self, USER),
    Route("DELETE", "/user/self", user_self.delete_self, USER),
    Route("GET", "/user/token", user_self.generate_access_token, USER),
    Route("GET", "/user/aff", user_self.get_aff_code, USER),
    Route("POST", "/user/aff_transfer", user_self.transfer_aff_quota, USER),
    Route("GET", "/user/models", user_self.list_usable_models, USER),
    Route("GET", "/user/groups", user_self.list_public_groups, ANYONE),
    Route("GET", "/user/self/groups", user_self.list_self_groups, USER),
    Route("GET", "/user/self/limits", budgets.list_self_limits, USER),
    # users
    Route("POST", "/user/login", users.login, ANYONE),
    Route("POST", "/user/login/2fa", users.login_second_factor, ANYONE),
    Route("GET", "/user/logout", users.logout, ANYONE),
    Route("POST", "/user/register", users.register, ANYONE),
    # verification
    Route("GET", "/verification", verification.send_verification_code, ANYONE),
    Route("GET", "/reset_password", verification.send_reset_mail, ANYONE),
    Route("POST", "/user/reset", verification.reset_password, ANYONE),
    # videos
    Route("GET", "/task/video/{id}/content", videos.own_video_content, USER),
)


def add_console_routes(app: web.Application) -> None:
    """Every row of ROUTES on `app` (a GET answers HEAD too), after checking each row's role."""
    for route in ROUTES:
        marked = getattr(route.handler, ROLE_ATTRIBUTE, None)
        if marked != route.role:
            raise ValueError(f"{route.method} {route.path}: the table says role {route.role!r}, "
                             f"its handler requires {marked!r}")
        if route.either_slash and route.path.endswith("/"):
            raise ValueError(f"{route.method} {route.path}: an EITHER row is written without its trailing slash")
    app.add_routes([web.route(route.method, path, route.handler) for route in ROUTES for path in route.paths()])
