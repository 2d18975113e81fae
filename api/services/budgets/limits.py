"""Limits over time as data: what a key, a user or a group may spend per window (docs/billing.md,
Budgets and limits).

A limit is `{"window": W, <one measure>: N, "model"?: M, "soft"?: P}`:
- W: `minute`, `hour`, `day`, `week`, `month` (calendar windows in BudgetTimeZone) or `<N>h`, a
  rolling window of N hours (1..744) that opens with the first request when none is open;
- the measure: `quota` (the charge, in quota units), `requests` or `tokens` (prompt + completion);
- M narrows the limit to one model, or to the models a pattern with `*` matches (`gpt-5*`);
- P, a percentage of the limit from which a soft alert is due (the limit itself still holds at 100 %).

Limits are parsed once and stored normalised (keys in this order, defaults left out), so the text
the relay caches is the text it parses, and a parse is cached per distinct text.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from api.errors import ApiError

MAX_LIMITS = 32  # per owner
MAX_ROLLING_HOURS = 744  # 31 days
MAX_AMOUNT = 2**53 - 1  # what a console's JavaScript number still says exactly
MAX_MODEL = 128
CALENDAR = ("minute", "hour", "day", "week", "month")
MEASURES = ("quota", "requests", "tokens")
FIELDS = frozenset({"window", "model", "soft", *MEASURES})
_ROLLING = re.compile(r"^([1-9][0-9]{0,2})h$")


class LimitInvalid(ApiError):
    """A limit the console refuses; the message names the list, the entry and the field."""


@dataclass(frozen=True, slots=True)
class Limit:
    window: str  # as written: "day", "5h"
    measure: str  # quota | requests | tokens
    amount: int
    model: str = ""  # "" = every model
    soft: int = 0  # percent; 0 = no soft alert

    @property
    def rolling_hours(self) -> int:
        """N of an `<N>h` window; 0 for a calendar window."""
        return int(self.window[:-1]) if self.window not in CALENDAR else 0

    @property
    def identity(self) -> str:
        """The window and model: limits that share it count in one usage hash per window."""
        return f"{self.window}@{self.model}" if self.model else self.window

    def applies_to(self, model: str) -> bool:
        return matches(self.model, model)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"window": self.window, self.measure: self.amount}
        if self.model:
            out["model"] = self.model
        if self.soft:
            out["soft"] = self.soft
        return out


_patterns: dict[str, re.Pattern[str]] = {}


def matches(pattern: str, model: str) -> bool:
    """"" matches every model, a name itself, a pattern with `*` what it spells (`*` = any text)."""
    if not pattern or pattern == model:
        return True
    if "*" not in pattern:
        return False
    if pattern.endswith("*") and pattern.count("*") == 1:
        return model.startswith(pattern[:-1])
    compiled = _patterns.get(pattern)
    if compiled is None:
        if len(_patterns) > 4096:
            _patterns.clear()
        compiled = _patterns[pattern] = re.compile(".*".join(re.escape(p) for p in pattern.split("*")) + r"\Z",
                                                   re.DOTALL)
    return compiled.match(model) is not None


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_entry(entry: object, index: int, where: str) -> Limit:
    if not isinstance(entry, Mapping):
        raise LimitInvalid("limit_not_object", where=where, index=index)
    for name in entry:
        if name not in FIELDS:
            raise LimitInvalid("limit_unknown_field", where=where, index=index, field=str(name)[:40])
    window = entry.get("window")
    if not isinstance(window, str) or (window not in CALENDAR and not _rolling_ok(window)):
        raise LimitInvalid("limit_window_invalid", where=where, index=index, field="window", max=MAX_ROLLING_HOURS)
    named = [m for m in MEASURES if m in entry]
    if not named:
        raise LimitInvalid("limit_measure_missing", where=where, index=index)
    if len(named) > 1:
        raise LimitInvalid("limit_measure_two", where=where, index=index, field=named[0], other=named[1])
    measure = named[0]
    amount = entry[measure]
    if not _integer(amount) or not 0 <= amount <= MAX_AMOUNT:
        raise LimitInvalid("limit_value_invalid", where=where, index=index, field=measure, max=MAX_AMOUNT)
    model = entry.get("model", "")
    if model is None:
        model = ""
    if not isinstance(model, str) or len(model.strip()) > MAX_MODEL or (model and not model.strip()):
        raise LimitInvalid("limit_model_invalid", where=where, index=index, field="model", max=MAX_MODEL)
    soft = entry.get("soft", 0)
    if soft is None:
        soft = 0
    if not _integer(soft) or (soft and not 1 <= soft <= 100) or ("soft" in entry and entry["soft"] == 0):
        raise LimitInvalid("limit_soft_invalid", where=where, index=index, field="soft")
    return Limit(window, measure, int(amount), model.strip(), int(soft))


def _rolling_ok(window: str) -> bool:
    found = _ROLLING.match(window)
    return found is not None and 1 <= int(found.group(1)) <= MAX_ROLLING_HOURS


def parse_limits(value: object, where: str = "limits") -> tuple[Limit, ...]:
    """A list of limits (or its JSON text; "" and null = none), validated; LimitInvalid names the entry."""
    if value is None or value == "":
        return ()
    if isinstance(value, str | bytes):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise LimitInvalid("limits_not_list", where=where) from None
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise LimitInvalid("limits_not_list", where=where)
    if len(value) > MAX_LIMITS:
        raise LimitInvalid("limits_too_many", where=where, count=len(value), max=MAX_LIMITS)
    return tuple(parse_entry(entry, i, where) for i, entry in enumerate(value))


def dumps(limits: Sequence[Limit]) -> str:
    """The normalised text stored on the row ("" for none)."""
    return orjson.dumps([limit.as_dict() for limit in limits]).decode() if limits else ""


def normalise(value: object, where: str = "limits") -> str:
    return dumps(parse_limits(value, where))


_stored: dict[str, tuple[Limit, ...]] = {}


def stored(text: str) -> tuple[Limit, ...]:
    """The limits of a stored (normalised) text, parsed once per distinct text; a text that no longer
    parses (written by hand) counts as no limits rather than failing every request."""
    if not text:
        return ()
    hit = _stored.get(text)
    if hit is None:
        try:
            hit = parse_limits(text)
        except LimitInvalid:
            hit = ()
        if len(_stored) > 8192:
            _stored.clear()
        _stored[text] = hit
    return hit


def parse_group_limits(value: object) -> dict[str, tuple[Limit, ...]]:
    """The GroupLimits option: `{"<group>": [limits…]}` ("" = none)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str | bytes):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise LimitInvalid("limits_group_invalid") from None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        raise LimitInvalid("limits_group_invalid")
    return {group: parse_limits(entries, f"GroupLimits.{group[:64]}") for group, entries in value.items()}


_groups: dict[str, dict[str, tuple[Limit, ...]]] = {}


def group_limits(text: str) -> dict[str, tuple[Limit, ...]]:
    """The option's groups, parsed once per distinct text (an unreadable text: no group limits)."""
    hit = _groups.get(text)
    if hit is None:
        try:
            hit = parse_group_limits(text)
        except LimitInvalid:
            hit = {}
        if len(_groups) > 64:
            _groups.clear()
        _groups[text] = hit
    return hit


def normalise_group_limits(value: object) -> str:
    parsed = parse_group_limits(value)
    return orjson.dumps({g: [lim.as_dict() for lim in limits] for g, limits in parsed.items()}).decode() \
        if parsed else ""
