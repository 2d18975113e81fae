"""One full bench run: every system started once, every scenario run on each leg in turn.

Legs: direct (the mock itself), bare proxy, gateway, and optionally LiteLLM. For each round, each
scenario runs on every leg before the next scenario starts, so a noisy neighbour hits all legs alike;
with several rounds each figure is the median. CPU is the user+sys time of the leg's whole process
tree over the scenario (for the gateway: from the first request until the workers have applied the
last settlement), divided by the requests served.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.loadgen import DONE_MARKERS, payload
from bench.mock_upstream import CHUNKS, SLOW_CHUNKS
from bench.procs import PYTHON, ROOT, Procs
from bench.sampler import Tree

LUA = ROOT / "bench" / "wrk" / "chat.lua"
FAST_MODEL = "gpt-4o-mini"


@dataclass
class Options:
    duration: float = 8.0  # seconds per throughput run
    rounds: int = 1
    rate: float = 150.0  # requests/s of the fixed-rate leg (below every leg's saturation)
    streams: tuple[int, ...] = (1000,)
    latency_requests: int = 300
    chunks: int = CHUNKS
    litellm: bool = False
    portkey: bool = False
    logs: bool = True
    log_rows: int = 1_000_000
    soak: float = 0.0
    api_procs: int = 2
    db: str = "auto"
    profile: float = 0.0  # seconds of py-spy on one API process under load (0 = no profile)


@dataclass
class Leg:
    key: str
    title: str
    url: str
    slow_url: str
    tree: Tree
    token: str = ""
    slow_model: str = FAST_MODEL
    model: str = FAST_MODEL  # what the fast scenarios ask for
    settle: Callable[[], Awaitable[object]] | None = None
    fmt: str = "openai"  # the client format spoken: openai, or anthropic (/v1/messages)
    headers: dict[str, str] = field(default_factory=dict)  # further request headers (Portkey's routing)
    streams: bool = True  # False: the streamed scenarios are skipped (a peer whose streams fail)
    metrics: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    rss_idle: dict[str, list[int]] = field(default_factory=dict)
    rss_peak: dict[str, list[int]] = field(default_factory=dict)

    def put(self, name: str, value: float) -> None:
        self.metrics.setdefault(name, []).append(value)

    def get(self, name: str) -> float | None:
        values = self.metrics.get(name)
        return statistics.median(values) if values else None

    def add_errors(self, scenario: str, count: int) -> None:
        self.errors[scenario] = self.errors.get(scenario, 0) + int(count)

    def add_result_errors(self, scenario: str, res: dict, notes: list[str]) -> None:
        """Errors of a bench.loadgen result, with a sample answer of each kind in the notes."""
        self.add_errors(scenario, res["errors"])
        if res["errors"]:
            notes.append(f"{self.title}, {scenario}: {res['errors']} errors {res['error_kinds']} "
                         f"{res.get('error_samples') or ''}")


def ensure_wrk() -> str | None:
    """Debian's wrk, installed when missing and we may (root with apt-get); None → the Python generator."""
    found = shutil.which("wrk")
    if found or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return found
    print("installing wrk (apt-get) ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], env=env, capture_output=True, timeout=300)
        if not shutil.which("wrk"):
            subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=300)
            subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], env=env, capture_output=True, timeout=300)
    except subprocess.SubprocessError:
        pass
    return shutil.which("wrk")


