"""Runtime option defaults and the validation of each option (docs/compatibility.md, Options)."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import orjson

from api.errors import ApiError
from api.services.budgets.limits import normalise_group_limits
from api.services.configuration import default_prices as pricing
from api.services.configuration import fallback_rules
from api.services.configuration.option_checks import (
    check_chats,
    check_currency,
    check_export_time,
    check_group_limits,
    check_model_capabilities,
    check_origins,
    check_ratio_map,
    check_status_ranges,
    check_time_zone,
    check_usable_groups,
)
from api.services.configuration.realtime_prices import (
    DEFAULT_AUDIO_CACHE_RATIO,
    DEFAULT_AUDIO_COMPLETION_RATIO,
    DEFAULT_AUDIO_RATIO,
)

DEFAULT_CHATS = [
    {"ChatGPT Next Web": "https://app.nextchat.dev/#/?settings={\"key\":\"{key}\",\"url\":\"{address}\"}"},
    {"Lobe Chat": "https://chat-preview.lobehub.com/?settings={\"keyVaults\":{\"openai\":{\"apiKey\":\"{key}\",\"baseURL\":\"{address}/v1\"}}}"},
]

DEFAULTS: dict[str, str] = {
    # Login and registration
    "PasswordLoginEnabled": "true",
    "PasswordRegisterEnabled": "true",
    "EmailVerificationEnabled": "false",
    "RegisterEnabled": "true",
    "UserSelfDeletionEnabled": "false",
    "TwoFactorRequiredForAdminsEnabled": "false",  # admins and root must log in with a second factor
    # OAuth and login providers
    "GitHubOAuthEnabled": "false",
    "GitHubClientId": "",
    "GitHubClientSecret": "",
    "LinuxDoOAuthEnabled": "false",
    "LinuxDoClientId": "",
    "LinuxDoClientSecret": "",
    "LinuxDoMinLevel": "0",
    "WeChatAuthEnabled": "false",
    "WeChatServerAddress": "",
    "WeChatServerToken": "",
    "WeChatAccountQRCodeImageURL": "",
    "TelegramOAuthEnabled": "false",
    "TelegramBotToken": "",
    "TelegramBotName": "",
    # Passkeys (api/services/accounts/passkeys.py): login, registration and re-verification by WebAuthn;
    # the relying party is ServerAddress
    "PasskeyLoginEnabled": "false",
    # Turnstile
    "TurnstileCheckEnabled": "false",
    "TurnstileSiteKey": "",
    "TurnstileSecretKey": "",
    # E-mail restrictions
    "EmailDomainRestrictionEnabled": "false",
    "EmailAliasRestrictionEnabled": "false",
    "EmailDomainWhitelist": "gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com",
    # SMTP
    "SMTPServer": "",
    "SMTPPort": "587",
    "SMTPAccount": "",
    "SMTPFrom": "",
    "SMTPToken": "",
    "SMTPSSLEnabled": "false",
    # Payment
    "ServerAddress": "",
    "OutProxyUrl": "",
    "StripeApiSecret": "",
    "StripeWebhookSecret": "",
    "StripePriceId": "",
    "StripeCurrency": "cny",  # ISO code of what StripeUnitPrice is in (the wallet shows yuan)
    "StripeUnitPrice": "8",
    "MinTopUp": "5",
    "PaymentEnabled": "false",
    "TopupGroupRatio": '{"default":1,"vip":1,"svip":1}',
    # Site content
    "Notice": "",
    "SystemName": "AI Gateway",
    "Logo": "/logo.png",
    "HomePageContent": "",
    "About": "",
    "Footer": "",
    # General
    "TopUpLink": "",
    "ChatLink": "",
    "ChatLink2": "",
    "Chats": orjson.dumps(DEFAULT_CHATS).decode(),
    "QuotaPerUnit": "500000",
    "RetryTimes": "0",
    # Image URLs in prompts that a provider needs inlined are fetched by the gateway: never from
    # loopback, private or link-local addresses unless this is on.
    "MediaFetchPrivateEnabled": "false",
    "DisplayInCurrencyEnabled": "true",
    "DisplayTokenStatEnabled": "true",
    "DefaultCollapseSidebar": "false",
    # Drawing and tasks
    "DrawingEnabled": "true",
    "TaskEnabled": "true",
    "MjNotifyEnabled": "false",
    "MjAccountFilterEnabled": "false",
    "MjForwardUrlEnabled": "true",
    "MjModeClearEnabled": "false",
    "MjActionCheckSuccessEnabled": "true",
    # Videos (/v1/videos): the content proxied through the gateway ("proxy") or, where the provider hands out a
    # signed URL that carries no key, a redirect to it ("redirect"); models priced per video (comma-separated)
    # instead of per second
    "VideoContentMode": "proxy",
    "VideoPerVideoModels": "",
    # Sensitive words
    "CheckSensitiveEnabled": "false",
    "CheckSensitiveOnPromptEnabled": "true",
    "SensitiveWords": "",
    # Logs and dashboard
    "LogConsumeEnabled": "true",
    "LogRetentionDays": "0",
    "AuditRetentionDays": "0",  # audit entries older than this are deleted; 0 = kept for ever
    "DataExportEnabled": "true",
    "DataExportInterval": "5",
    "DataExportDefaultTime": "hour",
    # Monitoring
    "ChannelDisableThreshold": "5",
    "QuotaRemindThreshold": "1000",
    "AutomaticDisableChannelEnabled": "false",
    "AutomaticEnableChannelEnabled": "false",
    "ChannelTestIntervalMinutes": "0",  # periodic test of all channels; 0 = off
    "ChannelBalanceIntervalMinutes": "0",  # periodic balance update; 0 = off
    "ChannelTestTimeoutSeconds": "20",  # per-channel bound of a test or balance query
    # Quota
    "QuotaForNewUser": "0",
    "PreConsumedQuota": "500",
    "QuotaForInviter": "0",
    "QuotaForInvitee": "0",
    # API keys (api/services/accounts/tokens.py): keys a user may hold; keys a user may create per minute (0 = off)
    "MaxTokensPerUser": "1000",
    "TokenCreationsPerMinute": "30",
    # Pricing (JSON): the reference defaults of api.services.billing.pricing
    "ModelPrice": orjson.dumps(pricing.DEFAULT_MODEL_PRICE).decode(),
    "ModelRatio": orjson.dumps(pricing.DEFAULT_MODEL_RATIO).decode(),
    "CompletionRatio": orjson.dumps(pricing.DEFAULT_COMPLETION_RATIO).decode(),
    "CacheRatio": orjson.dumps(pricing.DEFAULT_CACHE_RATIO).decode(),
    "CreateCacheRatio": orjson.dumps(pricing.DEFAULT_CREATE_CACHE_RATIO).decode(),
    # One-hour cache writes; a model with a CreateCacheRatio entry and none here pays pricing.ONE_HOUR_WRITE_RATIO
    "CreateCacheRatio1h": orjson.dumps(pricing.DEFAULT_CREATE_CACHE_RATIO_1H).decode(),
    # Realtime audio (api/services/billing/realtime_pricing.py): audio input ÷ text input, audio output ÷
    # audio input, cached audio ÷ audio input; a model absent here has its audio billed as text
    "AudioRatio": orjson.dumps(DEFAULT_AUDIO_RATIO).decode(),
    "AudioCompletionRatio": orjson.dumps(DEFAULT_AUDIO_COMPLETION_RATIO).decode(),
    "AudioCacheRatio": orjson.dumps(DEFAULT_AUDIO_CACHE_RATIO).decode(),
    # Image models' reported input and output image tokens (api/services/billing/image_tokens.py): input image ÷
    # text input, output image ÷ text input; a model absent here has them billed as prompt / completion tokens
    "ImageRatio": orjson.dumps(pricing.DEFAULT_IMAGE_RATIO).decode(),
    "ImageOutputRatio": orjson.dumps(pricing.DEFAULT_IMAGE_OUTPUT_RATIO).decode(),
    # What models accept (api/services/configuration/capabilities.py): pattern → fields changed from the shipped table
    "ModelCapabilities": "{}",
    "GroupRatio": orjson.dumps(pricing.DEFAULT_GROUP_RATIO).decode(),
    "UserUsableGroups": '{"default":"默认分组","vip":"vip分组"}',
    # Relay: unpriced models, retries, limits (0 = off), auto-disable window, metrics
    "SelfUseModeEnabled": "false",  # unpriced models billed at the reference's self-use ratio 37.5
    "AutomaticRetryStatusCodes": "100-199,300-399,401-407,409-499,500-503,505-523,525-599",
    "RateLimitTokenRPM": "0",
    "RateLimitTokenTPM": "0",
    "RateLimitTokenConcurrency": "0",
    "RateLimitUserRPM": "0",
    "RateLimitUserTPM": "0",
    "RateLimitUserConcurrency": "0",
    "RateLimitGroupRPM": "0",
    "RateLimitGroupTPM": "0",
    "RateLimitGroupConcurrency": "0",
    # Limits over time (api/services/budgets): each group's limits, for each of its users; the zone of
    # the calendar windows (day, week, month); soft limits' alerts (api/services/budgets/alerts.py): a copy
    # of each alert's mail to root, the URL each alert is POSTed to (signed with the secret; "" = none)
    "GroupLimits": "{}",
    "BudgetTimeZone": "UTC",
    "BudgetAlertRootEnabled": "false",
    "BudgetWebhookUrl": "",
    "BudgetWebhookSecret": "",
    "AutomaticDisableErrorRate": "0.8",  # share of failed attempts in the window that disables a channel
    "AutomaticDisableMinRequests": "10",  # attempts in the window before the rate is judged
    "AutomaticDisableWindowSeconds": "300",
    # Routing (api/relay/affinity.py, api/relay/load.py): a conversation stays on the channel and key
    # whose prompt cache holds its prefix; among equal channels the less busy one is preferred
    "ChannelAffinityEnabled": "true",
    "ChannelAffinityTTLSeconds": "300",  # a pin's life when the request does not ask for longer caching
    "ChannelLeastBusyEnabled": "true",
    **fallback_rules.DEFAULTS,  # chains of models (api/services/configuration/fallback_rules.py)
    # Realtime sessions (/v1/realtime): open sessions per API key and per user, live client secrets per
    # API key and per user (keys are free: each per-key bound has a per-user one), seconds without a
    # frame either way, seconds a session may last
    "RealtimeMaxSessionsPerKey": "4",
    "RealtimeMaxSessionsPerUser": "16",
    "RealtimeMaxSecretsPerKey": "32",
    "RealtimeMaxSecretsPerUser": "128",
    "RealtimeIdleTimeoutSeconds": "600",
    "RealtimeMaxSessionSeconds": "3600",
    # MCP gateway (/mcp, api/relay/mcp): the most bytes one answer of an MCP server may hold; whether a
    # tool call's arguments and result are kept in its log (masked, cut to 4 KiB each); the browser
    # origins besides the gateway's own (ServerAddress, the request's host) that may call /mcp
    "McpMaxResultBytes": "1048576",
    "McpLogBodiesEnabled": "false",
    "McpAllowedOrigins": "",
    # MCP tools inside model requests (api/relay/mcp_tools): the most model rounds one request may take
    "McpMaxRounds": "8",
    "MetricsToken": "",  # /metrics: Bearer token; empty = loopback and private networks only
}

# Never returned by GET /api/option/ (nor logged).
SECRET_OPTIONS = frozenset({
    "GitHubClientSecret",
    "LinuxDoClientSecret",
    "WeChatServerToken",
    "TelegramBotToken",
    "TurnstileSecretKey",
    "SMTPToken",
    "StripeApiSecret",
    "StripeWebhookSecret",
    "MetricsToken",
    "BudgetWebhookSecret",
})

JSON_OBJECT_OPTIONS = frozenset({"ModelPrice", "ModelRatio", "CompletionRatio", "GroupRatio", "TopupGroupRatio",
                                 "CacheRatio", "CreateCacheRatio", "CreateCacheRatio1h", "AudioRatio",
                                 "AudioCompletionRatio", "AudioCacheRatio", "ImageRatio",
                                 "ImageOutputRatio"})
TRAILING_SLASH_OPTIONS = frozenset({
    "ServerAddress", "OutProxyUrl", "StripeApiSecret", "StripeWebhookSecret", "StripePriceId",
    "WeChatServerAddress",
})
PAYMENT_OPTIONS = frozenset({
    "StripeApiSecret", "StripeWebhookSecret", "StripePriceId", "StripeUnitPrice", "MinTopUp",
    "TopupGroupRatio", "StripeCurrency",
})
# (key, lowest, highest or None, integer?)
NUMERIC_LIMITS: dict[str, tuple[float, float | None, bool]] = {
    "StripeUnitPrice": (0, None, False),
    "MinTopUp": (1, None, True),
    "LinuxDoMinLevel": (0, 4, True),
    "DataExportInterval": (1, None, True),
    "ChannelDisableThreshold": (0, None, False),
    "QuotaRemindThreshold": (0, None, True),
    "QuotaForNewUser": (0, None, True),
    "PreConsumedQuota": (0, None, True),
    "QuotaForInviter": (0, None, True),
    "QuotaForInvitee": (0, None, True),
    "MaxTokensPerUser": (1, None, True),
    "TokenCreationsPerMinute": (0, None, True),
    "QuotaPerUnit": (1, None, False),
    "RetryTimes": (0, 10, True),
    "SMTPPort": (1, 65535, True),
    "LogRetentionDays": (0, None, True),
    "AuditRetentionDays": (0, None, True),
    "ChannelTestIntervalMinutes": (0, None, True),
    "ChannelBalanceIntervalMinutes": (0, None, True),
    "ChannelTestTimeoutSeconds": (1, 600, False),
    **{f"RateLimit{who}{what}": (0, None, True)
       for who in ("Token", "User", "Group") for what in ("RPM", "TPM", "Concurrency")},
    "AutomaticDisableErrorRate": (0, 1, False),
    "AutomaticDisableMinRequests": (1, None, True),
    "AutomaticDisableWindowSeconds": (1, None, True),
    "ChannelAffinityTTLSeconds": (1, 86400, True),
    fallback_rules.STICKY: (0, fallback_rules.MAX_STICKY_SECONDS, True),
    "RealtimeMaxSessionsPerKey": (1, 1000, True),
    "RealtimeMaxSessionsPerUser": (1, 10000, True),
    "RealtimeMaxSecretsPerKey": (1, 10000, True),
    "RealtimeMaxSecretsPerUser": (1, 100000, True),
    "RealtimeIdleTimeoutSeconds": (1, 86400, True),
    "RealtimeMaxSessionSeconds": (1, 86400, True),
    "McpMaxResultBytes": (1024, 64 * 1024 * 1024, True),
    "McpMaxRounds": (1, 64, True),
}
# Enabling the key needs the listed options to be non-empty.
REQUIRES: dict[str, tuple[str, ...]] = {
    "GitHubOAuthEnabled": ("GitHubClientId", "GitHubClientSecret"),
    "LinuxDoOAuthEnabled": ("LinuxDoClientId", "LinuxDoClientSecret"),
    "WeChatAuthEnabled": ("WeChatServerAddress", "WeChatServerToken"),
    "TelegramOAuthEnabled": ("TelegramBotToken", "TelegramBotName"),
    "TurnstileCheckEnabled": ("TurnstileSiteKey", "TurnstileSecretKey"),
    "EmailVerificationEnabled": ("SMTPServer", "SMTPAccount"),
    "PaymentEnabled": ("ServerAddress", "StripeApiSecret", "StripeWebhookSecret"),
    "PasskeyLoginEnabled": ("ServerAddress",),
}
PREFIXES: dict[str, tuple[str, str]] = {
    "StripeApiSecret": ("sk_", "option_stripe_key"),
    "StripeWebhookSecret": ("whsec_", "option_stripe_webhook"),
    "StripePriceId": ("price_", "option_stripe_price"),
}
URL_OPTIONS = frozenset({"ServerAddress", "OutProxyUrl", "WeChatServerAddress", "BudgetWebhookUrl"})


def is_bool_option(key: str) -> bool:
    return key.endswith("Enabled")


EXTRA_CHECKS: dict[str, Callable[[str, str], None]] = {
    **{k: check_ratio_map for k in JSON_OBJECT_OPTIONS},
    "UserUsableGroups": check_usable_groups,
    "Chats": check_chats,
    "DataExportDefaultTime": check_export_time,
    "StripeCurrency": check_currency,
    "AutomaticRetryStatusCodes": check_status_ranges,
    "ModelCapabilities": check_model_capabilities,
    "McpAllowedOrigins": check_origins,
    "GroupLimits": check_group_limits,
    "BudgetTimeZone": check_time_zone,
    **fallback_rules.CHECKS,
}
# Options stored in a normal form once valid
NORMAL_FORMS: dict[str, Callable[[str], str]] = {"GroupLimits": lambda v: normalise_group_limits(v) or "{}"}


MAX_SAFE_INTEGER = 2 ** 53 - 1


def normalize(key: str, value: object, current: Mapping[str, str]) -> str:
    """Validate one option change and return the value to store; ApiError says what is wrong."""
    if key not in DEFAULTS:
        raise ApiError("option_unknown", key=key)
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        raise ApiError("option_not_string")
    value = value.strip() if key not in {"Notice", "HomePageContent", "About", "Footer", "SensitiveWords"} else value
    if key in TRAILING_SLASH_OPTIONS:
        value = value.rstrip("/")
    if is_bool_option(key):
        if value not in {"true", "false"}:
            raise ApiError("option_invalid_bool", key=key)
        if value == "true":
            for other in REQUIRES.get(key, ()):
                if not current.get(other, ""):
                    raise ApiError("option_requires", key=key, other=other)
    if key in NUMERIC_LIMITS:
        low, high, integer = NUMERIC_LIMITS[key]
        try:
            number = float(value)
        except ValueError as exc:
            raise ApiError("option_invalid_number", key=key) from exc
        if not math.isfinite(number):
            raise ApiError("option_invalid_number", key=key)
        if integer and not number.is_integer():
            raise ApiError("option_invalid_integer", key=key)
        if number != number or number < low or (high is not None and number > high):
            if high is None:
                raise ApiError("option_min", key=key, min=_fmt(low))
            raise ApiError("option_range", key=key, min=_fmt(low), max=_fmt(high))
        if integer and abs(number) > MAX_SAFE_INTEGER:  # what a column and the console's JavaScript hold exactly
            raise ApiError("option_range", key=key, min=_fmt(low), max=_fmt(MAX_SAFE_INTEGER))
        value = str(int(number)) if integer else _fmt(number)
    if key in PREFIXES and value:
        prefix, message = PREFIXES[key]
        if not value.startswith(prefix):
            raise ApiError(message)
    if key in URL_OPTIONS and value and not value.startswith(("http://", "https://")):
        raise ApiError("option_url", key=key)
    if key in PAYMENT_OPTIONS and not current.get("ServerAddress", ""):
        raise ApiError("option_server_address_required")
    check = EXTRA_CHECKS.get(key)
    if check is not None:
        check(key, value)
    normal = NORMAL_FORMS.get(key)
    return normal(value) if normal is not None else value


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))
