"""`python -m bench.agent_cache` (make bench-cache): prompt-cache affinity measured on coding-agent traffic.

One run: a fake provider that caches prompt prefixes per key (bench/cache_upstream.py), the gateway
as deployed (bench/gateway.py: API processes, workers, scheduler, its own Redis and database), three
channels × four keys per protocol (OpenAI chat completions and Anthropic Messages, each channel on its
own fake address), and N sessions × M turns of agent conversations (bench/agent_sessions.py), all
sessions at once. Phases, each on a fresh cache and its own key of the bench user:

  off        ChannelAffinityEnabled=false (and multi-key channels in `random` key mode): today's routing
  on         ChannelAffinityEnabled=true (multi-key channels in `affinity` key mode)
  failover   affinity on; after turn M/2 the upstream that served most sessions starts failing (one per
             protocol; `500` answers, then `refuse`d connections in a second round): every session
             pinned there must move within one request, and no failure may reach the client
  cpu        off/on alternated (off-on, on-off, ...) --cpu-rounds times with fresh sessions: the
             gateway's CPU per request (bench/sampler.py over its whole process tree, until settled)

Figures: the cached share of the input tokens, the share of requests that hit, the ideal (the fake's
cache shared by every key: every turn finds its whole previous prompt), measured ÷ ideal, the quota
charged, and how requests spread over keys. Report in bench/results/<time>-cache/ (report.md, results.json).
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import random
import resource
import secrets
import signal
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from bench import cache_figures as figures
from bench.agent_sessions import (
    ANTHROPIC_MODEL,
    KINDS,
    OPENAI_MODEL,
    Session,
    Shape,
    new_sessions,
    send_turn,
    tools_anthropic,
    tools_openai,
)
from bench.gateway import LIMITS, Console, Gateway, GatewayConfig, postgres_available
from bench.procs import PYTHON, ROOT, Procs, free_port, wait_http
from bench.sampler import Sampler, Tree

USER_QUOTA = 10**13
FAMILIES = {"openai": (1, OPENAI_MODEL, "o"), "anthropic": (14, ANTHROPIC_MODEL, "a")}  # type, model, prefix
AFFINITY = "ChannelAffinityEnabled"


@dataclass
class Plan:
    sessions: int = 40
    turns: int = 12
    concurrency: int = 0  # sessions in flight at once (0 = all)
    think_ms: float = 100.0  # a session's pause between turns: 0 .. think_ms, seeded
    channels: int = 3  # per protocol
    keys: int = 4  # per channel
    channel_mode: str = "auto"  # auto | multi | single (one channel per key)
    off_key_mode: str = "random"  # the key mode of multi-key channels in the `off` phase
    fail_modes: tuple[str, ...] = ("500", "refuse")
    cpu_rounds: int = 3
    retry_times: int = 1
    ttl: float = 300.0
    api_procs: int = 2
    db: str = "auto"
    shape: Shape = field(default_factory=Shape)


# -- the fake upstream, from outside ---------------------------------------------------------------

class FakeControl:
    def __init__(self, base: str) -> None:
        self.base = base
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))

    async def call(self, method: str, path: str, body: object = None) -> Any:
        async with self.http.request(method, self.base + path, json=body) as resp:
            data = await resp.json(content_type=None)
            if resp.status != 200:
                raise RuntimeError(f"fake {method} {path}: {resp.status} {data}")
            return data

    async def reset(self) -> None:
        await self.call("POST", "/_reset")

    async def fail(self, upstream: str, mode: str) -> None:
        await self.call("POST", "/_fail", {"upstream": upstream, "mode": mode})

    async def close(self) -> None:
        await self.http.close()


@dataclass
class Channel:
    id: int
    family: str
    upstream: str
    keys: list[str]  # one, or the keys of a multi-key channel


class CacheBench:
    def __init__(self, plan: Plan, procs: Procs, sampler: Sampler, out_dir: Path) -> None:
        self.plan = plan
        self.procs = procs
        self.sampler = sampler
        self.out_dir = out_dir
        self.upstream_ports: dict[str, int] = {}
        self.fake: FakeControl | None = None
        self.gw: Gateway | None = None
        self.root: Console | None = None
        self.owner: Console | None = None
        self.books: Any = None
        self.channels: list[Channel] = []
        self.multi_key = False
        self.user_id = 0
        self.tokens: dict[str, tuple[int, str]] = {}  # phase → (token id, key)
        self.tools = {"openai": tools_openai(plan.shape), "anthropic": tools_anthropic(plan.shape)}
        self.notes: list[str] = []
        self.http: aiohttp.ClientSession | None = None

    # -- starting ----------------------------------------------------------------------------------
    async def start(self) -> None:
        names = [f"{prefix}{c}" for _fam, (_t, _m, prefix) in FAMILIES.items()
                 for c in range(1, self.plan.channels + 1)]
        self.upstream_ports = {name: free_port() for name in names}
        control = free_port()
        args = [PYTHON, "-m", "bench.cache_upstream", "--control-port", str(control), "--ttl", str(self.plan.ttl)]
        for name, port in self.upstream_ports.items():
            args += ["--upstream", f"{name}={port}"]
        fake = self.procs.start("cache-upstream", args)
        self.sampler.add(process_tree("fake", fake.pid))
        await wait_http(f"http://127.0.0.1:{control}/health", self.procs)
        self.fake = FakeControl(f"http://127.0.0.1:{control}")
        db = self.plan.db
        if db == "auto":
            db = "postgres" if postgres_available() else "sqlite"
        print(f"starting the gateway ({self.plan.api_procs} API processes, workers, scheduler, redis-server, {db}) ...",
              flush=True)
        self.gw = Gateway(self.procs, self.out_dir, "", GatewayConfig(api_procs=self.plan.api_procs, db=db))
        self.sampler.add(self.gw.tree)
        await self.gw.start()
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300),
                                          connector=aiohttp.TCPConnector(limit=0))
        await self.provision()

    async def provision(self) -> None:
        gw = self.gw
        assert gw is not None
        root = self.root = Console(gw.base)
        await root.login("root", "123456")
        for key, value in {**LIMITS, "RetryTimes": str(self.plan.retry_times),
                           "ChannelAffinityTTLSeconds": str(int(self.plan.ttl))}.items():
            await root.call("PUT", "/api/option/", {"key": key, "value": value})
        for fam, (kind, model, prefix) in FAMILIES.items():
            for c in range(1, self.plan.channels + 1):
                await self.create_channel(fam, kind, model, f"{prefix}{c}")
        user = await root.call("POST", "/api/user/", {"username": "cachebench", "password": "cache-bench-pw-1",
                                                      "display_name": "cache bench"})
        self.user_id = user["data"]["id"]
        await root.call("PUT", "/api/user/", {"id": self.user_id, "quota": USER_QUOTA})
        self.owner = Console(gw.base)
        await self.owner.login("cachebench", "cache-bench-pw-1")
        from bench.accounting import Books

        self.books = Books(gw.database_url, self.user_id, 0, [c.id for c in self.channels])
        await self.books.open()
        await self.probe()

    async def create_channel(self, fam: str, kind: int, model: str, upstream: str) -> None:
        assert self.root is not None
        lead = "sk-ant-api03-" if fam == "anthropic" else "sk-"
        keys = [f"{lead}cache-{upstream}-k{j}-{secrets.token_hex(6)}" for j in range(1, self.plan.keys + 1)]
        form: dict[str, Any] = {"name": f"cache-{upstream}", "type": kind, "key": "\n".join(keys), "models": model,
                                "base_url": f"http://127.0.0.1:{self.upstream_ports[upstream]}", "group": "default",
                                "status": 1}
        if self.plan.channel_mode != "single":
            form.update({"multi_key": True, "multi_key_mode": "affinity"})
        body = await self.root.call("POST", "/api/channel/", form)
        created = body["data"]
        if len(created) == 1 and len(keys) > 1:
            info = created[0].get("channel_info") or {}
            if not info.get("is_multi_key"):
                raise RuntimeError(f"one channel for {len(keys)} keys, but not a multi-key one: {created[0]}")
            self.multi_key = True
            self.channels.append(Channel(created[0]["id"], fam, upstream, keys))
            return
        if self.plan.channel_mode == "multi":
            raise RuntimeError("the gateway does not create multi-key channels yet (try --channels single)")
        if len(created) != len(keys):
            raise RuntimeError(f"{len(keys)} keys gave {len(created)} channels")
        for row, key in zip(sorted(created, key=lambda r: r["id"]), keys, strict=True):
            self.channels.append(Channel(row["id"], fam, upstream, [key]))

    async def token(self, phase: str) -> tuple[int, str]:
        assert self.owner is not None
        if phase in self.tokens:
            return self.tokens[phase]
        body = await self.owner.call("POST", "/api/token/", {"name": f"cache-{phase}"[:30], "remain_quota": 0,
                                                            "unlimited_quota": True, "expired_time": -1})
        data = body.get("data") or {}
        if not data.get("key"):
            listed = await self.owner.call("GET", "/api/token/", p=0, size=100)
            items = listed["data"]["items"] if isinstance(listed["data"], dict) else listed["data"]
            data = next(t for t in items if t["name"] == f"cache-{phase}"[:30])
        self.tokens[phase] = (data["id"], "sk-" + data["key"].removeprefix("sk-"))
        return self.tokens[phase]

    async def probe(self) -> None:
        """One request per protocol: the upstream must see one of a channel's keys (a multi-key
        channel whose keys the relay does not split yet would send them all as one)."""
        assert self.fake is not None
        await self.fake.reset()
        sessions = [s for s in new_sessions("probe", len(KINDS), Shape(turns=1, user_tokens=50)) if s.kind in
                    ("prefix", "claude-code")]
        await self.run_turns(sessions, "probe", 1, 1)
        records = await self.fake.call("GET", "/_requests")
        known = {k for c in self.channels for k in c.keys}
        bad = [r["key"][:40] for r in records if r["key"] not in known]
        failed = [t for s in sessions for t in s.turns if not t.ok]
        if failed or bad or len(records) != len(sessions):
            raise RuntimeError(f"probe: failures {[(t.status, t.error) for t in failed]}, keys not a channel's "
                               f"{bad}, {len(records)} answered of {len(sessions)}")

    # -- switching ---------------------------------------------------------------------------------
    async def set_affinity(self, on: bool) -> None:
        assert self.root is not None
        await self.root.call("PUT", "/api/option/", {"key": AFFINITY, "value": "true" if on else "false"})
        if self.multi_key:
            mode = "affinity" if on else self.plan.off_key_mode
            for channel in self.channels:
                await self.root.call("PUT", "/api/channel/", {"id": channel.id, "multi_key_mode": mode})
        await asyncio.sleep(1.0)  # every API process hears the option and channel events (Redis pub/sub)

    # -- traffic -----------------------------------------------------------------------------------
    async def run_turns(self, sessions: Sequence[Session], phase: str, first: int, last: int) -> None:
        """Turns first..last of every session, all sessions at once (at most --concurrency in flight)."""
        assert self.gw is not None and self.http is not None
        _token_id, key = await self.token(phase)
        limit = asyncio.Semaphore(self.plan.concurrency or len(sessions) or 1)
        base, http = self.gw.base, self.http

        async def one(session: Session) -> None:
            rng = random.Random(f"{session.sid}-think")
            for number in range(first, last + 1):
                async with limit:
                    await send_turn(http, base, key, session, number, self.tools[session.family])
                if self.plan.think_ms:
                    await asyncio.sleep(rng.uniform(0, self.plan.think_ms) / 1000)

        await asyncio.gather(*(one(s) for s in sessions))

    async def collect(self, phase: str, sessions: Sequence[Session]) -> tuple[list[dict], list[dict], list[dict]]:
        """(client turns, the fake's records, the gateway's consume logs of the phase), once settled;
        also saved as raw/<phase>.json beside the report."""
        assert self.fake is not None
        await self.books.wait_settled()
        from models import Log
        from models.enums import LogType

        token_id, _ = await self.token(phase)
        answered = sum(1 for s in sessions for t in s.turns if t.status == 200)
        query = Log.filter(token_id=token_id, type=int(LogType.CONSUME))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the workers applied every answered request's record
            if await query.count() >= answered:
                break
            await asyncio.sleep(0.2)
        rows = await query.values(
            "request_id", "channel_id", "quota", "prompt_tokens", "completion_tokens", "other")
        logs = [{**row, "other": orjson.loads(row["other"] or "{}")} for row in rows]
        turns = [asdict(t) for s in sessions for t in s.turns]
        records = await self.fake.call("GET", "/_requests")
        raw = self.out_dir / "raw"
        raw.mkdir(exist_ok=True)
        (raw / f"{phase}.json").write_bytes(orjson.dumps({"turns": turns, "records": records, "logs": logs}))
        return turns, records, logs

    def keys(self) -> dict[str, list[str]]:
        """Protocol → every key of its channels."""
        out: dict[str, list[str]] = {}
        for channel in self.channels:
            out.setdefault(channel.family, []).extend(channel.keys)
        return out

    async def used_quota(self, phase: str) -> int:
        from models import Token

        token_id, _ = await self.token(phase)
        return int((await Token.get(id=token_id)).used_quota)

    def cpu(self) -> dict[str, tuple[float, float]]:
        assert self.gw is not None
        return self.gw.tree.cpu_by_label()

    @staticmethod
    def cpu_by_process(before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]]
                       ) -> dict[str, float]:
        """CPU seconds between two readings by kind of process (api, worker, redis, scheduler,
        postgres: a process's children counted with it)."""
        out: dict[str, float] = {}
        for label, (u, s) in after.items():
            b = before.get(label, (0.0, 0.0))
            kind = label.split("+")[0]
            out[kind] = out.get(kind, 0.0) + (u - b[0]) + (s - b[1])
        return out

    @classmethod
    def cpu_spent(cls, before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]]
                  ) -> tuple[float, float]:
        """(the gateway's own CPU seconds, its PostgreSQL backends') between two readings."""
        spent = cls.cpu_by_process(before, after)
        db = sum(v for k, v in spent.items() if k.startswith("postgres"))
        return sum(spent.values()) - db, db

    # -- phases ------------------------------------------------------------------------------------
    async def cache_phase(self, phase: str, on: bool) -> dict[str, Any]:
        assert self.fake is not None
        print(f"phase {phase}: affinity {'on' if on else 'off'}, {self.plan.sessions} sessions × "
              f"{self.plan.turns} turns ...", end="", flush=True)
        await self.set_affinity(on)
        await self.fake.reset()
        await self.books.wait_settled()
        sessions = new_sessions(phase, self.plan.sessions, self.plan.shape)
        before, started = self.cpu(), time.monotonic()
        await self.run_turns(sessions, phase, 1, self.plan.turns)
        seconds = time.monotonic() - started
        turns, records, logs = await self.collect(phase, sessions)
        own, db = self.cpu_spent(before, self.cpu())
        print(f" {seconds:.0f}s", flush=True)
        return {"affinity": on, "seconds": seconds, "cache": figures.cache_figures(records),
                "by_family": figures.by_family(records), "stickiness": figures.stickiness(records),
                "spread": figures.spread(records), "sessions_per_key": figures.sessions_per_key(records, self.keys()),
                "client": figures.client_figures(turns),
                "logs": figures.log_figures(turns, logs), "foreign_hits": figures.foreign_hits(turns, records, logs),
                "used_quota": await self.used_quota(phase),
                "cpu_ms_per_request": own * 1000 / max(len(turns), 1),
                "db_cpu_ms_per_request": db * 1000 / max(len(turns), 1)}

    async def failover_phase(self, mode: str) -> dict[str, Any]:
        assert self.fake is not None
        phase = f"failover{mode}"
        at = max(1, self.plan.turns // 2)
        print(f"phase failover ({mode}): the busiest upstream of each protocol fails after turn {at} ...",
              end="", flush=True)
        await self.set_affinity(True)
        await self.fake.reset()
        sessions = new_sessions(phase, self.plan.sessions, self.plan.shape)
        await self.run_turns(sessions, phase, 1, at)
        served = figures.turn_servers([asdict(t) for s in sessions for t in s.turns],
                                      await self.fake.call("GET", "/_requests"))
        failing: dict[str, str] = {}
        for fam in FAMILIES:
            counts: dict[str, int] = {}
            for (sid, number), record in served.items():
                if number == at and any(s.sid == sid and s.family == fam for s in sessions):
                    counts[record["upstream"]] = counts.get(record["upstream"], 0) + 1
            if counts:
                failing[fam] = max(sorted(counts), key=lambda u: counts[u])
        for upstream in failing.values():
            await self.fake.fail(upstream, mode)
        await self.run_turns(sessions, phase, at + 1, self.plan.turns)
        turns, records, logs = await self.collect(phase, sessions)
        channel_upstream = {c.id: c.upstream for c in self.channels}
        result = figures.failover_figures(turns, records, logs, at, failing, channel_upstream)
        result["mode"] = mode
        result["disabled_by_gateway"] = await self.restore(failing.values())
        print(f" {result['client_failures']} client failures; {result['moved_next_turn']} of {result['pinned']} "
              "pinned sessions served elsewhere on the next turn", flush=True)
        return result

    async def restore(self, upstreams: Iterable[str]) -> list[str]:
        """The failing upstreams serve again; what the gateway disabled meanwhile is enabled again."""
        assert self.fake is not None and self.root is not None
        from models import Channel as ChannelRow

        noted: list[str] = []
        for upstream in upstreams:
            await self.fake.fail(upstream, "ok")
            for channel in (c for c in self.channels if c.upstream == upstream):
                row = await ChannelRow.get(id=channel.id)
                info = json.loads(row.channel_info or "{}") if getattr(row, "channel_info", "") else {}
                disabled_keys = info.get("multi_key_status_list") or {}
                if row.status != 1 or disabled_keys:
                    noted.append(f"channel {channel.id} ({upstream}): status {row.status}, keys disabled "
                                 f"{sorted(disabled_keys)}")
                    if disabled_keys:
                        from models.channel import update_keys

                        await update_keys(channel.id, lambda ring: ring.states.clear())
                    await self.root.call("PUT", "/api/channel/", {"id": channel.id, "status": 1})
        await asyncio.sleep(1.0)
        return noted

    async def cpu_rounds(self) -> dict[str, Any]:
        """off/on alternated with fresh sessions: the gateway's CPU per request, median of each."""
        per: dict[str, list[float]] = {"off": [], "on": []}
        by_process: dict[str, dict[str, list[float]]] = {"off": {}, "on": {}}
        for round_no in range(1, self.plan.cpu_rounds + 1):
            for setting in ("off", "on") if round_no % 2 else ("on", "off"):  # ABBA: a drift hits both alike
                phase = f"cpu{setting}{round_no}"
                print(f"cpu round {round_no}/{self.plan.cpu_rounds}, affinity {setting} ...", end="", flush=True)
                await self.set_affinity(setting == "on")
                await self.books.wait_settled()
                sessions = new_sessions(phase, self.plan.sessions, self.plan.shape)
                before, started = self.cpu(), time.monotonic()
                await self.run_turns(sessions, phase, 1, self.plan.turns)
                await self.books.wait_settled()
                spent = self.cpu_by_process(before, self.cpu())
                count = max(sum(len(s.turns) for s in sessions), 1)
                per[setting].append(sum(v for k, v in spent.items() if not k.startswith("postgres")) * 1000 / count)
                for kind, seconds in spent.items():
                    by_process[setting].setdefault(kind, []).append(seconds * 1000 / count)
                failed = sum(1 for s in sessions for t in s.turns if not t.ok)
                if failed:
                    self.notes.append(f"cpu round {round_no} ({setting}): {failed} failed requests")
                print(f" {time.monotonic() - started:.0f}s, {per[setting][-1]:.2f} ms/request", flush=True)
        off = statistics.median(per["off"]) if per["off"] else None
        on = statistics.median(per["on"]) if per["on"] else None
        medians = {setting: {kind: statistics.median(v) for kind, v in sorted(kinds.items())}
                   for setting, kinds in by_process.items()}
        from bench.affinity_cost import session_cost_us

        cost = session_cost_us(new_sessions("cost", len(KINDS), self.plan.shape), self.tools, self.plan.turns)
        return {"rounds": per, "off_ms": off, "on_ms": on, "on_over_off": (on / off) if on and off else None,
                "by_process_ms": medians, "session_of_us": cost}

    async def close(self) -> None:
        for closer in (self.books, self.root, self.owner, self.fake):
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer.close()
        if self.http is not None:
            await self.http.close()
        if self.gw is not None:
            await self.gw.close()


def process_tree(name: str, pid: int) -> Tree:
    tree = Tree(name)
    tree.add(pid, name)
    return tree


def relay_state() -> str:
    """Which of the relay's affinity and load pieces are in the work tree (the run measures what is there)."""
    parts = [p for p in ("api/relay/affinity.py", "api/relay/load.py") if (ROOT / p).exists()]
    return ", ".join(parts) if parts else "none (affinity off and on route alike)"


async def main_async(plan: Plan, out_dir: Path) -> int:
    from bench import cache_report

    procs = Procs(out_dir)
    sampler = Sampler()
    sampler.start()
    bench = CacheBench(plan, procs, sampler, out_dir)
    started = time.monotonic()
    try:
        await bench.start()
        results: dict[str, Any] = {"plan": {**asdict(plan), "shape": asdict(plan.shape)},
                                   "multi_key_channels": bench.multi_key, "relay": relay_state(),
                                   "channels": [asdict(c) | {"keys": len(c.keys)} for c in bench.channels]}
        results["off"] = await bench.cache_phase("off", on=False)
        results["on"] = await bench.cache_phase("on", on=True)
        results["failover"] = [await bench.failover_phase(mode) for mode in plan.fail_modes]
        results["cpu"] = await bench.cpu_rounds() if plan.cpu_rounds > 0 else None
        results["notes"] = bench.notes
        results["seconds"] = time.monotonic() - started
        text = cache_report.render(results)
        (out_dir / "report.md").write_text(text + "\n")
        (out_dir / "results.json").write_text(json.dumps(results, indent=1, default=str))
        print("\n" + text + f"\n\n(total {time.monotonic() - started:.0f}s; report in {out_dir / 'report.md'})")
        return 0
    finally:
        await bench.close()
        procs.stop_all()
        sampler.stop()
        if bench.gw is not None:
            bench.gw.drop_database()


def parse(argv: list[str] | None) -> tuple[Plan, float]:
    p = argparse.ArgumentParser(prog="python -m bench.agent_cache", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--sessions", type=int, default=40)
    p.add_argument("--turns", type=int, default=12)
    p.add_argument("--concurrency", type=int, default=0, help="sessions in flight at once (default: all)")
    p.add_argument("--think-ms", type=float, default=100.0, help="a session's pause between turns, up to (100)")
    p.add_argument("--channels", choices=("auto", "multi", "single"), default="auto",
                   help="multi-key channels (auto: when the gateway creates them), or one channel per key")
    p.add_argument("--keys", type=int, default=4, help="keys per channel (4)")
    p.add_argument("--off-key-mode", choices=("random", "polling", "affinity"), default="random")
    p.add_argument("--fail-modes", default="500,refuse", help="failover rounds, comma-separated ('' = none)")
    p.add_argument("--cpu-rounds", type=int, default=3, help="off/on CPU rounds, alternated ABBA (0 = none)")
    p.add_argument("--retry-times", type=int, default=1)
    p.add_argument("--system-tokens", type=int, default=4000, help="system prompt; 1500 of it shared (4000)")
    p.add_argument("--tools-tokens", type=int, default=1500)
    p.add_argument("--user-tokens", type=int, default=800, help="each turn's new message (800)")
    p.add_argument("--api-procs", type=int, default=2)
    p.add_argument("--db", choices=("auto", "postgres", "sqlite"), default="auto")
    p.add_argument("--tiny", action="store_true", help="the smallest meaningful run (the test's): 5 sessions × 4 turns")
    p.add_argument("--max-minutes", type=float, default=30.0)
    a = p.parse_args(argv)
    shared = min(1500, a.system_tokens // 2)
    shape = Shape(turns=a.turns, tools_tokens=a.tools_tokens, shared_system_tokens=shared,
                  session_system_tokens=a.system_tokens - shared, user_tokens=a.user_tokens)
    plan = Plan(sessions=a.sessions, turns=a.turns, concurrency=a.concurrency, think_ms=a.think_ms,
                keys=a.keys, channel_mode=a.channels, off_key_mode=a.off_key_mode,
                fail_modes=tuple(m for m in a.fail_modes.split(",") if m.strip()), cpu_rounds=a.cpu_rounds,
                retry_times=a.retry_times, api_procs=a.api_procs, db=a.db, shape=shape)
    if a.tiny:
        plan.sessions, plan.turns, plan.cpu_rounds, plan.think_ms = 5, 4, 1, 0.0
        plan.shape = Shape(turns=4, tools_tokens=600, shared_system_tokens=600, session_system_tokens=600,
                           user_tokens=300)
    return plan, a.max_minutes


def main(argv: list[str] | None = None) -> int:
    plan, minutes = parse(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = ROOT / "bench" / "results" / f"{stamp}-cache"
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"bench.agent_cache: logs and report in {out_dir}", flush=True)

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        return asyncio.run(asyncio.wait_for(main_async(plan, out_dir), minutes * 60))
    except TimeoutError:
        print(f"bench.agent_cache: stopped after its bound of {minutes:.0f} minutes", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench.agent_cache: interrupted; everything it started was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
