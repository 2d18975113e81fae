"""The paging of every console list, read one way: `p` counted from 0 or 1 (per route, as its
console spec numbers it), a size from `page_size` (or the route's own names for it), clamped to
1..100 (10 when absent or not positive), and the envelope that answers it."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api.services.params import query_int

DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class Page:
    page: int  # as the client numbers it (0- or 1-based, per route)
    size: int
    offset: int

    def envelope(self, items: list[Any], total: int) -> dict[str, Any]:
        return {"items": items, "total": total, "page": self.page, "page_size": self.size}


def read_page(query: Mapping[str, str], *, first: int, size_params: tuple[str, ...] = ("page_size",)) -> Page:
    """`p` counted from `first`; the size from the first of `size_params` present, clamped to 1..100."""
    page = max(query_int(query, "p", first), first)
    size = DEFAULT_PAGE_SIZE
    for name in size_params:
        if name in query:
            size = query_int(query, name, DEFAULT_PAGE_SIZE)
            break
    if size <= 0:
        size = DEFAULT_PAGE_SIZE
    size = min(size, MAX_PAGE_SIZE)
    return Page(page, size, (page - first) * size)


def id_sort(query: Mapping[str, str]) -> bool:
    """`id_sort=true` (or 1): newest id first instead of the list's own order."""
    return query.get("id_sort", "").lower() in {"true", "1"}
