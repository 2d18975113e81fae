"""What the relay's two billing scripts cost Redis per request (admission, settlement), measured on a
private redis-server by INFO commandstats: the commands the scripts run and the server's CPU time in
EVALSHA, per request, with every rate limit on, a limited key, a request's exposure held, a session pin
and (`--windows`) three limits over time on the key (a daily quota, a daily request count, a minute
token cap). No database: the balances are written to Redis as a load would.

    .venv/bin/python -m bench.script_cost [--requests 3000] [--windows] [--concurrency 32]
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass

from redis.exceptions import ConnectionError as RedisConnectionError

from api.services.billing.quota import Limits, QuotaService
from api.services.budgets.limits import parse_limits
from api.services.budgets.plan import Counted, Planner
from api.services.store import Store
from bench.procs import free_port

USER, TOKEN = 1, 1
LIMITS = Limits(*(10**8 for _ in range(9)))
KEY_LIMITS = [{"window": "day", "quota": 10**12}, {"window": "day", "requests": 10**8},
              {"window": "minute", "tokens": 10**12}]


@dataclass
class Cost:
    commands: float  # commands run by the scripts, per request (EVALSHA itself not counted)
    cpu_us: float  # the server's CPU time per request (user + system, all of it: scripts, network, the rest)
    script_us: float  # wall time in EVALSHA as the server counts it, µs per request (both scripts)
    commands_us: float  # of which in the commands themselves
    by_command: dict[str, float]


def commandstats(raw: dict[str, dict[str, float]]) -> dict[str, tuple[float, float]]:
    return {name.removeprefix("cmdstat_"): (float(v["calls"]), float(v["usec"])) for name, v in raw.items()}


async def measure(store: Store, requests: int, windows: bool, concurrency: int = 1) -> Cost:
    quota = QuotaService(store)
    prefix = store.prefix
    await store.redis.set(f"{prefix}{{u{USER}}}:quota", 10**15)
    await store.redis.set(f"{prefix}{{u{USER}}}:gen", "g1")
    await store.redis.set(f"{prefix}{{u{USER}}}:tq:{TOKEN}", 10**14)
    await store.redis.set(f"{prefix}{{u{USER}}}:tgen:{TOKEN}", "g1")
    pin_key = f"{prefix}{{u{USER}}}:aff:m:s"
    await store.redis.set(pin_key, "1:0", px=300_000)
    counted: list[Counted] = []
    if windows:
        planner = Planner()
        rules = planner.rules_for(TOKEN, parse_limits(KEY_LIMITS), (), "default", (), "m")
        counted = planner.windows(store, USER, rules, time.time(), "UTC")

    async def one(n: int) -> None:
        charge = await quota.pre_charge(settlement_id=f"r{n}", user_id=USER, token_id=TOKEN, token_limited=True,
                                        pre=500, group="default", limits=LIMITS, reservation=b'{"m":"m"}',
                                        pin_key=pin_key, pin_ttl_ms=300_000, worst=2000, windows=counted,
                                        prompt_tokens=100)
        await quota.settle(charge, 420, b'{"q":420}', 180)

    for n in range(50):  # warm: scripts loaded, the minute's counters and the windows created
        await one(-n - 1)
    await store.redis.config_resetstat()
    cpu = await server_cpu(store)
    numbers = iter(range(requests))

    async def client() -> None:
        for n in numbers:
            await one(n)
    await asyncio.gather(*(client() for _ in range(concurrency)))
    cpu = await server_cpu(store) - cpu
    stats = commandstats(await store.redis.info("commandstats"))
    evalsha = stats.pop("evalsha", (0.0, 0.0))
    for name in ("config|resetstat", "info"):
        stats.pop(name, None)
    by = {name: calls / requests for name, (calls, _) in sorted(stats.items())}
    inner = sum(usec for _, usec in stats.values()) / requests
    return Cost(sum(by.values()), cpu / requests * 1e6, evalsha[1] / requests, inner, by)


async def server_cpu(store: Store) -> float:
    """The redis-server's CPU seconds so far (user + system)."""
    info = await store.redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def connect_and_measure(url: str, requests: int, windows: bool, concurrency: int) -> Cost:
    store = Store.from_url(url, "bench:", max(4, concurrency))
    try:
        for _ in range(100):
            try:
                await store.redis.ping()
                break
            except RedisConnectionError:
                await asyncio.sleep(0.05)
        return await measure(store, requests, windows, concurrency)
    finally:
        await store.close()


def run(requests: int, windows: bool, concurrency: int = 1) -> Cost:
    """On a redis-server of its own (no persistence), stopped at the end."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("bench.script_cost: no redis-server")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no", "--dir", folder], stdout=subprocess.DEVNULL)
        try:
            return asyncio.run(connect_and_measure(f"redis://127.0.0.1:{port}/0", requests, windows, concurrency))
        finally:
            server.terminate()
            server.wait(10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.script_cost", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--windows", action="store_true", help="three limits over time on the key")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="requests in flight at once (the server then reads several per system call)")
    args = parser.parse_args(argv)
    cost = run(args.requests, args.windows, args.concurrency)
    print(f"| per request ({'with' if args.windows else 'without'} windows) | |\n|---|---|")
    print(f"| Redis commands run by the two scripts | {cost.commands:.1f} |")
    print(f"| redis-server CPU (µs, user + system) | {cost.cpu_us:.1f} |")
    print(f"| time in EVALSHA as the server counts it (µs; wall time: inflated on a busy machine) | "
          f"{cost.script_us:.1f} |")
    print(f"| of which in the commands (µs) | {cost.commands_us:.1f} |")
    print("\n" + ", ".join(f"{name} {calls:.2f}" for name, calls in cost.by_command.items()))


if __name__ == "__main__":
    main()
