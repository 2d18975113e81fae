"""The provider catalogue as the console reads it (`GET /api/channel/types`): texts in both
languages, no function, nothing secret; built once per process (the catalogue is code)."""
from __future__ import annotations

from functools import cache
from typing import Any

from api.upstream.catalogue import CATALOGUE
from api.upstream.provider import Provider, Text


def _text(text: Text | None) -> dict[str, str] | None:
    return None if text is None else {"en": text[0], "zh": text[1]}


def view(row: Provider) -> dict[str, Any]:
    other = row.other
    return {
        "type": row.type,
        "name": row.name,
        "label": _text(row.label),
        "base_url": row.base_url,
        "base_url_required": row.base_url_required,
        "base_url_label": _text(row.base_url_label),
        "base_url_help": _text(row.base_url_help),
        "key_hint": _text(row.key.hint),
        "key_whole": row.key.whole,
        "other": None if other is None else {
            "label": _text(other.label), "default": other.default, "placeholder": other.placeholder,
            "template": other.template, "rows": other.rows,
        },
        "notice": _text(row.notice),
        "models": list(row.models),
        "fetch_models": row.fetch_models,
        "balance": row.balance,
        "task": bool(row.task),
        "organization": row.organization,
        "retired": _text(row.retired),
        "native": sorted(row.native),
        "presets": [{"name": p.name, "label": _text(p.label), "base_url": p.base_url, "models": list(p.models)}
                    for p in row.presets],
    }


@cache
def types() -> list[dict[str, Any]]:
    return [view(row) for row in CATALOGUE.values()]
