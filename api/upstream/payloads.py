"""Reading the JSON of upstream answers: a complete answer or a stream event (an object, else a 502
or a skipped event), an error answer (OpenAI's shape, or close to it), a tool call's arguments."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from api.upstream.errors import RelayError

ANSWER_NOT_OBJECT = "the upstream answer is not a JSON object"
EVENT_NOT_OBJECT = "malformed upstream stream event"


class MalformedEvent(RelayError):
    """One stream event that is not the JSON object it should be: the pipeline skips it."""


def json_object(raw: bytes, message: str = ANSWER_NOT_OBJECT) -> dict[str, Any]:
    """The JSON object in an upstream answer or stream event; a 502 `bad_response_body` otherwise
    (MalformedEvent for a stream event)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        kind = MalformedEvent if message == EVENT_NOT_OBJECT else RelayError
        raise kind(502, message, "upstream_error", "bad_response_body")
    return data


def error_body(raw: bytes) -> dict[str, Any] | None:
    """The JSON object of an upstream error answer; None when it is empty, not JSON or not an object
    (each adaptor's `convert_error` reads its provider's fields from it)."""
    try:
        data = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def call_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments (OpenAI sends them as JSON text) as an object; {} when they are not one."""
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = orjson.loads(raw or "{}")
    except (orjson.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def openai_error(status: int, body: bytes) -> RelayError:
    """An upstream error answer in (or close to) OpenAI's shape → RelayError with the same fields."""
    fallback = f"bad response status code {status}"
    try:
        data = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        text = body[:300].decode("utf-8", "replace").strip()
        message = f"{fallback}: {text}" if text and not text.startswith("<") else fallback
        return RelayError(status, message, "upstream_error", "bad_response_status_code")
    err: Any = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(err, str):
        return RelayError(status, err or fallback, "upstream_error", None)
    if not isinstance(err, dict):
        return RelayError(status, fallback, "upstream_error", "bad_response_status_code")
    found: Any = err.get("message") or err.get("msg") or err.get("detail")
    if isinstance(found, str) and found:
        message = found
    else:  # a structured detail (FastAPI's list of errors …) as JSON text
        message = orjson.dumps(found).decode() if found else fallback
    return RelayError(status, message, err.get("type") or "upstream_error", err.get("code"), err.get("param"))
