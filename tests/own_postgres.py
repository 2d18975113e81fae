"""A PostgreSQL server of the test's own (initdb in the test's directory, its own port), for tests
that stop or restart the database (never the machine's shared one). As root, it runs as the
`postgres` system user, as PostgreSQL requires."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

from tests.own_redis import free_port


def pg_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if found is None:
        raise RuntimeError(f"PostgreSQL's {name} not found")
    return found


class OwnPostgres:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.data = directory / "data"
        self.sockets = directory / "sockets"
        self.port = free_port()

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, check: bool = True) -> None:
        command = list(args)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=check, capture_output=True, timeout=60)

    def init(self) -> None:
        self.sockets.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres")
            shutil.chown(self.sockets, "postgres")
        self._run(pg_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self.start()

    def start(self) -> None:
        self._run(pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.directory / "server.log"), "-w",
                  "-o", f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def stop(self, mode: str = "fast", check: bool = True) -> None:
        self._run(pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=check)

    def create_database(self, name: str) -> str:
        self._run("psql", self.url(), "-qc", f"CREATE DATABASE {name}")
        return self.url(name)
