"""Gemini CLI (`gemini -p`) through the gateway's /v1beta, on two kinds of channel, with a model named
and with its own routing: it asks to read a file, runs its read_file tool, sends the result back and
prints an answer quoting the file. Each leg checks the answer, the tool result in the upstream's
second request, the reasoning state the upstream expects back, and every charge to the unit."""
from __future__ import annotations

import json
from typing import Any

from api.upstream.catalogue import ChannelType
from tests.clients import clis
from tests.clients.charges import Tokens, assert_charged, assert_charged_each, gemini_tokens, set_prices
from tests.clients.conftest import Workspace, assert_tool_loop, run_cli
from tests.relay.fakes import add_channel
from tests.upstream.providers.agent_script import AgentView, Recorded, Script, Turn, read_file_script
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI

THINKING = "The user wants the file; I will read it."
GEMINI_USAGE = {"promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 28,
                "thoughtsTokenCount": 12, "totalTokenCount": 4040}


# Its router (no --model): a flash-lite model scores the prompt's complexity; a low score is for flash.
CLASSIFIER, FLASH = "gemini-3.5-flash-lite", "gemini-3.8-flash"


async def run_gemini_cli(gateway: Any, workspace: Workspace, model: str) -> tuple[clis.CliRun, Any, int]:
    return await run_cli(clis.gemini_cli, gateway, workspace, model)


def routed(script: Script) -> Script:
    """`script`, after the router's question (the one request declaring no tools) is answered: simple."""

    def answer(view: AgentView) -> Turn:
        if not view.tools:
            return Turn(text=json.dumps({"complexity_reasoning": "One file to read.", "complexity_score": 10}))
        return script(view)

    return answer


async def test_on_an_openai_channel_serving_gpt_4_1(gateway, serve, workspace) -> None:
    model = "gpt-4.1"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file)))
    fake = FakeOpenAI(script=script, usage=(4000, 40), cached=3000)
    await add_channel(gateway, None, models=model, base_url=await serve(fake.app()), key=fake.key)
    _, user, start = await run_gemini_cli(gateway, workspace, model)
    assert_tool_loop(script, fake.seen, "read_file")
    assert "top_k" not in fake.seen[0]  # Gemini CLI sends topK; OpenAI's chat API has none
    await assert_charged(gateway, user, start, model, [Tokens(4000, 40, 3000)] * 2)


async def test_on_its_native_gemini_channel(gateway, serve, workspace) -> None:
    model = "gemini-3.1-pro-preview"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeGemini(script=script, usage=GEMINI_USAGE)
    await add_channel(gateway, None, models=model, type=int(ChannelType.GEMINI), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_gemini_cli(gateway, workspace, model)
    assert_tool_loop(script, fake.seen, "read_file")
    calls = [part for content in fake.seen[1]["body"]["contents"] if content["role"] == "model"
             for part in content["parts"] if "functionCall" in part]
    assert [c["functionCall"]["name"] for c in calls] == ["read_file"] and calls[0]["thoughtSignature"] in fake.issued
    await assert_charged(gateway, user, start, model, [gemini_tokens(GEMINI_USAGE)] * 2)


async def test_routing_by_itself_on_an_openai_channel(gateway, serve, workspace) -> None:
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file)))
    fake = FakeOpenAI(script=routed(script), usage=(4000, 40), cached=3000)
    await add_channel(gateway, None, models=f"{CLASSIFIER},{FLASH}", base_url=await serve(fake.app()), key=fake.key,
                      model_mapping=json.dumps({CLASSIFIER: "gpt-4.1-nano", FLASH: "gpt-4.1-mini"}))
    _, user, start = await run_gemini_cli(gateway, workspace, "")  # no --model: its default routing
    # The router's question, then the two turns on the model it chose.
    assert [body["model"] for body in fake.seen] == ["gpt-4.1-nano", "gpt-4.1-mini", "gpt-4.1-mini"]
    assert_tool_loop(script, fake.seen[1:], "read_file")
    schema = fake.seen[0]["response_format"]["json_schema"]["schema"]  # Gemini's OBJECT/STRING/INTEGER, as JSON Schema
    assert schema["type"] == "object" and {p["type"] for p in schema["properties"].values()} == {"string", "integer"}
    await assert_charged_each(gateway, user, start, [(CLASSIFIER, Tokens(4000, 40, 3000))] + [
        (FLASH, Tokens(4000, 40, 3000))] * 2)
