"""The coding-agent CLIs (pinned in tests/clients/package-lock.json), run headless against a gateway.

Each run gets its own HOME (and the CLI's config directory inside it), a working directory holding
the file to read, tool permissions granted up front, and an environment built from scratch: the
gateway's URL and a key, nothing inherited but PATH, so no login, telemetry, update check or other
traffic leaves for the internet. Every CLI is told not to retry a failed request, so a refusal by the
gateway fails the run at once; the subprocess timeout is only a safety net.

- Claude Code: `claude -p … --output-format json` (the answer is the JSON's `result`), with
  ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY; CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC turns off the
  auto-updater, telemetry, error reporting and the `HEAD /api/hello` reachability probe, so the
  gateway sees only the `POST /v1/messages?beta=true` turns.
  With an MCP config (`--mcp-config` and `--strict-mcp-config`) it lists the tools of the servers
  named there at start and offers them to the model as `mcp__<config name>__<tool>` (declared in
  every request with ENABLE_TOOL_SEARCH=false, instead of behind its ToolSearch tool).
- MCP Inspector (`mcp-inspector --cli`): one MCP method per run against a server URL, its result
  printed as JSON; HOME holds its catalog file (~/.mcp-inspector/), nothing else is read.
- Codex: `codex exec` with a config.toml in CODEX_HOME naming the gateway as a Responses provider
  (`base_url = <gateway>/v1`, `wire_api = "responses"`, the key in an env var); commands run without
  approval and without Codex's sandbox (`danger-full-access`), which this container cannot host;
  its plugins are off (`features.plugins`, `features.remote_plugin`), which would otherwise sync
  the curated plugin list from GitHub and chatgpt.com at start.
  The answer is the file written by `--output-last-message`. Codex's tool set is left as it ships.
- Gemini CLI: `gemini -p … --yolo -o json` (the answer is the JSON's `response`) with GEMINI_API_KEY
  and GOOGLE_GEMINI_BASE_URL; settings.json turns off auto-update, usage statistics and telemetry and
  limits the main model to one attempt; GEMINI_CLI_TRUST_WORKSPACE trusts the working directory
  (headless runs refuse untrusted folders). An explicit --model keeps it from routing; without one
  (model "") it routes as it ships (`auto`): it first asks a flash-lite model to classify the prompt
  as simple or complex, then sends the turns to the flash or the pro model chosen.
- opencode: `opencode run … --format json` (the answer is the text of its `text` events), its
  config in XDG_CONFIG_HOME naming the gateway as a provider of one model, through the AI SDK's
  Anthropic provider (`/v1/messages`) or its OpenAI-compatible one (`/v1/chat/completions`), both
  bundled in the binary. OPENCODE_DISABLE_AUTOUPDATE, OPENCODE_DISABLE_MODELS_FETCH (no models.dev),
  `--pure` (no plugins), `share: disabled` and `--title` (no request for a session title) keep it
  to the gateway; the config directory is given a `node_modules` and a lock naming
  `@opencode-ai/plugin`, without which it installs that package from the npm registry at start.
- Qwen Code (a fork of Gemini CLI speaking OpenAI's chat completions): `qwen -p … --yolo -o json`
  (the answer is the `result` of the JSON array it prints) with OPENAI_BASE_URL / OPENAI_API_KEY;
  settings.json turns off auto-update, usage statistics and telemetry, selects the `openai` auth
  and retries nothing (`model.generationConfig.maxRetries`).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLIENTS = Path(__file__).resolve().parent
BIN = CLIENTS / "node_modules" / ".bin"
SAFETY_TIMEOUT = 120.0  # seconds; a run takes about one second
PROMPT = "Read the file {path} and quote its content."


@dataclass
class CliRun:
    """One finished run: what the CLI printed, and the final answer read from it."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    answer: str

    def explain(self) -> str:
        command = " ".join(self.argv[:2])
        return f"{command} exited {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def missing_tools() -> list[str]:
    """The programs the CLIs need that this machine lacks (node, npm)."""
    return [tool for tool in ("node", "npm") if shutil.which(tool) is None]


