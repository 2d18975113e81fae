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


def goals_table(legs: list[Leg], o: Options) -> str:
    gw = next((leg for leg in legs if leg.key == "gateway"), None)
    if gw is None:
        return ""
    proxy = next((leg for leg in legs if leg.key == "proxy"), None)
    direct = legs[0]
    litellm = next((leg for leg in legs if leg.key == "litellm"), None)
    rows = ["| goal | target | measured | met |", "|---|---|---|---|"]

    def add(goal: str, target: str, value: float | None, ok: bool | None, fmt: str = "{:.3f}") -> None:
        shown = "–" if value is None else fmt.format(value)
        rows.append(f"| {goal} | {target} | {shown} | {'–' if ok is None else ('yes' if ok else 'no')} |")

    cpu = gw.get("ns32_cpu_ms")
    add("CPU / non-streamed request, whole tree", "≤ 1.5 ms", cpu, None if cpu is None else cpu <= 1.5)
    if proxy is not None and cpu is not None and proxy.get("ns32_cpu_ms"):
        ratio = cpu / proxy.get("ns32_cpu_ms")
        add("… as a multiple of the bare proxy", "≤ 3×", ratio, ratio <= 3, "{:.2f}×")
    chunk = gw.get("st32_cpu_ms_chunk")
    add("CPU / streamed chunk (upper bound)", "≤ 0.05 ms", chunk, None if chunk is None else chunk <= 0.05, "{:.4f}")
    for name, target in (("lat_p50", 1.0), ("lat_p99", 3.0)):
        value, base = gw.get(name), direct.get(name)
        added = None if value is None or base is None else value - base
        add(f"added latency c=1 {name[-3:]}", f"≤ {target:g} ms", added,
            None if added is None else added <= target, "{:.2f} ms")
    if litellm is not None and litellm.get("ns32_rps") and gw.get("ns32_rps"):
        ratio = gw.get("ns32_rps") / litellm.get("ns32_rps")
        add("throughput c=32 vs LiteLLM", "≥ 10×", ratio, ratio >= 10, "{:.1f}×")
    for count in o.streams:
        clean = gw.get(f"streams_{count}_clean")
        add(f"clean concurrent streams (of {count})", "≥ 1000", clean, None if clean is None else clean >= 1000,
            "{:.0f}")
    api_idle = max(gw.rss_idle.get("api", [0])) / MIB or None
    api_peak = max(gw.rss_peak.get("api", [0]) + gw.rss_idle.get("api", [0])) / MIB or None
    add("RSS per API process, idle", "≤ 100 MiB", api_idle, None if api_idle is None else api_idle <= 100,
        "{:.0f} MiB")
    add("RSS per API process, under load", "≤ 150 MiB", api_peak, None if api_peak is None else api_peak <= 150,
        "{:.0f} MiB")
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
