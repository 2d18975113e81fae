"""`python -m bench.budget_cost` (make bench-budgets): what limits over time on a key cost a request.

One run: the mock upstream and the gateway as deployed (bench/gateway.py: API processes, workers,
scheduler, its own Redis and database), the same non-streamed request to `gpt-4o-mini` at concurrency
32 (wrk, else bench.loadgen) with the bench key's `limits` switched through the console API (as its
owner) between measurements, alternated (A B, then B A, …) so that a drift of the shared machine hits
each alike:

  none    no limits on the key
  three   a daily quota, a daily request count and a minute token cap (far above what the bench
          sends): two window hashes checked and taken in the admission script, moved in the
          settlement script, and added to the database's BudgetUsage rows by the workers

The figures: the gateway's CPU per request over its whole process tree (bench/sampler.py, until the
workers applied every settlement), median of the rounds and its ratio to `none`; and the Redis
commands per request of each setting (INFO commandstats of the gateway's own redis-server over the
measurement, every caller included: relay, workers, scheduler; divided by requests/s × the duration).

    .venv/bin/python -m bench.budget_cost [--rounds 3 --duration 8]
    .venv/bin/python -m bench.budget_cost --smoke      # 2 rounds of 2 s (about a minute)
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import resource
import statistics
import sys
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from bench.gateway import FAST_MODEL, SLOW_MODEL, Console, Gateway, GatewayConfig, postgres_available
from bench.procs import PYTHON, ROOT, Procs, free_port, wait_http
from bench.runner import Leg, Options, Runner
from bench.sampler import Sampler, Tree

THREE = [{"window": "day", "quota": 10**15}, {"window": "day", "requests": 10**12},
         {"window": "minute", "tokens": 10**12}]
SETTINGS: dict[str, list[dict[str, Any]]] = {"none": [], "three": THREE}
CONCURRENCY = 32


def order(round_no: int) -> list[str]:
    """The settings of one round: forwards in odd rounds, backwards in even ones."""
    names = list(SETTINGS)
    return names if round_no % 2 else names[::-1]


def ratios(per: dict[str, list[float]]) -> dict[str, float | None]:
    """Each setting's median CPU per request ÷ the median without limits."""
    base = statistics.median(per["none"]) if per.get("none") else None
    return {name: (statistics.median(values) / base if base and values else None) for name, values in per.items()}


def median_or_dash(values: list[float] | None, fmt: str) -> str:
    return format(statistics.median(values), fmt) if values else "–"


def render(per: dict[str, list[float]], redis_ms: dict[str, list[float]], commands: dict[str, list[float]],
           errors: dict[str, int], header: str) -> str:
    rel = ratios(per)
    lines = [header, "", "| setting | CPU ms / request (median) | rounds | ÷ none | of which redis-server (ms) "
             "| Redis commands / request | errors |", "|---|---|---|---|---|---|---|"]
    for name, values in per.items():
        ratio = rel[name]
        lines.append(f"| {name} | {statistics.median(values):.3f} | {', '.join(f'{v:.3f}' for v in values)} | "
                     f"{'–' if ratio is None else f'{ratio:.3f}×'} | {median_or_dash(redis_ms.get(name), '.3f')} | "
                     f"{median_or_dash(commands.get(name), '.1f')} | {errors.get(name, 0)} |")
    return "\n".join(lines)


def by_process(legs: dict[str, Leg]) -> str:
    """Each setting's CPU ms per request by process label (medians of the rounds)."""
    prefix = f"ns{CONCURRENCY}_cpu_ms."
    labels = sorted({name[len(prefix):] for leg in legs.values() for name in leg.metrics if name.startswith(prefix)})
    lines = ["| CPU ms / request by process (median) | " + " | ".join(labels) + " |",
             "|---|" + "---|" * len(labels)]
    for name, leg in legs.items():
        lines.append(f"| {name} | " + " | ".join(median_or_dash(leg.metrics.get(prefix + label), ".3f")
                                                 for label in labels) + " |")
    return "\n".join(lines)


async def set_limits(owner: Console, token_id: int, limits: list[dict[str, Any]]) -> None:
    await owner.call("PUT", "/api/token/", {"id": token_id, "limits": limits})
    await asyncio.sleep(1.0)  # every API process drops its cached key on the change event


async def commands_so_far(redis: aioredis.Redis) -> float:
    """Commands the server ran (every command of every caller; the scripts' own counted in them)."""
    stats = await redis.info("commandstats")
    return sum(float(v["calls"]) for v in stats.values())


