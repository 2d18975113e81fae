"""One gateway per fuzz module (tests/relay/fuzz/world.py), on SQLite and on PostgreSQL."""
from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from tests.conftest import PREFIX, _delete_prefix
from tests.relay.fuzz.world import World, open_world


@pytest.fixture(autouse=True)
def _clean_redis() -> Iterator[None]:
    """The module's gateway keeps its Redis state from test to test (it is cleaned at its end)."""
    yield


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["sqlite", "postgres"])
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                redis_sync: Any) -> AsyncIterator[World]:
    """The gateway of this module; its Redis keys are deleted at the module's end."""
    try:
        async with open_world(request.param, request, tmp_path_factory.mktemp("fuzz")) as world:
            yield world
    finally:
        _delete_prefix(redis_sync, PREFIX)
