"""The integer rules of api.services.params: what a path, a query and a JSON body may call an integer."""
from __future__ import annotations

import pytest

from api.errors import ApiError
from api.services.params import MAX_ID, id_value, int_value, loose_int, query_int


def test_an_id_is_ascii_digits_that_fit_an_id_column() -> None:
    assert id_value("12") == 12 and id_value(str(MAX_ID)) == MAX_ID
    assert [id_value(t) for t in ("0", "-3", "+3", "²", "٣", "1_0", str(MAX_ID + 1), "9" * 30, "")] == [None] * 9


def test_a_query_integer_has_a_default_and_refuses_what_is_no_integer() -> None:
    assert query_int({}, "p", 7) == 7 and query_int({"p": " "}, "p", 7) == 7
    assert query_int({"p": " -5 "}, "p", 0) == -5
    for text in ("x", "²", "+5", "1.0", "9" * 20):
        with pytest.raises(ApiError):
            query_int({"p": text}, "p", 0)


def test_a_json_integer_is_an_int_an_integral_float_or_digits() -> None:
    assert int_value(5, "n") == int_value(5.0, "n") == int_value(" 5 ", "n") == 5
    for value in (True, 5.5, "5.0", "x", None, 2 ** 63):
        with pytest.raises(ApiError):
            int_value(value, "n")


def test_a_channel_form_number_may_be_numeric_text_or_a_boolean() -> None:
    assert loose_int(5, "n") == loose_int("5.0", "n") == loose_int(" 5", "n") == 5
    assert loose_int("1e3", "n") == 1000 and loose_int(True, "n") == 1 and loose_int(False, "n") == 0
    for value in (5.5, "x", None, "nan", "inf", [1]):
        with pytest.raises(ApiError):
            loose_int(value, "n")