async def run(o: Options, out_dir: Path) -> int:
    procs, sampler = Procs(out_dir), Sampler()
    sampler.start()
    gw: Gateway | None = None
    books = owner = redis = None
    try:
        mock_port = free_port()
        mock_base = f"http://127.0.0.1:{mock_port}"
        mock = procs.start("mock", [PYTHON, "-m", "bench.mock_upstream", "--port", str(mock_port)])
        mock_tree = sampler.add(Tree("mock"))
        mock_tree.add(mock.pid, "mock")
        await wait_http(mock_base + "/health", procs)
        gw = Gateway(procs, out_dir, mock_base, GatewayConfig(api_procs=o.api_procs, db=o.db))
        sampler.add(gw.tree)
        print(f"starting the gateway ({o.api_procs} API processes, {o.db}) ...", flush=True)
        await gw.start()
        await gw.provision()
        from bench.accounting import Books

        books = Books(gw.database_url, gw.user_id, gw.token_id, gw.channel_ids)
        await books.open()
        owner = Console(gw.base)
        await owner.login("bench", "bench-password-1")
        redis = aioredis.Redis.from_url(gw.redis_url, decode_responses=True)
        legs = {name: Leg(name, f"gateway, {name}", gw.url, gw.url, gw.tree, token=gw.token,
                          slow_model=SLOW_MODEL, settle=books.wait_settled) for name in SETTINGS}
        runner = Runner(o, procs, mock_tree, list(legs.values()))
        for name, leg in legs.items():  # every setting answers (checked answers), the processes warmed
            await set_limits(owner, gw.token_id, SETTINGS[name])
            await runner.warm(leg)
        commands: dict[str, list[float]] = {name: [] for name in SETTINGS}
        for round_no in range(1, o.rounds + 1):
            for name in order(round_no):
                await set_limits(owner, gw.token_id, SETTINGS[name])
                print(f"  round {round_no}/{o.rounds} · {name} ...", end="", flush=True)
                before = await commands_so_far(redis)
                await runner.throughput(legs[name], CONCURRENCY, False)
                served = legs[name].metrics[f"ns{CONCURRENCY}_rps"][-1] * o.duration
                if served > 0:
                    commands[name].append((await commands_so_far(redis) - before) / served)
                print(f" {legs[name].metrics[f'ns{CONCURRENCY}_cpu_ms'][-1]:.3f} ms/request", flush=True)
        per = {name: leg.metrics[f"ns{CONCURRENCY}_cpu_ms"] for name, leg in legs.items()}
        errors = {name: sum(leg.errors.values()) for name, leg in legs.items()}
        header = (f"Date: {datetime.date.today().isoformat()}. Command: `python -m bench.budget_cost "
                  f"{' '.join(sys.argv[1:])}`. Gateway: {o.api_procs} API processes, 1 worker × 8 threads, "
                  f"scheduler, own redis-server, {o.db}, every RateLimit* on; non-streamed `{FAST_MODEL}` at "
                  f"c={CONCURRENCY}, {o.duration:g} s per measurement, load from "
                  f"{'wrk -t1' if runner.wrk else 'bench.loadgen'}; CPU over the whole gateway tree (database "
                  "backends apart), until settled; Redis commands of every caller over the measurement.")
        redis_ms = {name: leg.metrics.get(f"ns{CONCURRENCY}_cpu_ms.redis", []) for name, leg in legs.items()}
        text = render(per, redis_ms, commands, errors, header) + "\n\n" + by_process(legs)
        if runner.notes:
            text += "\n\n" + "\n".join(f"Note: {n}" for n in runner.notes)
        (out_dir / "report.md").write_text(text + "\n")
        (out_dir / "results.json").write_text(json.dumps({"cpu_ms": per, "ratios": ratios(per),
                                                          "redis_ms": redis_ms, "commands": commands,
                                                          "errors": errors}))
        print("\n" + text)
        return 1 if any(errors.values()) else 0
    finally:
        if redis is not None:
            await redis.aclose()
        if owner is not None:
            await owner.close()
        if books is not None:
            await books.close()
        if gw is not None:
            await gw.close()
        procs.stop_all()
        sampler.stop()
        if gw is not None:
            gw.drop_database()


def parse(argv: list[str] | None) -> Options:
    p = argparse.ArgumentParser(prog="python -m bench.budget_cost", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=float, default=8.0, help="seconds per measurement (8)")
    p.add_argument("--api-procs", type=int, default=2)
    p.add_argument("--db", choices=("auto", "postgres", "sqlite"), default="auto")
    p.add_argument("--smoke", action="store_true", help="2 rounds of 2 s: the figure, quickly and roughly")
    a = p.parse_args(argv)
    db = ("postgres" if postgres_available() else "sqlite") if a.db == "auto" else a.db
    o = Options(duration=a.duration, rounds=a.rounds, api_procs=a.api_procs, db=db, logs=False)
    if a.smoke:
        o.duration, o.rounds = 2.0, 2
    return o


def main(argv: list[str] | None = None) -> int:
    o = parse(argv)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    out_dir = ROOT / "bench" / "results" / f"{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}-budgets"
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"bench.budget_cost: logs and report in {out_dir}", flush=True)
    try:
        return asyncio.run(asyncio.wait_for(run(o, out_dir), 20 * 60))
    except TimeoutError:
        print("bench.budget_cost: stopped after its bound of 20 minutes", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
