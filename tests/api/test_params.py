"""The integer rules of api.services.params: what a path, a query and a JSON body may call an integer."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from api.errors import ApiError
from api.services.params import (
    MAX_ID,
    QUOTA_BOUND,
    body_id,
    body_ids,
    id_value,
    int_value,
    json_int,
    loose_int,
    positive_int,
    query_int,
    quota_value,
    row_id,
)


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


def test_a_json_integer_is_decoded_by_one_rule_and_bounded_by_its_caller() -> None:
    assert json_int(5) == json_int(5.0) == json_int(" 5 ") == json_int("005") == 5 and json_int("-5") == -5
    assert json_int(10 ** 30) == 10 ** 30 and json_int("9" * 19) == int("9" * 19)
    not_integers = (True, False, 5.5, "5.0", "+5", "1_000", "٣", "５", "x", "", None, [5], float("nan"), float("inf"))
    assert [json_int(v) for v in not_integers] == [None] * len(not_integers)


def _refused(rule: Callable[[object], int], value: object) -> str:
    with pytest.raises(ApiError) as caught:
        rule(value)
    return caught.value.message


def test_a_quota_is_a_json_integer_smaller_in_size_than_2_to_the_62() -> None:
    assert quota_value(5) == quota_value("5") == quota_value(5.0) == quota_value(" 5 ") == 5
    assert quota_value(-5) == -5 and quota_value(QUOTA_BOUND - 1) == QUOTA_BOUND - 1
    for value in (True, 5.5, "5.0", "x", None, QUOTA_BOUND, -QUOTA_BOUND, float(QUOTA_BOUND), 10 ** 30):
        assert _refused(quota_value, value) == "quota_invalid", value


def test_a_quota_in_text_follows_the_integer_rule_not_python_int() -> None:
    """The old rule was int(text): "+5", "1_000" (a Python literal) and other scripts' digits were a
    quota there and nowhere else (int_value refuses them for a token's or a code's quota). A bug."""
    for text in ("+5", "1_000", "٣", "５", "0" * 20 + "5"):
        assert _refused(quota_value, text) == "quota_invalid", text


def test_a_count_from_one_has_a_default_for_absent_and_zero() -> None:
    assert positive_int(None, "page", 1) == 1 and positive_int(0, "page", 1) == 1
    assert positive_int(7, "page", 1) == 7 and positive_int(10 ** 30, "page", 1) == 10 ** 30
    for value in (True, -1, 1.0, 2.5, "2", [2]):
        with pytest.raises(ApiError, match="invalid_param"):
            positive_int(value, "page", 1)


def test_a_count_from_one_refuses_false_and_a_float_zero() -> None:
    """The old rule (`value == 0` → default) took false and 0.0 for 0, while true and 1.0 were
    refused: a boolean or a float is no page number (new-api's decoder refuses both too). A bug."""
    for value in (False, 0.0, -0.0):
        with pytest.raises(ApiError, match="invalid_param"):
            positive_int(value, "page", 1)


def test_a_body_id_is_a_json_integer_that_fits_an_id_column() -> None:
    assert body_id(1) == 1 and body_id(MAX_ID) == MAX_ID
    for value in (0, -1, True, False, "1", 1.0, None, [1]):
        with pytest.raises(ApiError, match="invalid_param"):
            body_id(value)


def test_a_body_id_no_row_can_have_never_reaches_the_database() -> None:
    """The old rule took any integer above 0: an id past the 32-bit column was "not found" on SQLite
    and a 400 "out of range" from PostgreSQL. A bug: now it is an invalid parameter on both."""
    for value in (MAX_ID + 1, 3_000_000_000, 2 ** 63):
        with pytest.raises(ApiError, match="invalid_param"):
            body_id(value)


def test_a_list_of_ids_holds_body_ids_only() -> None:
    assert body_ids([1, MAX_ID]) == [1, MAX_ID]
    for values in ([0], [MAX_ID + 1], [1, True], [1, "2"], [None]):
        with pytest.raises(ApiError, match="invalid_param"):
            body_ids(values)
    assert row_id(5) == 5 and row_id(MAX_ID + 1) is None and row_id(True) is None
