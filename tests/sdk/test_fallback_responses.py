# ruff: noqa: F811  (pytest fixtures imported from tests.sdk.test_fallbacks are test parameters)
"""A client's chain on /v1/responses through the official openai SDK (`client.responses.create`,
streamed and not): the first model's upstream fails in its provider's words, the next model of the
chain answers — natively on a Responses upstream, or converted to Claude's Messages — and the answer's
`model` and `X-Gateway-Model` name it; the failed attempt is refunded, the answer charged once at its
model's prices, to the unit, on the user and on the key, in one consume row and no error row."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from api.upstream.catalogue import ChannelType
from models import Token, User
from tests.api.test_error_logs import written
from tests.relay.fakes import add_channel, live_balance, make_key
from tests.sdk.channels import Usage
from tests.sdk.conftest import START_QUOTA, Relay
from tests.sdk.test_fallbacks import (  # noqa: F401  (the fixtures)
    CLAUDE_529,
    CLAUDE_USAGE,
    OPENAI_500,
    Serve,
    client_of,
    closed,
    consume_logs,
    failing,
    serve,
)
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.openai.fake_responses import FakeResponses

KEY_QUOTA = 10_000_000
RESPONSES_USAGE = Usage(40, 12, cached=16)  # FakeResponses'


@dataclass(frozen=True)
class Case:
    first: str
    second: str
    fields: dict[str, Any]  # the chain, as the client's body carries it


CASES = {
    # Claude overloaded (529), then gpt-5 on an upstream with the Responses API: relayed as sent
    "native": Case("claude-opus-5-5", "gpt-5", {"models": ["gpt-5"], "route": "fallback"}),
    # OpenAI's 500 on /v1/responses, then Claude: the Responses request converted to Messages
    "converted": Case("gpt-5", "claude-opus-5-5", {"fallbacks": ["claude-opus-5-5"]}),
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("case", list(CASES))
async def test_a_client_chain_on_responses_is_answered_by_the_next_model_and_charged_once(
        relay: Relay, serve: Serve, case: str, stream: bool) -> None:
    plan = CASES[case]
    seen: list[str] = []
    if plan.first == "claude-opus-5-5":
        await add_channel(relay.gateway, None, models=plan.first, type=int(ChannelType.ANTHROPIC), key="sk-ant",
                          base_url=await serve(failing(529, CLAUDE_529, seen)), name="claude down")
        upstream: FakeResponses | FakeClaude = FakeResponses()
        kind, usage = ChannelType.OPENAI, RESPONSES_USAGE
    else:
        await add_channel(relay.gateway, None, models=plan.first, type=int(ChannelType.OPENAI), key="sk-oai",
                          base_url=await serve(failing(500, OPENAI_500, seen)), name="openai down")
        upstream, kind, usage = FakeClaude(), ChannelType.ANTHROPIC, CLAUDE_USAGE
    await add_channel(relay.gateway, None, models=plan.second, type=int(kind), key=upstream.key,
                      base_url=await serve(upstream.app()), name="answering")
    token = await make_key(relay.user, remain_quota=KEY_QUOTA, unlimited=False)
    client = client_of(relay, token.key)
    request: dict[str, Any] = {"model": plan.first, "input": "Say hello.", "extra_body": plan.fields}

    if stream:
        events = await client.responses.create(**request, stream=True)
        header = events.response.headers["X-Gateway-Model"]
        kinds, final = [], None
        async for event in events:
            kinds.append(event.type)
            if event.type == "response.completed":
                final = event.response
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert final is not None
        answer = final
    else:
        raw = await client.responses.with_raw_response.create(**request)
        header, answer = raw.headers["X-Gateway-Model"], raw.parse()
    assert header == plan.second and answer.model == plan.second
    assert answer.output_text
    assert answer.usage is not None and answer.usage.output_tokens == usage.completion

    assert seen and all(path.endswith(("/v1/responses", "/v1/messages")) for path in seen)
    assert len(upstream.seen) == 1
    assert not {"models", "route", "fallbacks"} & set(upstream.seen[0]["body"])

    logs, balance = await consume_logs(relay)
    charge = relay.charge(plan.second, usage)
    assert len(logs) == 1
    row = logs[0]
    assert (row.model_name, row.quota, row.token_id) == (plan.second, charge, token.id)
    assert (row.prompt_tokens, row.completion_tokens) == (usage.prompt, usage.completion)
    assert row.is_stream is stream
    assert balance == START_QUOTA - charge
    assert (await User.get(id=relay.user.id)).used_quota == charge
    assert await live_balance(relay.gateway, relay.user.id) == START_QUOTA - charge
    assert await live_balance(relay.gateway, relay.user.id, token.id) == KEY_QUOTA - charge
    key = await Token.get(id=token.id)
    assert (key.remain_quota, key.used_quota) == (KEY_QUOTA - charge, charge)
    fallback = orjson.loads(row.other)["fallback"]
    status, code = (503, "overloaded_error") if plan.first == "claude-opus-5-5" else (500, "server_error")
    assert fallback["requested"] == plan.first and fallback["answered"] == plan.second
    assert fallback["source"] == "client"
    assert fallback["passed"] == [  # Claude's 529 is said as 503 by its adaptor, as OpenAI's clients know it
        {"model": plan.first, "reason": "unavailable", "status": status, "code": code}]
    assert await written(relay.gateway) == []  # the chain answered: no error row
