"""The settlement record's wire form: what one version writes, the next one reads."""
from __future__ import annotations

import orjson

from api.services.billing import pricing
from api.services.billing.records import REFUND, SettlementRecord, TokenUsage, encode_reservation, encode_settlement
from api.services.billing.request_facts import RequestFacts, answer_ms
from api.services.model_name import ModelName


def _facts() -> RequestFacts:
    facts = RequestFacts(request_id="req-1-abcd", user_id=7, username="ann", token_id=3, token_name="ci",
                         token_limited=True, group="vip", name=ModelName("gpt-4o", "gpt-4o-2024-08-06"),
                         is_stream=True, channel_id=5, used_channels=[4, 5], model_ratio=1.25, completion_ratio=4,
                         group_ratio=0.5, cache_ratio=0.5, inbound="anthropic", started=1_700_000_000.5)
    facts.first_response_ms, facts.incomplete = 321, "client closed the connection"
    return facts


def test_a_record_survives_its_wire_form() -> None:
    record = SettlementRecord.of(_facts(), 1234, TokenUsage(100, 20, cached_tokens=40, reasoning_tokens=5))
    again = SettlementRecord.decode(record.encode())
    assert again == record
    assert again.price.model_ratio == 1.25 and again.price.per_call is False


def test_a_reservation_keeps_the_request_and_what_was_taken() -> None:
    facts = _facts()
    raw = encode_reservation(facts, 900, 57)
    request, pre = SettlementRecord.decode_reservation(raw)
    assert pre == 900 and request.usage == TokenUsage(57)
    assert (request.request_id, request.token_id, request.token_limited, request.used_channels) == (
        facts.request_id, 3, True, [4, 5])
    assert "q" not in orjson.loads(raw)  # a reservation is not a charge


def test_a_refund_round_trips_and_says_what_it_gives_back() -> None:
    record = SettlementRecord("task-refund:mj:9", -500, kind=REFUND, token_id=3, channel_id=2, used_channels=[2],
                              model="mj_imagine", upstream_model="mj_imagine",
                              task_id="17", action="IMAGINE", reason="upstream failed", charged_at=1_700_000_100,
                              at=1_700_000_200.25)
    again = SettlementRecord.decode(record.encode())
    assert again == record and again.is_refund
    assert orjson.loads(record.encode())["k"] == "refund"


def test_the_previous_versions_records_are_read_field_by_field() -> None:
    """A record written before the typed encoder (the same short keys) decodes with every field; a
    key it lacks reads as the default, an integer ratio stays an integer (the log shows `15`)."""
    old = {"rid": "r1", "t": 3, "tl": 1, "c": 5, "uc": [5], "m": "gpt-4", "um": "gpt-4", "mode": "chat", "s": 0,
           "frt": 12, "tn": "k", "un": "u", "g": "default", "mr": 15, "cr": 2, "gr": 1, "mp": -1, "cra": None,
           "cwr": None, "fmt": "", "task": "", "st": 1.5, "q": 300, "p": 10, "ct": 5, "ca": 0, "rs": 0, "cw": 0,
           "ut": 2, "inc": "", "ts": 3.25}
    record = SettlementRecord.decode(orjson.dumps(old))
    assert (record.quota, record.usage, record.model_price, record.at) == (300, TokenUsage(10, 5), None, 3.25)
    assert str(record.model_ratio) == "15" and not record.is_refund
    assert orjson.loads(record.encode()) == old
    minimal = SettlementRecord.decode(b'{"rid": "r2", "q": 1}')
    assert (minimal.completion_ratio, minimal.group_ratio, minimal.mode, minimal.used_channels) == (1, 1, "chat", [])


def test_the_relays_settlement_encodes_what_the_typed_record_would() -> None:
    facts = _facts()
    usage = TokenUsage(100, 20, cached_tokens=40)
    fast = SettlementRecord.decode(encode_settlement(facts, 1234, usage))
    typed = SettlementRecord.of(facts, 1234, usage)
    assert abs(fast.at - typed.at) < 5 and fast.use_time >= 0
    fast.at, fast.use_time = typed.at, typed.use_time
    assert fast == typed


def _claude_facts() -> RequestFacts:
    """A request priced with the one-hour cache-write ratio (a snapshot of the price at request time)."""
    facts = _facts()
    facts.name = ModelName("claude-sonnet-4-5-20250929")
    facts.model_ratio, facts.completion_ratio, facts.group_ratio = 1.5, 5, 1
    facts.cache_ratio, facts.cache_creation_ratio, facts.cache_creation_1h_ratio = 0.1, 1.25, 2
    return facts


