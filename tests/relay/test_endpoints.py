# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""An endpoint is its RelayMode member (api/upstream/endpoints.py) and its row (api/relay/modes.py):
every other per-endpoint table is derived from them, and a row alone decides an endpoint's routes,
its check, its prompt count, how its answer is read and how it is billed."""
from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

import pytest

from api.app import create_app
from api.relay.answers import READERS
from api.relay.billing import STRATEGIES
from api.relay.modes import MODES, Billing, Reading
from api.relay.routes import create_v1_app
from api.relay.validate import Invalid
from api.services.billing import pricing
from api.upstream.base import OPENAI_PATHS, Adaptor, RelayMeta, RelayMode, StreamState, TokenUsage
from api.upstream.endpoints import RerankMixin
from api.upstream.sse import SSEEvent
from models import Log
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, headers_for, make_key, rich_user, upstreams  # noqa: F401

RERANKER = "jina-reranker-v2-base-multilingual"


def posted_routes() -> dict[str, str]:
    """The v1 app's POST routes → their handlers' names."""
    app = create_v1_app()
    return {route.resource.canonical: route.handler.__name__ for route in app.router.routes()
            if route.method == "POST" and route.resource is not None}


def test_every_endpoint_has_its_row_and_every_kind_its_implementation() -> None:
    assert set(MODES) == set(RelayMode)
    assert set(READERS) == set(Reading)
    assert set(STRATEGIES) == set(Billing)
    # Every endpoint an adaptor serves has OpenAI's path; a session or a task is no adaptor's path.
    assert {mode for mode in RelayMode if mode not in OPENAI_PATHS} == {
        RelayMode.REALTIME, RelayMode.TASK, RelayMode.VIDEO}


def test_every_endpoint_is_routed_at_its_openai_path_and_its_rows_routes() -> None:
    routes = posted_routes()
    for mode, spec in MODES.items():
        for route in (mode.path.removeprefix("/v1"), *spec.routes) if mode.path else ():
            assert routes.get(route) == f"relay_{mode}", (mode, route)
    assert routes["/engines/{model}/embeddings"] == "relay_embeddings"
    assert not any(name == "relay_realtime" for name in routes.values())  # a WebSocket: GET /v1/realtime


def test_every_endpoint_is_checked_sent_and_read() -> None:
    for mode, spec in MODES.items():
        if not mode.path:
            continue
        if spec.form is None:
            assert spec.check is not None and spec.convert is not None, mode
        else:
            assert spec.form_fields is not None and spec.convert is None, mode
        if spec.reading in (Reading.JSON, Reading.IMAGES):
            assert spec.read is not None, mode


class Bare(Adaptor):
    def convert_request(self, req: Any) -> dict[str, Any]:
        return dict(req)

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return body, None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[Any]:
        return []


class Reranking(RerankMixin, Bare):
    pass


def test_an_adaptor_serves_an_endpoint_by_the_capability_its_member_names() -> None:
    meta = RelayMeta(channel_id=1, channel_type=1, key="k")
    every = {RelayMode.CHAT, RelayMode.REALTIME, RelayMode.TASK, RelayMode.VIDEO}  # no capability asked
    assert {mode for mode in RelayMode if Bare(meta).supports(mode)} == every
    assert {mode for mode in RelayMode if Reranking(meta).supports(mode)} == every | {RelayMode.RERANK}


# -- a row drives the endpoint ---------------------------------------------------------------------


def at_most_two_documents(body: dict[str, Any]) -> None:
    if len(body.get("documents") or ()) > 2:
        raise Invalid("documents", "must hold at most two documents")


@pytest.fixture
async def reworked(aiohttp_client, settings, monkeypatch) -> Any:
    """The gateway with rerank's row replaced: a further route, its own check and count, an answer whose
    usage is not read, and a per-call price."""
    row = dataclasses.replace(MODES[RelayMode.RERANK], routes=("/v2/rerank",), check=at_most_two_documents,
                              count_prompt=lambda body: 7, read=lambda adaptor, data: (data, None),
                              billing=Billing.TASK)
    monkeypatch.setitem(MODES, RelayMode.RERANK, row)
    return await aiohttp_client(create_app(replace(settings, streaming_timeout=1.0)))


async def test_a_row_decides_the_route_the_check_the_count_and_the_billing(reworked, upstreams) -> None:
    fake = await upstreams(usage=(30, 0))
    await add_channel(reworked, fake, models=RERANKER, type=40)
    user = await rich_user()
    token = await make_key(user)
    body = {"model": RERANKER, "query": "q", "documents": ["a", "b", "c"]}
    refused = await reworked.post("/v1/v2/rerank", json=body, headers=headers_for(token))
    assert refused.status == 400
    assert (await refused.json())["error"]["param"] == "documents"
    assert fake.seen == []
    resp = await reworked.post("/v1/v2/rerank", json={**body, "documents": ["a", "b"]}, headers=headers_for(token))
    assert resp.status == 200 and len((await resp.json())["results"]) == 2
    assert fake.seen[0].path == "/v1/rerank"  # OpenAI's path, from the member
    await drain(reworked)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).all()
    assert len(logs) == 1
    # the upstream's usage (30) unread: the row's count; priced per call, not by the tokens
    assert (logs[0].prompt_tokens, logs[0].completion_tokens) == (7, 0)
    assert logs[0].quota == pricing.pre_charge_quota(pricing.resolve_price(RERANKER), 0, None)
