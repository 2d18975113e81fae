"""Chains of models (README, Fallbacks): the options `ModelFallbacks` (a model's or a pattern's
models to try after it) and `ModelRoutes` (a name the operator defines for a list of models), their
validation, and the chain a request gets from them.

Both take the same entries, keyed by a model name, a `*` pattern (ModelFallbacks only) or a route's name:
`{"models": [...], "on": ["unavailable", "context", "policy"], "groups": [...]}` — `on` defaults to
unavailable and context, `groups` to every group. A chain has at most MAX_MODELS models after the first,
never names one twice, and no model's chain leads back to it. `FallbackStickySeconds` (a number, checked
with the numeric options) is how long a session that fell back starts on the model that answered it
(api/relay/fallback_sticky.py; 0: never).
"""
from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from api.errors import ApiError

MAX_MODELS = 5
UNAVAILABLE, CONTEXT, POLICY = "unavailable", "context", "policy"
REASONS = (UNAVAILABLE, CONTEXT, POLICY)
DEFAULT_ON = frozenset({UNAVAILABLE, CONTEXT})
FALLBACKS, ROUTES = "ModelFallbacks", "ModelRoutes"
STICKY = "FallbackStickySeconds"  # a session that fell back goes to the model that answered first, that long (0: off)
MAX_STICKY_SECONDS = 86400
DEFAULTS = {FALLBACKS: "{}", ROUTES: "{}", STICKY: "0"}


@dataclass(frozen=True, slots=True)
class Entry:
    models: tuple[str, ...]
    on: frozenset[str] = DEFAULT_ON
    groups: frozenset[str] | None = None  # None: every group

    def applies(self, group: str) -> bool:
        return self.groups is None or group in self.groups


def _problem(key: str, name: str, raw: Any) -> Entry:
    """One entry read, or ApiError naming it."""
    def bad(problem: str) -> ApiError:
        return ApiError("option_model_chain", key=key, entry=name, problem=problem)

    if not name.strip():
        raise bad("an empty name")
    if not isinstance(raw, Mapping):
        raise bad("must be an object with models")
    unknown = set(raw) - {"models", "on", "groups"}
    if unknown:
        raise bad(f"unknown field {sorted(unknown)[0]}")
    models = raw.get("models")
    if not isinstance(models, list) or not models or not all(isinstance(m, str) and m.strip() for m in models):
        raise bad("models must be a non-empty list of model names")
    if len(models) > MAX_MODELS:
        raise bad(f"at most {MAX_MODELS} models")
    if len(set(models)) != len(models):
        raise bad("a model is listed twice")
    if name in models:
        raise bad("lists itself")
    on = raw.get("on", sorted(DEFAULT_ON))
    if not isinstance(on, list) or not on or not all(r in REASONS for r in on):
        raise bad("on must list some of unavailable, context, policy")
    groups = raw.get("groups")
    if groups is not None and (not isinstance(groups, list) or not all(isinstance(g, str) for g in groups)):
        raise bad("groups must be a list of group names")
    return Entry(tuple(models), frozenset(on), frozenset(groups) if groups is not None else None)


def parse(key: str, value: str) -> dict[str, Entry]:
    """The option's entries, or ApiError naming the first wrong one (nothing is stored then)."""
    try:
        data = orjson.loads(value or "{}")
    except orjson.JSONDecodeError as exc:
        raise ApiError("option_invalid_json", key=key) from exc
    if not isinstance(data, dict):
        raise ApiError("option_invalid_json", key=key)
    entries = {name: _problem(key, name, raw) for name, raw in data.items()}
    if key == FALLBACKS:
        _check_loops(key, entries)
    else:
        for name in entries:
            if "*" in name:
                raise ApiError("option_model_chain", key=key, entry=name, problem="a route's name has no pattern")
    return entries


def _check_loops(key: str, entries: Mapping[str, Entry]) -> None:
    """No model's chain leads back to it through the others' (exact names)."""
    for start in entries:
        seen, todo = {start}, list(entries[start].models)
        while todo:
            model = todo.pop()
            if model == start:
                raise ApiError("option_model_chain", key=key, entry=start, problem="its chain leads back to it")
            if model in seen:
                continue
            seen.add(model)
            if model in entries:
                todo.extend(entries[model].models)


def check(key: str, value: str) -> None:
    parse(key, value)


CHECKS = {FALLBACKS: check, ROUTES: check}


# -- reading, for the relay -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Table:
    exact: Mapping[str, Entry]
    patterns: tuple[tuple[str, Entry], ...]

    def find(self, model: str, group: str) -> Entry | None:
        entry = self.exact.get(model)
        if entry is not None and entry.applies(group):
            return entry
        for pattern, candidate in self.patterns:
            if candidate.applies(group) and fnmatch.fnmatchcase(model, pattern):
                return candidate
        return None

    def __bool__(self) -> bool:
        return bool(self.exact or self.patterns)


EMPTY = Table({}, ())
_tables: dict[tuple[str, str], Table] = {}


def table(key: str, value: str) -> Table:
    """The option's entries, parsed once per value (a value that no longer validates: no chains)."""
    if value in ("", "{}"):
        return EMPTY
    found = _tables.get((key, value))
    if found is None:
        try:
            entries = parse(key, value)
        except ApiError:
            entries = {}
        if len(_tables) > 32:
            _tables.clear()
        found = _tables[(key, value)] = Table(
            {k: e for k, e in entries.items() if "*" not in k},
            tuple((k, e) for k, e in entries.items() if "*" in k))
    return found
