"""The figures of bench/agent_cache.py, computed from what it collected (pure functions, no I/O).

Inputs: the client's turns (bench/agent_sessions.Turn as dicts), the fake upstream's records (one per
answered request: upstream, key, session, prompt, cached and ideal cached tokens), and the gateway's
consume logs of the phase (request id, channel, quota, tokens, `other`).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bench.agent_sessions import family, kind_of

Row = Mapping[str, Any]


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def cache_figures(records: Iterable[Row]) -> dict[str, Any]:
    """The cached share of the input and of the requests; the ideal (every turn after a session's
    first finds its whole previous prompt) and measured ÷ ideal over those turns; the one-key bound.

    A first turn can hit what sessions share (tools, the agent's system prompt), which the ideal
    does not count: measured ÷ ideal is taken over the follow-up turns only, where it is ≤ 100 %."""
    rows = list(records)
    follow = [r for rs in served_by(rows).values() for r in rs[1:]]
    prompt = sum(r["prompt_tokens"] for r in rows)
    cached = sum(r["cached_tokens"] for r in rows)
    ideal = sum(r["ideal_cached_tokens"] for r in rows)
    bound = sum(r["bound_cached_tokens"] for r in rows)
    follow_cached = sum(r["cached_tokens"] for r in follow)
    hits = sum(1 for r in rows if r["cached_tokens"] > 0)
    ideal_hits = sum(1 for r in rows if r["ideal_cached_tokens"] > 0)
    return {"requests": len(rows), "prompt_tokens": prompt, "cached_tokens": cached, "ideal_cached_tokens": ideal,
            "bound_cached_tokens": bound, "creation_tokens": sum(r.get("creation_tokens", 0) for r in rows),
            "cached_share": _share(cached, prompt), "ideal_share": _share(ideal, prompt),
            "bound_share": _share(bound, prompt), "of_bound": _share(cached, bound),
            "follow_ups": len(follow), "follow_cached_tokens": follow_cached,
            "of_ideal": _share(follow_cached, sum(r["ideal_cached_tokens"] for r in follow)),
            "hit_requests": hits, "ideal_hit_requests": ideal_hits,
            "hit_share": _share(hits, len(rows)), "ideal_hit_share": _share(ideal_hits, len(rows)),
            "follow_hit_share": _share(sum(1 for r in follow if r["cached_tokens"] > 0), len(follow))}


def by_family(records: Iterable[Row]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in records:
        groups[family(kind_of(r["session"]))].append(r)
    return {name: cache_figures(rows) for name, rows in sorted(groups.items())}


def served_by(records: Iterable[Row]) -> dict[str, list[Row]]:
    """Session → its answered requests in arrival order (a session's turns are sequential)."""
    out: dict[str, list[Row]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r["at"]):
        out[r["session"]].append(r)
    return dict(out)


def turn_servers(turns: Iterable[Row], records: Iterable[Row]) -> dict[tuple[str, int], Row]:
    """(session, turn) → the fake's record of the request that answered it: a session's answered
    turns, in order, are its records in arrival order (a failed attempt on a failing upstream
    leaves no record)."""
    by_session = served_by(records)
    ok: dict[str, list[int]] = defaultdict(list)
    for t in turns:
        if t["ok"]:
            ok[t["session"]].append(t["turn"])
    out: dict[tuple[str, int], Row] = {}
    for session, numbers in ok.items():
        for number, record in zip(sorted(numbers), by_session.get(session, ()), strict=False):
            out[(session, number)] = record
    return out


def stickiness(records: Iterable[Row]) -> dict[str, Any]:
    """How often a session's request went to the key (and the upstream) of its previous one."""
    same_key = same_upstream = follow_ups = 0
    keys_per_session: list[int] = []
    for rows in served_by(records).values():
        keys_per_session.append(len({r["key"] for r in rows}))
        for before, after in zip(rows, rows[1:], strict=False):
            follow_ups += 1
            same_key += before["key"] == after["key"]
            same_upstream += before["upstream"] == after["upstream"]
    return {"follow_ups": follow_ups, "same_key_share": _share(same_key, follow_ups),
            "same_upstream_share": _share(same_upstream, follow_ups),
            "keys_per_session_max": max(keys_per_session, default=0),
            "keys_per_session_mean": _share(sum(keys_per_session), len(keys_per_session))}


def spread(records: Iterable[Row]) -> dict[str, int]:
    """Requests per key (the load each key carried)."""
    return dict(sorted(Counter(r["key"] for r in records).items()))


def sessions_per_key(records: Iterable[Row], keys: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
    """Per protocol: the fewest and most sessions a key served, and the keys that served none
    (`keys`: protocol → every key of its channels)."""
    sessions: dict[str, set[str]] = defaultdict(set)
    for r in records:
        sessions[r["key"]].add(r["session"])
    out: dict[str, dict[str, int]] = {}
    for fam, names in sorted(keys.items()):
        counts = [len(sessions.get(k, ())) for k in names]
        out[fam] = {"keys": len(counts), "min": min(counts, default=0), "max": max(counts, default=0),
                    "unused": sum(1 for c in counts if c == 0)}
    return out


def client_figures(turns: Sequence[Row]) -> dict[str, Any]:
    failed = [t for t in turns if not t["ok"]]
    return {"requests": len(turns), "ok": len(turns) - len(failed), "failed": len(failed),
            "failures": Counter(f"{t['status']} {t['error'][:80]}" for t in failed).most_common(5),
            "prompt_tokens": sum(t["prompt_tokens"] for t in turns),
            "cached_tokens": sum(t["cached_tokens"] for t in turns)}


def log_figures(turns: Sequence[Row], logs: Sequence[Row]) -> dict[str, Any]:
    """What the gateway recorded: quota, tokens, and the affinity fields of `other` when present."""
    by_rid = {str(row["request_id"] or "").rsplit("-", 1)[0]: row for row in logs}
    sources: dict[str, Counter[str]] = defaultdict(Counter)
    affinity: Counter[str] = Counter()
    matched = 0
    for t in turns:
        row = by_rid.get(t["request_id"])
        if row is None:
            continue
        matched += 1
        other = row["other"]
        sources[t["kind"]][str(other.get("session_source", "–"))] += 1
        affinity[str(other.get("affinity", "–"))] += 1
    return {"logs": len(logs), "matched": matched, "quota": sum(row["quota"] for row in logs),
            "prompt_tokens": sum(row["prompt_tokens"] for row in logs),
            "cached_tokens": sum(int(row["other"].get("cache_tokens") or 0) for row in logs),
            "session_source": {k: dict(v) for k, v in sorted(sources.items())}, "affinity": dict(affinity),
            "key_index_logged": sum(1 for row in logs if "key_index" in row["other"])}


def foreign_hits(turns: Sequence[Row], records: Sequence[Row], logs: Sequence[Row]) -> dict[str, Any]:
    """Requests the gateway logged as an affinity `hit` that went to another key or channel than the
    session's previous request: the pin they followed was not their own (two sessions sharing one
    pin: when one moves, the other follows). Should be none."""
    servers = turn_servers(turns, records)
    by_rid = {str(row["request_id"] or "").rsplit("-", 1)[0]: row for row in logs}
    found: list[str] = []
    for t in turns:
        row, now = by_rid.get(t["request_id"]), servers.get((t["session"], t["turn"]))
        before = servers.get((t["session"], t["turn"] - 1))
        if row is None or now is None or before is None or row["other"].get("affinity") != "hit":
            continue
        if (now["upstream"], now["key"]) != (before["upstream"], before["key"]):
            found.append(f"{t['session']} turn {t['turn']}")
    return {"count": len(found), "sessions": sorted({f.split(" turn ")[0] for f in found}), "examples": found[:5]}


def failover_figures(turns: Sequence[Row], records: Sequence[Row], logs: Sequence[Row], failed_at: int,
                     failing: Mapping[str, str], channel_upstream: Mapping[int, str]) -> dict[str, Any]:
    """Sessions pinned to a failing upstream (it answered their turn `failed_at`): did they move
    within one request, without a failure reaching the client?

    `failing`: family → the upstream made to fail after turn `failed_at`; `channel_upstream`:
    channel id → upstream (the logs name channels: `other.admin_info.use_channel` lists every
    channel a request tried, the serving one last)."""
    servers = turn_servers(turns, records)
    by_rid = {str(row["request_id"] or "").rsplit("-", 1)[0]: row for row in logs}
    dead = set(failing.values())
    sessions = sorted({t["session"] for t in turns})
    pinned = [s for s in sessions if (servers.get((s, failed_at)) or {}).get("upstream") == failing.get(
        family(kind_of(s)))]
    turn_of = {(t["session"], t["turn"]): t for t in turns}

    def tried_dead(session: str, number: int) -> int:
        row = by_rid.get((turn_of.get((session, number)) or {}).get("request_id", ""))
        if row is None:
            return 0
        used = (row["other"].get("admin_info") or {}).get("use_channel") or []
        return sum(1 for c in used if channel_upstream.get(int(c)) in dead)

    later = sorted({t["turn"] for t in turns if t["turn"] > failed_at})
    moved = recovered = 0
    attempts_on_dead: list[int] = []
    for s in pinned:
        nxt = servers.get((s, failed_at + 1))
        if nxt is not None and nxt["upstream"] not in dead:
            moved += 1
        after = servers.get((s, failed_at + 2))
        if nxt is not None and after is not None and after["key"] == nxt["key"] and after["cached_tokens"] > 0:
            recovered += 1
        attempts_on_dead.append(sum(tried_dead(s, n) for n in later))
    others = [s for s in sessions if s not in pinned]
    client_failed = [t for t in turns if not t["ok"]]
    return {"failed_after_turn": failed_at, "failing": dict(failing), "sessions": len(sessions),
            "pinned": len(pinned), "moved_next_turn": moved, "cache_back_turn_after": recovered,
            "attempts_on_failed_max": max(attempts_on_dead, default=0),
            "attempts_on_failed_total": sum(attempts_on_dead),
            "pinned_moved_within_one": sum(1 for n in attempts_on_dead if n <= 1),
            "others_touching_failed": sum(1 for s in others if any(tried_dead(s, n) for n in later)),
            "foreign_hits": foreign_hits(turns, records, logs)["count"],
            "client_failures": len(client_failed),
            "client_failures_after": sum(1 for t in client_failed if t["turn"] > failed_at),
            "logs_matched": sum(1 for t in turns if t["request_id"] in by_rid)}
