"""Where the gateway's CPU goes: py-spy on every process of the gateway at c=32 and at c=1.

py-spy is installed into bench/.venv-tools on first use. The raw (collapsed) stacks are kept in the
run's folder (open them with speedscope or flamegraph.pl); the summary gives the share of samples
per component (inclusive: a frame anywhere on the stack) and the hottest functions (self time).
"""
from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.procs import ROOT

VENV = ROOT / "bench" / ".venv-tools"
PYSPY = "py-spy==0.4.3"

OWN = ("api/", "workers/", "models/")  # the gateway's own code, as py-spy names the files


def _frame(frame: str) -> tuple[str, str]:
    """("function", "file") of a py-spy frame "function (file:line)"."""
    name, _, where = frame.rpartition(" (")
    return name, where.rstrip(")").rsplit(":", 1)[0]


def _package(path: str) -> str:
    parts = path.split("/")
    if path.startswith(OWN) and len(parts) > 2:
        return "/".join(parts[:2])  # api/relay, api/services, …
    return parts[0] if len(parts) > 1 else path


def ensure_pyspy() -> Path:
    exe = VENV / "bin" / "py-spy"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
        subprocess.run([str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", PYSPY], check=True, timeout=600)
    return exe


def summarize(raw: str, top: int = 15) -> tuple[int, list[tuple[str, float]], list[tuple[str, float]]]:
    """(samples, [(package of the leaf frame, self share)], [(gateway function, inclusive share)])."""
    by_package: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [_frame(f) for f in stack.split(";")]
        by_package[_package(frames[-1][1])] += n
        own = {f"{name} ({path})" for name, path in frames
               if path.startswith(OWN) and name not in ("<module>", "main") and not path.endswith("__main__.py")}
        for key in own:
            inclusive[key] += n
    if not total:
        return 0, [], []
    return (total, [(k, v / total) for k, v in by_package.most_common(top)],
            [(k, v / total) for k, v in inclusive.most_common(top + 10)])


async def _record(exe: Path, pid: int, seconds: float, path: Path, children: bool) -> asyncio.subprocess.Process:
    """py-spy on `pid` (`children`: the worker, with its processes, sampled by the thread that holds the
    GIL: py-spy's idle filter counts its many waiting threads — Dramatiq's consumers between fetches,
    its worker threads on their queue — as running, about five times the CPU the worker used)."""
    args = [str(exe), "record", "-p", str(pid), "-d", str(int(seconds)), "-r", "250", "-f", "raw", "-o", str(path),
            "--nonblocking", *(["--subprocesses", "--gil"] if children else [])]
    return await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.PIPE)


async def profile_run(gw, runner, leg, seconds: float, out_dir: Path, name: str, load) -> dict[str, tuple[str, float]]:
    """py-spy on every Python process of the gateway (the worker with its children) while `load` runs;
    label → (raw stacks of its processes, their CPU ms per request over the run)."""
    exe = ensure_pyspy()
    spies: list[tuple[str, Path, asyncio.subprocess.Process]] = []
    for i, (pid, label) in enumerate(sorted(gw.tree.roots.items())):
        if label in ("api", "worker", "scheduler"):
            path = out_dir / f"profile-{name}-{label}-{i}.txt"
            spies.append((label, path, await _record(exe, pid, seconds, path, label == "worker")))
    result, cpu, _ = await runner.measured(leg, load)
    served = max(int(result.get("ok", 0)), 1)
    out: dict[str, tuple[str, float]] = {}
    for label, path, spy in spies:
        await asyncio.wait_for(spy.communicate(), seconds + 60)
        raw = path.read_text() if path.exists() else ""
        ms = sum(u + s for lab, (u, s) in cpu.items() if lab.split("+")[0] == label) * 1000 / served
        before = out.get(label, ("", 0.0))[0]
        out[label] = (before + raw, ms)
    return out


async def profile_api(gw, runner, seconds: float, out_dir: Path) -> str:
    """The gateway's CPU per request by part (bench/features.py), every Python process profiled, at c=32
    (non-streamed, then streamed, closed loop) and at c=1 (one request after the other)."""
    from bench.features import cost_table

    leg = next(leg for leg in runner.legs if leg.key == "gateway")
    saved = runner.o.duration
    runner.o.duration = seconds
    try:
        busy = await profile_run(gw, runner, leg, seconds, out_dir, "c32", lambda: runner.closed(leg, 32, False))
        streamed = await profile_run(gw, runner, leg, seconds, out_dir, "s32", lambda: runner.closed(leg, 32, True))
    finally:
        runner.o.duration = saved
    # c=1: about as many requests as the profile lasts at a few ms each (py-spy stops after `seconds`).
    one = await profile_run(gw, runner, leg, seconds, out_dir, "c1", lambda: runner.loadgen(
        "latency", leg, requests=int(seconds * 150), timeout=seconds + 120))
    columns = {f"{label}, {name}": stacks for name, run in (("c=32", busy), ("streamed, c=32", streamed), ("c=1", one))
               for label, stacks in run.items() if label != "scheduler"}
    total, packages, functions = summarize(busy["api"][0])
    lines = [f"CPU per request by part of the request: py-spy (250 Hz, idle excluded) on every API process and "
             f"the worker with its children, {seconds:g} s at c=32 (non-streamed, then streamed: CPU per stream) and "
             "then at c=1; each share of "
             "a process's samples times its CPU per request over the same run (raw stacks: "
             f"{out_dir.relative_to(ROOT)}/profile-*.txt).", "", cost_table(columns), "",
             "| where the API samples end at c=32 (self time, by package) | share |", "|---|---|"]
    lines += [f"| {name} | {share:.1%} |" for name, share in packages]
    lines += ["", "| gateway function at c=32 (inclusive: on the stack) | share |", "|---|---|"]
    lines += [f"| `{name}` | {share:.1%} |" for name, share in functions]
    return "\n".join(lines)
