"""The real coding-agent CLIs against the gateway: skipped only where node and npm are absent (the
CLIs themselves come from tests/clients/package-lock.json, installed by .ci/test)."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.clients.clis import PROMPT, CliRun, missing_tools
from tests.relay.fakes import gateway, make_key, rich_user  # noqa: F401  (gateway: on a real local port)
from tests.upstream.providers.agent_script import Recorded
from tests.upstream.providers.claude.fake_anthropic_models import sign

FILE_LINE = "The launch code is PERIWINKLE-42."


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    missing = missing_tools()
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.clients)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"{' and '.join(missing)} not installed"))


@dataclass
class Workspace:
    """A run's HOME and its working directory, which holds the file the CLI is asked to read."""

    home: Path
    workdir: Path
    file: Path

    @property
    def prompt(self) -> str:
        return PROMPT.format(path=self.file)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    home, workdir = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    workdir.mkdir()
    file = workdir / "notes.txt"
    file.write_text(FILE_LINE + "\n")
    return Workspace(home, workdir, file)


@pytest.fixture
def serve(aiohttp_server: Any) -> Callable[[web.Application], Awaitable[str]]:
    """serve(a fake upstream's app) → the base URL it listens on."""

    async def start(app: web.Application) -> str:
        server = await aiohttp_server(app)
        return str(server.make_url("")).rstrip("/")

    return start


async def run_cli(launch: Callable[..., Awaitable[CliRun]], client: Any, workspace: Workspace, model: str,
                  **options: Any) -> tuple[CliRun, Any, int]:
    """(the run, its user, the user's balance before it): a CLI (tests/clients/clis.py) run for a new
    user and key; it must end well and print the file's line."""
    user = await rich_user()
    token = await make_key(user)
    run = await launch(str(client.make_url("")).rstrip("/"), f"sk-{token.key}", model, workspace.home,
                       workspace.workdir, workspace.prompt, **options)
    assert run.returncode == 0, run.explain()
    assert FILE_LINE in run.answer, run.explain()
    return run, user, user.quota


def assert_tool_loop(script: Recorded, seen: list[Any], tool: str) -> None:
    """Two upstream requests: `tool` asked for, then its result (the file) seen and quoted."""
    assert len(seen) == 2, seen  # nothing else reached the upstream
    assert [len(view.tool_results) for view in script.views] == [0, 1]
    assert script.turns[0].tool is not None and script.turns[0].tool["name"] == tool
    assert FILE_LINE in script.views[1].tool_results[0]


def thinking_replayed(body: dict[str, Any]) -> bool:
    """Whether the assistant turn of a Claude request went back with the thinking block Claude signed
    before its call."""
    blocks = [block for message in body["messages"] if message["role"] == "assistant" for block in message["content"]]
    return [b["type"] for b in blocks] == ["thinking", "tool_use"] and blocks[0]["signature"] == sign(
        blocks[0]["thinking"])


def signature_replayed(fake: Any, tool: str) -> bool:
    """Whether a Gemini fake's second request replayed the call to `tool` with a thought signature it
    issued (Gemini 3 refuses a call without one, and its documented placeholder is not one)."""
    calls = [part for content in fake.seen[1]["body"]["contents"] if content["role"] == "model"
             for part in content["parts"] if "functionCall" in part]
    return [c["functionCall"]["name"] for c in calls] == [tool] and calls[0].get("thoughtSignature") in fake.issued
