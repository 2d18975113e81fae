"""One test of a channel: a minimal chat request sent through the channel's own adaptor (the same
translation the relay uses), bounded by ChannelTestTimeoutSeconds, judged, and its timing recorded.
Upstream trouble is an unsuccessful result, never an exception."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from api.channels.form import model_mapping_of, split_list
from api.channels.test_outcome import note_test_outcome
from api.i18n import translate
from api.services.configuration.options import OptionsService
from api.services.model_name import ModelName
from api.upstream import call as upstream_call
from api.upstream import catalogue, client
from api.upstream.base import RelayMeta, RelayMode
from api.upstream.errors import RelayError, mask_secrets
from api.upstream.registry import build_adaptor, is_relayable
from models import Channel, keyring

FALLBACK_TEST_MODEL = "gpt-3.5-turbo"


@dataclass
class TestResult:
    success: bool
    message: str
    elapsed: float  # seconds
    model: str = ""
    error: RelayError | None = None
    timed_out: bool = False
    timeout: float = 0.0

    @property
    def seconds(self) -> float:
        return round(self.elapsed, 3)


def failure_kind(err: RelayError) -> str:
    """What failed, in an operator's words (the upstream's address included): client.send's
    "do request failed: <what_failed>" without its prefix."""
    return (err.detail or err.message).removeprefix("do request failed: ")


def test_timeout(options: OptionsService) -> float:
    return max(1.0, options.get_float("ChannelTestTimeoutSeconds"))


def is_testable(channel: Channel) -> bool:
    """Task channels and types without an adaptor are skipped by test runs (a manual test says why)."""
    return is_relayable(channel.type)


def pick_model(channel: Channel, requested: str = "") -> tuple[str, str]:
    """(model asked, model sent upstream): query, else test_model, else the first model; mapping applied."""
    model = requested.strip() or channel.test_model.strip()
    if not model:
        models = split_list(channel.models)
        model = models[0] if models else FALLBACK_TEST_MODEL
    return model, model_mapping_of(channel).get(model, model)


def test_request(model: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": False}
    if model.startswith(("o1", "o3", "o4")):
        body["max_completion_tokens"] = 16
    else:
        body["max_tokens"] = 1
    return body


def _meta(channel: Channel, requested: str = "", upstream: str = "", key: str | None = None) -> RelayMeta:
    """One attempt's view of the channel: `key`, else its key (a multi-key channel's first enabled one)."""
    key = key if key is not None else keyring.primary(channel.key, channel.channel_info)
    return RelayMeta(channel_id=channel.id, channel_type=channel.type, key=key,
                     base_url=channel.base_url, other=channel.other,
                     organization=channel.openai_organization,
                     name=ModelName(requested, upstream), mode=RelayMode.CHAT)


async def run_test(http: aiohttp.ClientSession, channel: Channel, requested: str, timeout: float,
                   lang: str = "en", key: str | None = None) -> TestResult:
    """Send the minimal request through the channel's adaptor (the relay's own seam: conversion,
    signing or token exchange, transport) with `key` (default: the channel's key, a multi-key
    channel's first enabled one) and judge the answer; never raises for upstream trouble."""
    model, upstream = pick_model(channel, requested)
    retired = catalogue.provider(channel.type).retired
    if retired is not None:
        return TestResult(False, translate("channel_type_retired", lang, type=catalogue.label(channel.type, lang),
                                           reason=retired[0], reason_zh=retired[1]), 0.0, model, timeout=timeout)
    adaptor = build_adaptor(_meta(channel, model, upstream, key))
    secret = adaptor.meta.key
    if not adaptor.supports(RelayMode.CHAT):
        unsupported = translate("channel_test_unsupported", lang, type=catalogue.label(channel.type, lang))
        return TestResult(False, unsupported, 0.0, model, timeout=timeout)
    started = time.monotonic()
    try:
        request = adaptor.build_request(RelayMode.CHAT, adaptor.convert_request(test_request(model)))
        _, raw = await upstream_call.call_whole(http, request, aiohttp.ClientTimeout(total=timeout), client.MAX_BODY,
                                                caller=upstream_call.TEST, channel_type=channel.type, adaptor=adaptor)
        data = adaptor.decode_body(raw)
        if "error" in data and not data.get("choices"):
            raise adaptor.convert_error(500, raw)
        answer, usage = adaptor.convert_response(data)
    except RelayError as err:
        elapsed = time.monotonic() - started
        if err.code == "upstream_timeout":
            return TestResult(False, translate("channel_test_timeout", lang, seconds=f"{timeout:g}"), timeout, model,
                              timed_out=True, timeout=timeout)
        if err.code == "do_request_failed" and err.status in (500, 502):
            message = translate("channel_test_request_failed", lang, error=failure_kind(err))
            return TestResult(False, mask_secrets(message, secret), elapsed, model, timeout=timeout)
        err.message = mask_secrets(err.message, secret)
        return TestResult(False, err.message, elapsed, model, error=err, timeout=timeout)
    elapsed = time.monotonic() - started
    if usage is None and not answer.get("choices"):
        return TestResult(False, translate("channel_test_no_usage", lang), elapsed, model, timeout=timeout)
    return TestResult(True, "", elapsed, model, timeout=timeout)


async def record_test(channel_id: int, result: TestResult) -> None:
    """response_time (ms) and test_time: measurements only, so no invalidation event is sent."""
    await Channel.filter(id=channel_id).update(response_time=int(result.elapsed * 1000), test_time=int(time.time()))
    await note_test_outcome(channel_id, result.success, result.message)

