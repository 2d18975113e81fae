"""What every video protocol's adaptor shares: the task platform, one task per fetch, masking the
channel's key in what the upstream says, and reading an answer that may not be JSON."""
from __future__ import annotations

from typing import Any

import orjson

from api.relay.tasks.base import Submitted, TaskAdaptor
from api.relay.tasks.redact import masked
from api.relay.tasks.video_shape import PLATFORM
from api.upstream.errors import RelayError


def json_or_none(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def not_json(status: int) -> Submitted:
    """A submission answered without a JSON object: not taken; another channel may take it when the
    upstream failed (5xx, 429) or answered 200 with something else."""
    return Submitted(False, reason=f"the upstream answered HTTP {status} without a JSON object",
                     retry_elsewhere=status >= 500 or status == 429 or status == 200)


class KeyPairInvalid(RelayError):
    """A channel key that is not the `access|secret` pair its protocol signs with (a key imported or written
    past the form's check): the channel's failure, answered like an upstream that refused it (another
    channel may serve)."""

    def __init__(self, provider: str, form: str) -> None:
        super().__init__(502, f"the channel's {provider} key is not {form}", "upstream_error", "channel_key_invalid")


def key_pair(key: str, provider: str, form: str) -> tuple[str, str]:
    """(access key, secret key) of a channel key `access|secret`; KeyPairInvalid when it is not one."""
    parts = [part.strip() for part in key.strip().split("|")]
    if len(parts) != 2 or not all(parts):
        raise KeyPairInvalid(provider, form)
    return parts[0], parts[1]


def mapped_status(table: dict[str, str], value: Any, what: str) -> str:
    """The task status of an upstream's state (`table`); ValueError for one the protocol does not have."""
    status = table.get(str(value), "")
    if not status:
        raise ValueError(f"unknown {what} {str(value)[:40]!r}")
    return status


class VideoAdaptor(TaskAdaptor):
    platform = PLATFORM
    batched = False

    def mask(self, value: Any) -> Any:
        return masked(value, self.key, self.base_url)