def binary(name: str) -> str:
    path = BIN / name
    if not path.exists():
        raise AssertionError(f"{path} is missing: run `npm ci` in {CLIENTS} (as .ci/test does)")
    return str(path)


def base_env(home: Path) -> dict[str, str]:
    """The environment every CLI starts from: nothing of the developer's (keys, proxies, CI flags)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
            "TERM": "dumb", "NO_COLOR": "1", "TMPDIR": str(home / "tmp")}


async def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = SAFETY_TIMEOUT) -> tuple[int, str, str]:
    """Run a CLI to its end (its own process group, no stdin), then end whatever it left running."""
    Path(env["TMPDIR"]).mkdir(parents=True, exist_ok=True)
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        _end_group(proc.pid)
        await proc.wait()
        raise AssertionError(f"{argv[0]} still running after {timeout:.0f} s") from None
    _end_group(proc.pid)
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


def _end_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _json_field(stdout: str, name: str) -> str:
    """A field of the JSON document a CLI printed last (some print notices before it)."""
    start = stdout.find("{")
    if start < 0:
        return ""
    try:
        data: Any = json.loads(stdout[start:])
    except json.JSONDecodeError:
        return ""
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


async def claude_code(gateway: str, key: str, model: str, home: Path, workdir: Path, prompt: str,
                      mcp_config: dict[str, Any] | None = None, allowed: str = "Read",
                      extra_env: dict[str, str] | None = None) -> CliRun:
    """`mcp_config` (Claude Code's `.mcp.json` shape) is given with --mcp-config and
    --strict-mcp-config (no other MCP server is read), with ENABLE_TOOL_SEARCH=false: the MCP tools
    are then declared to the model in each request, not deferred behind its ToolSearch tool.
    `allowed` are the tools granted up front; `extra_env` is added to its environment."""
    env = base_env(home) | {
        "ANTHROPIC_BASE_URL": gateway,
        "ANTHROPIC_API_KEY": key,
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    } | (extra_env or {})
    argv = [binary("claude"), "-p", prompt, "--model", model, "--output-format", "json", "--allowedTools", allowed,
            "--no-session-persistence"]
    if mcp_config is not None:
        config = home / "mcp.json"
        config.write_text(json.dumps(mcp_config))
        argv += ["--mcp-config", str(config), "--strict-mcp-config"]
        env["ENABLE_TOOL_SEARCH"] = "false"
    code, out, err = await run(argv, env, workdir)
    return CliRun(argv, code, out, err, _json_field(out, "result"))


async def mcp_inspector(url: str, key: str, home: Path, *arguments: str) -> CliRun:
    """The MCP Inspector's CLI mode on `url` over Streamable HTTP with the key as a bearer token:
    `mcp-inspector --cli <url> --transport http --header "Authorization: Bearer <key>" <arguments>`
    (e.g. --method tools/list). It prints the method's result as JSON, or the error on stderr."""
    argv = [binary("mcp-inspector"), "--cli", url, "--transport", "http", "--header", f"Authorization: Bearer {key}",
            *arguments]
    code, out, err = await run(argv, base_env(home), home)
    return CliRun(argv, code, out, err, out)


def codex_config(gateway: str) -> str:
    return f"""model_provider = "gateway"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"

[features]
plugins = false
remote_plugin = false

[model_providers.gateway]
name = "gateway"
base_url = "{gateway}/v1"
env_key = "GATEWAY_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


async def codex(gateway: str, key: str, model: str, home: Path, workdir: Path, prompt: str,
                effort: str | None = None) -> CliRun:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(gateway))
    last = home / "last-message.txt"
    env = base_env(home) | {"CODEX_HOME": str(codex_home), "GATEWAY_API_KEY": key}
    argv = [binary("codex"), "exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--color", "never",
            "-m", model, "--output-last-message", str(last)]
    if effort:
        argv += ["-c", f'model_reasoning_effort="{effort}"']
    argv.append(prompt)
    code, out, err = await run(argv, env, workdir)
    return CliRun(argv, code, out, err, last.read_text() if last.exists() else "")


GEMINI_SETTINGS = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "maxAttempts": 1,
                "retryFetchErrors": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}},
}


async def gemini_cli(gateway: str, key: str, model: str, home: Path, workdir: Path, prompt: str) -> CliRun:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(GEMINI_SETTINGS))
    env = base_env(home) | {"GEMINI_API_KEY": key, "GOOGLE_GEMINI_BASE_URL": gateway,
                            "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    argv = [binary("gemini"), "-p", prompt, *(["--model", model] if model else []), "--yolo", "--output-format", "json"]
    code, out, err = await run(argv, env, workdir)
    return CliRun(argv, code, out, err, _json_field(out, "response"))


def opencode_config(gateway: str, model: str, provider: str) -> dict[str, Any]:
    """opencode's config: the gateway as its only provider, through the AI SDK's `provider` package."""
    return {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
            "provider": {"gateway": {"npm": provider, "name": "gateway",
                                     "options": {"baseURL": f"{gateway}/v1", "apiKey": "{env:GATEWAY_API_KEY}"},
                                     "models": {model: {"name": model}}}}}


OPENCODE_PROVIDERS = {"anthropic": "@ai-sdk/anthropic", "openai-compatible": "@ai-sdk/openai-compatible"}


async def opencode(gateway: str, key: str, model: str, home: Path, workdir: Path, prompt: str,
                   provider: str = "openai-compatible") -> CliRun:
    config = home / ".config" / "opencode"
    (config / "node_modules").mkdir(parents=True, exist_ok=True)
    (config / "opencode.json").write_text(json.dumps(opencode_config(gateway, model, OPENCODE_PROVIDERS[provider])))
    # What it would otherwise install from the registry at start, marked as installed.
    (config / "package-lock.json").write_text(json.dumps({"packages": {"": {"dependencies": {
        "@opencode-ai/plugin": "*"}}}}))
    env = base_env(home) | {"XDG_CONFIG_HOME": str(home / ".config"), "GATEWAY_API_KEY": key,
                            "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"}
    argv = [binary("opencode"), "run", "--pure", "--format", "json", "--title", "read a file", "-m",
            f"gateway/{model}", prompt]
    code, out, err = await run(argv, env, workdir)
    return CliRun(argv, code, out, err, _opencode_text(out))


def _opencode_text(stdout: str) -> str:
    """The text parts of opencode's JSON events, one event a line."""
    texts = []
    for line in stdout.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            event = json.loads(line)
            if isinstance(event, dict) and event.get("type") == "text":
                texts.append(str((event.get("part") or {}).get("text", "")))
    return "".join(texts)


QWEN_SETTINGS = {
    "general": {"enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"auth": {"selectedType": "openai"}},
    "model": {"generationConfig": {"maxRetries": 0}},
}


async def qwen_code(gateway: str, key: str, model: str, home: Path, workdir: Path, prompt: str) -> CliRun:
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(QWEN_SETTINGS))
    env = base_env(home) | {"OPENAI_BASE_URL": f"{gateway}/v1", "OPENAI_API_KEY": key, "OPENAI_MODEL": model}
    argv = [binary("qwen"), "-p", prompt, "--model", model, "--yolo", "--output-format", "json"]
    code, out, err = await run(argv, env, workdir)
    return CliRun(argv, code, out, err, _qwen_result(out))


def _qwen_result(stdout: str) -> str:
    """The `result` of the JSON array of messages Qwen Code prints."""
    start = stdout.find("[")
    try:
        messages: Any = json.JSONDecoder().raw_decode(stdout[start:])[0] if start >= 0 else []
    except json.JSONDecodeError:
        return ""
    results = [m.get("result") for m in messages if isinstance(m, dict) and m.get("type") == "result"]
    return results[-1] if results and isinstance(results[-1], str) else ""
