"""Channel type → the adaptor class serving it, bound to its catalogue row; and → the task adaptor of
its task or video protocol (the row's `task`, `video`).

Each row's adaptor is subclassed once with the row's facts (`provider`, `default_base_url`, and
`paths`/`modes` of an OpenAI-compatible row), so an adaptor reads what the catalogue says of its
type without naming a type itself. A type outside the catalogue gets the OpenAI adaptor.
"""

from __future__ import annotations

from api.upstream.base import Adaptor, RelayMeta
from api.upstream.catalogue import CATALOGUE, provider
from api.upstream.provider import Provider
from api.upstream.providers.unserved import UnservedAdaptor
from api.upstream.task_base import TaskAdaptor, VideoAdaptor

# (class, type) → the bound class; a row replaced under the same type (a test's) is bound anew.
_BOUND: dict[tuple[type[Adaptor], int], type[Adaptor]] = {}


def bind(cls: type[Adaptor], row: Provider) -> type[Adaptor]:
    """`cls` (a row's adaptor, or a variant of it) with the row's facts; made once per pair."""
    if cls.provider is row:
        return cls
    found = _BOUND.get((cls, row.type))
    if found is None or found.provider is not row:
        attrs: dict[str, object] = {"provider": row, "default_base_url": row.base_url}
        if row.paths is not None:
            attrs["paths"] = row.paths
        if row.modes is not None:
            attrs["modes"] = row.modes
        found = _BOUND[(cls, row.type)] = type(cls.__name__, (cls,), attrs)
    return found


ADAPTORS: dict[int, type[Adaptor]] = {t: bind(row.adaptor, row) for t, row in CATALOGUE.items()}


def get_adaptor(channel_type: int) -> type[Adaptor]:
    """The adaptor class for a channel type; types outside the catalogue get the OpenAI-compatible one."""
    return ADAPTORS.get(channel_type) or bind(provider(channel_type).adaptor, provider(channel_type))


def is_relayable(channel_type: int) -> bool:
    """Whether chat requests can be relayed to this type (False: a task type, or a retired one)."""
    row = provider(channel_type)
    return row.task is None and row.retired is None and not issubclass(row.adaptor, UnservedAdaptor)


def build_adaptor(meta: RelayMeta) -> Adaptor:
    """An adaptor for one attempt (it falls back to its type's default base URL by itself)."""
    row = provider(meta.channel_type)
    return bind(get_adaptor(meta.channel_type).variant(meta), row)(meta)


# The task protocols of the task types (Midjourney, Suno) and the video protocols of /v1/videos, by type.
TASK_ADAPTORS: dict[int, type[TaskAdaptor]] = {t: row.task for t, row in CATALOGUE.items() if row.task is not None}
VIDEO_ADAPTORS: dict[int, type[VideoAdaptor]] = {t: row.video for t, row in CATALOGUE.items() if row.video is not None}


def task_types(protocol: type[TaskAdaptor]) -> frozenset[int]:
    """The channel types whose task protocol is `protocol` (or a variant of it: Midjourney Plus of Midjourney)."""
    return frozenset(t for t, cls in TASK_ADAPTORS.items() if issubclass(cls, protocol))
