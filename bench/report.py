"""The tables a bench run prints (Markdown, so the README can take them as they are)."""
from __future__ import annotations

from bench.runner import Leg, Options
from bench.sampler import MIB


def _num(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "–"
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return ""
    return f"{value / base:.2f}×"


def _cell(leg: Leg, metric: str, digits: int, direct: Leg, proxy: Leg | None) -> str:
    value = leg.get(metric)
    text = _num(value, digits)
    if value is None or leg is direct:
        return text
    ratios = [f"{_ratio(value, direct.get(metric))} d"]
    if proxy is not None and leg is not proxy:
        ratios.append(f"{_ratio(value, proxy.get(metric))} p")
    return f"{text} ({', '.join(ratios)})"


def _added(leg: Leg, metric: str, direct: Leg) -> str:
    """Direct: the absolute figure; other legs: what they add to it (ms)."""
    value, base = leg.get(metric), direct.get(metric)
    if value is None:
        return "–"
    if leg is direct or base is None:
        return f"{value:.2f}"
    return f"{value - base:+.2f}"


def main_table(legs: list[Leg], o: Options) -> str:
    direct = legs[0]
    proxy = next((leg for leg in legs if leg.key == "proxy"), None)
    head = "| metric | " + " | ".join(leg.title for leg in legs) + " |"
    sep = "|---|" + "---|" * len(legs)
    rows = [head, sep]

    def row(label: str, render) -> None:
        rows.append(f"| {label} | " + " | ".join(render(leg) for leg in legs) + " |")

    for conc in (32, 128):
        row(f"non-streamed req/s, c={conc}", lambda leg, c=conc: _cell(leg, f"ns{c}_rps", 0, direct, proxy))
    row("CPU ms / request, c=32 (whole tree¹)", lambda leg: _cell(leg, "ns32_cpu_ms", 3, direct, proxy))
    row("… by process: total (of which system)", lambda leg: cpu_split(leg, "ns32"))
    row("CPU ms / request, c=128", lambda leg: _cell(leg, "ns128_cpu_ms", 3, direct, proxy))
    row("latency p50 / p99 ms, c=32", lambda leg: f"{_num(leg.get('ns32_p50'), 1)} / {_num(leg.get('ns32_p99'), 1)}")
    row(f"streams/s, c=32 ({o.chunks} chunks)", lambda leg: _cell(leg, "st32_rps", 0, direct, proxy))
    row("chunks/s, c=32", lambda leg: _cell(leg, "st32_chunks_ps", 0, direct, proxy))
    row("CPU ms / stream", lambda leg: _cell(leg, "st32_cpu_ms", 3, direct, proxy))
    row("CPU ms / chunk (stream ÷ chunks)", lambda leg: _cell(leg, "st32_cpu_ms_chunk", 4, direct, proxy))
    row("c=1 latency p50 / p99 ms²", lambda leg: f"{_added(leg, 'lat_p50', direct)} / {_added(leg, 'lat_p99', direct)}")
    row("c=1 stream TTFB p50 / p99 ms²",
        lambda leg: f"{_added(leg, 'ttfb_p50', direct)} / {_added(leg, 'ttfb_p99', direct)}")
    row("c=1 stream last byte p50 / p99 ms²",
        lambda leg: f"{_added(leg, 'ttlb_p50', direct)} / {_added(leg, 'ttlb_p99', direct)}")
    row(f"fixed {o.rate:g} req/s: achieved", lambda leg: _num(leg.get("rate_rps"), 0))
    row(f"fixed {o.rate:g} req/s: p50 / p99 ms",
        lambda leg: f"{_num(leg.get('rate_p50'), 2)} / {_num(leg.get('rate_p99'), 2)}")
    row(f"fixed {o.rate:g} req/s: CPU ms / request", lambda leg: _cell(leg, "rate_cpu_ms", 3, direct, proxy))
    for count in o.streams:
        row(f"{count} concurrent streams: clean (peak open)",
            lambda leg, n=count: f"{_num(leg.get(f'streams_{n}_clean'))} ({_num(leg.get(f'streams_{n}_peak'))})")
    row("upstream (mock) CPU ms / request, c=32", lambda leg: _num(leg.get("ns32_mock_cpu_ms"), 3))
    if any(leg.get("ns32_db_cpu_ms") for leg in legs):
        row("PostgreSQL backends CPU ms / request³", lambda leg: _num(leg.get("ns32_db_cpu_ms"), 3))
    row("RSS idle → peak MiB, per process", lambda leg: rss_cell(leg))
    row("errors (all scenarios)", lambda leg: str(sum(leg.errors.values())))
    return "\n".join(rows)


def cpu_split(leg: Leg, scenario: str) -> str:
    prefix = f"{scenario}_cpu_ms."
    parts = []
    for key in sorted(k for k in leg.metrics if k.startswith(prefix)):
        label = key[len(prefix):]
        total, system = leg.get(key), leg.get(f"{scenario}_sys_ms.{label}")
        if total is not None and total >= 0.0005:
            parts.append(f"{label} {total:.3f} ({system or 0:.3f})")
    return "<br>".join(parts)


def rss_cell(leg: Leg) -> str:
    parts = []
    for label in sorted(leg.rss_idle, key=lambda k: (k.startswith("postgres"), k)):
        if label.startswith("postgres"):
            continue
        idle = max(leg.rss_idle[label]) / MIB
        peak = max(leg.rss_peak.get(label, [0]) + leg.rss_idle[label]) / MIB
        count = len(leg.rss_idle[label])
        parts.append(f"{label}{f' ×{count}' if count > 1 else ''} {idle:.0f}→{peak:.0f}")
    return "<br>".join(parts)


FOOTNOTES = (
    "¹ user+sys CPU of every process of the leg (direct: the mock; proxy: the proxy; gateway: API processes, "
    "workers, scheduler and its own Redis, from the first request until the workers applied the last "
    "settlement; LiteLLM: all its processes), divided by the requests served. The load generator is not "
    "counted. Ratios: d = to direct, p = to the bare proxy.\n"
    "² direct: absolute; other legs: added to direct (difference of the percentiles).\n"
    "³ the PostgreSQL server processes serving the gateway's database, not counted in the tree above."
)


def _leg(legs: list[Leg], key: str) -> Leg | None:
    return next((leg for leg in legs if leg.key == key), None)


def _over(leg: Leg | None, base: Leg | None, metric: str) -> float | None:
    """leg's figure ÷ base's, None when either is missing."""
    if leg is None or base is None:
        return None
    value, under = leg.get(metric), base.get(metric)
    return value / under if value is not None and under else None


SOAK_FLAT_MIB = 5.0  # growth per API process over the soak that still counts as flat


def goals_table(legs: list[Leg], o: Options, soak: list[dict[str, list[int]]] | None = None,
                kept: dict[str, float] | None = None) -> str:
    """The gateway's performance goals, each with its target, what this run measured and whether it
    is met; a goal whose leg did not run (Portkey, LiteLLM, the soak) says so with –. `kept`:
    bench.kept_reasoning_cost's figures (CPU µs per request), divided by the Claude channel leg's CPU
    per non-streamed request."""
    gw = _leg(legs, "gateway")
    if gw is None:
        return ""
    proxy, direct = _leg(legs, "proxy"), legs[0]
    rows = ["| goal | target | measured | met |", "|---|---|---|---|"]

    def add(goal: str, target: str, value: float | None, ok: bool | None, fmt: str = "{:.2f}×") -> None:
        shown = "–" if value is None else fmt.format(value)
        rows.append(f"| {goal} | {target} | {shown} | {'–' if ok is None else ('met' if ok else 'not met')} |")

    def at_most(goal: str, value: float | None, limit: float, fmt: str = "{:.2f}×", target: str = "") -> None:
        add(goal, target or f"≤ {fmt.format(limit)}", value, None if value is None else value <= limit, fmt)

    for conc in (32, 128):
        at_most(f"CPU / non-streamed request ÷ bare proxy's, c={conc}", _over(gw, proxy, f"ns{conc}_cpu_ms"), 3.0)
    at_most("CPU / stream ÷ bare proxy's, c=32", _over(gw, proxy, "st32_cpu_ms"), 2.5)
    for name, limit in (("lat_p50", 1.0), ("lat_p99", 3.0)):
        value, base = gw.get(name), direct.get(name)
        at_most(f"added latency, c=1, {name[-3:]}", None if value is None or base is None else value - base, limit,
                "{:.2f} ms")
    at_most("CPU / non-streamed request ÷ Portkey's, c=32", _over(gw, _leg(legs, "portkey"), "ns32_cpu_ms"), 0.5)
    for key in ("claude", "messages", "messages-openai"):
        leg = _leg(legs, key)
        for metric, what in (("ns32_cpu_ms", "request"), ("st32_cpu_ms", "stream")):
            ratio = _over(leg, gw, metric)
            title = leg.title if leg is not None else key
            add(f"{title}: CPU / {what} ÷ the plain path's", "within 5 %", ratio,
                None if ratio is None else abs(ratio - 1) <= 0.05)
    claude_ms = (_leg(legs, "claude") or gw).get("ns32_cpu_ms")
    share = kept["added"] / (claude_ms * 1000) if kept and claude_ms else None
    add("kept reasoning state (a client dropping it) ÷ a converted request's CPU, c=32", "within 5 %", share,
        None if share is None else share <= 0.05, "{:.1%}")
    lite = _over(gw, _leg(legs, "litellm"), "ns32_rps")
    add("throughput c=32 ÷ LiteLLM's", "≥ 10×", lite, None if lite is None else lite >= 10, "{:.1f}×")
    for count in o.streams:
        clean = gw.get(f"streams_{count}_clean")
        add(f"clean concurrent streams (of {count})", f"= {count}", clean, None if clean is None else clean >= count,
            "{:.0f}")
    api_idle = max(gw.rss_idle.get("api", [0])) / MIB or None
    at_most("RSS per API process, idle", api_idle, 80, "{:.0f} MiB")
    growth = None
    if soak and len(soak) >= 2 and "api" in soak[0] and "api" in soak[-1]:
        growth = (max(soak[-1]["api"]) - max(soak[0]["api"])) / MIB
    add(f"RSS per API process over the soak ({o.soak / 60:.0f} min)" if soak else "RSS per API process over a soak",
        f"flat (≤ +{SOAK_FLAT_MIB:g} MiB)", growth, None if growth is None else growth <= SOAK_FLAT_MIB,
        "{:+.1f} MiB")
    return "\n".join(rows)


def soak_table(samples: list[dict[str, list[int]]], seconds: float) -> str:
    if len(samples) < 2:
        return ""
    rows = [f"| process (soak {seconds / 60:.0f} min) | RSS after 1st window MiB | at the end MiB | growth MiB |",
            "|---|---|---|---|"]
    first, last = samples[0], samples[-1]
    for label in sorted(last):
        if label.startswith("postgres") or label not in first:
            continue
        a, b = max(first[label]) / MIB, max(last[label]) / MIB
        rows.append(f"| {label} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")
    return "\n".join(rows)


def logs_table(rows: list[dict], how: str, count: int, fill_seconds: float) -> str:
    out = [f"Log queries on PostgreSQL, {count:,} generated rows (filled in {fill_seconds:.0f} s), {how}; "
           "median and max of 5 calls:", "",
           "| query | route | matched | median ms | max ms |", "|---|---|---|---|---|"]
    for r in rows:
        matched = "–" if r["matched"] is None else f"{r['matched']:,}"
        out.append(f"| {r['query']} | {r['route']} | {matched} | {r['median_ms']:.1f} | {r['max_ms']:.1f} |")
    return "\n".join(out)
