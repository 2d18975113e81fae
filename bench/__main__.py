"""`python -m bench` (or `make bench`): the relay measured side by side, on 127.0.0.1, bounded in time.

    python -m bench                  direct, bare proxy and gateway; then the log queries (~6 min)
    python -m bench --litellm        … and LiteLLM proxy (installed into bench/.venv-litellm once)
    python -m bench --soak 600       … then 10 minutes of traffic on the gateway, reporting RSS growth
    python -m bench --smoke          correctness only (CI): no errors, chunk counts, quota = the formula
    python -m bench --quick          shorter runs (3 s), for trying the harness

Every process it starts (the mock, the proxy, the gateway's API processes, workers, scheduler and
redis-server, LiteLLM) is stopped by PID at the end, the PostgreSQL database it created is dropped,
and the whole run is bounded by --max-minutes. Logs and a JSON copy of the results go to
bench/results/<time>/ (git-ignored).
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import resource
import signal
import sys
import time

from bench.gateway import CLAUDE_MODEL, CLAUDE_SLOW_MODEL, Gateway, GatewayConfig, postgres_available
from bench.mock_upstream import CHUNKS
from bench.procs import PYTHON, ROOT, Procs, free_port, wait_http
from bench.runner import Leg, Options, Runner
from bench.sampler import Sampler, Tree


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="correctness checks only (CI); never fails on timing")
    p.add_argument("--litellm", action="store_true", help="add the LiteLLM proxy leg (installs it once)")
    p.add_argument("--portkey", action="store_true",
                   help="add Portkey's gateway leg, non-streamed (npm ci into bench/portkey once)")
    p.add_argument("--quick", action="store_true", help="3 s runs, 100 latency samples, 500 streams")
    p.add_argument("--duration", type=float, default=8.0, help="seconds per throughput run (default 8)")
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds; figures are medians (default 1)")
    p.add_argument("--rate", type=float, default=150.0, help="requests/s of the fixed-rate leg (default 150)")
    p.add_argument("--streams", default="", help="concurrent streams to try, comma-separated (default 1000)")
    p.add_argument("--chunks", type=int, default=CHUNKS, help=f"chunks per mock stream (default {CHUNKS})")
    p.add_argument("--api-procs", type=int, default=2, help="gateway API processes (default 2)")
    p.add_argument("--db", choices=("auto", "postgres", "sqlite"), default="auto",
                   help="gateway database (auto: PostgreSQL on 127.0.0.1:5432 when reachable)")
    p.add_argument("--no-logs", action="store_true", help="skip the million-row log query timings")
    p.add_argument("--log-rows", type=int, default=1_000_000)
    p.add_argument("--soak", type=float, default=0.0, metavar="SECONDS", help="soak the gateway (600 = 10 min)")
    p.add_argument("--profile", type=float, default=0.0, metavar="SECONDS",
                   help="py-spy one gateway API process under c=32 load (installs py-spy into bench/.venv-tools)")
    p.add_argument("--max-minutes", type=float, default=0.0, help="hard bound of the whole run")
    return p.parse_args(argv)


def options_from(args: argparse.Namespace, db: str) -> Options:
    o = Options(duration=args.duration, rounds=args.rounds, rate=args.rate,
                streams=tuple(int(s) for s in (args.streams or "1000").split(",") if s.strip()), chunks=args.chunks,
                litellm=args.litellm, portkey=args.portkey, logs=not args.no_logs and db == "postgres",
                log_rows=args.log_rows,
                soak=args.soak, api_procs=args.api_procs, db=db, profile=args.profile)
    if args.quick:
        o.duration, o.latency_requests = 3.0, 100
        o.streams = o.streams if args.streams else (500,)
    return o


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} CPUs ({cpu}), {mem:.0f} GiB RAM, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}; load average at the start {load}")


class Started:
    """What start_all brought up so far (so a failure half-way still cleans up)."""

    gw: Gateway | None = None
    books = None


async def start_all(o: Options, procs: Procs, sampler: Sampler, started: Started):
    workdir = procs.log_dir
    mock_port, proxy_port = free_port(), free_port()
    mock_base = f"http://127.0.0.1:{mock_port}"
    mock = procs.start("mock", [PYTHON, "-m", "bench.mock_upstream", "--port", str(mock_port),
                                "--chunks", str(o.chunks)])
    mock_tree = sampler.add(Tree("mock"))
    mock_tree.add(mock.pid, "mock")
    proxy = procs.start("proxy", [PYTHON, "-m", "bench.proxy", "--port", str(proxy_port), "--upstream", mock_base])
    proxy_tree = sampler.add(Tree("proxy"))
    proxy_tree.add(proxy.pid, "proxy")
    await wait_http(mock_base + "/health", procs)
    await wait_http(f"http://127.0.0.1:{proxy_port}/health", procs)
    legs = [
        Leg("direct", "direct", mock_base + "/v1/chat/completions", mock_base + "/slow/v1/chat/completions",
            mock_tree),
        Leg("proxy", "bare proxy", f"http://127.0.0.1:{proxy_port}/v1/chat/completions",
            f"http://127.0.0.1:{proxy_port}/slow/v1/chat/completions", proxy_tree),
    ]
    print(f"starting the gateway ({o.api_procs} API processes, workers, scheduler, redis-server, {o.db}) ...",
          flush=True)
    gw = started.gw = Gateway(procs, workdir, mock_base, GatewayConfig(api_procs=o.api_procs, db=o.db))
    sampler.add(gw.tree)
    await gw.start()
    await gw.provision()
    from bench.accounting import Books

    books = started.books = Books(gw.database_url, gw.user_id, gw.token_id, gw.channel_ids)
    await books.open()
    legs.append(Leg("gateway", "gateway", gw.url, gw.url, gw.tree, token=gw.token, slow_model="gpt-4o",
                    settle=books.wait_settled))
    legs.append(Leg("claude", "gateway (Claude channel)", gw.url, gw.url, gw.tree, token=gw.token,
                    model=CLAUDE_MODEL, slow_model=CLAUDE_SLOW_MODEL, settle=books.wait_settled))
    messages = gw.base + "/v1/messages"  # Anthropic's format in: relayed as sent, and converted
    legs.append(Leg("messages", "/v1/messages (Claude channel)", messages, messages, gw.tree, token=gw.token,
                    model=CLAUDE_MODEL, slow_model=CLAUDE_SLOW_MODEL, settle=books.wait_settled, fmt="anthropic"))
    legs.append(Leg("messages-openai", "/v1/messages (OpenAI channel)", messages, messages, gw.tree,
                    token=gw.token, slow_model="gpt-4o", settle=books.wait_settled, fmt="anthropic"))
    if o.litellm:
        from bench.litellm_leg import LiteLLM

        print("starting LiteLLM proxy ...", flush=True)
        lite = LiteLLM(procs, workdir, mock_base, o.api_procs)
        await lite.start()
        sampler.add(lite.tree)
        legs.append(Leg("litellm", "LiteLLM", lite.url, lite.url, lite.tree, token=lite.token,
                        slow_model="gpt-4o"))
    if o.portkey:
        from bench.portkey_leg import Portkey

        print("starting Portkey's gateway ...", flush=True)
        portkey = Portkey(procs, mock_base)
        await portkey.start()
        sampler.add(portkey.tree)
        legs.append(Leg("portkey", "Portkey", portkey.url, portkey.url, portkey.tree, token=portkey.token,
                        headers=portkey.headers, streams=False))
    return mock_base, mock_tree, legs


async def profile(gw: Gateway, runner: Runner, seconds: float, out_dir) -> str:
    from bench.profile import profile_api

    return await profile_api(gw, runner, seconds, out_dir)


async def kept_state_cost(gw: Gateway) -> dict[str, float] | None:
    """bench.kept_reasoning_cost's figures (CPU µs per request, in a process of its own, against the
    gateway's Redis), None if it failed."""
    proc = await asyncio.create_subprocess_exec(PYTHON, "-m", "bench.kept_reasoning_cost", "--json", cwd=ROOT,
                                                env={**os.environ, "REDIS_URL": gw.redis_url},
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        print("bench: bench.kept_reasoning_cost failed; its goal is left unmeasured", file=sys.stderr)
        return None
    figures: dict[str, float] = json.loads(out.splitlines()[-1])
    return figures


async def main_async(args: argparse.Namespace) -> int:
    db = args.db
    if db == "auto":
        db = "postgres" if postgres_available() else "sqlite"
    o = options_from(args, db)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = ROOT / "bench" / "results" / f"{stamp}{'-smoke' if args.smoke else ''}"
    out_dir.mkdir(parents=True, exist_ok=True)
    procs = Procs(out_dir)
    sampler = Sampler()
    sampler.start()
    up = Started()
    started = time.monotonic()
    print(f"bench: {machine()}\nlogs: {out_dir}", flush=True)
    try:
        mock_base, mock_tree, legs = await start_all(o, procs, sampler, up)
        gw = up.gw
        runner = Runner(o, procs, mock_tree, legs)
        if args.smoke:
            from bench.smoke import run_smoke

            await up.books.close()
            up.books = None
            return await run_smoke(runner, legs, gw, mock_base)
        await runner.run()
        from bench import report

        header = (f"Machine: {machine()}. Date: {datetime.date.today().isoformat()}. "
                  f"Command: `{' '.join(['python -m bench', *sys.argv[1:]])}`. Gateway: {o.api_procs} API "
                  f"processes (REUSE_PORT), 1 worker process × 8 threads, scheduler, own redis-server (AOF, "
                  f"reached by its Unix socket), {o.db}; mock streams {o.chunks} chunks; load from "
                  f"{'wrk -t1' if runner.wrk else 'the Python generator'} (throughput) and bench.loadgen "
                  "(latency, fixed rate, streams).")
        extra: dict = {}
        gw_leg = next(leg for leg in legs if leg.key == "gateway")
        # Timed once the legs' settlements are applied and before the soak (whose backlog keeps the
        # workers busy for a while after it): the same quiet the legs had.
        await up.books.wait_settled()
        kept = await kept_state_cost(gw)
        extra["kept_state_us"] = kept
        samples: list = []
        if o.soak > 0:
            samples = await runner.soak(gw_leg, o.soak)
            extra["soak"] = samples
        # The report's sections, each under its own heading: the README's Benchmark section takes them as
        # they are (bench/README.md, What it prints).
        sections = [header, "", "#### Goals", "", report.goals_table(legs, o, samples, kept), "",
                    "#### The legs side by side", "", report.main_table(legs, o), "", report.FOOTNOTES]
        if samples:
            sections += ["", "#### Soak", "", report.soak_table(samples, o.soak)]
        if o.profile > 0:
            sections += ["", "#### Where the gateway's CPU goes", "", await profile(gw, runner, o.profile, out_dir)]
        if o.logs:
            from bench.log_routes import time_queries

            print(f"log queries: generating {o.log_rows:,} rows ...", flush=True)
            try:
                rows, how, fill_seconds = await time_queries(gw, o.log_rows)
            except Exception as exc:  # the run's other figures are kept
                runner.notes.append(f"log queries not timed: {exc!r}")
            else:
                sections += ["", "#### Log queries", "", report.logs_table(rows, how, o.log_rows, fill_seconds)]
                extra["log_queries"] = rows
        if runner.notes:
            sections += ["", *[f"Note: {n}" for n in runner.notes]]
        text = "\n".join(sections)
        (out_dir / "report.md").write_text(text + "\n")
        runner.save(out_dir / "results.json", extra)
        print("\n" + text + f"\n\n(total {time.monotonic() - started:.0f}s; report in {out_dir / 'report.md'})")
        return 0
    finally:
        if up.books is not None:
            await up.books.close()
        if up.gw is not None:
            await up.gw.close()
        procs.stop_all()
        sampler.stop()
        if up.gw is not None:
            up.gw.drop_database()


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # children inherit it: 1000+ streams
    limit = args.max_minutes or (5 if args.smoke else 30 + (args.soak / 60) + (15 if args.litellm else 0)
                                 + (10 if args.portkey else 0))

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        return asyncio.run(asyncio.wait_for(main_async(args), limit * 60))
    except TimeoutError:
        print(f"bench: stopped after its bound of {limit:.0f} minutes", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench: interrupted; everything it started was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
