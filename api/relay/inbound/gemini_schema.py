"""Gemini's `Schema` (an OpenAPI 3.0 subset: ai.google.dev/api/caching#Schema) → JSON Schema, the
internal form's dialect for tool parameters and structured output.

Type names are upper case there (`OBJECT`, `STRING`): lower case here. `nullable: true` → the type
with `"null"` (or a null branch of `anyOf`). `propertyOrdering` and the `enum` format marker have
no JSON Schema meaning and go. Enum values are strings there even for numbers: numbers here. Integer
fields that the proto JSON may write as strings (`maxItems: "3"`) become numbers. `example` →
`examples`, `defs`/`ref` → `$defs`/`$ref`. The google-genai SDK writes nested fields in snake case
(`property_ordering`, `any_of`): both spellings are read. Property and definition names are kept as
they are.

`responseJsonSchema` and `parametersJsonSchema` are JSON Schema, yet Google takes its own type names
there too (Gemini CLI's model router sends `OBJECT`/`STRING` in `responseJsonSchema`): such a schema
is converted as well (`json_schema_of`), so no other provider receives the dialect.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from api.upstream.schema_dialect import is_gemini_dialect

COUNTS = frozenset({"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"})
BOUNDS = frozenset({"minimum", "maximum"})
DROPPED = frozenset({"propertyOrdering", "nullable"})
_SNAKE = re.compile(r"_([a-z])")


def camel(key: str) -> str:
    return _SNAKE.sub(lambda m: m.group(1).upper(), key)


def _number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return value
    return value


def _type(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.lower()
        return None if lowered == "type_unspecified" else lowered
    if isinstance(value, list):
        return [t.lower() if isinstance(t, str) else t for t in value]
    return value


def _nullable(out: dict[str, Any]) -> None:
    kind = out.get("type")
    if isinstance(kind, str) and kind != "null":
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    elif "anyOf" in out and {"type": "null"} not in out["anyOf"]:
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]


def to_json_schema(schema: Any) -> Any:
    """One Gemini Schema node (and everything under it) → JSON Schema."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for raw_key, value in schema.items():
        key = camel(str(raw_key))
        if key in DROPPED or (key == "format" and value == "enum"):
            continue
        if key == "type":
            kind = _type(value)
            if kind is not None:
                out["type"] = kind
        elif key == "properties" and isinstance(value, Mapping):
            out["properties"] = {name: to_json_schema(v) for name, v in value.items()}
        elif key in ("defs", "$defs") and isinstance(value, Mapping):
            out["$defs"] = {name: to_json_schema(v) for name, v in value.items()}
        elif key in ("ref", "$ref") and isinstance(value, str):
            out["$ref"] = value.replace("#/defs/", "#/$defs/")
        elif key in ("items", "additionalProperties", "not"):
            out[key] = to_json_schema(value)
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [to_json_schema(v) for v in value]
        elif key == "example":
            out["examples"] = [value]
        elif key in COUNTS or key in BOUNDS:
            out[key] = _number(value)
        else:
            out[key] = value
    kind = out.get("type")
    if isinstance(out.get("enum"), list) and kind in ("integer", "number"):
        out["enum"] = [_number(v) for v in out["enum"]]
    if schema.get("nullable") is True:
        _nullable(out)
    return out


def json_schema_of(schema: Any) -> Any:
    """A field meant to hold JSON Schema, in JSON Schema (converted when written in Gemini's dialect)."""
    return to_json_schema(schema) if isinstance(schema, Mapping) and is_gemini_dialect(schema) else schema
