"""The relay's lifecycle (api/relay/lifecycle.py) on its own: the steps in their order, the settlement
in its finally (or left to a session), the failure log and the metrics, with the kind's steps given as
plain functions. The pipelines that use it are tested end to end beside this file."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from api.relay import lifecycle
from api.relay.attempts import Route
from api.relay.auth import UserInfo
from api.relay.caller import Caller
from api.relay.job import Job, Outcome
from api.relay.lifecycle import Declined, Flow, serve
from api.relay.refusals import refuse
from api.upstream.base import RelayMode, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.metrics import Metrics

ROUTE = "/v1/test"
PINNED = SimpleNamespace(id=7)  # a channel an administrator pins: the first channel without the index


class Recorder:
    def __init__(self) -> None:
        self.steps: list[str] = []
        self.settled: list[Outcome | None] = []
        self.logged: list[RelayError] = []


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()

    async def settle(job: Job, outcome: Outcome | None) -> None:
        recorder.steps.append("settle")
        recorder.settled.append(outcome)

    def log_failure(job: Job, err: RelayError) -> None:
        recorder.steps.append("log")
        recorder.logged.append(err)

    monkeypatch.setattr(lifecycle, "settle_shielded", settle)
    monkeypatch.setattr(lifecycle, "log_failure", log_failure)
    return recorder


def new_job(body: dict[str, Any] | None = None) -> Job:
    request = make_mocked_request("POST", ROUTE)
    state: Any = SimpleNamespace(metrics=Metrics())
    caller = Caller(UserInfo(1, "alice", 1, 1, "default", False), None, PINNED)  # type: ignore[arg-type]
    options: Any = SimpleNamespace(get_json=lambda name: {"vip": 1})  # usable, with a ratio
    return Job(request, state, options, RelayMode.CHAT, ROUTE, caller, body or {"model": "gpt-4"})


def flow_of(seen: Recorder, attempts: Any = None, **fields: Any) -> Flow:
    def read(job: Job) -> None:
        seen.steps.append(f"read:{job.group or '-'}")

    def permit(job: Job) -> None:
        seen.steps.append(f"permit:{job.group}")

    async def admit(job: Job) -> None:
        seen.steps.append("admit")

    async def succeed(job: Job, route: Route) -> Outcome:
        seen.steps.append(f"attempts:{job.channel.id if job.channel else 0}")
        return Outcome(web.Response(status=201), TokenUsage(3, 4), 9)

    async def unused(job: Job, channel: Any) -> Outcome:
        raise AssertionError("the flow's attempts make the attempt")

    return Flow(Route(unused), attempts=attempts or succeed, read=read, permits=(permit,), admit=admit, **fields)


def requests_of(job: Job) -> dict[str, int]:
    metrics: Metrics = job.state.metrics
    return {dict(labels)["code"]: count for labels, count in metrics.requests.items()}


async def test_the_steps_in_order_and_the_outcome_settled(seen: Recorder) -> None:
    job = new_job({"model": "gpt-4", "group": "vip"})
    outcome = await serve(job, flow_of(seen))
    assert seen.steps == ["read:-", "permit:vip", "admit", "attempts:7", "settle"]
    assert seen.settled == [outcome] and outcome.quota == 9
    assert job.group == "vip" and "group" not in job.body  # the playground's field, never sent upstream
    assert requests_of(job) == {"201": 1}


async def test_a_failed_attempt_refunds_then_logs_and_counts(seen: Recorder) -> None:
    async def fail(job: Job, route: Route) -> Outcome:
        raise RelayError(502, "bad gateway", "upstream_error", "bad_response_status_code")

    job = new_job()
    with pytest.raises(RelayError):
        await serve(job, flow_of(seen, fail))
    assert seen.steps[-2:] == ["settle", "log"] and seen.settled == [None]
    assert requests_of(job) == {"502": 1}
    assert [dict(labels)["type"] for labels in job.state.metrics.errors] == ["bad_response_status_code"]


async def test_a_refusal_before_the_admission_settles_nothing(seen: Recorder) -> None:
    def refused(job: Job) -> None:
        raise refuse(job.request, 400, "relay_model_required", "model_required", "invalid_request_error")

    job = new_job()
    flow = flow_of(seen)
    with pytest.raises(RelayError):
        await serve(job, Flow(flow.route, attempts=flow.attempts, read=refused, admit=flow.admit))
    assert seen.steps == ["log"] and seen.settled == []
    assert requests_of(job) == {"400": 1}


async def test_a_session_settles_its_own_and_is_counted_as_a_stream(seen: Recorder) -> None:
    async def session(job: Job, outcome: Outcome) -> None:
        seen.steps.append("session")

    job = new_job()
    await serve(job, flow_of(seen, session=session))
    assert seen.steps[-2:] == ["attempts:7", "session"] and seen.settled == []
    assert sum(job.state.metrics.streams.values()) == 1


async def test_a_session_that_never_opened_is_refunded(seen: Recorder) -> None:
    async def fail(job: Job, route: Route) -> Outcome:
        raise RelayError(502, "no handshake", "upstream_error", "do_request_failed")

    async def session(job: Job, outcome: Outcome) -> None:
        raise AssertionError("nothing opened")

    with pytest.raises(RelayError):
        await serve(new_job(), flow_of(seen, fail, session=session, logged=False))
    assert seen.settled == [None] and seen.logged == []


async def test_a_declined_request_is_logged_as_its_error_and_raised_as_it_is(seen: Recorder) -> None:
    class Turned(Declined):
        pass

    declined = Turned("queue full")
    declined.error = RelayError(400, "queue full", "upstream_error", 23)

    async def decline(job: Job, route: Route) -> Outcome:
        raise declined

    job = new_job()
    with pytest.raises(Turned) as raised:
        await serve(job, flow_of(seen, decline, metered=False))
    assert raised.value is declined and seen.logged == [declined.error] and seen.settled == [None]
    assert not job.state.metrics.requests and not job.state.metrics.errors
