"""The SDK matrix: every official SDK and LangChain chat model runs the weather tool loop, thinking
on, streamed and not, against a Claude, a Gemini 3, a DeepSeek (thinking mode) and an OpenAI (gpt-5)
channel, each a strict fake: through the client's native route where the channel speaks its format,
converted otherwise. Each cell checks the final answer, what the provider received on the second turn
(its own reasoning state replayed exactly as it emitted it, the call and the tool's result), and each
charge to the unit against the provider's reported usage, the balance following."""
from __future__ import annotations

from typing import Any

import pytest

from tests.sdk.channels import KITS, ChannelKit, holds_result
from tests.sdk.clients import Driver, anthropic_messages, genai_chat, genai_generate, openai_chat, openai_responses
from tests.sdk.conftest import START_QUOTA, Relay, UpstreamFactory
from tests.sdk.langchain_clients import (
    langchain_anthropic,
    langchain_google,
    langchain_openai,
    langchain_openai_responses,
)
from tests.sdk.scenario import ANSWER, QUESTION, TOOL_NAME, WeatherScript

# (id, driver, whether the library hands back an opaque field that can carry any provider's state)
CLIENTS: tuple[tuple[str, Driver, bool], ...] = (
    ("anthropic", anthropic_messages, True),  # thinking blocks with their signatures
    ("genai", genai_generate, True),  # parts with thoughtSignature
    ("genai-chat", genai_chat, True),
    ("openai-chat", openai_chat, True),  # the SDK's message object, unknown fields kept
    ("openai-responses", openai_responses, True),  # reasoning items' encrypted_content
    ("lc-anthropic", langchain_anthropic, True),
    ("lc-google", langchain_google, True),
    # ChatOpenAI keeps only OpenAI's own fields (its documentation says so): nothing can ride along
    # but the tool call's id, so the gateway may only fall back (no thinking, Gemini's skip value).
    ("lc-openai", langchain_openai, False),
    ("lc-openai-responses", langchain_openai_responses, True),
)


def schema_kept(schema: dict[str, Any]) -> None:
    """The tool's schema as the provider got it: nested object, enum and nullable field all there."""
    def kind(node: dict[str, Any]) -> set[str]:
        kinds = node.get("type")
        found = {str(k).lower() for k in (kinds if isinstance(kinds, list) else [kinds]) if k}
        for option in node.get("anyOf") or ():
            found |= kind(option)
        return found | ({"null"} if node.get("nullable") else set())

    properties = schema["properties"]
    assert set(properties["location"]["properties"]) == {"city", "country"}, schema
    assert properties["unit"]["enum"] == ["celsius", "fahrenheit"], schema
    assert kind(properties["date"]) == {"string", "null"}, schema


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("kit", KITS, ids=[k.name for k in KITS])
@pytest.mark.parametrize(("driver", "carries"), [(d, c) for _, d, c in CLIENTS], ids=[n for n, _, _ in CLIENTS])
async def test_tool_loop_with_thinking(relay: Relay, upstream: UpstreamFactory, driver: Driver, carries: bool,
                                       kit: ChannelKit, stream: bool) -> None:
    script = WeatherScript()
    recorder = await upstream(kit, script)

    assert await driver(relay.loop(kit.model, stream)) == ANSWER

    first, second = recorder.turns()
    assert (first.status, second.status) == (200, 200)
    assert kit.thinking_on(first), first.body
    kit.replayed(first, second, carries)
    assert [len(v.tool_results) for v in script.views] == [0, 1]
    assert QUESTION in script.views[0].user_texts
    assert holds_result(script.views[1].tool_results[0]), script.views[1]
    schema_kept(script.views[0].tools[TOOL_NAME])

    logs, balance = await relay.settled()
    charges = [relay.charge(kit.model, kit.usage(exchange)) for exchange in (first, second)]
    assert [(log.model_name, log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (kit.model, kit.usage(e).prompt, kit.usage(e).completion, charge) for e, charge in zip(
            (first, second), charges, strict=True)]
    assert balance == START_QUOTA - sum(log.quota for log in logs)