class Runner:
    def __init__(self, options: Options, procs: Procs, mock_tree: Tree, legs: list[Leg]) -> None:
        self.o = options
        self.procs = procs
        self.mock_tree = mock_tree
        self.legs = legs
        self.wrk = ensure_wrk()
        self.notes: list[str] = []
        if self.wrk is None:
            self.notes.append("wrk unavailable: throughput measured with the Python load generator")

    # -- load generators ---------------------------------------------------------------------------
    async def _exec(self, args: list[str], env: dict[str, str] | None, timeout: float) -> str:
        proc = await asyncio.create_subprocess_exec(*args, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise RuntimeError(f"{args[0]} {args[1]} did not finish within {timeout:.0f}s") from None
        lines = [line for line in out.decode().splitlines() if line.startswith("{")]
        if not lines:
            raise RuntimeError(f"{' '.join(args[:3])} printed no result: {err.decode()[-2000:]}")
        return lines[-1]

    async def loadgen(self, mode: str, leg: Leg, *, stream: bool = False, slow: bool = False, usage: bool = True,
                      timeout: float = 300.0, **kw: object) -> dict:
        args = [PYTHON, "-m", "bench.loadgen", mode, "--url", leg.slow_url if slow else leg.url,
                "--model", leg.slow_model if slow else leg.model,
                "--expect-chunks", str(SLOW_CHUNKS if slow else self.o.chunks), "--format", leg.fmt]
        if leg.token:
            args += ["--token", leg.token]
        for name, value in leg.headers.items():
            args += ["--header", f"{name}: {value}"]
        if stream:
            args += ["--stream"] + (["--include-usage"] if usage and not slow else [])
        for name, value in kw.items():
            args += [f"--{name.replace('_', '-')}", str(value)]
        return json.loads(await self._exec(args, None, timeout))

    async def closed(self, leg: Leg, concurrency: int, stream: bool) -> dict:
        """Closed-loop throughput: wrk when available, else the Python generator."""
        duration = self.o.duration
        if self.wrk is None:
            res = await self.loadgen("closed", leg, stream=stream, concurrency=concurrency, duration=duration)
            return {"ok": res["ok"], "errors": res["errors"], "rps": res["rps"], "chunks": res["chunks"],
                    "seconds": res["duration"], "p50": res["latency"]["p50"], "p99": res["latency"]["p99"]}
        env = {**os.environ, "BENCH_BODY": payload(leg.model, stream, stream, fmt=leg.fmt).decode(),
               "BENCH_TOKEN": leg.token, "BENCH_EXPECT": str(self.o.chunks), "BENCH_STREAM": "1" if stream else "0",
               "BENCH_DONE": DONE_MARKERS[leg.fmt].decode(),
               "BENCH_HEADERS": "\n".join(f"{k}: {v}" for k, v in leg.headers.items())}
        out = json.loads(await self._exec(
            [self.wrk, "-t1", f"-c{concurrency}", f"-d{duration:g}s", "--timeout", "10s", "-s", str(LUA), leg.url],
            env, duration + 60))
        errors = sum(out["errors"].values()) + out["bad"]
        ok = out["requests"] - out["errors"]["status"] - out["bad"]
        seconds = out["duration_us"] / 1e6
        return {"ok": ok, "errors": errors, "rps": ok / seconds, "chunks": out["chunks"], "seconds": seconds,
                "p50": out["latency_us"]["p50"] / 1000, "p99": out["latency_us"]["p99"] / 1000}

    # -- measurement -------------------------------------------------------------------------------
    async def measured(self, leg: Leg, run: Callable[[], Awaitable[dict]]
                       ) -> tuple[dict, dict[str, tuple[float, float]], float]:
        """(result, (user, system) CPU seconds by process label of the leg's tree, CPU seconds of the mock)."""
        if leg.settle is not None:
            await leg.settle()
        before, mock_before = leg.tree.cpu_by_label(), self.mock_tree.cpu_seconds()
        result = await run()
        if leg.settle is not None:
            await leg.settle()
        after, mock_after = leg.tree.cpu_by_label(), self.mock_tree.cpu_seconds()
        cpu = {label: (u - before.get(label, (0.0, 0.0))[0], s - before.get(label, (0.0, 0.0))[1])
               for label, (u, s) in after.items()}
        return result, cpu, mock_after - mock_before

    @staticmethod
    def _split(cpu: dict[str, tuple[float, float]]) -> tuple[float, float]:
        """(the system's own CPU, its database backends' CPU), user + system seconds."""
        db = sum(u + s for k, (u, s) in cpu.items() if k.startswith("postgres"))
        return sum(u + s for u, s in cpu.values()) - db, db

    async def throughput(self, leg: Leg, concurrency: int, stream: bool) -> None:
        if stream and not leg.streams:
            return
        name = f"{'st' if stream else 'ns'}{concurrency}"
        res, cpu, mock_cpu = await self.measured(leg, lambda: self.closed(leg, concurrency, stream))
        own, db = self._split(cpu)
        served = max(res["ok"], 1)
        leg.put(f"{name}_rps", res["rps"])
        leg.put(f"{name}_cpu_ms", own * 1000 / served)
        leg.put(f"{name}_db_cpu_ms", db * 1000 / served)
        leg.put(f"{name}_mock_cpu_ms", mock_cpu * 1000 / served)
        for label, (user, system) in cpu.items():
            if not label.startswith("postgres"):
                leg.put(f"{name}_cpu_ms.{label}", (user + system) * 1000 / served)
                leg.put(f"{name}_sys_ms.{label}", system * 1000 / served)
        leg.put(f"{name}_p50", res["p50"])
        leg.put(f"{name}_p99", res["p99"])
        if stream:
            leg.put(f"{name}_chunks_ps", res["chunks"] / res["seconds"])
            leg.put(f"{name}_cpu_ms_chunk", own * 1000 / max(res["chunks"], 1))
        leg.add_errors(name, res["errors"])
        if res["errors"]:
            self.notes.append(f"{leg.title}, {name}: {res['errors']} errors (wrk: non-2xx, socket errors, "
                              "or answers with a wrong chunk count)")

    async def latency(self, leg: Leg) -> None:
        res = await self.loadgen("latency", leg, requests=self.o.latency_requests)
        leg.put("lat_p50", res["latency"]["p50"])
        leg.put("lat_p99", res["latency"]["p99"])
        leg.add_result_errors("c=1", res, self.notes)
        if not leg.streams:
            return
        res = await self.loadgen("latency", leg, stream=True, requests=self.o.latency_requests)
        for key, src in (("ttfb", "ttfb"), ("ttlb", "latency")):
            leg.put(f"{key}_p50", res[src]["p50"])
            leg.put(f"{key}_p99", res[src]["p99"])
        leg.add_result_errors("c=1 stream", res, self.notes)

    async def fixed_rate(self, leg: Leg) -> None:
        res, cpu, _ = await self.measured(leg, lambda: self.loadgen("rate", leg, rate=self.o.rate,
                                                                    duration=self.o.duration))
        own, _db = self._split(cpu)
        leg.put("rate_rps", res["rps"])
        leg.put("rate_p50", res["latency"]["p50"])
        leg.put("rate_p99", res["latency"]["p99"])
        leg.put("rate_cpu_ms", own * 1000 / max(res["ok"], 1))
        leg.add_result_errors("fixed rate", res, self.notes)

    async def concurrent_streams(self, leg: Leg) -> None:
        if not leg.streams:
            return
        for count in self.o.streams:
            res = await self.loadgen("streams", leg, stream=True, slow=True, concurrency=count, timeout=180)
            leg.put(f"streams_{count}_clean", res["clean"])
            leg.put(f"streams_{count}_peak", res["peak_open"])
            leg.add_result_errors(f"{count} streams", res, self.notes)
            if leg.settle is not None:
                await leg.settle()

    async def warm(self, leg: Leg) -> None:
        """A short verified run per leg (the answers are checked), then its idle RSS."""
        for stream in (False, True) if leg.streams else (False,):
            res = await self.loadgen("check", leg, stream=stream, requests=200, concurrency=8)
            if res["ok"] == 0:
                raise RuntimeError(f"{leg.title}: no good answer: {res['error_kinds']} {res['error_samples']}")
            if res["errors"]:
                leg.add_errors("warm-up", res["errors"])
                self.notes.append(f"{leg.title}, warm-up: {res['errors']} bad answers of 200: {res['error_kinds']} "
                                  f"{res['error_samples']}")
        if leg.settle is not None:
            await leg.settle()
        await asyncio.sleep(1.0)
        leg.rss_idle = leg.tree.rss_now()
        leg.tree.reset_peaks()

    # -- the run -----------------------------------------------------------------------------------
    async def run(self) -> None:
        for leg in self.legs:
            await self.warm(leg)
        scenarios: list[tuple[str, Callable[[Leg], Awaitable[None]]]] = [
            ("non-streaming, concurrency 32", lambda leg: self.throughput(leg, 32, False)),
            ("non-streaming, concurrency 128", lambda leg: self.throughput(leg, 128, False)),
            ("streaming, concurrency 32", lambda leg: self.throughput(leg, 32, True)),
            ("concurrency 1 latency", self.latency),
            (f"fixed rate {self.o.rate:g}/s", self.fixed_rate),
            ("concurrent streams", self.concurrent_streams),
        ]
        for round_no in range(1, self.o.rounds + 1):
            for title, scenario in scenarios:
                for leg in self.legs:
                    started = time.monotonic()
                    print(f"  round {round_no}/{self.o.rounds} · {title} · {leg.title} ...", end="", flush=True)
                    self.procs.check_alive()
                    await scenario(leg)
                    print(f" {time.monotonic() - started:.0f}s", flush=True)
        for leg in self.legs:
            leg.rss_peak = leg.tree.peaks()

    async def soak(self, leg: Leg, seconds: float, window: float = 30.0) -> list[dict[str, list[int]]]:
        """Alternating windows of non-streamed and streamed traffic at the fixed rate; RSS after each."""
        samples: list[dict[str, list[int]]] = []
        ends = time.monotonic() + seconds
        stream = False
        while time.monotonic() < ends:
            span = min(window, max(1.0, ends - time.monotonic()))
            print(f"  soak · {leg.title} · {'streams' if stream else 'requests'} {span:.0f}s "
                  f"({max(0, ends - time.monotonic()):.0f}s left)", flush=True)
            res = await self.loadgen("rate", leg, stream=stream, rate=self.o.rate / (4 if stream else 1),
                                     duration=span, timeout=span + 120)
            leg.add_result_errors("soak", res, self.notes)
            samples.append(leg.tree.rss_now())
            stream = not stream
            self.procs.check_alive()
        return samples

    def save(self, path: Path, extra: dict) -> None:
        data = {"options": self.o.__dict__, "notes": self.notes,
                "legs": {leg.key: {"metrics": leg.metrics, "errors": leg.errors, "rss_idle": leg.rss_idle,
                                   "rss_peak": leg.rss_peak} for leg in self.legs}, **extra}
        path.write_text(json.dumps(data, indent=1, default=str))
