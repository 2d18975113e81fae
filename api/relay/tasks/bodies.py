"""The types of the task APIs' body fields, checked before anything else reads the body: a field the
gateway or the upstream knows, with a value of another type, is refused as an invalid request
(nothing is charged, nothing is sent). Fields neither knows go through as they are; null stands
for an absent field.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


Check = tuple[Callable[[Any], bool], str]
STR: Check = (_is_str, "a string")
INT: Check = (_is_int, "an integer")
NUMBER: Check = (_is_number, "a number")
BOOL: Check = (_is_bool, "a boolean")
OBJECT: Check = (_is_object, "an object")
STR_LIST: Check = (_is_str_list, "a list of strings")

# midjourney-proxy (and Plus): every submission's fields, by name.
MIDJOURNEY: dict[str, Check] = {
    "prompt": STR, "base64": STR, "base64Array": STR_LIST, "botType": STR, "notifyHook": STR, "state": STR,
    "taskId": STR, "action": STR, "index": INT, "customId": STR, "content": STR, "dimensions": STR,
    "maskBase64": STR, "sourceBase64": STR, "targetBase64": STR, "chooseSameChannel": BOOL,
    "accountFilter": OBJECT, "filter": OBJECT, "motion": STR, "image": STR, "videoType": STR, "noStorage": BOOL,
    "remix": BOOL, "ids": STR_LIST,
}
# suno-api: a submission's fields, and a fetch's.
SUNO: dict[str, Check] = {
    "prompt": STR, "gpt_description_prompt": STR, "mv": STR, "title": STR, "tags": STR, "negative_tags": STR,
    "continue_at": NUMBER, "continue_clip_id": STR, "task_id": STR, "make_instrumental": BOOL, "action": STR,
    "ids": STR_LIST,
}


def type_problem(body: Mapping[str, Any], fields: Mapping[str, Check]) -> str:
    """Why the body's fields do not have their types ("" when they do)."""
    for name, value in body.items():
        check = fields.get(name)
        if check is not None and value is not None and not check[0](value):
            return f"{name} must be {check[1]}"
    return ""
