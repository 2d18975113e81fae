"""Gemini's schema dialect (an OpenAPI 3.0 subset: upper-case type names, `nullable`) told apart from
JSON Schema, and turned into it, wherever a schema travels to a provider that takes only JSON Schema
(Google accepts its own type names even in `responseJsonSchema` and `parametersJsonSchema`; OpenAI
refuses them: "'OBJECT' is not valid under any of the given schemas")."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

# The dialect in a JSON text, and where schemas nest.
GEMINI_SCHEMA = re.compile(rb'"type":"(?:STRING|NUMBER|INTEGER|BOOLEAN|ARRAY|OBJECT|NULL)"|"nullable":')
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
SCHEMA_NODES = frozenset({"items", "additionalProperties", "not", "anyOf", "oneOf", "allOf", "prefixItems"})


def is_gemini_dialect(schema: Any) -> bool:
    """Whether a schema (or anything holding schemas) uses Gemini's type names or `nullable`."""
    return bool(GEMINI_SCHEMA.search(orjson.dumps(schema)))


def json_schema(schema: Any) -> Any:
    """A schema in Gemini's dialect (upper-case type names, `nullable`) → JSON Schema."""
    if isinstance(schema, list):
        return [json_schema(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: (value.lower() if key == "type" and isinstance(value, str) else
                 {name: json_schema(item) for name, item in value.items()} if key in SCHEMA_MAPS
                 and isinstance(value, Mapping) else json_schema(value) if key in SCHEMA_NODES else value)
           for key, value in schema.items() if key != "nullable"}
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    elif schema.get("nullable") is True and isinstance(out.get("anyOf"), list):
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    return out
