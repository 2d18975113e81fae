"""Claude Code (`claude -p`) with the gateway's /mcp as an MCP server of its own (`--mcp-config`:
type http, the key in its headers) and its model on a strict fake Anthropic channel of the same
gateway: the model calls the MCP tool (`mcp__gateway__fake__echo`), Claude Code sends that call to
the gateway's /mcp, the gateway to the strict fake MCP server, and the result goes back to the
model, whose answer quoting it is what the CLI prints. Both model calls and the priced tool call are
charged to the unit, on the user and on the key."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Token, User
from tests.clients import clis
from tests.clients.charges import claude_tokens, options_of, set_prices
from tests.clients.test_cli_mcp_inspector import PRICE, fake_mcp  # noqa: F401  (the registered fake MCP server)
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.agent_script import AgentView, Recorded, Turn
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.kit import consume_logs

MODEL = "claude-opus-5-5"
TOOL = "mcp__gateway__fake__echo"  # Claude Code's name: mcp__<config name>__<the gateway's name>
SECRET = "PERIWINKLE-42"
USAGE = {"input_tokens": 500, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 3000, "output_tokens": 40}
KEY_QUOTA = 5_000_000


def echo_script(view: AgentView) -> Turn:
    """Call the gateway's echo tool once; then answer quoting its result."""
    if view.tool_results:
        return Turn(text=f'The tool answered: "{view.tool_results[-1]}"')
    if TOOL not in view.tools:
        return Turn(text=f"No {TOOL} among {sorted(view.tools)}")
    return Turn(tool={"id": "toolu_mcp_1", "name": TOOL, "input": {"text": SECRET}})


async def test_an_mcp_tool_of_the_gateway_called_by_the_model(gateway, serve, fake_mcp, tmp_path: Path) -> None:  # noqa: F811
    await set_prices(gateway)
    script = Recorded(echo_script)
    fake = FakeClaude(script=script, usage=USAGE)
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.ANTHROPIC), base_url=await serve(fake.app()),
                      key=fake.key)
    user = await rich_user()
    key = await make_key(user, remain_quota=KEY_QUOTA, unlimited=False)
    home, workdir = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    workdir.mkdir()
    base = str(gateway.make_url("")).rstrip("/")
    # the README's .mcp.json: the key read from the environment (${GATEWAY_KEY}), not written in the file
    config: dict[str, Any] = {"mcpServers": {"gateway": {
        "type": "http", "url": f"{base}/mcp", "headers": {"Authorization": "Bearer ${GATEWAY_KEY}"}}}}
    run = await clis.claude_code(base, f"sk-{key.key}", MODEL, home, workdir,
                                 f"Echo the text {SECRET} with the gateway's echo tool and tell me what it answered.",
                                 mcp_config=config, allowed=TOOL, extra_env={"GATEWAY_KEY": f"sk-{key.key}"})
    assert run.returncode == 0, run.explain()
    assert run.answer.startswith("The tool answered: ") and SECRET in run.answer, run.explain()

    # the model saw the gateway's tools under Claude Code's names, called one, and got its result back
    assert len(fake.seen) == 2, fake.seen
    offered = {f"mcp__gateway__fake__{name}" for name in ("add", "echo", "broken", "slow", "big")}
    assert offered <= set(script.views[0].tools), sorted(script.views[0].tools)
    assert [len(view.tool_results) for view in script.views] == [0, 1]
    assert SECRET in script.views[1].tool_results[0]  # the tool's structured result, {"result": "PERIWINKLE-42"}
    assert fake_mcp.calls == [("echo", {"text": SECRET})]
    assert not any(key.key in value for headers in fake_mcp.seen for value in headers.values())

    # two model calls at the model's price, one tool call at the server's, on the user and on the key
    await drain(gateway)
    logs = await consume_logs(user)
    price = pricing.resolve_configured(options_of(gateway), MODEL, user.group)
    tokens = claude_tokens(USAGE)
    model_quota = pricing.settle_quota(price, tokens.prompt, tokens.completion, cached_tokens=tokens.cached,
                                       cache_creation_tokens=tokens.written)
    assert sorted((log.model_name, log.prompt_tokens, log.completion_tokens, log.quota) for log in logs) == sorted([
        (MODEL, tokens.prompt, tokens.completion, model_quota), (MODEL, tokens.prompt, tokens.completion, model_quota),
        ("fake__echo", 0, 0, PRICE)])
    assert all(log.token_id == key.id for log in logs)
    spent = 2 * model_quota + PRICE
    assert (await User.get(id=user.id)).quota == user.quota - spent
    assert await live_balance(gateway, user.id) == user.quota - spent
    assert (await Token.get(id=key.id)).remain_quota == KEY_QUOTA - spent
    assert await live_balance(gateway, user.id, key.id) == KEY_QUOTA - spent
