"""The bench's pure parts: a py-spy sample attributed to the part of the request it ran in, and the goals
table's verdicts from a run's figures."""
from __future__ import annotations

from bench.features import attribute, cost_table
from bench.report import goals_table
from bench.runner import Leg, Options
from bench.sampler import MIB, Tree

ROOT = "<module> (api/__main__.py:31);main (api/__main__.py:25);run_app (aiohttp/web.py:502)"


def stack(*frames: str, n: int = 1) -> str:
    return ";".join([ROOT, *frames]) + f" {n}"


def test_a_sample_goes_to_the_innermost_part_of_the_request() -> None:
    raw = "\n".join([
        # the pre-charge inside the admission: the pre-charge's, not the admission's
        stack("serve (api/relay/lifecycle.py:90)", "admission (api/relay/admission.py:40)",
              "admit (api/relay/admission.py:190)", "QuotaService.pre_charge (api/services/billing/quota.py:320)",
              "Redis.execute_command (redis/asyncio/client.py:600)", n=3),
        # affinity's session finding under the admission
        stack("admission (api/relay/admission.py:45)", "find_session (api/relay/admission.py:95)",
              "prefix_digest (api/relay/affinity.py:140)", n=2),
        # aiohttp's own server work, no gateway frame
        stack("RequestHandler.data_received (aiohttp/web_protocol.py:400)"),
        # a socket write: apart, whatever asked for it
        stack("settle (api/relay/settling.py:50)", "StreamWriter.writelines (asyncio/streams.py:330)"),
        # the loop itself
        ROOT + " 4",
    ])
    total, parts = attribute(raw)
    assert total == 11
    assert parts == {"admission Lua (pre-charge)": 3, "affinity: session finding": 2,
                     "aiohttp server (parse, dispatch, write)": 1, "I/O syscalls": 1,
                     "event loop (uvloop's C code)": 4}


def test_the_cost_table_gives_each_part_its_share_of_the_process_cpu() -> None:
    raw = "\n".join([stack("caller_of (api/relay/caller.py:40)", n=1), ROOT + " 3"])
    table = cost_table({"api, c=32": (raw, 0.8)})
    assert "| key lookup | 200 µs (25.0%) |" in table
    assert "| event loop (uvloop's C code) | 600 µs (75.0%) |" in table
    assert "**800 µs** (4 samples)" in table


def leg(key: str, **metrics: float) -> Leg:
    out = Leg(key, key, "", "", Tree(key))
    for name, value in metrics.items():
        out.put(name, value)
    return out


def test_the_goals_say_met_and_not_met_from_the_run() -> None:
    direct = leg("direct", lat_p50=1.0, lat_p99=2.0)
    proxy = leg("proxy", ns32_cpu_ms=0.5, ns128_cpu_ms=0.5, st32_cpu_ms=1.0)
    gateway = leg("gateway", ns32_cpu_ms=1.4, ns128_cpu_ms=1.6, st32_cpu_ms=2.4, lat_p50=1.8, lat_p99=6.0)
    gateway.rss_idle = {"api": [70 * MIB, 75 * MIB]}
    portkey = leg("portkey", ns32_cpu_ms=3.0)
    claude = leg("claude", ns32_cpu_ms=1.45, st32_cpu_ms=2.7)
    soak = [{"api": [75 * MIB]}, {"api": [90 * MIB]}]
    table = goals_table([direct, proxy, gateway, portkey, claude], Options(soak=600), soak, {"added": 87.0})
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines()[2:]}
    kept = "kept reasoning state (a client dropping it) ÷ a converted request's CPU, c=32"
    assert rows[kept].endswith("| 6.0% | not met |")  # 87 µs of the Claude leg's 1,450
    unmeasured = goals_table([direct, proxy, gateway, claude], Options())
    assert f"| {kept} | within 5 % | – | – |" in unmeasured
    assert rows["CPU / non-streamed request ÷ bare proxy's, c=32"].endswith("| 2.80× | met |")
    assert rows["CPU / non-streamed request ÷ bare proxy's, c=128"].endswith("| 3.20× | not met |")
    assert rows["CPU / stream ÷ bare proxy's, c=32"].endswith("| 2.40× | met |")
    assert rows["added latency, c=1, p50"].endswith("| 0.80 ms | met |")
    assert rows["added latency, c=1, p99"].endswith("| 4.00 ms | not met |")
    assert rows["CPU / non-streamed request ÷ Portkey's, c=32"].endswith("| 0.47× | met |")
    assert rows["claude: CPU / request ÷ the plain path's"].endswith("| 1.04× | met |")
    assert rows["claude: CPU / stream ÷ the plain path's"].endswith("| 1.13× | not met |")
    assert rows["messages: CPU / request ÷ the plain path's"].endswith("| – | – |")
    assert rows["throughput c=32 ÷ LiteLLM's"].endswith("| – | – |")
    assert rows["RSS per API process, idle"].endswith("| 75 MiB | met |")
    assert rows["RSS per API process over the soak (10 min)"].endswith("| +15.0 MiB | not met |")
