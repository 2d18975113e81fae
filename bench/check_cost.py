"""What checking a request body costs, timed in-process (CPU time of this process, not wall time).

A 17 KB Claude Code request (tests/relay/fuzz/samples.py) checked as sent and once converted
(AnthropicInbound.check, then check_body with check_chat), against a bare Python walk over the same
JSON nodes measured in the same run, interleaved: the ratio stays put on a busy machine, the
microseconds do not. tests/relay/fuzz/test_check_cost.py bounds the same work in counted steps.

    .venv/bin/python -m bench.check_cost [--repeat 7] [--number 200]
"""
from __future__ import annotations

import argparse
import time
import timeit
from typing import Any

from api.relay.inbound.anthropic import AnthropicInbound
from api.relay.validate import check_body, check_chat
from tests.relay.fuzz.samples import claude_code_request


def _walk(value: Any) -> int:
    if type(value) is dict:
        return 1 + sum(_walk(item) for item in value.values())
    if type(value) is list:
        return 1 + sum(_walk(item) for item in value)
    return 1


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.check_cost", description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7, help="rounds; the best of each is kept (default 7)")
    p.add_argument("--number", type=int, default=200, help="checks per round (default 200)")
    args = p.parse_args(argv)
    body = claude_code_request()
    converted = AnthropicInbound(body, None).openai

    def check() -> None:
        AnthropicInbound.check(body)
        check_body(converted, check_chat)

    def walk() -> None:
        _walk(body)
        _walk(converted)

    best = {"check": float("inf"), "walk": float("inf")}
    for _ in range(args.repeat):  # interleaved: both see the same machine
        for name, run in (("check", check), ("walk", walk)):
            spent = timeit.timeit(run, number=args.number, timer=time.process_time) / args.number
            best[name] = min(best[name], spent)
    print(f"check of a 17 KB Claude Code request (as sent and converted): {best['check'] * 1e6:.0f} µs of CPU; "
          f"a bare walk over its nodes {best['walk'] * 1e6:.0f} µs; ratio {best['check'] / best['walk']:.2f}")


if __name__ == "__main__":
    main()
