"""Codex (`codex exec`, its default tool set) through the gateway's /v1/responses, on three kinds of
channel: it has no read tool, so the model asks its shell to `cat` the file; Codex runs the command,
sends the output back and prints an answer quoting the file. Each leg checks the answer, the tool
result in the upstream's second request, the reasoning state the upstream expects back, and every
charge to the unit."""
from __future__ import annotations

from typing import Any

from api.upstream.catalogue import ChannelType
from tests.clients import clis
from tests.clients.charges import Tokens, assert_charged, claude_tokens, responses_tokens, set_prices
from tests.clients.conftest import Workspace, assert_tool_loop, run_cli
from tests.relay.fakes import add_channel
from tests.upstream.providers.agent_script import Recorded, read_file_script
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.claude.fake_anthropic_models import sign
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI
from tests.upstream.providers.openai.fake_responses import FakeResponses

THINKING = "The user wants the file; cat will print it."
CLAUDE_USAGE = {"input_tokens": 500, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 3000,
                "output_tokens": 40}
RESPONSES_USAGE = {"input_tokens": 4000, "input_tokens_details": {"cached_tokens": 3000}, "output_tokens": 40,
                   "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 4040}


async def run_codex(gateway: Any, workspace: Workspace, model: str,
                    effort: str | None = None) -> tuple[clis.CliRun, Any, int]:
    return await run_cli(clis.codex, gateway, workspace, model, effort=effort)



async def test_on_a_claude_channel_thinking(gateway, serve, workspace) -> None:
    model = "claude-opus-5-5"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeClaude(script=script, usage=CLAUDE_USAGE)
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_codex(gateway, workspace, model, effort="high")
    assert_tool_loop(script, fake.seen, "exec_command")
    first, second = fake.seen[0]["body"], fake.seen[1]["body"]
    assert first["thinking"]["type"] == "adaptive" and first["output_config"]["effort"] == "high"
    # Claude refuses a tool turn replayed without the signed thinking block that came before its call.
    blocks = [block for message in second["messages"] if message["role"] == "assistant"
              for block in message["content"]]
    assert [b["type"] for b in blocks] == ["thinking", "tool_use"] and blocks[0]["signature"] == sign(
        blocks[0]["thinking"])
    await assert_charged(gateway, user, start, model, [claude_tokens(CLAUDE_USAGE)] * 2)


async def test_on_a_chat_only_openai_compatible_channel(gateway, serve, workspace) -> None:
    model = "deepseek-chat"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file)))
    fake = FakeOpenAI(script=script, usage=(4000, 40), cached=3000)
    await add_channel(gateway, None, models=model, type=int(ChannelType.DEEPSEEK), base_url=await serve(fake.app()),
                      key=fake.key)
    _, user, start = await run_codex(gateway, workspace, model)
    assert_tool_loop(script, fake.seen, "exec_command")
    await assert_charged(gateway, user, start, model, [Tokens(4000, 40, 3000)] * 2)


async def test_on_its_native_openai_channel(gateway, serve, workspace) -> None:
    model = "gpt-5.5"
    await set_prices(gateway)
    script = Recorded(read_file_script(str(workspace.file), thinking=THINKING))
    fake = FakeResponses(script=script, usage=RESPONSES_USAGE)
    await add_channel(gateway, None, models=model, base_url=await serve(fake.app()), key=fake.key)
    _, user, start = await run_codex(gateway, workspace, model)
    assert_tool_loop(script, fake.seen, "exec_command")
    first, second = fake.seen[0]["body"], fake.seen[1]["body"]
    kinds = {tool["type"] for tool in first["tools"]}
    assert {"function", "custom", "web_search"} <= kinds  # Codex's own tools, relayed as it declared them
    replayed = [item for item in second["input"] if item.get("type") == "reasoning"]
    assert len(replayed) == 1 and replayed[0]["encrypted_content"] in fake.issued
    await assert_charged(gateway, user, start, model, [responses_tokens(RESPONSES_USAGE)] * 2)
