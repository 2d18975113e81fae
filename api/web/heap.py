"""The garbage collector of a serving process, tuned once it has loaded.

What a process loads before it serves (modules, the tokenizer's tables, the price tables, the channel
index) stays for its whole life, yet every full collection walks it again, and the youngest
generation is collected every 700 allocations: a relay request allocates a few thousand objects,
nearly all freed by their reference counts, so those collections find little and their cost lands
on whatever request allocates at the time. Once the process has loaded, `freeze` collects what
loading left behind, moves the rest out of the collector's sight (gc.freeze) and collects the youngest
generation less often; reference counting frees what it always did.
"""
from __future__ import annotations

import gc

from aiohttp import web

# Allocations (less deallocations) between two collections of the youngest generation, and how many
# of those before the next older one is collected (Python's defaults: 700, 10, 10).
THRESHOLDS = (20_000, 20, 20)


def freeze() -> None:
    """What the process holds now: collected once, then left out of every later collection."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def setup_heap(app: web.Application) -> None:
    """`freeze` once the application has started (resources opened, caches loaded), before it listens.
    The last startup hook: the process start adds it after everything else (not create_app, whose
    applications tests make by the hundred in one process)."""

    async def frozen(_app: web.Application) -> None:
        freeze()

    app.on_startup.append(frozen)
