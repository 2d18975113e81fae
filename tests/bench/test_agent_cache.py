"""bench/agent_cache.py: its figures on made-up records, and the whole run at its smallest size
against the real gateway (`python -m bench.agent_cache --tiny`): the report's structure and, on
every request the fake answered, the cache arithmetic. Nothing here asserts a timing or a target."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import cache_figures
from bench.agent_sessions import Shape, family, kind_of, new_sessions
from bench.prompt_cache import BLOCK_TOKENS, MIN_CACHED_TOKENS

ROOT = Path(__file__).resolve().parent.parent.parent


def record(session: str, at: float, upstream: str, key: str, cached: int, ideal: int, prompt: int = 4000,
           bound: int | None = None) -> dict[str, Any]:
    return {"session": session, "at": at, "upstream": upstream, "key": key, "prompt_tokens": prompt,
            "cached_tokens": cached, "ideal_cached_tokens": ideal,
            "bound_cached_tokens": cached if bound is None else bound, "creation_tokens": 0}


def turn(session: str, number: int, ok: bool = True, rid: str = "") -> dict[str, Any]:
    return {"session": session, "kind": kind_of(session), "turn": number, "ok": ok, "status": 200 if ok else 500,
            "error": "" if ok else "boom", "request_id": rid or f"{session}-{number}", "prompt_tokens": 0,
            "cached_tokens": 0}


def test_cache_figures_take_measured_over_ideal_on_follow_up_turns() -> None:
    a, b = "on.000.user", "on.001.user"
    rows = [record(a, 1, "o1", "k1", 1024, 0, bound=1024),  # a first turn hitting the shared prefix
            record(a, 2, "o1", "k1", 3968, 3968), record(b, 3, "o2", "k2", 0, 0), record(b, 4, "o3", "k3", 0, 3968)]
    fig = cache_figures.cache_figures(rows)
    assert fig["follow_ups"] == 2 and fig["of_ideal"] == pytest.approx(3968 / 7936)
    assert fig["cached_share"] == pytest.approx((1024 + 3968) / 16000)
    assert fig["hit_share"] == 0.5 and fig["follow_hit_share"] == 0.5
    sticky = cache_figures.stickiness(rows)
    assert sticky["same_key_share"] == 0.5 and sticky["keys_per_session_max"] == 2


def test_failover_figures_count_moves_and_tries_of_the_failing_channel() -> None:
    pinned, other = "f.000.header", "f.001.prefix"
    turns = [turn(s, n) for s in (pinned, other) for n in (1, 2, 3, 4)]
    records = [record(pinned, 1, "o1", "k1", 0, 0), record(pinned, 2, "o1", "k1", 2048, 2048),
               record(pinned, 3, "o2", "k5", 0, 2048), record(pinned, 4, "o2", "k5", 2048, 2048),
               record(other, 1, "o3", "k9", 0, 0), record(other, 2, "o3", "k9", 2048, 2048),
               record(other, 3, "o3", "k9", 2048, 2048), record(other, 4, "o3", "k9", 2048, 2048)]
    channels = {1: "o1", 2: "o2", 3: "o3"}

    def log(session: str, number: int, used: list[int]) -> dict[str, Any]:
        return {"request_id": f"{session}-{number}-abcd1234", "other": {"admin_info": {"use_channel": used}}}

    logs = [log(pinned, 3, [1, 2]), log(pinned, 4, [2]), log(other, 3, [3]), log(other, 4, [3])]
    fig = cache_figures.failover_figures(turns, records, logs, 2, {"openai": "o1"}, channels)
    assert fig["pinned"] == 1 and fig["moved_next_turn"] == 1 and fig["cache_back_turn_after"] == 1
    assert fig["attempts_on_failed_max"] == 1 and fig["pinned_moved_within_one"] == 1
    assert fig["others_touching_failed"] == 0 and fig["client_failures"] == 0 and fig["logs_matched"] == 4


def test_foreign_hits_are_logged_hits_on_another_key_than_the_previous_request() -> None:
    a, b = "on.000.prefix", "on.001.prefix"
    turns = [turn(s, n) for s in (a, b) for n in (1, 2, 3)]
    records = [record(a, 1, "o1", "k1", 0, 0), record(a, 2, "o1", "k1", 2048, 2048),
               record(a, 3, "o1", "k1", 2048, 2048), record(b, 1, "o2", "k5", 0, 0),
               record(b, 2, "o1", "k1", 0, 2048), record(b, 3, "o1", "k1", 2048, 2048)]  # b follows a's pin
    outcomes = {(a, 1): "new", (a, 2): "hit", (a, 3): "hit", (b, 1): "new", (b, 2): "hit", (b, 3): "hit"}
    logs = [{"request_id": f"{s}-{n}-00ff00ff", "other": {"affinity": o}} for (s, n), o in outcomes.items()]
    found = cache_figures.foreign_hits(turns, records, logs)
    assert found["count"] == 1 and found["examples"] == [f"{b} turn 2"]


def test_sessions_cover_every_kind_and_grow_turn_by_turn() -> None:
    sessions = new_sessions("p", 5, Shape(turns=2, user_tokens=100))
    assert {family(s.kind) for s in sessions} == {"openai", "anthropic"}
    tools: list[dict[str, Any]] = []
    first = [s.request(1, tools) for s in sessions]
    assert [kind_of(s.sid) for s in sessions] == [s.kind for s in sessions]
    claude = next(body for path, _h, body in first if path == "/v1/messages")
    assert claude["metadata"]["user_id"].split("_session_")[1]
    assert claude["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    header = next(h for (_p, h, _b), s in zip(first, sessions, strict=True) if s.kind == "header")
    assert header["X-Session-Id"].startswith("p.")
    sessions[0].history += [("user", sessions[0].user_message(1)), ("assistant", "done")]
    _p, _h, body = sessions[0].request(2, tools)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]


# -- the whole run, tiny ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / "api" / "relay" / "handler.py").exists(), reason="no relay pipeline to measure")
def test_tiny_run_reports_every_figure_and_the_fake_counts_right() -> None:
    env = dict(os.environ)
    if env.get("TEST_PG_URL"):
        env.setdefault("BENCH_PG_URL", env["TEST_PG_URL"])
    proc = subprocess.run([sys.executable, "-m", "bench.agent_cache", "--tiny", "--max-minutes", "8"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    output = proc.stdout[-8000:] + "\n" + proc.stderr[-4000:]
    assert proc.returncode == 0, output
    found = re.search(r"logs and report in (\S+)", proc.stdout)
    assert found, output
    out = Path(found.group(1))
    results = json.loads((out / "results.json").read_text())
    assert "measured ÷ ideal" in (out / "report.md").read_text()

    for phase in ("off", "on"):
        figures = results[phase]
        assert figures["client"]["requests"] == 5 * 4
        for name in ("cached_share", "ideal_share", "of_ideal", "hit_share", "bound_share", "of_bound"):
            assert name in figures["cache"], name
        assert set(figures["by_family"]) == {"openai", "anthropic"}
        assert figures["logs"]["quota"] > 0 and "cpu_ms_per_request" in figures
    assert [r["mode"] for r in results["failover"]] == ["500", "refuse"]
    for rnd in results["failover"]:
        assert {"pinned", "moved_next_turn", "client_failures", "attempts_on_failed_max"} <= set(rnd)
    assert set(results["cpu"]) >= {"off_ms", "on_ms", "on_over_off"}

    for raw_file in sorted((out / "raw").glob("*.json")):
        raw = json.loads(raw_file.read_text())
        servers = cache_figures.turn_servers(raw["turns"], raw["records"])
        for rec in raw["records"]:
            cached, prompt = rec["cached_tokens"], rec["prompt_tokens"]
            assert cached <= rec["bound_cached_tokens"] <= prompt, rec  # no key beats the shared cache
            assert cached == 0 or cached >= MIN_CACHED_TOKENS, rec
            if family(kind_of(rec["session"])) == "openai":
                assert cached % BLOCK_TOKENS == 0, rec
        for t in raw["turns"]:  # what the client was told is what the fake answered (usage passed on)
            rec = servers.get((t["session"], t["turn"]))
            if t["ok"] and rec is not None:
                assert (t["prompt_tokens"], t["cached_tokens"]) == (rec["prompt_tokens"], rec["cached_tokens"]), t
