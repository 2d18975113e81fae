"""Opening and closing the database connection of a process."""
from __future__ import annotations

from tortoise import Tortoise
from tortoise.backends.base import executor

from .settings import tortoise_config


async def init_database(database_url: str, generate_schemas: bool = False) -> None:
    # Tortoise caches each model's INSERT/UPDATE SQL per connection *name*; a process (a test run)
    # that opens another dialect under the same name must start from an empty cache.
    executor.EXECUTOR_CACHE.clear()
    await Tortoise.init(config=tortoise_config(database_url, with_aerich=False), _enable_global_fallback=True)
    if generate_schemas:
        await Tortoise.generate_schemas(safe=True)


async def close_database() -> None:
    await Tortoise.close_connections()
