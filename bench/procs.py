"""Processes the bench starts: each in its own session, output to a log file, stopped by PID."""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Procs:
    """Every process of one bench run, stopped newest first (Redis outlives its clients)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.children: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, args: list[str], env: dict[str, str] | None = None,
              cwd: Path = ROOT) -> subprocess.Popen:
        log_path = self.log_dir / f"{name}.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(args, cwd=cwd, env=env if env is not None else dict(os.environ),
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        self.children.append((name, proc))
        return proc

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.log_dir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def check_alive(self) -> None:
        for name, proc in self.children:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} (pid {proc.pid}) exited with {proc.returncode}:\n{self.log_tail(name)}")

    def stop(self, proc: subprocess.Popen, timeout: float = 15.0) -> None:
        """SIGTERM to the process, then SIGKILL to its own process group (its children) if it lingers."""
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        # Children that outlived their parent (a worker child) are still in the group we created.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def stop_all(self) -> None:
        for _name, proc in reversed(self.children):
            self.stop(proc)
        self.children.clear()


async def wait_http(url: str, procs: Procs, timeout: float = 60.0, status: int = 200) -> None:
    """Poll `url` until it answers `status`; fail early when one of our processes died."""
    deadline = time.monotonic() + timeout
    last = ""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3)) as session:
        while time.monotonic() < deadline:
            procs.check_alive()
            try:
                async with session.get(url) as resp:
                    if resp.status == status:
                        return
                    last = f"{resp.status} {(await resp.text())[:300]}"
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                last = repr(exc)
            await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} not ready within {timeout:.0f}s (last: {last})")


async def wait_port(port: int, procs: Procs, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs.check_alive()
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f}s")
