"""The SDKs' own helpers on every channel: google-genai running a Python function itself (automatic
function calling, the declaration a JSON Schema built from the signature) and parsing a pydantic
response_schema, LangChain's with_structured_output on each chat model. Checked like the tool loops:
the answer, what the provider received (its reasoning state replayed, the schema kept), each charge."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.sdk.channels import KITS, ChannelKit, declared_schema
from tests.sdk.clients import genai_function, genai_structured
from tests.sdk.conftest import START_QUOTA, Relay, UpstreamFactory
from tests.sdk.langchain_clients import (
    structured_anthropic,
    structured_google,
    structured_openai,
    structured_openai_responses,
)
from tests.sdk.recorder import Exchange, Recorder
from tests.sdk.scenario import ANSWER, REPORT, TOOL_NAME, ReportScript, WeatherReport, WeatherScript
from tests.sdk.test_tool_loops import schema_kept

KIT_IDS = [k.name for k in KITS]


async def charged_to_the_unit(relay: Relay, kit: ChannelKit, recorder: Recorder) -> None:
    exchanges = recorder.turns()
    logs, balance = await relay.settled()
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (kit.usage(e).prompt, kit.usage(e).completion, relay.charge(kit.model, kit.usage(e))) for e in exchanges]
    assert balance == START_QUOTA - sum(log.quota for log in logs)


def report_schema_kept(exchange: Exchange) -> None:
    """The report's schema reached the provider in some form of its own (a JSON Schema object, a
    tool's parameters, or the instruction's text), with every field."""
    fields = set(WeatherReport.model_fields)

    def found(value: Any) -> bool:
        if isinstance(value, dict):
            properties = value.get("properties")
            if isinstance(properties, dict) and fields <= set(properties):
                return True
            return any(found(v) for v in value.values())
        if isinstance(value, list):
            return any(found(v) for v in value)
        return isinstance(value, str) and all(f'"{name}"' in value for name in fields)

    assert found(exchange.body), exchange.body


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("kit", KITS, ids=KIT_IDS)
async def test_genai_runs_a_python_function(relay: Relay, upstream: UpstreamFactory, kit: ChannelKit,
                                            stream: bool) -> None:
    script = WeatherScript()
    recorder = await upstream(kit, script)
    assert await genai_function(relay.loop(kit.model, stream)) == ANSWER
    first, second = recorder.turns()
    kit.replayed(first, second, True)
    schema = declared_schema(first.body, TOOL_NAME)
    schema_kept({**schema, "properties": {**schema["properties"], "location": _resolved(schema, "location")}},
                enum=False)
    await charged_to_the_unit(relay, kit, recorder)


def _resolved(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """A property given as a `$ref` into `$defs` (pydantic's way), resolved."""
    node = schema["properties"][name]
    ref = node.get("$ref") if isinstance(node, dict) else None
    return schema.get("$defs", {})[ref.rsplit("/", 1)[-1]] if ref else node


StructuredDriver = Callable[[Any], Awaitable[WeatherReport]]
STRUCTURED: tuple[tuple[str, StructuredDriver], ...] = (
    ("genai", genai_structured),
    ("lc-anthropic", structured_anthropic),
    ("lc-google", structured_google),
    ("lc-openai", structured_openai),
    ("lc-openai-responses", structured_openai_responses),
)


@pytest.mark.parametrize("kit", KITS, ids=KIT_IDS)
@pytest.mark.parametrize("driver", [d for _, d in STRUCTURED], ids=[n for n, _ in STRUCTURED])
async def test_structured_output(relay: Relay, upstream: UpstreamFactory, driver: StructuredDriver,
                                 kit: ChannelKit) -> None:
    recorder = await upstream(kit, ReportScript())
    assert await driver(relay.loop(kit.model, False)) == REPORT
    (exchange,) = recorder.turns()
    report_schema_kept(exchange)
    await charged_to_the_unit(relay, kit, recorder)
