"""The console API's OpenAPI description stays true to the route table, and a property-based fuzzer
(schemathesis, driving hypothesis) runs every operation in it as every role against a real API
process, on SQLite and PostgreSQL: no answer is a server error, every answer is the envelope."""
from __future__ import annotations

import asyncio
import re

import pytest
import requests

# schemathesis.specs.openapi.schemas imported here, in the main thread: imported first by the fuzz's worker
# thread, its modules were compiled by pytest's assertion rewriting off the main thread, which CPython 3.11
# failed with "SystemError: AST constructor recursion depth mismatch".
import schemathesis
import schemathesis.specs.openapi.schemas
from hypothesis import HealthCheck, Phase, given, settings

from api.console import openapi
from api.console.routes import add_console_routes
from models.enums import Role
from tests.helpers import both_databases, make_user

EXAMPLES = 25  # per operation and role (derandomized: the same cases every run)
# Operations that call out to a channel's upstream (addresses the fuzzer makes up) or end the session.
SKIPPED = ("/api/channel/test", "/api/channel/update_balance", "/api/channel/fetch_models", "/api/user/logout",
           "/api/openapi.json")
RANK = {"anonymous": 0, "user": 1, "admin": 2, "root": 3}
# Besides what hypothesis makes up (short strings, mostly), every text query parameter is sent once
# with each of these: longer than any text column a filter compares (64, 128, 255 characters), and
# far longer in multi-byte characters.
LONGER_THAN_COLUMNS = ("x" * 65, "x" * 129, "x" * 256, "é" * 1000)


async def test_the_description_names_every_route_and_only_routes(client) -> None:
    resp = await client.get("/api/openapi.json")
    spec = await resp.json()
    from aiohttp import web

    console = web.Application()
    add_console_routes(console)
    routed = openapi.routed(console)
    described = {(method.upper(), path.removeprefix("/api")) for path, ops in spec["paths"].items() for method in ops}
    as_routed = {(m, openapi._PARAM.sub(lambda g: "{" + g.group(1) + "}", p)) for m, p in routed}
    assert described == as_routed
    paths = {p for _, p in as_routed}
    assert set(openapi.QUERY) <= paths, set(openapi.QUERY) - paths
    assert set(openapi.BODY) <= as_routed, set(openapi.BODY) - as_routed
    for ops in spec["paths"].values():
        for op in ops.values():
            assert op["x-role"] in RANK and op["responses"]["200"]


def _login(url: str, username: str, password: str) -> requests.Session:
    session = requests.Session()
    resp = session.post(f"{url}/api/user/login", json={"username": username, "password": password}, timeout=10)
    body = resp.json()
    assert body["success"], body
    session.headers["New-Api-User"] = str(body["data"]["id"])
    return session


def _fuzz(url: str, role: str, session: requests.Session, spec: dict, calls: list[int]) -> list[str]:
    schema = schemathesis.openapi.from_dict(spec)
    problems: list[str] = []
    seen_handlers: set[str] = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.startswith(SKIPPED):
            continue
        definition = operation.definition.raw
        key = f"{operation.method}:{operation.path.rstrip('/')}"
        if key in seen_handlers:  # a trailing-slash alias of an operation already fuzzed
            continue
        seen_handlers.add(key)
        allowed = RANK[role] >= RANK[definition["x-role"]]
        files = set(definition["responses"]["200"]["content"]) - {"application/json"}  # an export's

        def check(case) -> None:
            response = case.call(base_url=url, session=session, timeout=30, allow_redirects=False)
            calls.append(response.status_code)
            if response.status_code >= 500 or (300 <= response.status_code < 400):
                if response.status_code >= 500:
                    problems.append(f"{role}: {response.status_code} {case.as_curl_command()}")
                return
            raw = response.headers.get("Content-Type") or response.headers.get("content-type") or ""
            kind = (raw[0] if isinstance(raw, list) and raw else str(raw or "")).split(";")[0].strip()
            if response.status_code == 200 and kind in files:  # noqa: B023 (check runs within this iteration)
                return  # a file the description announces (an export)
            try:
                body = response.json()
            except ValueError:
                problems.append(f"{role}: not JSON ({response.status_code}) {case.as_curl_command()}")
                return
            if not isinstance(body, dict) or "success" not in body or "message" not in body:
                problems.append(f"{role}: not the envelope {str(body)[:200]} {case.as_curl_command()}")

        @settings(max_examples=EXAMPLES if allowed else 3, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
        @given(case=operation.as_strategy())
        def run(case) -> None:
            check(case)

        run()
        texts = [p["name"] for p in definition.get("parameters", []) if p["in"] == "query"
                 and p["schema"].get("type") == "string"]
        for name in texts if allowed else ():
            for value in LONGER_THAN_COLUMNS:
                ids = {param: 1 for param in re.findall(r"{(\w+)}", operation.path)}
                check(operation.Case(query={name: value}, path_parameters=ids))
    return problems


@both_databases
async def test_fuzz_every_operation_as_every_role(client, settings, api_process) -> None:
    proc, url = await api_process(RATE_LIMIT_API="1000000", RATE_LIMIT_CRITICAL="1000000", CONNECT_TIMEOUT="1",
                                  RELAY_TIMEOUT="2")
    await make_user("fuzz-user", password="password123")
    await make_user("fuzz-admin", role=Role.ADMIN, password="password123")
    spec = await asyncio.to_thread(lambda: requests.get(f"{url}/api/openapi.json", timeout=10).json())
    sessions = {"anonymous": requests.Session(),
                "user": await asyncio.to_thread(_login, url, "fuzz-user", "password123"),
                "admin": await asyncio.to_thread(_login, url, "fuzz-admin", "password123"),
                "root": await asyncio.to_thread(_login, url, "root", "123456")}
    problems: list[str] = []
    calls: list[int] = []
    for role, session in sessions.items():
        problems += await asyncio.to_thread(_fuzz, url, role, session, spec, calls)
    operations = sum(len(ops) for ops in spec["paths"].values())
    assert len(calls) > operations * 4, len(calls)  # the fuzzer ran
    if problems:
        pytest.fail(f"{len(problems)} bad answers:\n" + "\n".join(problems[:20]) + "\n\n" + proc.output()[-6000:])
