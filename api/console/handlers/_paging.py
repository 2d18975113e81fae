"""Query parameters of the console's list routes (a helper: routes.py skips `_` modules)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from api.errors import ApiError
from api.services.params import MAX_INT, is_integer_text

DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class Page:
    page: int  # as the client numbers it (0- or 1-based, per route)
    size: int
    offset: int

    def envelope(self, items: list[Any], total: int) -> dict[str, Any]:
        return {"items": items, "total": total, "page": self.page, "page_size": self.size}


def query_int(request: web.Request, name: str, default: int) -> int:
    raw = request.query.get(name, "").strip()
    if raw == "":
        return default
    if not is_integer_text(raw) or not -MAX_INT <= int(raw) <= MAX_INT:
        raise ApiError("invalid_param", name=name)
    return int(raw)


def read_page(request: web.Request, *, first: int, size_params: tuple[str, ...] = ("page_size",)) -> Page:
    """`p` counted from `first`; the size from the first of `size_params` present, clamped to 1..100."""
    page = max(query_int(request, "p", first), first)
    size = DEFAULT_PAGE_SIZE
    for name in size_params:
        if name in request.query:
            size = query_int(request, name, DEFAULT_PAGE_SIZE)
            break
    if size <= 0:
        size = DEFAULT_PAGE_SIZE
    size = min(size, MAX_PAGE_SIZE)
    return Page(page, size, (page - first) * size)
