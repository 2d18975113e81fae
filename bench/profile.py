"""Where the gateway's CPU goes: py-spy on one API process while wrk drives c=32 non-streamed load.

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
    total, packages, functions = summarize(raw_path.read_text())
    lines = [f"Profile of one API process under c=32 non-streamed load ({total:,} py-spy samples at 250 Hz, "
             f"idle excluded; raw stacks in {raw_path.relative_to(ROOT)}):", "",
             "| where the samples end (self time, by package) | share |", "|---|---|"]
    lines += [f"| {name} | {share:.1%} |" for name, share in packages]
    lines += ["", "| gateway function (inclusive: on the stack) | share |", "|---|---|"]
    lines += [f"| `{name}` | {share:.1%} |" for name, share in functions]
    return "\n".join(lines)
