"""The outcome of a channel's last test, kept in its other_info beside the automatic-disable reason.

other_info (JSON) gains {test_error, test_error_time} when a test fails and loses them when one
succeeds, so the console can say that the last test failed, and why, instead of a bare timing.
"""
from __future__ import annotations

import time
from typing import Any

import orjson

from models import Channel

MAX_REASON = 500  # characters of the failure kept


def parse_other_info(raw: str) -> dict[str, Any]:
    """other_info as a dict ({} when empty or not a JSON object)."""
    try:
        value = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


async def note_test_outcome(channel_id: int, success: bool, message: str) -> None:
    channel = await Channel.filter(id=channel_id).only("id", "other_info").first()
    if channel is None:
        return
    info = parse_other_info(channel.other_info)
    if success:
        if "test_error" not in info:
            return
        info.pop("test_error", None)
        info.pop("test_error_time", None)
    else:
        info["test_error"] = (message or "-")[:MAX_REASON]
        info["test_error_time"] = int(time.time())
    await Channel.filter(id=channel_id).update(other_info=orjson.dumps(info).decode())
