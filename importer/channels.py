"""one-api's and new-api's channels as channels here: one-api's type numbers remapped to new-api's (those
of this gateway), OpenAI-compatible providers made plain OpenAI with their base URL, one-api's `config`
moved into the key or `other`, new-api's multi-key channels carried with each key's state, and the
types with no counterpart here left behind with why."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from api.channels.keys import ALL_KEYS_DISABLED
from api.channels.pasted_keys import check_storable
from api.errors import ApiError
from api.upstream import catalogue
from models import Channel, keyring

from .report import Report
from .rows import integer, json_dict, pick, text

TAG_MAX = 64  # models.channel.Channel.tag

# OpenAI-compatible providers this gateway speaks to as OpenAI (type 1) with their base URL.
# new-api's 53 (Submodel) is one too.
COMPATIBLE_BASE_URLS = {6: "https://api.openaimax.com", 7: "https://api.ohmygpt.com", 9: "https://api.caipacity.com",
                        53: "https://llm.submodel.ai"}
# new-api types with no counterpart here, and why (the report lists the channels left behind).
NOT_CARRIED = {
    49: "Coze bots speak Coze's own chat API, which has no adaptor here",
    55: "Sora video tasks: OpenAI shut the Sora API down on 2026-09-24",
    56: "Replicate predictions have no adaptor here",
    57: "Codex channels sign in with a ChatGPT account (OAuth), which this gateway does not hold",
}
# one-api's numbering → new-api's (docs/compatibility.md, one-api's type numbers), with a base URL where the
# type becomes plain OpenAI.
ONE_API_TYPES: dict[int, tuple[int, str]] = {
    2: (1, "https://oa.api2d.net"), 4: (1, "https://api.closeai-proxy.xyz"), 5: (1, "https://api.openai-sb.com"),
    26: (1, "https://api.baichuan-ai.com"), 27: (35, ""), 28: (42, ""), 29: (1, "https://api.groq.com/openai"),
    30: (4, ""), 32: (1, "https://api.stepfun.com"), 33: (33, ""), 35: (34, ""), 36: (43, ""), 37: (39, ""),
    39: (1, "https://api.together.xyz"), 40: (45, ""), 41: (1, "https://api.novita.ai/v3/openai"), 42: (41, ""),
    44: (40, ""), 45: (48, ""), 47: (46, ""), 48: (18, ""), 49: (17, ""), 50: (1, ""), 51: (1, ""),
}
ONE_API_SAME = {1, 3, *range(6, 26), 31}


def _config(field: str, name: str) -> Callable[[Mapping[str, Any]], dict[str, str]]:
    """one-api's `config[name]` → this gateway's channel `field`."""
    def convert(config: Mapping[str, Any]) -> dict[str, str]:
        return {field: str(config[name])} if config.get(name) else {}
    return convert


def _aws_config(config: Mapping[str, Any]) -> dict[str, str]:
    if not config.get("ak"):
        return {}
    return {"key": f"{config['ak']}|{config.get('sk', '')}|{config.get('region', '')}"}


# one-api keeps provider settings in a channel's `config`; this gateway, like new-api, in the key or
# `other`. By this gateway's type (Azure, AWS Bedrock, Cloudflare, Vertex AI).
ONE_API_CONFIG: dict[int, Callable[[Mapping[str, Any]], dict[str, str]]] = {
    3: _config("other", "api_version"), 33: _aws_config, 39: _config("other", "user_id"),
    41: _config("other", "region"),
}


def convert_channel(row: dict[str, Any], one_api: bool) -> dict[str, Any] | str:
    out = pick(row, Channel, {"config": "_", "system_prompt": "_"})
    kind = integer(row.get("type"))
    base_url = text(row.get("base_url"))
    if one_api and kind not in ONE_API_SAME:
        if kind not in ONE_API_TYPES:
            return f"one-api channel type {kind} has no equivalent here"
        kind, default_url = ONE_API_TYPES[kind]
        base_url = base_url or default_url
    if kind in COMPATIBLE_BASE_URLS:
        kind, base_url = 1, base_url or COMPATIBLE_BASE_URLS[kind]
    if kind == 47:  # new-api's Xinference: OpenAI-compatible at its own address
        kind = 1
    if kind in NOT_CARRIED:
        return f"channel type {kind}: {NOT_CARRIED[kind]}"
    if not catalogue.known(kind):
        return f"channel type {kind} is not supported here"
    out["type"], out["base_url"] = kind, base_url
    config = json_dict(row.get("config")) if one_api else {}
    if config and kind in ONE_API_CONFIG:
        out.update(ONE_API_CONFIG[kind](config))
    for name in ("models", "group", "model_mapping", "status_code_mapping", "other", "other_info", "name",
                 "openai_organization", "test_model", "key", "tag"):
        if name in out:
            out[name] = text(out[name])
    out["weight"] = integer(out.get("weight"))
    out["priority"] = integer(out.get("priority"))
    out["tag"] = out.get("tag", "").strip()[:TAG_MAX]
    out["channel_info"] = ""
    refused = None if one_api else carry_keys(row, out)
    return refused or out


def carry_keys(row: dict[str, Any], out: dict[str, Any]) -> str | None:
    """A new-api multi-key channel (`channel_info.is_multi_key`) as one here: its keys, its mode
    (new-api's random or polling; none given meant random there), and each key's state, reason and
    time, each following its key (new-api numbers keys by position, blank lines and repeats included;
    here they are dropped). A channel new-api disabled automatically with no key left enabled gets the
    reason under which it comes back by itself when a key is enabled again. Returns why the channel
    cannot be carried, None when it was."""
    raw = row.get("channel_info")
    info = raw if isinstance(raw, dict) else json_dict(raw if isinstance(raw, str | bytes) else None)
    if not info.get("is_multi_key"):
        return None
    keys = _source_keys(text(row.get("key")))
    statuses, reasons, times = (keyring.by_position(info.get(name)) for name in (
        "multi_key_status_list", "multi_key_disabled_reason", "multi_key_disabled_time"))
    states = {i: keyring.KeyState(status, text(reasons.get(i))[:500], _time(times.get(i)))
              for i, status in statuses.items() if 0 <= i < len(keys) and status in (keyring.MANUAL, keyring.AUTO)}
    mode = str(info.get("multi_key_mode") or "")
    mode = mode if mode in keyring.MODES else "random"
    ring = keyring.Keyring(True, mode, keys, states).with_keys(keys)
    try:
        check_storable(ring.keys)
    except ApiError:
        return "a multi-key channel whose keys mix JSON documents and one-line keys"
    out["key"], out["channel_info"] = ring.key_text(), ring.info_text()
    if integer(row.get("status")) == keyring.AUTO and not ring.enabled():
        out["other_info"] = orjson.dumps({**json_dict(out.get("other_info")),
                                          "status_reason": ALL_KEYS_DISABLED}).decode()
    return None


def _source_keys(key: str) -> list[str]:
    """new-api's key list (model.Channel.GetKeys): a JSON array's elements, else the lines."""
    trimmed = key.strip()
    if trimmed.startswith("["):
        try:
            docs = orjson.loads(trimmed)
        except orjson.JSONDecodeError:
            docs = None
        if isinstance(docs, list):
            return [d.strip() if isinstance(d, str) else orjson.dumps(d).decode() for d in docs]
    return [line.strip() for line in key.strip("\n").split("\n")]


def _time(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def channel_converter(one_api: bool, report: Report) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    """convert_channel, noting each channel carried over with a type whose API its provider switched off
    (it keeps its row and shows the reason in the console, but is never picked)."""
    def convert(row: dict[str, Any]) -> dict[str, Any] | str:
        out = convert_channel(row, one_api)
        if len(text(row.get("tag")).strip()) > TAG_MAX:
            report.notes.append(f"channel {row.get('id')} ({text(row.get('name'))}): its tag cut to {TAG_MAX} "
                                "characters")
        if not isinstance(out, str):
            retired = catalogue.provider(out["type"]).retired
            if retired is not None:
                report.notes.append(f"channel {row.get('id')} ({text(row.get('name'))}) carried over retired, never "
                                    f"picked: {retired[0]}")
        return out

    return convert
