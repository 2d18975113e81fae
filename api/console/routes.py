"""The console route table: every handler module's `routes`, paths as new-api's (docs/compatibility.md)."""
from __future__ import annotations

import importlib
import pkgutil

from aiohttp import web

from api.console import handlers


def handler_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(handlers.__path__) if not m.name.startswith("_"))


def add_console_routes(app: web.Application) -> None:
    for name in handler_modules():
        module = importlib.import_module(f"{handlers.__name__}.{name}")
        table = getattr(module, "routes", None)
        if isinstance(table, web.RouteTableDef):
            app.add_routes(table)
