"""The Markdown report of bench/agent_cache.py, from its results (the dict saved as results.json)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TARGET_OF_IDEAL = 0.90  # the target: with affinity, at least 90 % of the ideal cache hits

R = Mapping[str, Any]


def pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value * 100:.{digits}f} %"


def num(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or not b else f"{a / b:.2f}×"


def _spread(spread: Mapping[str, int]) -> str:
    counts = list(spread.values())
    return f"{min(counts)}–{max(counts)} over {len(counts)} keys" if counts else "–"


def main_table(off: R, on: R) -> str:
    rows = ["| | affinity off | affinity on |", "|---|---|---|"]

    def row(label: str, render) -> None:
        rows.append(f"| {label} | {render(off)} | {render(on)} |")

    row("requests (failed to the client)", lambda p: f"{p['client']['requests']} ({p['client']['failed']})")
    row("input tokens (the fake's count)", lambda p: num(p["cache"]["prompt_tokens"]))
    row("**cached share of input tokens**", lambda p: pct(p["cache"]["cached_share"]))
    row("ideal cached share¹", lambda p: pct(p["cache"]["ideal_share"]))
    row("**measured ÷ ideal** (turns after a session's first)", lambda p: pct(p["cache"]["of_ideal"]))
    row("requests that hit: all / after a session's first (ideal)",
        lambda p: f"{pct(p['cache']['hit_share'])} / {pct(p['cache']['follow_hit_share'])} "
                  f"({pct(p['cache']['ideal_hit_share'])})")
    row("one-key bound: cached share, measured ÷ bound²",
        lambda p: f"{pct(p['cache']['bound_share'])}, {pct(p['cache']['of_bound'])}")
    for fam in sorted(set(off["by_family"]) | set(on["by_family"])):
        row(f"… {fam}: cached share (÷ ideal)",
            lambda p, f=fam: (f"{pct(p['by_family'][f]['cached_share'])} ({pct(p['by_family'][f]['of_ideal'])})"
                              if f in p["by_family"] else "–"))
    row("cache writes (Anthropic's cache_creation tokens)", lambda p: num(p["cache"]["creation_tokens"]))
    row("same key as the session's previous request", lambda p: pct(p["stickiness"]["same_key_share"]))
    row("same upstream (channel) as the previous request", lambda p: pct(p["stickiness"]["same_upstream_share"]))
    row("keys per session, mean / max", lambda p: f"{num(p['stickiness']['keys_per_session_mean'], 1)} / "
        f"{p['stickiness']['keys_per_session_max']}")
    row("requests per key", lambda p: _spread(p["spread"]))
    for fam in sorted(set(off.get("sessions_per_key", {})) | set(on.get("sessions_per_key", {}))):
        row(f"… {fam}: sessions per key, min–max (keys serving none)",
            lambda p, f=fam: (f"{p['sessions_per_key'][f]['min']}–{p['sessions_per_key'][f]['max']} "
                              f"({p['sessions_per_key'][f]['unused']} of {p['sessions_per_key'][f]['keys']})"
                              if f in p.get("sessions_per_key", {}) else "–"))
    row("**quota charged** (consume logs)", lambda p: num(p["logs"]["quota"]))
    row("… the key's used_quota", lambda p: num(p["used_quota"]))
    row("cached tokens: client saw / logs recorded / fake reported³",
        lambda p: f"{num(p['client']['cached_tokens'])} / {num(p['logs']['cached_tokens'])} / "
                  f"{num(p['cache']['cached_tokens'])}")
    row("input tokens: client saw / logs recorded", lambda p: f"{num(p['client']['prompt_tokens'])} / "
        f"{num(p['logs']['prompt_tokens'])}")
    row("affinity outcomes in the logs⁴",
        lambda p: ", ".join(f"{k} {v}" for k, v in sorted(p["logs"]["affinity"].items())) or "–")
    row("logged `hit`s on another key than the session's previous request⁵",
        lambda p: str(p["foreign_hits"]["count"]) if "foreign_hits" in p else "–")
    row("logs with `other.key_index`", lambda p: f"{p['logs']['key_index_logged']} of {p['logs']['logs']}")
    row("gateway CPU ms / request (whole tree, settled)", lambda p: num(p["cpu_ms_per_request"], 2))
    row("wall time, s", lambda p: num(p["seconds"], 1))
    return "\n".join(rows)


def sources_table(phase: R) -> str:
    sources = phase["logs"]["session_source"]
    if not sources:
        return ""
    rows = ["| client kind | session_source in the logs |", "|---|---|"]
    for kind, counts in sources.items():
        rows.append(f"| {kind} | {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} |")
    return "\n".join(rows)


def failover_table(rounds: list[R]) -> str:
    if not rounds:
        return ""
    rows = ["| failover | " + " | ".join(f"`{r['mode']}`" for r in rounds) + " |", "|---|" + "---|" * len(rounds)]

    def row(label: str, render) -> None:
        rows.append(f"| {label} | " + " | ".join(render(r) for r in rounds) + " |")

    row("failing upstream per protocol", lambda r: ", ".join(f"{k} → {v}" for k, v in sorted(r["failing"].items())))
    row("after turn", lambda r: str(r["failed_after_turn"]))
    row("sessions pinned there (of all)", lambda r: f"{r['pinned']} of {r['sessions']}")
    row("**requests failed to the client** (must be 0)", lambda r: str(r["client_failures"]))
    row("pinned sessions served elsewhere on their next turn", lambda r: f"{r['moved_next_turn']} of {r['pinned']}")
    row("pinned sessions that tried the failing channel at most once",
        lambda r: f"{r['pinned_moved_within_one']} of {r['pinned']}")
    row("tries of the failing channel after the failure: max per session / total",
        lambda r: f"{r['attempts_on_failed_max']} / {r['attempts_on_failed_total']}")
    row("other sessions that tried the failing channel", lambda r: str(r["others_touching_failed"]))
    row("logged `hit`s on another key than the session's previous request⁵", lambda r: str(r.get("foreign_hits", "–")))
    row("pinned sessions hitting the cache again one turn later (same new key)",
        lambda r: f"{r['cache_back_turn_after']} of {r['pinned']}")
    row("disabled by the gateway meanwhile", lambda r: "; ".join(r["disabled_by_gateway"]) or "nothing")
    return "\n".join(rows)


def cpu_section(cpu: R | None) -> str:
    if not cpu:
        return ""
    rounds = ", ".join(f"{k}: " + " / ".join(f"{v:.2f}" for v in vs) for k, vs in cpu["rounds"].items())
    text = (f"Gateway CPU per request (whole process tree until settled, {len(cpu['rounds']['on'])} alternated "
            f"round(s) each, medians): affinity off {num(cpu['off_ms'], 2)} ms, on {num(cpu['on_ms'], 2)} ms, "
            f"**on ÷ off = {num(cpu['on_over_off'], 3)}** (rounds, ms: {rounds}).")
    cost = cpu.get("session_of_us")
    if cost:
        worst = max(cost.values())
        share = f" = {worst / 1000 / cpu['on_ms']:.2%} of the CPU per request" if cpu.get("on_ms") else ""
        text += (" The affinity code's own work, timed in-process on these requests (`session_of`, µs per request): "
                 + ", ".join(f"{k} {v:.1f}" for k, v in cost.items()) + f"; the most{share}.")
    split = cpu.get("by_process_ms") or {}
    kinds = sorted(set(split.get("off", {})) | set(split.get("on", {})))
    if not kinds:
        return text
    rows = ["| CPU ms / request by process (median) | affinity off | affinity on | on ÷ off |", "|---|---|---|---|"]
    for kind in kinds:
        a, b = split.get("off", {}).get(kind), split.get("on", {}).get(kind)
        rows.append(f"| {kind} | {num(a, 3)} | {num(b, 3)} | {ratio(b, a)} |")
    return text + "\n\n" + "\n".join(rows)


def verdict(on: R, off: R) -> str:
    of_ideal = on["cache"]["of_ideal"]
    met = of_ideal is not None and of_ideal >= TARGET_OF_IDEAL
    return (f"Target: with affinity ≥ {TARGET_OF_IDEAL:.0%} of the ideal cache hits — measured "
            f"{pct(of_ideal)}: **{'met' if met else 'NOT met'}**. Without affinity: {pct(off['cache']['of_ideal'])} "
            f"of the ideal. Quota with affinity ÷ without: {ratio(on['logs']['quota'], off['logs']['quota'])}.")


FOOTNOTES = (
    "¹ The ideal: every turn after a session's first finds its whole previous prompt in the cache (the fake keeps "
    "a cache per session beside the per-key one, same arithmetic and TTL). A first turn may also hit what "
    "sessions share (tools, the agent's system prompt) on a key that served another session, which the ideal "
    "does not count; measured ÷ ideal is therefore taken over the turns after a session's first.\n"
    "² The bound: one cache shared by every key and session, as if one key served everything (first turns find the "
    "shared prefix too). No key's cache beats it.\n"
    "³ The gateway passes the upstream's usage on (client) and records it (logs); the three should agree.\n"
    "⁴ `other.affinity` of the consume logs (hit | new | moved | off), written by the relay; – = absent.\n"
    "⁵ A `hit` served by another key or channel than the session's previous request: the pin it followed was "
    "not its own (two sessions sharing one pin; when one moves, the other follows and loses its cache). "
    "Should be 0.")


def render(results: R) -> str:
    plan, shape = results["plan"], results["plan"]["shape"]
    channels = results["channels"]
    per_family = len(channels) // max(len({c["family"] for c in channels}), 1)
    if results["multi_key_channels"]:
        layout = f"{plan['channels']} multi-key channels × {plan['keys']} keys per protocol"
    else:
        why = "--channels single" if plan["channel_mode"] == "single" else "the gateway created no multi-key channel"
        layout = (f"{plan['channels']} × {plan['keys']} keys per protocol as {per_family} single-key channels per "
                  f"protocol ({why})")
    head = (f"Prompt-cache affinity on coding-agent traffic: {plan['sessions']} sessions × {plan['turns']} turns, all "
            f"at once; system prompt {shape['shared_system_tokens'] + shape['session_system_tokens']} tokens "
            f"({shape['shared_system_tokens']} shared), tools {shape['tools_tokens']}, +{shape['user_tokens']} per "
            f"turn plus the answer; {layout}, each channel on its own fake address; RetryTimes {plan['retry_times']}; "
            f"cache TTL {plan['ttl']:.0f} s. Relay pieces present: {results['relay']}. "
            f"Total {results.get('seconds', 0):.0f} s.")
    off, on = results["off"], results["on"]
    parts = [head, "", main_table(off, on), "", verdict(on, off), "", FOOTNOTES]
    sources = sources_table(on)
    if sources:
        parts += ["", "How the gateway recognised each client's session (affinity on):", "", sources]
    if results.get("failover"):
        parts += ["", failover_table(results["failover"])]
    cpu = cpu_section(results.get("cpu"))
    if cpu:
        parts += ["", cpu]
    parts += [f"Note: {n}" for n in results.get("notes") or ()]
    return "\n".join(parts)
