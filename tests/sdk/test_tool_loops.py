"""The SDK matrix: every official SDK and LangChain chat model runs the weather tool loop, thinking
on, streamed and not, against a Claude, a Gemini 3, a DeepSeek (thinking mode) and an OpenAI (gpt-5)
channel, each a strict fake: through the client's native route where the channel speaks its format,
converted otherwise. Each cell checks the final answer, what the provider received on the second turn
(its own reasoning state replayed exactly as it emitted it, the call and the tool's result), and each
charge to the unit against the provider's reported usage, the balance following."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.sdk.channels import KITS, ChannelKit, declared_schema, holds_result
from tests.sdk.clients import Driver, anthropic_messages, genai_chat, genai_generate, openai_chat, openai_responses
from tests.sdk.conftest import START_QUOTA, Relay, UpstreamFactory
from tests.sdk.langchain_clients import (
    langchain_anthropic,
    langchain_google,
    langchain_openai,
    langchain_openai_responses,
)
from tests.sdk.scenario import ANSWER, QUESTION, TOOL_NAME, WeatherScript


@dataclass(frozen=True)
class Client:
    name: str
    driver: Driver
    # Whether the library hands back an opaque field that can carry any provider's reasoning state.
    carries: bool = True
    # Whether the library declares a nullable parameter as nullable (the gateway cannot restore it).
    nullable: bool = True


CLIENTS = (
    Client("anthropic", anthropic_messages),  # thinking blocks with their signatures
    Client("genai", genai_generate),  # parts with thoughtSignature
    Client("genai-chat", genai_chat),
    Client("openai-chat", openai_chat),  # the SDK's message object, unknown fields kept
    Client("openai-responses", openai_responses),  # reasoning items' encrypted_content
    Client("lc-anthropic", langchain_anthropic),
    # langchain-google-genai turns the tool into Gemini's Schema itself and writes ["string", "null"]
    # as a plain STRING.
    Client("lc-google", langchain_google, nullable=False),
    # ChatOpenAI keeps only OpenAI's own fields (its module docstring says so): nothing rides along but
    # the tool call's id, by which the gateway finds the Claude or Gemini state it kept (DeepSeek's
    # reasoning_content it does not keep: an empty one goes back).
    Client("lc-openai", langchain_openai, carries=False),
    Client("lc-openai-responses", langchain_openai_responses),
)


def schema_kept(schema: dict[str, Any], enum: bool = True, nullable: bool = True) -> None:
    """The tool's schema as the provider got it: nested object, enum and nullable field all there."""
    def kind(node: dict[str, Any]) -> set[str]:
        kinds = node.get("type")
        found = {str(k).lower() for k in (kinds if isinstance(kinds, list) else [kinds]) if k}
        for option in node.get("anyOf") or ():
            found |= kind(option)
        return found | ({"null"} if node.get("nullable") else set())

    properties = schema["properties"]
    assert set(properties["location"]["properties"]) == {"city", "country"}, schema
    if enum:
        assert properties["unit"]["enum"] == ["celsius", "fahrenheit"], schema
    assert kind(properties["date"]) == ({"string", "null"} if nullable else {"string"}), schema


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("kit", KITS, ids=[k.name for k in KITS])
@pytest.mark.parametrize("client", CLIENTS, ids=[c.name for c in CLIENTS])
async def test_tool_loop_with_thinking(relay: Relay, upstream: UpstreamFactory, client: Client, kit: ChannelKit,
                                       stream: bool) -> None:
    script = WeatherScript()
    recorder = await upstream(kit, script)

    assert await client.driver(relay.loop(kit.model, stream)) == ANSWER

    first, second = recorder.turns()
    assert (first.status, second.status) == (200, 200)
    assert kit.thinks(first), f"the {kit.name} model was told not to think: {first.body}"
    kit.replayed(first, second, client.carries)
    assert [len(v.tool_results) for v in script.views] == [0, 1]
    assert QUESTION in script.views[0].user_texts
    assert holds_result(script.views[1].tool_results[0]), script.views[1]
    schema_kept(declared_schema(first.body, TOOL_NAME), nullable=client.nullable)

    logs, balance = await relay.settled()
    charges = [relay.charge(kit.model, kit.usage(exchange)) for exchange in (first, second)]
    assert [(log.model_name, log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (kit.model, kit.usage(e).prompt, kit.usage(e).completion, charge) for e, charge in zip(
            (first, second), charges, strict=True)]
    assert balance == START_QUOTA - sum(log.quota for log in logs)
