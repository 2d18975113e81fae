"""What checking a body costs, counted rather than timed: a 17 KB Claude Code request is checked as sent
and once converted (AnthropicInbound.check, then check_body with check_chat) in a few Python lines and
calls per JSON node of the body each one walks, and a body four times as large costs no more than four times
as much (one walk, nothing quadratic). Counts of what the interpreter ran are the same on an idle and
on a busy machine; the time it takes is a figure of `python -m bench.check_cost` (~75 µs of CPU here,
about what a bare Python walk over the same nodes costs)."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import orjson

from api.relay.inbound.anthropic import AnthropicInbound
from api.relay.validate import check_body, check_chat
from tests.relay.fuzz.samples import claude_code_request

# Per JSON node of the body each check walks (measured, for each: 5.9 lines, 0.6 Python calls, 1.1 and
# 1.2 builtin calls): half again as much, so a second pass over a body, a copy or a conversion inside a
# check fails the test.
LINES_PER_NODE = 9
PYTHON_CALLS_PER_NODE = 0.9
BUILTIN_CALLS_PER_NODE = 1.7


@dataclass(frozen=True, slots=True)
class Work:
    lines: int  # Python lines executed
    python_calls: int  # Python functions entered
    builtin_calls: int  # functions written in C called (isinstance, dict.get…)


def counted(run: Callable[[], Any]) -> Work:
    """What the interpreter did for one `run()`: lines and calls by sys.settrace, C calls by
    sys.setprofile (each in a run of its own: one hook at a time). A tracer already installed
    (coverage) is put back."""
    lines = calls = builtins = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines, calls
        if event == "line":
            lines += 1
        elif event == "call":
            calls += 1
        return trace

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal builtins
        if event == "c_call":
            builtins += 1

    tracer = sys.gettrace()
    sys.settrace(trace)
    try:
        run()
    finally:
        sys.settrace(tracer)
    profiler = sys.getprofile()
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(profiler)
    return Work(lines, calls, builtins)


def nodes(value: Any) -> int:
    """JSON values in `value`, itself included."""
    if isinstance(value, dict):
        return 1 + sum(nodes(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(nodes(item) for item in value)
    return 1


def grown(body: dict[str, Any], times: int) -> dict[str, Any]:
    """The same request with its tools and its conversation `times` over (the tools renamed)."""
    tools = [{**tool, "name": f"{tool['name']}_{n}"} for n in range(times) for tool in body["tools"]]
    return {**body, "tools": tools, "messages": body["messages"] * times}


def check_work(body: dict[str, Any]) -> list[tuple[str, Work, int]]:
    """What each check costs — `body` as sent, then once converted — and how many nodes it walks."""
    converted = AnthropicInbound(body, None).openai
    checks: list[tuple[str, Callable[[], None], int]] = [
        ("as sent", lambda: AnthropicInbound.check(body), nodes(body)),
        ("converted", lambda: check_body(converted, check_chat), nodes(converted)),
    ]
    for _, run, _ in checks:
        run()  # accepted as it is (a refusal would cost less and prove nothing)
    return [(name, counted(run), size) for name, run, size in checks]


def test_a_claude_code_request_is_checked_in_a_few_steps_per_node() -> None:
    body = claude_code_request()
    assert 16_000 < len(orjson.dumps(body)) < 20_000
    for name, work, size in check_work(body):
        assert work.lines > 0 and work.python_calls > 0, name  # the counting saw the check run
        assert work.lines <= LINES_PER_NODE * size, (name, work, size)
        assert work.python_calls <= PYTHON_CALLS_PER_NODE * size, (name, work, size)
        assert work.builtin_calls <= BUILTIN_CALLS_PER_NODE * size, (name, work, size)


def test_a_body_four_times_as_large_costs_at_most_four_times_as_much() -> None:
    body = claude_code_request()
    for (name, work, size), (_, large, large_size) in zip(check_work(body), check_work(grown(body, 4)), strict=True):
        grew = large_size / size
        assert grew > 3.5, (name, grew)
        assert large.lines <= 1.1 * grew * work.lines, (name, work, large, grew)
        assert large.python_calls + large.builtin_calls <= 1.1 * grew * (work.python_calls + work.builtin_calls), \
            (name, work, large, grew)
