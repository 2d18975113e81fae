"""The relay's own affinity work per request, timed in-process on the workload's bodies.

The gateway's CPU per request, affinity on ÷ off (bench/agent_cache.py's cpu rounds), varies by more
than the affinity code can cost on a shared machine. This times that code alone: finding the session
(`api.relay.affinity.session_of`: the ids clients send, else the digest of the stable prefix) on the
requests the sessions send, already parsed as the relay holds them. The pin itself is read by the
admission script the request runs anyway and written only when a session gets a new channel or key.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from bench.agent_sessions import Session

REPEAT = 50


def session_cost_us(sessions: Sequence[Session], tools: dict[str, list[dict[str, Any]]], turn: int
                    ) -> dict[str, float] | None:
    """Microseconds per request of `session_of`, by client kind (None: no affinity code in the tree)."""
    try:
        from aiohttp.test_utils import make_mocked_request

        from api.relay.affinity import session_of
        from api.upstream.base import RelayMode
    except ImportError:
        return None
    by_kind: dict[str, list[float]] = {}
    calls = []
    for session in sessions:
        path, headers, body = session.request(turn, tools[session.family])
        calls.append((session.kind, make_mocked_request("POST", path, headers=headers), body))
    for _kind, request, body in calls:  # warm up: the first call of a process pays for more than the work
        session_of(request, RelayMode.CHAT, body, body, 300)
    for kind, request, body in calls:
        started = time.perf_counter()
        for _ in range(REPEAT):
            session_of(request, RelayMode.CHAT, body, body, 300)
        by_kind.setdefault(kind, []).append((time.perf_counter() - started) / REPEAT * 1e6)
    return {kind: sum(v) / len(v) for kind, v in sorted(by_kind.items())}
