"""The console route table (api/console/routes.py): each row's role is the one its handler requires,
every handler that requires a role has a row, and an EITHER row answers both slash forms."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from aiohttp import web

from api.console import handlers, routes
from api.console.auth import ROLE_ATTRIBUTE
from models.enums import Role


def _routed(table: tuple[routes.Route, ...]) -> set[tuple[str, str]]:
    app = web.Application()
    original = routes.ROUTES
    routes.ROUTES = table
    try:
        routes.add_console_routes(app)
    finally:
        routes.ROUTES = original
    return {(r.method, r.resource.canonical) for r in app.router.routes() if r.resource is not None}


def test_a_row_whose_role_is_not_its_handlers_is_refused() -> None:
    row = next(r for r in routes.ROUTES if r.role == Role.ADMIN)
    with pytest.raises(ValueError, match="the table says role"):
        _routed((row._replace(role=Role.USER),))
    with pytest.raises(ValueError, match="the table says role"):
        _routed((row._replace(role=routes.ANYONE),))


def test_an_either_row_is_written_without_its_slash() -> None:
    row = next(r for r in routes.ROUTES if r.either_slash)
    with pytest.raises(ValueError, match="without its trailing slash"):
        _routed((row._replace(path=row.path + "/"),))


def test_every_handler_that_requires_a_role_has_a_row() -> None:
    tabled = {r.handler for r in routes.ROUTES}
    missing = []
    for info in pkgutil.iter_modules(handlers.__path__):
        module = importlib.import_module(f"{handlers.__name__}.{info.name}")
        for name, value in inspect.getmembers(module, inspect.iscoroutinefunction):
            if value.__module__ == module.__name__ and hasattr(value, ROLE_ATTRIBUTE) and value not in tabled:
                missing.append(f"{info.name}.{name}")
    assert missing == []


def test_either_rows_answer_both_forms_and_other_rows_one() -> None:
    for row in routes.ROUTES:
        answered = sorted(path for method, path in _routed((row,)) if method == row.method)
        if row.either_slash:
            assert len(answered) == 2 and answered[1] == answered[0] + "/", row
        else:
            assert len(answered) == 1, row
    routed = _routed(routes.ROUTES)
    assert ("GET", "/channel") in routed and ("GET", "/channel/") in routed
    assert ("GET", "/group/") in routed and ("GET", "/group") not in routed
    assert ("HEAD", "/status") in routed  # a GET answers HEAD, as aiohttp's add_get does
