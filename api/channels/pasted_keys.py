"""The keys pasted in a channel form: one channel per key, or the key list of a multi-key channel,
each key checked against its type's format (its catalogue row)."""
from __future__ import annotations

from collections.abc import Sequence

import orjson

from api.errors import ApiError
from api.upstream import catalogue
from models import keyring

MAX_KEYS_PER_CREATE = 1000


def check_keys(keys: Sequence[str], channel_type: int, lines: Sequence[int] | None = None) -> None:
    """Every key has the type's format (its catalogue row); the refusal names the format and the line
    (`lines`: each key's line in what was pasted, else its position from 1)."""
    fmt = catalogue.provider(channel_type).key
    for i, key in enumerate(keys):
        problem = fmt.problem(key.strip())
        if problem is not None:
            raise ApiError(problem, line=lines[i] if lines is not None else i + 1, problem=fmt.detail(key))


def _numbered(text: str, whole: bool, multi: bool) -> list[tuple[int, str]]:
    """The keys pasted in `text` with their line (or, in a JSON array, their position), from 1.
    A whole-document key (a service-account JSON) is one key, or one element of a JSON array when
    the channel holds several."""
    text = text.strip()
    if not text:
        return []
    if multi and text.startswith("["):
        try:
            docs = orjson.loads(text)
        except orjson.JSONDecodeError:
            docs = None
        if isinstance(docs, list):
            return [(i, d.strip() if isinstance(d, str) else orjson.dumps(d).decode())
                    for i, d in enumerate(docs, start=1) if d not in (None, "")]
    if whole and not multi:
        return [(1, text)]
    if whole and text.startswith("{"):
        return [(1, _compact(text))]
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _compact(document: str) -> str:
    """A JSON document as a multi-key channel stores it (compact, as models.keyring reads it back)."""
    try:
        return orjson.dumps(orjson.loads(document)).decode()
    except orjson.JSONDecodeError:
        return document


def split_keys(key: str, channel_type: int) -> list[str]:
    """One channel per line; a key that is one document (a service-account JSON) is kept whole.
    Each key is checked against the type's format."""
    numbered = _numbered(key, catalogue.provider(channel_type).key.whole, multi=False)
    check_keys([k for _, k in numbered], channel_type, [n for n, _ in numbered])
    keys = list(dict.fromkeys(k for _, k in numbered))
    if len(keys) > MAX_KEYS_PER_CREATE:
        raise ApiError("channel_too_many_keys", max=MAX_KEYS_PER_CREATE)
    return keys


def key_list(text: str, channel_type: int) -> list[str]:
    """The keys of a multi-key channel pasted in `text` (one per line, or a JSON array of documents),
    each checked against the type's format (the refusal names the line), duplicates dropped, at most
    models.keyring.MAX_KEYS of them. Documents and one-line keys are not mixed: the channel stores either a JSON array
    or lines."""
    numbered = _numbered(text, catalogue.provider(channel_type).key.whole, multi=True)
    check_keys([k for _, k in numbered], channel_type, [n for n, _ in numbered])
    keys = list(dict.fromkeys(k for _, k in numbered))
    check_storable(keys)
    if len(keys) > keyring.MAX_KEYS:
        raise ApiError("channel_keys_too_many", max=keyring.MAX_KEYS)
    return keys


def check_storable(keys: Sequence[str]) -> None:
    """The keys can be stored together (models.keyring: lines, or a JSON array when one of them is a
    document, which then all must be)."""
    documents = [k for k in keys if k.lstrip().startswith(("{", "["))]
    if not documents:
        return
    for key in documents:
        try:
            doc = orjson.loads(key)
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict):
            raise ApiError("channel_keys_mixed")
    if len(documents) != len(keys):
        raise ApiError("channel_keys_mixed")
