"""How a model finds its capability row, and the operator's overrides.

Rows are matched on the model name without provider prefixes (`us.anthropic.`, `models/`,
`publishers/…/models/`) and without Bedrock's version suffix; the longest matching pattern wins
(a pattern ending in `*` is a prefix, otherwise the whole name). The option `ModelCapabilities`
(a JSON object: pattern → the fields to change) adds rows or changes shipped ones without a release;
`validate_overrides` checks it when it is saved.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from api.services.configuration.capabilities import (
    EFFORT_ORDER,
    REASONING_KINDS,
    SAMPLING,
    TOOL_CHOICE_KINDS,
    Capability,
)
from api.services.configuration.capability_rows import ROWS

_PREFIXES = re.compile(r"^(?:(?:us|eu|apac|global|jp|au)\.)?(?:anthropic\.|google\.|models/|publishers/[^/]+/models/)")
_BEDROCK_SUFFIX = re.compile(r"-v\d+(?::\d+)?$")


def base_name(model: str) -> str:
    """The model's name as the table knows it: lower case, without provider prefixes or Bedrock's version."""
    name = _PREFIXES.sub("", model.strip().lower())
    name = _BEDROCK_SUFFIX.sub("", name)
    return name.split("@", 1)[0]  # Vertex's `claude-…@20250514`


def _matches(pattern: str, name: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


def _specificity(pattern: str) -> tuple[int, int]:
    return (len(pattern.rstrip("*")), 0 if pattern.endswith("*") else 1)


class CapabilityTable:
    """The shipped rows plus the operator's overrides; lookups cached per model name."""

    def __init__(self, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        rows = {row.pattern: row for row in ROWS}
        for pattern, changes in (overrides or {}).items():
            base = rows.get(pattern) or _lookup(tuple(rows.values()), pattern.rstrip("*"))
            rows[pattern] = replace(base, pattern=pattern, **_coerce(changes))
        self.rows = tuple(sorted(rows.values(), key=lambda r: _specificity(r.pattern), reverse=True))
        self._cache: dict[str, Capability] = {}

    def __call__(self, model: str) -> Capability:
        found = self._cache.get(model)
        if found is None:
            if len(self._cache) > 4096:
                self._cache.clear()
            found = self._cache[model] = _lookup(self.rows, base_name(model))
        return found


def _lookup(rows: tuple[Capability, ...], name: str) -> Capability:
    best: Capability | None = None
    for row in rows:
        if _matches(row.pattern, name) and (best is None or _specificity(row.pattern) > _specificity(best.pattern)):
            best = row
    return best or Capability()


_FIELDS = {f.name: f for f in fields(Capability) if f.name != "pattern"}


def _coerce(changes: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in changes.items():
        if name == "sampling":
            out[name] = frozenset(value)
        elif name == "efforts":
            out[name] = tuple(value)
        else:
            out[name] = value
    return out


def validate_overrides(value: Any) -> str | None:
    """Why the `ModelCapabilities` option is refused, or None when it is usable."""
    if not isinstance(value, Mapping):
        return "it must be a JSON object: model pattern → the fields to change"
    for pattern, changes in value.items():
        if not isinstance(pattern, str) or not pattern.strip() or "*" in pattern[:-1]:
            return f"{pattern!r}: a pattern is a model name, or a prefix ending in *"
        if not isinstance(changes, Mapping):
            return f"{pattern}: the fields to change must be a JSON object"
        for name, item in changes.items():
            problem = _field_problem(name, item)
            if problem:
                return f"{pattern}.{name}: {problem}"
    return None


def _field_problem(name: str, value: Any) -> str | None:
    if name not in _FIELDS:
        return f"unknown field (known: {', '.join(sorted(_FIELDS))})"
    if name in ("max_output", "default_output"):
        ok = value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10_000_000)
        return None if ok else "a positive whole number of tokens, or null"
    if name == "output_param":
        return None if value in ("max_tokens", "max_completion_tokens") else "max_tokens or max_completion_tokens"
    if name == "reasoning":
        return None if value in REASONING_KINDS else f"one of {', '.join(REASONING_KINDS)}"
    if name == "forced_tool_choice":
        return None if value in TOOL_CHOICE_KINDS else f"one of {', '.join(TOOL_CHOICE_KINDS)}"
    if name == "sampling":
        ok = isinstance(value, list) and all(v in SAMPLING for v in value)
        return None if ok else f"a list of: {', '.join(sorted(SAMPLING))}"
    if name == "efforts":
        ok = isinstance(value, list) and all(v in EFFORT_ORDER for v in value)
        return None if ok else f"a list of: {', '.join(EFFORT_ORDER)}"
    return None if isinstance(value, bool) else "true or false"


DEFAULT_TABLE = CapabilityTable()


def capability(model: str) -> Capability:
    """The shipped row for a model (without the operator's overrides: see `table_of`)."""
    return DEFAULT_TABLE(model)


_tables: dict[str, CapabilityTable] = {}


def table_of(raw_option: str) -> CapabilityTable:
    """The table with the `ModelCapabilities` option applied (one table per distinct option text)."""
    table = _tables.get(raw_option)
    if table is None:
        import orjson

        try:
            overrides = orjson.loads(raw_option) if raw_option.strip() else {}
        except orjson.JSONDecodeError:
            overrides = {}
        if validate_overrides(overrides) is not None:
            overrides = {}  # refused when saved; an invalid value from elsewhere changes nothing
        if len(_tables) > 8:
            _tables.clear()
        table = _tables[raw_option] = CapabilityTable(overrides)
    return table
