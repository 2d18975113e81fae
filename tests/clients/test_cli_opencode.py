"""opencode (`opencode run`) through the gateway, with the AI SDK's Anthropic provider (/v1/messages)
and its OpenAI-compatible one (/v1/chat/completions): it asks to read a file, runs its read tool,
sends the result back and prints an answer quoting the file. Each leg checks the answer, the tool
result in the upstream's second request, the reasoning state the upstream expects back, and every
charge to the unit."""
from __future__ import annotations

from typing import Any

from api.upstream.catalogue import ChannelType
from tests.clients import clis
from tests.clients.charges import Tokens, assert_charged, claude_tokens, gemini_tokens, set_prices
from tests.clients.conftest import Workspace, assert_tool_loop, run_cli, signature_replayed, thinking_replayed
from tests.relay.fakes import add_channel
from tests.upstream.providers.agent_script import Recorded, read_file_script
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI

THINKING = "The user wants the file; I will read it."
CLAUDE_USAGE = {"input_tokens": 500, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 3000,
                "output_tokens": 40}
GEMINI_USAGE = {"promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 28,
                "thoughtsTokenCount": 12, "totalTokenCount": 4040}


async def run_opencode(gateway: Any, workspace: Workspace, model: str, provider: str) -> tuple[clis.CliRun, Any, int]:
    return await run_cli(clis.opencode, gateway, workspace, model, provider=provider)


async def test_anthropic_provider_on_a_claude_channel(gateway, serve, workspace) -> None:
    model = "claude-opus-5-5"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeClaude(script=script, usage=CLAUDE_USAGE)
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_opencode(gateway, workspace, model, "anthropic")
    assert_tool_loop(script, fake.seen, "read")
    assert thinking_replayed(fake.seen[1]["body"])
    await assert_charged(gateway, user, start, model, [claude_tokens(CLAUDE_USAGE)] * 2)


async def test_openai_compatible_provider_on_an_openai_channel(gateway, serve, workspace) -> None:
    model = "gpt-5"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeOpenAI(script=script, usage=(4000, 40), cached=3000)
    await add_channel(gateway, None, models=model, base_url=await serve(fake.app()), key=fake.key)
    _, user, start = await run_opencode(gateway, workspace, model, "openai-compatible")
    assert_tool_loop(script, fake.seen, "read")
    await assert_charged(gateway, user, start, model, [Tokens(4000, 40, 3000)] * 2)


async def test_openai_compatible_provider_on_claude_opus_5_5_always_thinking(gateway, serve, workspace) -> None:
    model = "claude-opus-5-5"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeClaude(script=script, usage=CLAUDE_USAGE)
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_opencode(gateway, workspace, model, "openai-compatible")
    assert_tool_loop(script, fake.seen, "read")
    # The client echoes only `reasoning_content`; Claude refuses the tool turn without its signed thinking.
    assert thinking_replayed(fake.seen[1]["body"])
    await assert_charged(gateway, user, start, model, [claude_tokens(CLAUDE_USAGE)] * 2)


async def test_openai_compatible_provider_on_a_gemini_3_channel(gateway, serve, workspace) -> None:
    model = "gemini-3.1-pro-preview"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeGemini(script=script, usage=GEMINI_USAGE)
    await add_channel(gateway, None, models=model, type=int(ChannelType.GEMINI), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_opencode(gateway, workspace, model, "openai-compatible")
    assert_tool_loop(script, fake.seen, "read")
    assert signature_replayed(fake, "read")
    await assert_charged(gateway, user, start, model, [gemini_tokens(GEMINI_USAGE)] * 2)
