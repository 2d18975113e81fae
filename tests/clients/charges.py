"""What a CLI's run must cost: the models' prices for these tests, each provider's usage read in the
billing's terms, and the check that every consume log and the user's balance match them to the unit
(docs/billing.md, "Cached input": quota = round(((P − Cr − Cw) + Cr × CacheRatio + Cw × CreateCacheRatio
+ C × CompletionRatio) × ModelRatio × GroupRatio), P counting the cache reads and writes)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp.test_utils import TestClient

from api import keys
from api.services.billing import pricing
from api.services.configuration.options import OptionsService
from models import User
from tests.relay.fakes import drain, live_balance
from tests.upstream.providers.kit import consume_logs

# Prices of the models the CLIs ask for that the shipped tables do not carry (USD per 1M tokens / 2).
MODEL_RATIO = {"gpt-5": 0.625, "gpt-5.5": 2.5, "gemini-3.1-pro-preview": 1.0, "claude-opus-5-5": 2.5,
               "gemini-3.8-flash": 0.25, "gemini-3.5-flash-lite": 0.05}
COMPLETION_RATIO = {"gpt-5": 8, "gpt-5.5": 6, "gemini-3.1-pro-preview": 6, "claude-opus-5-5": 5,
                    "gemini-3.8-flash": 6, "gemini-3.5-flash-lite": 4}
CACHE_RATIO = {"gpt-5": 0.1, "gpt-5.5": 0.1, "gemini-3.1-pro-preview": 0.1, "claude-opus-5-5": 0.1,
               "gemini-3.8-flash": 0.1, "gemini-3.5-flash-lite": 0.1}
CREATE_CACHE_RATIO = {"claude-opus-5-5": 1.25}


def options_of(gateway: TestClient) -> OptionsService:
    assert gateway.app is not None
    return gateway.app[keys.OPTIONS]


async def set_prices(gateway: TestClient) -> None:
    """The shipped price tables plus this module's models, as the operator would configure them."""
    options = options_of(gateway)
    for key, shipped, added in (("ModelRatio", pricing.DEFAULT_MODEL_RATIO, MODEL_RATIO),
                                ("CompletionRatio", pricing.DEFAULT_COMPLETION_RATIO, COMPLETION_RATIO),
                                ("CacheRatio", pricing.DEFAULT_CACHE_RATIO, CACHE_RATIO),
                                ("CreateCacheRatio", pricing.DEFAULT_CREATE_CACHE_RATIO, CREATE_CACHE_RATIO)):
        await options.update(key, orjson.dumps({**shipped, **added}).decode())


@dataclass(frozen=True)
class Tokens:
    """One request's usage in the billing's terms: the prompt counts the cache reads and writes."""

    prompt: int
    completion: int
    cached: int = 0
    written: int = 0


def claude_tokens(usage: dict[str, Any]) -> Tokens:
    """Claude's `input_tokens` leave out the cache reads and writes, reported beside them."""
    read, written = usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
    return Tokens(usage["input_tokens"] + read + written, usage["output_tokens"], read, written)


def responses_tokens(usage: dict[str, Any]) -> Tokens:
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens", 0)
    return Tokens(usage["input_tokens"], usage["output_tokens"], cached)


def gemini_tokens(usage: dict[str, Any]) -> Tokens:
    """Gemini reports the thinking apart from the answer (`thoughtsTokenCount`); both are output."""
    return Tokens(usage["promptTokenCount"], usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0),
                  usage.get("cachedContentTokenCount", 0))


async def assert_charged(gateway: TestClient, user: User, start: int, model: str, usages: list[Tokens]) -> None:
    """One consume log per upstream request, each at the price of `model` on its usage; the user's
    balance, in the database and live, is the start less their sum."""
    await assert_charged_each(gateway, user, start, [(model, tokens) for tokens in usages])


async def assert_charged_each(gateway: TestClient, user: User, start: int, requests: list[tuple[str, Tokens]]) -> None:
    """One consume log per upstream request, in order, each at its model's price on its usage; the
    user's balance, in the database and live, is the start less their sum."""
    await drain(gateway)
    expected = []
    for model, t in requests:
        price = pricing.resolve_configured(options_of(gateway), model, user.group)
        expected.append((model, t.prompt, t.completion, pricing.settle_quota(
            price, t.prompt, t.completion, cached_tokens=t.cached, cache_creation_tokens=t.written)))
    logs = await consume_logs(user)
    assert [(log.model_name, log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == expected
    balance = start - sum(quota for *_, quota in expected)
    assert (await User.get(id=user.id)).quota == balance
    assert await live_balance(gateway, user.id) == balance
