"""The real coding-agent CLIs against the gateway: skipped only where node and npm are absent (the
CLIs themselves come from tests/clients/package-lock.json, installed by .ci/test)."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.clients.clis import PROMPT, missing_tools
from tests.relay.fakes import gateway  # noqa: F401  (the gateway on a real local port)

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
