"""Portkey's AI gateway (npm `@portkey-ai/gateway`, pinned in bench/portkey/package.json and its lock),
installed into bench/portkey/node_modules by `npm ci` on first use.

Portkey routes by request headers: the provider (`openai`), the upstream address (the mock) and the
upstream key, sent as they would be by a client of a self-hosted Portkey without its config store. It
keeps no keys, budgets, rate limits or logs of its own: it does less per request than the gateway.
One Node process (its server runs one event loop). Its streams fail on Node 20 (`TypeError:
immutable` from undici's Headers), so the leg runs the non-streamed scenarios only.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from bench.procs import ROOT, Procs, free_port, wait_http
from bench.sampler import Tree

FOLDER = ROOT / "bench" / "portkey"
PACKAGE = "@portkey-ai/gateway"
SERVER = FOLDER / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js"
UPSTREAM_KEY = "sk-bench-upstream"


def pinned_version() -> str:
    return json.loads((FOLDER / "package.json").read_text())["dependencies"][PACKAGE]


def ensure_installed() -> Path:
    """The server script, `npm ci` from the lock when it is missing or another version (once)."""
    installed = FOLDER / "node_modules" / "@portkey-ai" / "gateway" / "package.json"
    want = pinned_version()
    if SERVER.exists() and installed.exists() and json.loads(installed.read_text()).get("version") == want:
        return SERVER
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("the Portkey leg needs node and npm (apt-get install nodejs npm)")
    print(f"installing {PACKAGE} {want} into {FOLDER / 'node_modules'} ...", flush=True)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=FOLDER, check=True,
                   timeout=900, capture_output=True)
    return SERVER


class Portkey:
    def __init__(self, procs: Procs, mock_url: str) -> None:
        self.procs = procs
        self.mock_url = mock_url
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + "/v1/chat/completions"
        self.token = UPSTREAM_KEY  # passed through to the upstream as its key
        self.headers = {"x-portkey-provider": "openai", "x-portkey-custom-host": mock_url + "/v1"}
        self.tree = Tree("portkey")

    async def start(self) -> None:
        server = ensure_installed()
        node = shutil.which("node") or "node"
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.procs.log_dir), "NODE_ENV": "production"}
        proc = self.procs.start("portkey", [node, str(server), f"--port={self.port}", "--headless"], env, cwd=FOLDER)
        self.tree.add(proc.pid, "portkey")
        await wait_http(self.base + "/", self.procs, timeout=60)
