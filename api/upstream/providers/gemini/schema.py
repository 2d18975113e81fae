"""JSON Schema (what clients declare for tool parameters and structured output) → Gemini's `Schema`.

Which field: function declarations take `parameters` (Gemini's Schema object) or
`parametersJsonSchema`, generation takes `responseSchema` or `responseJsonSchema`. We send the Schema
object (`parameters`, `responseSchema`) on both the Gemini API and Vertex AI because its fields are
documented on both and anything else is refused deterministically (400 `Invalid JSON payload
received. Unknown name "exclusiveMinimum" at 'tools[0].function_declarations[9].parameters…': Cannot
find field.`, Portkey-AI/gateway#1473, fazer-ai/agents#64), so the reduction below is exact. The JSON
Schema fields are documented only for `responseJsonSchema` ("not all features are supported": a
keyword list, cloud.google.com …/GenerationConfig#responseJsonSchema) and refuse shapes the docs do
not list (`$ref` beside other keys, undefined references, nullable type lists: gemini-cli#13326,
#21094, anomalyco/opencode#12295), so they would still need a reduction, and a less certain one.

The Schema fields (ai.google.dev/api/caching#Schema; cloud.google.com/vertex-ai/docs/reference/rest/
v1/Schema): type, format, title, description, nullable, enum (strings), items, minItems, maxItems,
properties, required, minProperties, maxProperties, minLength, maxLength, pattern, example, anyOf,
propertyOrdering, default, minimum, maximum. The reduction inlines `$ref`/`$defs` (a reference met
again inside itself more than `MAX_REF_DEPTH` times is cut, with a description saying so), turns
`const` into a one-value enum, `type: [x, "null"]` and null branches into `nullable`, `oneOf` into
`anyOf`, merges `allOf`, and writes the meaning of every validation keyword it removes into the
description (`(must be > 0)`), so the model still knows it.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

FIELDS = frozenset({"type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems",
                    "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
                    "example", "anyOf", "propertyOrdering", "default", "minimum", "maximum"})
TYPES = ("string", "number", "integer", "boolean", "array", "object")
# `format` values the Gemini API acts on; others are refused by some models (firebase.google.com/docs/
# reference/js/ai.schemashared: "must be either 'enum' or 'date-time'" for strings): kept as words.
FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}
# Removed keywords written into the description.
WORDINGS = {"multipleOf": "a multiple of {}", "uniqueItems": "items must be unique",
            "contentEncoding": "encoded as {}", "contentMediaType": "media type {}", "deprecated": "deprecated",
            "minContains": "at least {} matching items", "maxContains": "at most {} matching items"}
# Keywords the reduction reads itself (the others outside FIELDS are written into the description).
HANDLED = frozenset({"$ref", "allOf", "anyOf", "oneOf", "const", "examples", "exclusiveMinimum", "exclusiveMaximum",
                     "additionalProperties", "propertyNames", "patternProperties", "prefixItems", *WORDINGS})
MAX_REF_DEPTH = 2
MAX_NOTE = 300
# Keys without meaning for the model (identifiers, annotations for tooling).
SILENT = frozenset({"$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary", "$defs", "definitions",
                    "additionalItems", "unevaluatedItems", "unevaluatedProperties", "readOnly", "writeOnly", "strict",
                    "markdownDescription", "discriminator", "xml", "externalDocs"})


def _brief(value: Any) -> str:
    text = orjson.dumps(value).decode() if not isinstance(value, str) else value
    return text if len(text) <= MAX_NOTE else text[:MAX_NOTE] + "…"


def _summary(schema: Any) -> str:
    """A short wording of a sub-schema removed with its keyword (for the description)."""
    if isinstance(schema, Mapping):
        if set(schema) == {"type"} and isinstance(schema["type"], str):
            return schema["type"]
        if "pattern" in schema and len(schema) <= 2:
            return f"matching {schema['pattern']}"
        if "enum" in schema and len(schema) <= 2:
            return "one of " + ", ".join(_brief(v) for v in schema["enum"])
    return _brief(schema)


class Reducer:
    """One reduction: knows the root (for references) and collects nothing between calls."""

    def __init__(self, root: Any) -> None:
        self.root = root if isinstance(root, Mapping) else {}

    def reduce(self, schema: Any, refs: tuple[str, ...] = ()) -> dict[str, Any]:
        if schema is True or not isinstance(schema, Mapping):
            return {}
        resolved = self._resolved(schema, refs)
        if resolved is None:
            return {"description": "(a recursive value of the same shape as its parent)"}
        node = self._merged_all_of(*resolved)
        refs = resolved[1]
        notes: list[str] = []
        out: dict[str, Any] = {}
        self._types(node, out, notes)
        self._union(node, out, refs)
        self._values(node, out, notes)
        self._structure(node, out, notes, refs)
        self._limits(node, out, notes)
        for key in ("title", "default", "minLength", "maxLength", "pattern", "minItems", "maxItems",
                    "minProperties", "maxProperties"):
            if key in node and key not in out:
                out[key] = node[key]
        if "example" not in out and isinstance(node.get("examples"), list) and node["examples"]:
            out["example"] = node["examples"][0]
        elif "example" in node:
            out["example"] = node["example"]
        description = node.get("description")
        text = " ".join(([description] if isinstance(description, str) and description else []) + notes)
        if text:
            out["description"] = text
        return out

    # -- references and combinations ------------------------------------------------------------------

    def _resolved(self, schema: Mapping[str, Any], refs: tuple[str, ...]) -> tuple[Mapping[str, Any],
                                                                                tuple[str, ...]] | None:
        """`schema` with its `$ref` replaced by the target (sibling keys kept); None when cut."""
        while isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if refs.count(ref) >= MAX_REF_DEPTH:
                return None
            target = self._target(ref)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **siblings} if isinstance(target, Mapping) else siblings
            refs = (*refs, ref)
        return schema, refs

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return {}
        node: Any = self.root
        for token in ref[1:].split("/")[1:] if ref != "#" else ():
            token = token.replace("~1", "/").replace("~0", "~")
            node = node.get(token) if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else {}

    def _merged_all_of(self, node: Mapping[str, Any], refs: tuple[str, ...]) -> Mapping[str, Any]:
        """`allOf` folded into the node: properties and required united, the first value of other keys."""
        parts = node.get("allOf")
        if not isinstance(parts, list):
            return node
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        for part in parts:
            resolved = self._resolved(part, refs) if isinstance(part, Mapping) else None
            if resolved is None:
                continue
            for key, value in self._merged_all_of(*resolved).items():
                if key == "properties" and isinstance(value, Mapping):
                    merged["properties"] = {**(merged.get("properties") or {}), **value}
                elif key == "required" and isinstance(value, list):
                    merged["required"] = list(dict.fromkeys([*(merged.get("required") or []), *value]))
                elif key == "description" and "description" in merged and value != merged["description"]:
                    merged["description"] = f"{merged['description']} {value}"
                else:
                    merged.setdefault(key, value)
        return merged

    def _union(self, node: Mapping[str, Any], out: dict[str, Any], refs: tuple[str, ...]) -> None:
        """anyOf (and oneOf, which Gemini does not have) kept as anyOf; null branches → nullable."""
        branches = node.get("anyOf") if isinstance(node.get("anyOf"), list) else node.get("oneOf")
        if not isinstance(branches, list):
            return
        reduced = []
        for branch in branches:
            if isinstance(branch, Mapping) and branch.get("type") == "null":
                out["nullable"] = True
            else:
                reduced.append(self.reduce(branch, refs))
        if len(reduced) == 1 and not (set(reduced[0]) & set(out)):
            out.update(reduced[0])
        elif reduced:
            out["anyOf"] = reduced

    # -- types and values -----------------------------------------------------------------------------

    def _types(self, node: Mapping[str, Any], out: dict[str, Any], notes: list[str]) -> None:
        kind = node.get("type")
        kinds = ([kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)]
                 if isinstance(kind, list) else [])
        if "null" in kinds:
            out["nullable"] = True
        kinds = [k for k in kinds if k in TYPES]
        if len(kinds) == 1:
            out["type"] = kinds[0]
        elif len(kinds) > 1:
            rest = {k: v for k, v in node.items() if k not in ("type", "description")}
            out["anyOf"] = [self.reduce({**rest, "type": k}) for k in kinds]
        fmt = node.get("format")
        if isinstance(fmt, str):
            if fmt in FORMATS.get(out.get("type", ""), ()):
                out["format"] = fmt
            else:
                notes.append(f"(format: {fmt})")

    def _values(self, node: Mapping[str, Any], out: dict[str, Any], notes: list[str]) -> None:
        values: list[Any] | None = None
        if "const" in node:
            values = [node["const"]]
        elif isinstance(node.get("enum"), list):
            values = list(node["enum"])
        if values is None:
            return
        if None in values:
            out["nullable"] = True
            values = [v for v in values if v is not None]
        if values and all(isinstance(v, str) for v in values) and out.get("type", "string") == "string":
            out["enum"] = values
            out.setdefault("type", "string")
        elif len(values) == 1:
            notes.append(f"(must be {_brief(values[0])})")
        elif values:
            notes.append("(one of: " + ", ".join(_brief(v) for v in values) + ")")

    def _limits(self, node: Mapping[str, Any], out: dict[str, Any], notes: list[str]) -> None:
        for key, sign in (("minimum", ">="), ("maximum", "<=")):
            if isinstance(node.get(key), int | float) and not isinstance(node.get(key), bool):
                exclusive = node.get("exclusive" + key[:1].upper() + key[1:])
                if exclusive is True:  # draft 4: a flag on minimum/maximum
                    notes.append(f"(must be {sign[0]} {node[key]})")
                else:
                    out[key] = node[key]
        for key, sign in (("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
            value = node.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                notes.append(f"(must be {sign} {value})")
        for key, wording in WORDINGS.items():
            value = node.get(key)
            if value is not None and value is not False:
                notes.append("(" + wording.format(_brief(value)) + ")")
        for key in node:  # other validation keywords (not, if/then/else, contains, dependencies, …)
            if key not in FIELDS and key not in SILENT and key not in HANDLED and not key.startswith("x-"):
                notes.append(f"({key}: {_brief(node[key])})")

    # -- objects and arrays ---------------------------------------------------------------------------

    def _structure(self, node: Mapping[str, Any], out: dict[str, Any], notes: list[str],
                   refs: tuple[str, ...]) -> None:
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            out["properties"] = {name: self.reduce(value, refs) for name, value in properties.items()}
            given = node.get("required")
            required = [r for r in given if isinstance(r, str) and r in properties] if isinstance(given, list) else []
            if required:
                out["required"] = required
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            notes.append(f"(other properties: {_summary(extra)})")
        names = node.get("propertyNames")
        if names is not None:
            notes.append(f"(property names {_summary(names)})")
        patterns = node.get("patternProperties")
        if isinstance(patterns, Mapping):
            notes.extend(f"(properties named like {p}: {_summary(s)})" for p, s in patterns.items())
        items = node.get("items")
        prefix = (node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else
                  items if isinstance(items, list) else None)
        if prefix is not None:
            out["items"] = ({"anyOf": [self.reduce(i, refs) for i in prefix]} if len(prefix) > 1 else
                            self.reduce(prefix[0], refs) if prefix else {"type": "string"})
            notes.append("(items in this order: " + "; ".join(_summary(i) for i in prefix) + ")")
        elif isinstance(items, Mapping) or items is True:
            out["items"] = self.reduce(items, refs)
        if out.get("type") == "array" and not out.get("items"):
            # An array without `items` is refused ("….items: missing field.", t8y2/dbx#6233).
            out["items"] = {"type": "string"}
            notes.append("(items of any type)")


_reduced: dict[bytes, dict[str, Any]] = {}  # a JSON Schema's bytes → its Gemini Schema


def to_gemini(schema: Any) -> dict[str, Any]:
    """The Gemini Schema for a JSON Schema (references resolved against `schema` itself). A coding
    agent sends the same tools on every turn: each schema is reduced once per process (the result
    is shared, so callers never modify it)."""
    try:
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return Reducer(schema).reduce(schema)
    found = _reduced.get(key)
    if found is None:
        if len(_reduced) >= 2048:
            _reduced.clear()
        found = _reduced[key] = Reducer(schema).reduce(schema)
    return found


def has_parameters(schema: Mapping[str, Any]) -> bool:
    """Whether a reduced `parameters` schema declares anything (an empty object is left out)."""
    return bool(schema.get("properties") or schema.get("anyOf") or schema.get("description"))
