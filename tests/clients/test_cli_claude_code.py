"""Claude Code (`claude -p`) through the gateway's /v1/messages, on four kinds of channel: it asks to
read a file, runs its Read tool, sends the result back and prints an answer quoting the file. Each
leg checks the answer, the tool result in the upstream's second request, the reasoning state the
upstream expects back, and every charge to the unit."""
from __future__ import annotations

from typing import Any

from api.upstream.catalogue import ChannelType
from tests.clients import clis
from tests.clients.charges import Tokens, assert_charged, claude_tokens, gemini_tokens, set_prices
from tests.clients.conftest import Workspace, assert_tool_loop, run_cli, thinking_replayed
from tests.relay.fakes import add_channel
from tests.upstream.providers.agent_script import Recorded, read_file_script
from tests.upstream.providers.aws.test_provider_bedrock import ACCESS, REGION, SECRET, FakeBedrock
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI

THINKING = "The user wants the file; I will read it."
CLAUDE_USAGE = {"input_tokens": 500, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 3000,
                "output_tokens": 40}
GEMINI_USAGE = {"promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 28,
                "thoughtsTokenCount": 12, "totalTokenCount": 4040}


async def run_claude_code(gateway: Any, workspace: Workspace, model: str) -> tuple[clis.CliRun, Any, int]:
    return await run_cli(clis.claude_code, gateway, workspace, model)


async def test_on_an_openai_channel_serving_gpt_5_its_user_fitted(gateway, serve, workspace) -> None:
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeOpenAI(script=script, usage=(4000, 40), cached=3000)
    await add_channel(gateway, None, models="gpt-5", base_url=await serve(fake.app()), key=fake.key)
    _, user, start = await run_claude_code(gateway, workspace, "gpt-5")
    assert_tool_loop(script, fake.seen, "Read")
    first = fake.seen[0]
    assert "max_tokens" not in first and first["max_completion_tokens"] > 0  # gpt-5 refuses max_tokens
    assert "Read" in {tool["function"]["name"] for tool in first["tools"]}
    # Its `metadata.user_id` (~150 characters) becomes OpenAI's `user`, which OpenAI refuses past 64.
    users = {seen.get("user") for seen in fake.seen}
    assert len(users) == 1 and 0 < len(users.pop() or "") <= 64
    await assert_charged(gateway, user, start, "gpt-5", [Tokens(4000, 40, 3000)] * 2)


async def test_on_a_gemini_3_channel(gateway, serve, workspace) -> None:
    model = "gemini-3.1-pro-preview"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeGemini(script=script, usage=GEMINI_USAGE)
    await add_channel(gateway, None, models=model, type=int(ChannelType.GEMINI), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_claude_code(gateway, workspace, model)
    assert_tool_loop(script, fake.seen, "Read")
    # Gemini 3 refuses a function call replayed without the thought signature it came with.
    calls = [part for content in fake.seen[1]["body"]["contents"] if content["role"] == "model"
             for part in content["parts"] if "functionCall" in part]
    assert [c["functionCall"]["name"] for c in calls] == ["Read"] and calls[0]["thoughtSignature"] in fake.issued
    await assert_charged(gateway, user, start, model, [gemini_tokens(GEMINI_USAGE)] * 2)


async def test_on_a_bedrock_claude_channel(gateway, serve, workspace) -> None:
    model = "claude-sonnet-4-5-20250929"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeBedrock(FakeClaude(script=script, usage=CLAUDE_USAGE))
    await add_channel(gateway, None, models=model, type=int(ChannelType.AWS), base_url=await serve(fake.app()),
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    _, user, start = await run_claude_code(gateway, workspace, model)
    assert_tool_loop(script, fake.seen, "Read")
    assert [seen["action"] for seen in fake.seen] == ["invoke-with-response-stream"] * 2
    assert thinking_replayed(fake.seen[1]["body"])
    await assert_charged(gateway, user, start, model, [claude_tokens(CLAUDE_USAGE)] * 2)


async def test_on_its_native_claude_channel(gateway, serve, workspace) -> None:
    model = "claude-opus-5-5"  # Claude Code's own default model
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeClaude(script=script, usage=CLAUDE_USAGE)
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_claude_code(gateway, workspace, model)
    assert_tool_loop(script, fake.seen, "Read")
    first, second = fake.seen[0], fake.seen[1]
    assert first["body"]["thinking"]["type"] == "adaptive" and "context_management" in first["body"]  # as sent
    assert "claude-code-20250219" in first["headers"].get("anthropic-beta", "")
    assert thinking_replayed(second["body"])
    await assert_charged(gateway, user, start, model, [claude_tokens(CLAUDE_USAGE)] * 2)