def test_one_hour_writes_and_their_ratio_travel_with_the_record() -> None:
    usage = TokenUsage(1000, 100, cached_tokens=600, cache_creation_tokens=300, cache_creation_1h_tokens=120)
    record = SettlementRecord.of(_claude_facts(), 3375, usage)
    wire = orjson.loads(record.encode())
    assert (wire["cw"], wire["cw1h"], wire["cwr"], wire["cwr1h"]) == (300, 120, 1.25, 2)
    again = SettlementRecord.decode(record.encode())
    assert again == record and again.usage.cache_creation_1h_tokens == 120
    assert again.price.cache_creation_1h_ratio == 2
    fast = SettlementRecord.decode(encode_settlement(_claude_facts(), 3375, usage))
    assert (fast.usage, fast.cache_creation_1h_ratio) == (usage, 2)


def test_a_reservation_keeps_the_one_hour_ratio_for_the_sweep() -> None:
    facts = _claude_facts()
    request, pre = SettlementRecord.decode_reservation(encode_reservation(facts, 900, 57))
    assert pre == 900 and request.cache_creation_1h_ratio == 2
    assert request.price == pricing.Price(facts.model, 1.5, 5, 1, None, 0.1, 1.25, 2)


def test_records_and_reservations_without_the_one_hour_keys_read_as_before() -> None:
    """A record of the previous version (no `cw1h`, no `cwr1h`) has no one-hour writes and bills its
    writes as it did; the keys are written only when they say something."""
    old = {"rid": "r1", "t": 3, "tl": 0, "c": 5, "uc": [5], "m": "claude-3-5-sonnet-20241022",
           "um": "claude-3-5-sonnet-20241022", "mode": "chat", "s": 1, "frt": 12, "tn": "k", "un": "u",
           "g": "default", "mr": 1.5, "cr": 5, "gr": 1, "mp": -1, "cra": 0.1, "cwr": 1.25, "fmt": "anthropic",
           "task": "", "st": 1.5, "q": 208, "p": 171, "ct": 9, "ca": 100, "rs": 0, "cw": 50, "ut": 2, "inc": "",
           "ts": 3.25}
    record = SettlementRecord.decode(orjson.dumps(old))
    assert record.usage == TokenUsage(171, 9, cached_tokens=100, cache_creation_tokens=50)
    assert record.cache_creation_1h_ratio is None
    u = record.usage
    assert pricing.settle_quota(record.price, u.prompt_tokens, u.completion_tokens, cached_tokens=u.cached_tokens,
                                cache_creation_tokens=u.cache_creation_tokens) == 208
    assert orjson.loads(record.encode()) == old
    reservation = {key: old[key] for key in old if key not in {"q", "ct", "ca", "rs", "cw", "ut", "inc", "ts"}}
    request, pre = SettlementRecord.decode_reservation(orjson.dumps({**reservation, "pre": 700}))
    assert (pre, request.usage, request.cache_creation_1h_ratio) == (700, TokenUsage(171), None)


def test_one_model_value_from_admission_to_the_record() -> None:
    """The request's ModelName: asked for (billed, answered, logged) and sent (after the mapping)."""
    asked = ModelName("gpt-4o")
    assert (asked.sent, asked.answered, asked.mapped) == ("gpt-4o", "gpt-4o", False)
    on_channel = asked.mapped_to("gpt-4o-2024-08-06")
    assert (on_channel.sent, on_channel.answered, on_channel.mapped) == ("gpt-4o-2024-08-06", "gpt-4o", True)
    facts = _facts()
    facts.name = on_channel
    record = SettlementRecord.decode(SettlementRecord.of(facts, 10).encode())
    assert (record.model, record.upstream_model) == ("gpt-4o", "gpt-4o-2024-08-06")


def test_an_answer_read_within_a_millisecond_records_one() -> None:
    """0 means no answer was read: a fast answer records 1 ms, a slower one its milliseconds."""
    assert answer_ms(100.0, 100.0) == 1
    assert answer_ms(100.0, 100.0004) == 1
    assert answer_ms(100.0, 100.0019) == 1
    assert answer_ms(100.0, 100.25) == 250
    assert answer_ms(100.0, 112.0) == 12_000
