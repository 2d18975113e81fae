"""The key format of each channel type, checked when a channel is created or edited.

Most providers take one API key per channel (one per line when several channels are created at
once). Those that sign requests or exchange credentials take several parts: AWS `ak|sk|region`,
Baidu `ak|sk`, iFlytek Spark `appid|api_secret|api_key`, Tencent `appid|secret_id|secret_key`,
Zhipu `id.secret`, and Vertex AI a whole service-account JSON key (one line or pretty-printed).
A refused key names the expected format (`message` is an api.i18n key); the console shows the
same format under the key field.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from api.relay.signing import google
from models.enums import ChannelType

AWS_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")
_NO_SPACE = re.compile(r"^\S+$")


@dataclass(frozen=True, slots=True)
class KeyFormat:
    message: str  # i18n key of the refusal, which states the format
    check: Callable[[str], bool]
    whole: bool = False  # the key is one document, never split into one channel per line


def _parts(n: int) -> Callable[[str], bool]:
    def check(key: str) -> bool:
        parts = key.split("|")
        return len(parts) == n and all(p.strip() and _NO_SPACE.match(p.strip()) for p in parts)
    return check


def _aws(key: str) -> bool:
    return _parts(3)(key) and bool(AWS_REGION.match(key.split("|")[2].strip()))


def _zhipu(key: str) -> bool:
    ident, dot, secret = key.partition(".")
    return bool(dot and ident and secret and _NO_SPACE.match(key))


def service_account_problem(key: str) -> str | None:
    """Why `key` is not a Google service-account key (None when it is one)."""
    try:
        google.parse_service_account(key)
    except ValueError as exc:
        return str(exc)
    return None


def _single(key: str) -> bool:
    return bool(key.strip()) and "\n" not in key.strip()


DEFAULT = KeyFormat("channel_key_single", _single)

KEY_FORMATS: Mapping[int, KeyFormat] = {
    ChannelType.AWS: KeyFormat("channel_key_aws", _aws),
    ChannelType.VERTEX_AI: KeyFormat("channel_key_vertex", lambda key: service_account_problem(key) is None,
                                     whole=True),
    ChannelType.BAIDU: KeyFormat("channel_key_baidu", _parts(2)),
    ChannelType.XUNFEI: KeyFormat("channel_key_xunfei", _parts(3)),
    ChannelType.TENCENT: KeyFormat("channel_key_tencent", _parts(3)),
    ChannelType.ZHIPU: KeyFormat("channel_key_zhipu", _zhipu),
    ChannelType.ZHIPU_V4: KeyFormat("channel_key_zhipu", _zhipu),
}


def key_format(channel_type: int) -> KeyFormat:
    return KEY_FORMATS.get(channel_type, DEFAULT)


def split_keys(key: str, channel_type: int) -> list[str]:
    """The keys of the channels to create: one per line, or the whole text for a one-document key."""
    if key_format(channel_type).whole:
        return [key.strip()] if key.strip() else []
    return list(dict.fromkeys(line.strip() for line in key.splitlines() if line.strip()))


def key_problem(key: str, channel_type: int) -> str | None:
    """The i18n key of the refusal when `key` does not have the type's format, else None."""
    fmt = key_format(channel_type)
    return None if fmt.check(key.strip()) else fmt.message
