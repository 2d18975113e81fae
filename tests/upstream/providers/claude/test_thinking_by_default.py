"""Claude thinking for a client that asked for none (api/upstream/providers/claude/controls.py): not
switched on where the model can be switched off (5.x thinks by default, so `disabled` is sent); the
model's own default for a Messages client (as it would get natively); adaptive where it always thinks."""
from __future__ import annotations

from typing import Any

import pytest

from api.services.configuration.capability_lookup import table_of
from api.services.model_name import ModelName
from api.upstream.base import RelayMeta
from api.upstream.catalogue import ChannelType
from api.upstream.providers.claude import ClaudeAdaptor
from tests.upstream.providers.claude.fake_anthropic import FakeClaude

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}


def sent(model: str, inbound: str = "", **req: Any) -> dict[str, Any]:
    meta = RelayMeta(1, int(ChannelType.ANTHROPIC), "sk-ant", name=ModelName(model, model), inbound=inbound,
                     capability=table_of("")(model))
    body = ClaudeAdaptor(meta).convert_request({"model": model, "messages": [{"role": "user", "content": "Hi"}],
                                                "tools": [WEATHER], **req})
    problem = FakeClaude().problem(body, "anthropic", model)
    assert problem is None, problem
    return body


@pytest.mark.parametrize("model", ["claude-opus-5", "claude-sonnet-5", "claude-haiku-5"])
def test_a_model_that_can_be_off_is_not_made_to_think_for_a_client_that_asked_none(model: str) -> None:
    body = sent(model)
    assert body["thinking"] == {"type": "disabled"} and "output_config" not in body


def test_asked_for_it_thinks() -> None:
    body = sent("claude-opus-5", reasoning_effort="high")
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "high"}


def test_a_messages_client_gets_the_models_own_default() -> None:
    assert sent("claude-opus-5", inbound="anthropic")["thinking"] == {"type": "adaptive", "display": "summarized"}


@pytest.mark.parametrize("model", ["claude-opus-5-5", "claude-fable-5-1"])
def test_a_model_that_always_thinks_still_thinks(model: str) -> None:
    assert sent(model)["thinking"] == {"type": "adaptive", "display": "summarized"}


def test_a_model_that_thinks_only_when_asked_gets_no_field() -> None:
    assert "thinking" not in sent("claude-opus-4-7")
