"""Hypothesis strategies of relay request bodies: a valid request of each format with some of its
fields (at any depth) replaced by any JSON value, removed, or joined by fields the gateway reads."""
from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

Path = tuple[str | int, ...]

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.floats(allow_nan=False,
                                                                                       allow_infinity=False),
                    st.text(max_size=8), st.sampled_from(["", "text", "user", "auto", "image/png", "0", "{}"]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["type", "text", "role", "content", "name", "a", "parts", "url"]) | st.text(max_size=4),
    inner, max_size=3), max_leaves=6)


def paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every path inside a JSON value (the value itself excluded)."""
    if isinstance(value, Mapping):
        items: Sequence[tuple[str | int, Any]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return
    for key, inner in items:
        yield (*prefix, key)
        yield from paths(inner, (*prefix, key))


def _set(body: Any, path: Path, value: Any, remove: bool) -> None:
    for key in path[:-1]:
        body = body[key]
    if remove:
        del body[path[-1]]
    else:
        body[path[-1]] = value


@st.composite
def mutated(draw: st.DrawFn, base: Mapping[str, Any], extra: Sequence[str] = (),
            values: st.SearchStrategy[Any] = JSON, max_changes: int = 3) -> dict[str, Any]:
    """`base` with up to `max_changes` changes, each a field replaced by any JSON value or removed (a
    top-level field as often as one at any depth), or a top-level field from `extra` added."""
    body = copy.deepcopy(dict(base))
    for _ in range(draw(st.integers(0, max_changes))):
        where = draw(st.sampled_from(("top", "any", "extra") if extra else ("top", "any")))
        if where == "extra":
            body[draw(st.sampled_from(extra))] = draw(values)
            continue
        found = [(key,) for key in body] if where == "top" else list(paths(body))
        if not found:
            break
        path = draw(st.sampled_from(found))
        _set(body, path, draw(values), remove=draw(st.integers(0, 4)) == 0)
    return body


def nested(depth: int, leaf: Any = "x") -> Any:
    """A value nested `depth` lists deep."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value
