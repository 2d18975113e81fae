"""The request's shape checked before anything is counted, priced, charged or sent upstream: every
field the gateway itself (or a converter) reads must have the type it reads, else 400
`invalid_request_error` naming the field (`messages[2].content[0].text: must be a string`). Unknown
fields, and the values of known ones, are the upstream's to judge: they pass through unchanged.

Hand-written per format (this module: the OpenAI formats, one check per endpoint, named by the
endpoint's row in api/relay/modes.py; the client formats in api/relay/inbound/shapes.py) because it
runs on every request: a 17 KB Claude Code request is checked in a few tens of microseconds."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

MAX_DEPTH = 64  # JSON nesting of a request body; real requests stay below ~10
MAX_TOKENS = 10_000_000
NUMBERS = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "top_k")
COUNTS = ("max_tokens", "max_completion_tokens", "max_output_tokens", "n")


Check = Callable[[dict[str, Any]], None]  # an endpoint's own checks of a JSON body


class Invalid(ValueError):
    def __init__(self, param: str, problem: str) -> None:
        super().__init__(f"{param}: {problem}")
        self.param = param
        self.problem = problem


# -- kinds of values ----------------------------------------------------------------------------------


def is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


# A kind of value: (the types it may have, what it must be, a further test or None).
Kind = tuple[type | tuple[type, ...], str, Callable[[Any], bool] | None]
STRING: Kind = (str, "a string", None)
BOOLEAN: Kind = (bool, "a boolean", None)
INTEGER: Kind = (int, "an integer", is_integer)
NUMBER: Kind = ((int, float), "a number", is_number)
OBJECT: Kind = (dict, "an object", None)
ARRAY: Kind = (list, "an array", None)
STRINGS: Kind = (list, "an array of strings", _is_strings)
OBJECTS: Kind = (list, "an array of objects", _is_objects)
STRING_OR_STRINGS: Kind = ((str, list), "a string or an array of strings",
                           lambda v: isinstance(v, str) or _is_strings(v))
STRING_OR_OBJECT: Kind = ((str, dict), "a string or an object", None)
STRING_OR_OBJECTS: Kind = ((str, list), "a string or an array of objects",
                           lambda v: isinstance(v, str) or _is_objects(v))


def is_kind(value: Any, kind: Kind) -> bool:
    types, _, test = kind
    return isinstance(value, types) and (test is None or test(value))


def check_fields(obj: Mapping[str, Any], kinds: Mapping[str, Kind], prefix: str = "") -> None:
    """Each field of `obj` named in `kinds` (and not null) is of its kind."""
    for name, value in obj.items():
        kind = kinds.get(name)
        if kind is None or value is None:
            continue
        types, what, test = kind
        if not isinstance(value, types) or (test is not None and not test(value)):
            raise Invalid(prefix + name, f"must be {what}")


def need(obj: Mapping[str, Any], name: str, kind: Kind, prefix: str = "") -> Any:
    """A field that must be present and of its kind."""
    value = obj.get(name)
    if value is None or not is_kind(value, kind):
        raise Invalid(prefix + name, f"must be {kind[1]}")
    return value


def _deep(value: Any, left: int) -> bool:
    """Whether a dict or list holds containers nested more than `left` levels below it."""
    if left == 0:
        return True
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if (kind is dict or kind is list) and _deep(item, left - 1):
            return True
    return False


def check_depth(body: Any) -> None:
    """No request body nests deeper than MAX_DEPTH (converters and encoders recurse)."""
    if isinstance(body, (dict, list)) and _deep(body, MAX_DEPTH - 1):
        raise Invalid("body", f"nested deeper than {MAX_DEPTH} levels")


# -- the OpenAI formats --------------------------------------------------------------------------------


def check_body(body: dict[str, Any], check: Check | None = None) -> None:
    """What every JSON body must be, then its endpoint's own `check` (its mode's row in
    api/relay/modes.py, one of the checks below); raises Invalid for the first problem found."""
    check_depth(body)
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise Invalid("stream", "must be a boolean")
    for name in NUMBERS:
        value = body.get(name)
        if value is not None and not is_number(value):
            raise Invalid(name, "must be a number")
    for name in COUNTS:
        value = body.get(name)
        if value is None:
            continue
        if not is_integer(value):
            raise Invalid(name, "must be an integer")
        if value < (1 if name == "n" else 0) or value > MAX_TOKENS:
            raise Invalid(name, f"must be between {1 if name == 'n' else 0} and {MAX_TOKENS:,}")
    if check is not None:
        check(body)


CHAT_FIELDS: Mapping[str, Kind] = {
    "user": STRING, "stop": STRING_OR_STRINGS, "response_format": OBJECT, "stream_options": OBJECT,
    "reasoning_effort": STRING, "thinking": OBJECT, "parallel_tool_calls": BOOLEAN, "seed": INTEGER,
    "logprobs": BOOLEAN, "top_logprobs": INTEGER, "tool_choice": STRING_OR_OBJECT, "functions": OBJECTS,
    "function_call": STRING_OR_OBJECT, "modalities": STRINGS, "output_config": OBJECT, "web_search_options": OBJECT,
}
MESSAGE_FIELDS: Mapping[str, Kind] = {
    "name": STRING, "tool_call_id": STRING, "tool_calls": ARRAY, "reasoning_content": STRING,
    "thinking_blocks": OBJECTS, "function_call": OBJECT, "refusal": STRING, "cache_control": OBJECT,
}
CALL_FIELDS: Mapping[str, Kind] = {"id": STRING, "type": STRING, "function": OBJECT}
FUNCTION_FIELDS: Mapping[str, Kind] = {"name": STRING, "arguments": STRING, "description": STRING,
                                       "parameters": OBJECT, "strict": BOOLEAN}
PART_TEXTS = frozenset({"text", "input_text", "output_text"})


def check_chat(body: dict[str, Any]) -> None:
    _check_messages(body.get("messages"))
    check_fields(body, CHAT_FIELDS)
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise Invalid("tools", "must be an array of tool objects")
        for i, tool in enumerate(tools):
            _check_tool(tool, f"tools[{i}]")
    for name in ("tool_choice", "function_call"):
        choice = body.get(name)
        if isinstance(choice, dict):
            check_fields(choice, CALL_FIELDS, f"{name}.")
            if "function" in choice:
                check_fields(choice["function"], FUNCTION_FIELDS, f"{name}.function.")
    thinking = body.get("thinking")
    if thinking is not None:
        check_fields(thinking, {"type": STRING, "budget_tokens": INTEGER}, "thinking.")
    response_format = body.get("response_format")
    if response_format is not None:
        check_fields(response_format, {"type": STRING, "json_schema": OBJECT}, "response_format.")
        schema = response_format.get("json_schema")
        if schema is not None:
            check_fields(schema, {"name": STRING, "schema": OBJECT, "strict": BOOLEAN}, "response_format.json_schema.")
    for i, function in enumerate(body.get("functions") or ()):
        check_fields(function, FUNCTION_FIELDS, f"functions[{i}].")


def _check_tool(tool: Any, param: str) -> None:
    if not isinstance(tool, dict):
        raise Invalid(param, "must be an object")
    kind = tool.get("type")
    if kind is not None and not isinstance(kind, str):
        raise Invalid(f"{param}.type", "must be a string")
    function = tool.get("function")
    if function is None:
        if kind in (None, "function"):
            raise Invalid(f"{param}.function", "must be an object")
        return
    if not isinstance(function, dict):
        raise Invalid(f"{param}.function", "must be an object")
    need(function, "name", STRING, f"{param}.function.")
    check_fields(function, FUNCTION_FIELDS, f"{param}.function.")


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
        if content is not None and not isinstance(content, str):
            if not isinstance(content, list):
                raise Invalid(f"messages[{i}].content", "must be a string or an array of content parts")
            check_parts(content, f"messages[{i}].content")
        if len(message) > 1 + ("content" in message):  # most messages are only a role and a content
            check_fields(message, MESSAGE_FIELDS, f"messages[{i}].")
            for k, call in enumerate(message.get("tool_calls") or ()):
                _check_call(call, f"messages[{i}].tool_calls[{k}]")


def check_parts(parts: list[Any], param: str) -> None:
    """Content parts: objects with a string `type`; a text part's text is a string, an image's URL too."""
    for j, part in enumerate(parts):
        if not isinstance(part, dict):
            raise Invalid(param, "must be a string or an array of content parts")
        kind = part.get("type")
        if not isinstance(kind, str):
            raise Invalid(f"{param}[{j}].type", "must be a string")
        if kind in PART_TEXTS:
            if not isinstance(part.get("text"), str):
                raise Invalid(f"{param}[{j}].text", "must be a string")
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            if not isinstance(url, str):
                raise Invalid(f"{param}[{j}].image_url.url", "must be a string")
        if "cache_control" in part and not isinstance(part["cache_control"], dict):
            raise Invalid(f"{param}[{j}].cache_control", "must be an object")


def _check_call(call: Any, param: str) -> None:
    if not isinstance(call, dict):
        raise Invalid(param, "must be an object")
    check_fields(call, CALL_FIELDS, f"{param}.")
    function = call.get("function")
    if function is not None:
        check_fields(function, FUNCTION_FIELDS, f"{param}.function.")


# -- the other modes ------------------------------------------------------------------------------------


def _is_input(value: Any) -> bool:
    """A prompt or input: a string, or an array of strings, of token ids, or of arrays of token ids."""
    if isinstance(value, str):
        return True
    if not isinstance(value, list):
        return False
    for item in value:
        if isinstance(item, str) or is_integer(item):
            continue
        if not isinstance(item, list) or not all(is_integer(t) for t in item):
            return False
    return True


INPUT: Kind = ((str, list), "a string, an array of strings, or an array of token ids", _is_input)
MODERATION_INPUT: Kind = ((str, list), "a string, or an array of strings or content parts", lambda v: isinstance(
    v, str) or all(isinstance(item, (str, dict)) for item in v))
DOCUMENTS: Kind = (list, "an array of strings or of objects with a string text", lambda v: all(
    isinstance(d, str) or (isinstance(d, dict) and isinstance(d.get("text", ""), str)) for d in v))


def check_completions(body: dict[str, Any]) -> None:
    check_fields(body, {"prompt": INPUT, "stop": STRING_OR_STRINGS, "suffix": STRING, "echo": BOOLEAN,
                        "best_of": INTEGER, "logprobs": INTEGER, "user": STRING, "stream_options": OBJECT})


def check_embeddings(body: dict[str, Any]) -> None:
    need(body, "input", INPUT)
    check_fields(body, {"dimensions": INTEGER, "encoding_format": STRING, "user": STRING})


def check_moderations(body: dict[str, Any]) -> None:
    need(body, "input", MODERATION_INPUT)


def check_images(body: dict[str, Any]) -> None:
    check_fields(body, {"prompt": STRING, "size": STRING, "quality": STRING, "style": STRING,
                        "response_format": STRING, "user": STRING})


def check_speech(body: dict[str, Any]) -> None:
    need(body, "input", STRING)
    check_fields(body, {"voice": STRING_OR_OBJECT, "speed": NUMBER, "response_format": STRING,
                        "instructions": STRING})


def check_rerank(body: dict[str, Any]) -> None:
    need(body, "query", STRING)
    need(body, "documents", DOCUMENTS)
    check_fields(body, {"top_n": INTEGER, "return_documents": BOOLEAN})

