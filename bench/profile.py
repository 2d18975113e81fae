"""Where the gateway's CPU goes: py-spy on one API process while wrk drives c=32 non-streamed load.

py-spy is installed into bench/.venv-tools on first use. The raw (collapsed) stacks are kept in the
run's folder (open them with speedscope or flamegraph.pl); the summary gives the share of samples
per component (inclusive: a frame anywhere on the stack) and the hottest functions (self time).
"""
from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.procs import ROOT

VENV = ROOT / "bench" / ".venv-tools"
PYSPY = "py-spy==0.4.3"

COMPONENTS = [  # (label, pattern on "function (file:line)"), first match wins for self time
    ("gateway: relay pipeline (api/relay)", r"\(/.*?/api/relay/"),
    ("gateway: services (api/services)", r"\(/.*?/api/services/"),
    ("gateway: middlewares/app (api/*.py)", r"\(/.*?/api/[a-z_]+\.py"),
    ("workers.broker / dramatiq send", r"workers/broker|dramatiq/"),
    ("redis client", r"site-packages/redis/"),
    ("aiohttp client", r"aiohttp/(client|connector|client_proto|client_reqrep|streams)"),
    ("aiohttp server", r"aiohttp/(web|http_|_http|base_protocol)"),
    ("json (orjson/json)", r"orjson|/json/"),
    ("tortoise ORM", r"site-packages/tortoise/"),
    ("asyncio/uvloop", r"asyncio/|uvloop"),
]


def ensure_pyspy() -> Path:
    exe = VENV / "bin" / "py-spy"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
        subprocess.run([str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", PYSPY], check=True, timeout=600)
    return exe


def summarize(raw: str, top: int = 15) -> tuple[int, list[tuple[str, float]], list[tuple[str, float]]]:
    """(samples, [(component, inclusive share)], [(function, self share)]) from collapsed stacks."""
    inclusive: Counter[str] = Counter()
    self_time: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        seen = set()
        for frame in frames:
            for label, pattern in COMPONENTS:
                if label not in seen and re.search(pattern, frame):
                    seen.add(label)
                    inclusive[label] += n
        leaf = re.sub(r"/.*/(site-packages|main)/", "", frames[-1])
        self_time[leaf] += n
    if not total:
        return 0, [], []
    return (total, [(k, v / total) for k, v in inclusive.most_common()],
            [(k, v / total) for k, v in self_time.most_common(top)])


async def profile_api(gw, runner, seconds: float, out_dir: Path) -> str:
    exe = ensure_pyspy()
    api_pid = next(pid for pid, label in gw.tree.roots.items() if label == "api")
    raw_path = out_dir / "profile-api.txt"
    leg = next(leg for leg in runner.legs if leg.key == "gateway")
    spy = await asyncio.create_subprocess_exec(str(exe), "record", "-p", str(api_pid), "-d", str(int(seconds)),
                                               "-r", "250", "-f", "raw", "-o", str(raw_path), "--nonblocking",
                                               stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    saved = runner.o.duration
    runner.o.duration = seconds
    try:
        await runner.closed(leg, 32, False)
    finally:
        runner.o.duration = saved
    _, err = await asyncio.wait_for(spy.communicate(), seconds + 60)
    if not raw_path.exists():
        return f"Profile: py-spy wrote nothing ({err.decode()[-500:]})"
    total, components, functions = summarize(raw_path.read_text())
    lines = [f"Profile of one API process under c=32 non-streamed load ({total:,} py-spy samples at 250 Hz, "
             f"idle excluded; raw stacks in {raw_path.relative_to(ROOT)}):", "",
             "| component (anywhere on the stack) | share of samples |", "|---|---|"]
    lines += [f"| {name} | {share:.0%} |" for name, share in components]
    lines += ["", "| hottest functions (self) | share |", "|---|---|"]
    lines += [f"| `{name}` | {share:.1%} |" for name, share in functions]
    return "\n".join(lines)
