"""The one pager of the console's lists (api.services.paging)."""
from __future__ import annotations

import pytest

from api.errors import ApiError
from api.services.paging import Page, id_sort, read_page


def test_a_page_is_counted_from_the_routes_first_and_its_size_clamped() -> None:
    assert read_page({}, first=0) == Page(0, 10, 0)
    assert read_page({}, first=1) == Page(1, 10, 0)
    assert read_page({"p": "2", "page_size": "3"}, first=0) == Page(2, 3, 6)
    assert read_page({"p": "2", "page_size": "3"}, first=1) == Page(2, 3, 3)
    assert read_page({"p": "-4", "page_size": "1000"}, first=0) == Page(0, 100, 0)
    assert read_page({"page_size": "0"}, first=0).size == 10
    assert read_page({"size": "5", "page_size": "7"}, first=0, size_params=("size", "page_size")).size == 5


@pytest.mark.parametrize("query", [{"p": "x"}, {"p": "²"}, {"p": "9" * 30}, {"page_size": "1.5"}])
def test_a_page_that_is_no_integer_is_refused(query: dict[str, str]) -> None:
    with pytest.raises(ApiError):
        read_page(query, first=0)


def test_id_sort() -> None:
    assert id_sort({"id_sort": "true"}) and id_sort({"id_sort": "1"}) and id_sort({"id_sort": "TRUE"})
    assert not id_sort({}) and not id_sort({"id_sort": "false"})
