"""Limits as data: what the console takes, normalised, and what it refuses, with a message naming the
entry and the field."""
from __future__ import annotations

import pytest

from api.i18n import translate
from api.services.budgets.limits import (
    MAX_LIMITS,
    Limit,
    LimitInvalid,
    matches,
    normalise,
    normalise_group_limits,
    parse_group_limits,
    parse_limits,
)

REQUEST_EXAMPLE = [{"window": "day", "quota": 2500000}, {"window": "month", "quota": 50000000},
                   {"window": "day", "requests": 1000}, {"window": "day", "model": "gpt-5*", "requests": 100},
                   {"window": "minute", "requests": 60}, {"window": "minute", "tokens": 200000},
                   {"window": "5h", "quota": 500000, "soft": 80}]


def message(exc: LimitInvalid) -> str:
    return translate(exc.message, "en", **exc.params)


def test_the_requests_example_parses_and_normalises_to_itself() -> None:
    limits = parse_limits(REQUEST_EXAMPLE)
    assert len(limits) == 7
    assert limits[3] == Limit("day", "requests", 100, "gpt-5*")
    assert limits[6] == Limit("5h", "quota", 500000, "", 80) and limits[6].rolling_hours == 5
    assert limits[3].identity == "day@gpt-5*" and limits[0].identity == "day"
    assert parse_limits(normalise(REQUEST_EXAMPLE)) == limits
    assert normalise([]) == "" and parse_limits("") == () and parse_limits(None) == ()


@pytest.mark.parametrize(("value", "says"), [
    ("nope", "limits must be a list"),
    ({"window": "day"}, "limits must be a list"),
    ([{"window": "day", "quota": 1}, 5], "limits[1] is not an object"),
    ([{"window": "fortnight", "quota": 1}], "limits[0].window must be minute, hour, day, week, month or <N>h"),
    ([{"window": "0h", "quota": 1}], "limits[0].window"),
    ([{"window": "745h", "quota": 1}], "limits[0].window"),
    ([{"window": "01h", "quota": 1}], "limits[0].window"),
    ([{"window": "day"}], "limits[0] names no measure"),
    ([{"window": "day", "quota": 1, "tokens": 2}], "limits[0] names quota and tokens: one measure per limit"),
    ([{"window": "day", "quota": 1.5}], "limits[0].quota must be an integer"),
    ([{"window": "day", "quota": -1}], "limits[0].quota must be an integer"),
    ([{"window": "day", "requests": True}], "limits[0].requests must be an integer"),
    ([{"window": "day", "tokens": "10"}], "limits[0].tokens must be an integer"),
    ([{"window": "day", "quota": 1, "colour": "red"}], "limits[0].colour is not a field of a limit"),
    ([{"window": "day", "quota": 1, "soft": 0}], "limits[0].soft must be an integer percentage from 1 to 100"),
    ([{"window": "day", "quota": 1, "soft": 101}], "limits[0].soft"),
    ([{"window": "day", "quota": 1, "soft": 50.0}], "limits[0].soft"),
    ([{"window": "day", "quota": 1, "model": 7}], "limits[0].model must be a model name"),
    ([{"window": "day", "quota": 1, "model": "m" * 129}], "limits[0].model"),
    ([{"window": "day", "quota": 1}] * (MAX_LIMITS + 1), f"has {MAX_LIMITS + 1} limits: at most {MAX_LIMITS}"),
])
def test_a_bad_limit_is_refused_with_a_message_naming_it(value: object, says: str) -> None:
    with pytest.raises(LimitInvalid) as caught:
        parse_limits(value)
    assert says in message(caught.value)


def test_the_second_entry_is_named_when_it_is_the_bad_one() -> None:
    with pytest.raises(LimitInvalid) as caught:
        parse_limits([{"window": "day", "quota": 1}, {"window": "week", "requests": -3}])
    assert message(caught.value).startswith("limits[1].requests")


def test_group_limits_name_the_group() -> None:
    assert parse_group_limits('{"vip": [{"window": "day", "quota": 5}]}') == {"vip": (Limit("day", "quota", 5),)}
    with pytest.raises(LimitInvalid) as caught:
        parse_group_limits({"vip": [{"window": "day", "quota": 5}], "free": [{"window": "day"}]})
    assert message(caught.value).startswith("GroupLimits.free[0] names no measure")
    with pytest.raises(LimitInvalid):
        parse_group_limits("[1]")
    assert normalise_group_limits({"vip": [{"soft": 50, "quota": 5, "window": "day"}]}) == \
        '{"vip":[{"window":"day","quota":5,"soft":50}]}'


def test_a_model_pattern_matches_what_it_spells() -> None:
    assert matches("", "anything") and matches("gpt-5", "gpt-5") and not matches("gpt-5", "gpt-5-mini")
    assert matches("gpt-5*", "gpt-5-mini") and not matches("gpt-5*", "gpt-4o")
    assert matches("*-mini", "gpt-5-mini") and matches("claude-*-4*", "claude-opus-4-5")
    assert not matches("claude-*-4*", "claude-opus-3") and not matches("a.c*", "abc")
