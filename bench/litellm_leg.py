"""LiteLLM proxy, the peer users would otherwise pick, installed into bench/.venv-litellm.

Configured for the same mock: gpt-4o-mini → the no-delay path, gpt-4o → the slow-stream path, one
master key (its simplest auth; no database, so no per-key budgets, spend logs or rate limits: it does
less work per request than the gateway, which keeps all of them on). As many worker processes as the
gateway has API processes.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.procs import ROOT, Procs, free_port, wait_http
from bench.sampler import Tree

VENV = ROOT / "bench" / ".venv-litellm"
REQUIREMENT = "litellm[proxy]==1.100.5"  # newer ones need a certifi newer than the index here has
MASTER_KEY = "sk-bench-litellm"


def ensure_installed() -> Path:
    """The venv's litellm executable, installing it on first use (a few minutes, once)."""
    exe = VENV / "bin" / "litellm"
    marker = VENV / ".installed"
    if exe.exists() and marker.exists() and marker.read_text().strip() == REQUIREMENT:
        return exe
    if not (VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
    pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    print(f"installing {REQUIREMENT} into {VENV} ...", flush=True)
    subprocess.run([*pip, "--upgrade", "pip"], check=True, timeout=600)
    subprocess.run([*pip, REQUIREMENT, "uvloop"], check=True, timeout=1200)
    marker.write_text(REQUIREMENT + "\n")
    return exe


def write_config(path: Path, mock_url: str) -> None:
    models = "".join(
        f"  - model_name: {name}\n"
        f"    litellm_params:\n"
        f"      model: openai/{name}\n"
        f"      api_base: {base}/v1\n"
        f"      api_key: sk-bench-upstream\n"
        for name, base in (("gpt-4o-mini", mock_url), ("gpt-4o", mock_url + "/slow")))
    path.write_text(
        "model_list:\n" + models +
        "litellm_settings:\n  telemetry: false\n  drop_params: true\n  set_verbose: false\n"
        f"general_settings:\n  master_key: {MASTER_KEY}\n")


class LiteLLM:
    def __init__(self, procs: Procs, workdir: Path, mock_url: str, workers: int) -> None:
        self.procs = procs
        self.workdir = workdir
        self.mock_url = mock_url
        self.workers = workers
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + "/v1/chat/completions"
        self.token = MASTER_KEY
        self.tree = Tree("litellm")

    async def start(self) -> None:
        exe = ensure_installed()
        config = self.workdir / "litellm.yaml"
        write_config(config, self.mock_url)
        env = {"PATH": f"{exe.parent}:/usr/bin:/bin", "HOME": str(self.workdir), "LITELLM_LOG": "ERROR",
               "LITELLM_TELEMETRY": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "DISABLE_SCHEMA_UPDATE": "True", "NO_DOCS": "True"}
        proc = self.procs.start("litellm", [str(exe), "--config", str(config), "--host", "127.0.0.1", "--port",
                                            str(self.port), "--num_workers", str(self.workers)], env)
        self.tree.add(proc.pid, "litellm")
        await wait_http(self.base + "/health/liveliness", self.procs, timeout=180)
