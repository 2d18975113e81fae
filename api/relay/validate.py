"""The request's shape checked before anything is charged or sent upstream: what would make the
gateway fail (or an upstream answer 400 and count against a shared channel) is refused with 400
`invalid_request_error`, naming the parameter. Everything else passes through unchanged."""
from __future__ import annotations

from typing import Any

from .base import RelayMode

MAX_DEPTH = 64  # JSON nesting of a request body; real requests stay below ~10
MAX_TOKENS = 10_000_000
NUMBERS = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "top_k")
COUNTS = ("max_tokens", "max_completion_tokens", "max_output_tokens", "n")


class Invalid(ValueError):
    def __init__(self, param: str, problem: str) -> None:
        super().__init__(f"{param}: {problem}")
        self.param = param
        self.problem = problem


def _depth_ok(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_body(mode: RelayMode, body: dict[str, Any]) -> None:
    """Raises Invalid for the first problem found."""
    if not _depth_ok(body):
        raise Invalid("body", f"nested deeper than {MAX_DEPTH} levels")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise Invalid("stream", "must be a boolean")
    for name in NUMBERS:
        value = body.get(name)
        if value is not None and not _is_number(value):
            raise Invalid(name, "must be a number")
    for name in COUNTS:
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            raise Invalid(name, "must be an integer")
        if value < (1 if name == "n" else 0) or value > MAX_TOKENS:
            raise Invalid(name, f"must be between {1 if name == 'n' else 0} and {MAX_TOKENS:,}")
    if mode == RelayMode.CHAT:
        _check_messages(body.get("messages"))


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise Invalid("messages", "must be a non-empty array of message objects")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise Invalid(f"messages[{i}]", "must be an object")
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise Invalid(f"messages[{i}].role", "must be a string")
        content = message.get("content")
        if content is None or isinstance(content, str):
            continue
        if not isinstance(content, list) or not all(isinstance(part, dict) for part in content):
            raise Invalid(f"messages[{i}].content", "must be a string or an array of content parts")
