"""Gemini CLI (`gemini -p`) through the gateway's /v1beta, on two kinds of channel: it asks to read a
file, runs its read_file tool, sends the result back and prints an answer quoting the file. Each leg
checks the answer, the tool result in the upstream's second request, the reasoning state the upstream
expects back, and every charge to the unit."""
from __future__ import annotations

from typing import Any

from models.enums import ChannelType
from tests.clients import clis
from tests.clients.charges import Tokens, assert_charged, gemini_tokens, set_prices
from tests.clients.conftest import FILE_LINE, Workspace
from tests.relay.agent_script import Recorded, read_file_script
from tests.relay.fake_gemini import FakeGemini
from tests.relay.fake_openai_strict import FakeOpenAI
from tests.relay.fakes import add_channel, make_key, rich_user

THINKING = "The user wants the file; I will read it."
GEMINI_USAGE = {"promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 28,
                "thoughtsTokenCount": 12, "totalTokenCount": 4040}


async def run_gemini_cli(gateway: Any, workspace: Workspace, model: str) -> tuple[clis.CliRun, Any, int]:
    """(the run, its user, the user's balance before it) for a new user and key."""
    user = await rich_user()
    token = await make_key(user)
    run = await clis.gemini_cli(str(gateway.make_url("")).rstrip("/"), f"sk-{token.key}", model, workspace.home,
                                workspace.workdir, workspace.prompt)
    assert run.returncode == 0, run.explain()
    assert FILE_LINE in run.answer, run.explain()
    return run, user, user.quota


def assert_loop(script: Recorded, seen: list[Any]) -> None:
    """Two upstream requests: read_file asked for, then its result (the file) seen and quoted."""
    assert len(seen) == 2, seen  # nothing else reached the upstream
    assert [len(view.tool_results) for view in script.views] == [0, 1]
    assert script.turns[0].tool is not None and script.turns[0].tool["name"] == "read_file"
    assert FILE_LINE in script.views[1].tool_results[0]


async def test_on_an_openai_channel_serving_gpt_4_1(gateway, serve, workspace) -> None:
    model = "gpt-4.1"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file)))
    fake = FakeOpenAI(script=script, usage=(4000, 40), cached=3000)
    await add_channel(gateway, None, models=model, base_url=await serve(fake.app()), key=fake.key)
    _, user, start = await run_gemini_cli(gateway, workspace, model)
    assert_loop(script, fake.seen)
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
    assert_loop(script, fake.seen)
    calls = [part for content in fake.seen[1]["body"]["contents"] if content["role"] == "model"
             for part in content["parts"] if "functionCall" in part]
    assert [c["functionCall"]["name"] for c in calls] == ["read_file"] and calls[0]["thoughtSignature"] in fake.issued
    await assert_charged(gateway, user, start, model, [gemini_tokens(GEMINI_USAGE)] * 2)
