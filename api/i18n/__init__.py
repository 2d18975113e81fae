"""Server messages in English and Chinese; the language follows the request's Accept-Language.

The messages are kept per part of the gateway (common, tokens_wallet, accounts, options, channels,
relay, passkeys, mcp, mcp_tools) and read here as one table, MESSAGES.
"""
from __future__ import annotations

from aiohttp import web

from api.i18n.accounts import ACCOUNTS
from api.i18n.budgets import BUDGETS
from api.i18n.channels import CHANNELS
from api.i18n.common import COMMON
from api.i18n.mcp import MCP
from api.i18n.mcp_tools import MCP_TOOLS
from api.i18n.oidc import OIDC
from api.i18n.options import OPTIONS
from api.i18n.passkeys import PASSKEYS
from api.i18n.relay import RELAY
from api.i18n.tokens_wallet import TOKENS_WALLET
from api.i18n.two_factor import TWO_FACTOR

# key: (English, Chinese). Parameters use str.format names.
MESSAGES: dict[str, tuple[str, str]] = {**COMMON, **TOKENS_WALLET, **ACCOUNTS, **OPTIONS, **CHANNELS, **RELAY,
                                   **PASSKEYS, **OIDC, **TWO_FACTOR, **MCP, **MCP_TOOLS, **BUDGETS}


def language(request: web.Request | None) -> str:
    if request is None:
        return "en"
    lang = request.headers.get("Accept-Language", "")
    # The first listed language wins; the console sends its own choice first.
    first = lang.split(",", 1)[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def translate(message_key: str, lang: str = "en", /, **params: object) -> str:
    pair = MESSAGES.get(message_key)
    if pair is None:
        return message_key.format(**params) if params else message_key
    text = pair[1] if lang == "zh" else pair[0]
    return text.format(**params) if params else text
