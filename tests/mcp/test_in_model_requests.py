"""MCP tools inside model requests: a Responses `mcp` tool (the official openai SDK) or an Anthropic
`mcp_servers` entry (the official anthropic SDK) naming a server registered here is served by the
gateway for any channel — a Claude channel (the strict FakeClaude) or an OpenAI-format one (the
strict FakeOpenAI) — against the strict fake MCP server: the model calls the tool, the gateway runs
it with its own credential, the model answers; each round and the call charged to the unit."""
from __future__ import annotations

from typing import Any

import anthropic
import openai
import orjson
import pytest

from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Log, Token, User
from models.enums import LogType
from tests.mcp.conftest import allow_private, gateway_url, register
from tests.mcp.fake_server import CREDENTIAL
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.agent_script import AgentView, Recorded, Turn
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.kit import sdk
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI

CLAUDE = "claude-sonnet-4-5-20250929"
GPT = "gpt-4o"
CALL_PRICE = 700
START, KEY_START = 10_000_000, 1_000_000
CLIENT_SECRET = "client-side-secret-never-sent"


def add_script(function: str = "fake__add", arguments: dict[str, Any] | None = None) -> Recorded:
    """Call the MCP tool once; with its result in, answer with it."""
    def script(view: AgentView) -> Turn:
        if not view.tool_results:
            return Turn(tool={"id": "call_add_1", "name": function, "input": arguments or {"a": 2, "b": 40}})
        return Turn(text=f"The tool said: {view.tool_results[-1]}")
    return Recorded(script)


async def setup(client: Any, root: Any, fake: Any, aiohttp_server: Any, channel: str, script: Recorded,
                **server: Any) -> tuple[Any, User, Token, str]:
    """A registered server (price CALL_PRICE), a channel of `channel` kind, a funded user and limited key."""
    url, _ = fake
    await allow_private(root)
    await register(root, url, price=CALL_PRICE, **server)
    if channel == "claude":
        upstream: Any = FakeClaude(script=script, usage={"input_tokens": 300, "output_tokens": 20})
        model, kind = CLAUDE, ChannelType.ANTHROPIC
    else:
        upstream = FakeOpenAI(script=script, usage=(300, 20))
        model, kind = GPT, ChannelType.OPENAI
    upstream.server = await aiohttp_server(upstream.app())
    await add_channel(client, None, models=model, type=int(kind), base_url=upstream.url, key=upstream.key)
    user = await rich_user(quota=START)
    token = await make_key(user, remain_quota=KEY_START, unlimited=False)
    return upstream, user, token, model


async def assert_charged(client: Any, user: User, token: Token, model: str, rounds: int, calls: int) -> None:
    """`rounds` model rows of 300/20 tokens and `calls` MCP call rows; balances down by their sum."""
    await drain(client)
    round_quota = pricing.settle_quota(pricing.resolve_price(model), 300, 20)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    models = [log for log in logs if log.model_name == model]
    tools = [log for log in logs if log.model_name != model]
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in models] == [
        (300, 20, round_quota)] * rounds
    assert [(log.model_name, log.quota) for log in tools] == [("fake__add", CALL_PRICE)] * calls
    total = rounds * round_quota + calls * CALL_PRICE
    assert await live_balance(client, user.id) in ((START - total,) if total else (None, START))
    assert await live_balance(client, user.id, token.id) in ((KEY_START - total,) if total else (None, KEY_START))
    row = await User.get(id=user.id)
    assert (row.quota, row.used_quota) == (START - total, total)
    key = await Token.get(id=token.id)
    assert (key.remain_quota, key.used_quota) == (KEY_START - total, total)


def claude_sdk(client: Any, token: Token) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=str(client.make_url("")), api_key=f"sk-{token.key}", max_retries=0)


def mcp_tool(client: Any, how: str) -> dict[str, Any]:
    """The client's declaration: by the server's registered name (its URL elsewhere, never contacted),
    or by the gateway's own /mcp/<server> URL under a label of the client's."""
    if how == "name":
        return {"type": "mcp", "server_label": "fake", "server_url": "https://mcp.elsewhere.example/mcp",
                "require_approval": "never", "headers": {"Authorization": f"Bearer {CLIENT_SECRET}"}}
    return {"type": "mcp", "server_label": "calc", "server_url": gateway_url(client, "/mcp/fake"),
            "require_approval": "never", "allowed_tools": ["add", "echo"]}


@pytest.mark.parametrize(("channel", "how"), [("claude", "name"), ("openai", "url")])
async def test_responses_mcp_tool_served_by_the_gateway(client, root, fake, aiohttp_server, channel: str,
                                                        how: str) -> None:
    script = add_script("fake__add" if how == "name" else "calc__add")
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, channel, script)
    async with sdk(client, token) as api:
        response = await api.responses.create(model=model, input="What is 2 + 40?", tools=[mcp_tool(client, how)])
    label = "fake" if how == "name" else "calc"
    assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    listing, call, message = response.output
    names = sorted(t.name for t in listing.tools)
    assert names == (["add", "big", "broken", "echo", "slow"] if how == "name" else ["add", "echo"])
    assert (listing.server_label, call.server_label, call.name) == (label, label, "add")
    assert orjson.loads(call.arguments) == {"a": 2, "b": 40}
    assert (call.output, call.error, call.status) == ("42", None, "completed")
    assert message.content[0].text == "The tool said: 42"
    assert response.usage.input_tokens == 600 and response.usage.output_tokens == 40
    # The model saw the tools as functions, then the result; the server only the gateway's credential.
    assert script.views[0].tools.keys() >= {f"{label}__add"} and script.views[1].tool_results == ["42"]
    _, state = fake
    assert state.calls == [("add", {"a": 2, "b": 40})]
    assert all(h.get(CREDENTIAL[0]) == CREDENTIAL[1] for h in state.seen)
    assert not any(token.key in v or CLIENT_SECRET in v for h in state.seen for v in h.values())
    assert not any(CLIENT_SECRET in str(seen) for seen in upstream.seen)
    await assert_charged(client, user, token, model, rounds=2, calls=1)


async def test_messages_mcp_servers_to_an_openai_channel(client, root, fake, aiohttp_server) -> None:
    script = add_script()
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, "openai", script)
    async with claude_sdk(client, token) as api:
        message = await api.beta.messages.create(
            model=model, max_tokens=512, messages=[{"role": "user", "content": "What is 2 + 40?"}],
            mcp_servers=[{"type": "url", "url": gateway_url(client, "/mcp"), "name": "fake",
                          "authorization_token": CLIENT_SECRET}], betas=["mcp-client-2025-04-04"])
    assert [block.type for block in message.content] == ["mcp_tool_use", "mcp_tool_result", "text"]
    use, result, text = message.content
    assert (use.name, use.server_name, use.input) == ("add", "fake", {"a": 2, "b": 40})
    assert (result.tool_use_id, result.is_error, result.content[0].text) == (use.id, False, "42")
    assert text.text == "The tool said: 42" and message.stop_reason == "end_turn"
    assert "mcp_servers" not in upstream.seen[0]
    _, state = fake
    assert not any(CLIENT_SECRET in v for h in state.seen for v in h.values())
    await assert_charged(client, user, token, model, rounds=2, calls=1)


async def test_a_server_the_key_may_not_use_is_refused_by_name(client, root, fake, aiohttp_server) -> None:
    script = add_script()
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, "openai", script, groups=["vip"])
    async with sdk(client, token) as api:
        with pytest.raises(openai.PermissionDeniedError) as refused:
            await api.responses.create(model=model, input="What is 2 + 40?", tools=[mcp_tool(client, "name")])
    assert "fake" in refused.value.message and "vip" not in refused.value.message.split("group")[0]
    assert refused.value.code == "mcp_server_not_in_group"
    async with claude_sdk(client, token) as claude_api:
        with pytest.raises(anthropic.PermissionDeniedError) as denied:
            await claude_api.beta.messages.create(
                model=model, max_tokens=64, messages=[{"role": "user", "content": "hi"}],
                mcp_servers=[{"type": "url", "url": gateway_url(client, "/mcp/fake"), "name": "mine"}])
    assert "fake" in str(denied.value)
    assert upstream.seen == [] and fake[1].calls == []
    await assert_charged(client, user, token, model, rounds=0, calls=0)


async def test_a_label_and_a_url_naming_two_registered_servers_are_refused(
        client: Any, root: Any, fake: Any, fake_sse: Any, aiohttp_server: Any) -> None:
    """Which of the two the caller meant cannot be told: neither is called, nothing is charged. A label
    with a URL no server is registered at stays served (the URL never contacted: the tests above)."""
    script = add_script()
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, "openai", script)
    notes_url, notes = fake_sse
    await register(root, notes_url, name="notes", transport="sse")
    elsewhere = "HTTP" + notes_url.removeprefix("http") + "/"  # its URL, written otherwise
    async with sdk(client, token) as api:
        with pytest.raises(openai.PermissionDeniedError) as refused:
            await api.responses.create(model=model, input="What is 2 + 40?", tools=[
                {"type": "mcp", "server_label": "fake", "server_url": elsewhere, "require_approval": "never"}])
    assert refused.value.code == "mcp_server_mismatch"
    assert "fake" in refused.value.message and "notes" not in refused.value.message
    async with claude_sdk(client, token) as claude_api:
        with pytest.raises(anthropic.PermissionDeniedError) as denied:
            await claude_api.beta.messages.create(
                model=model, max_tokens=64, messages=[{"role": "user", "content": "hi"}],
                mcp_servers=[{"type": "url", "url": gateway_url(client, "/mcp/notes"), "name": "fake"}],
                betas=["mcp-client-2025-04-04"])
    assert "fake" in denied.value.message and "another registered server" in denied.value.message
    assert upstream.seen == [] and fake[1].calls == [] and notes.calls == []
    await assert_charged(client, user, token, model, rounds=0, calls=0)


async def test_rounds_bound_ends_the_answer_and_says_so(client, root, fake, aiohttp_server) -> None:
    always = Recorded(lambda view: Turn(tool={"id": f"call_{view.turns}", "name": "fake__add",
                                              "input": {"a": view.turns, "b": 1}}))
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, "claude", always)
    await root.put("/api/option/", {"key": "McpMaxRounds", "value": "2"})
    async with sdk(client, token) as api:
        response = await api.responses.create(model=model, input="Loop", tools=[mcp_tool(client, "name")])
    assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    assert response.status == "incomplete" and response.incomplete_details.reason == "mcp_max_rounds"
    assert "stopped after 2 rounds" in response.output[-1].content[0].text
    assert len(upstream.seen) == 2 and fake[1].calls == [("add", {"a": 0, "b": 1})]
    await assert_charged(client, user, token, model, rounds=2, calls=1)


async def test_a_failing_tool_call_is_told_to_the_model_and_refunded(client, root, fake, aiohttp_server) -> None:
    script = add_script("fake__broken", {})
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, "openai", script)
    async with sdk(client, token) as api:
        response = await api.responses.create(model=model, input="Break it", tools=[mcp_tool(client, "name")])
    call, message = response.output[1:]
    assert (call.type, call.name, call.status, call.output) == ("mcp_call", "broken", "failed", None)
    assert call.error.type == "mcp_tool_execution_error"
    told = script.views[1].tool_results[0]
    assert told == "Error executing tool broken"  # the server's own error text, as the tool's result
    assert message.content[0].text == f"The tool said: {told}"
    assert fake[1].calls == [("broken", {})]
    await assert_charged(client, user, token, model, rounds=2, calls=0)  # the call's price refunded


async def test_a_streamed_request_gets_the_items_as_events(client, root, fake, aiohttp_server) -> None:
    script = add_script()
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, "claude", script)
    async with sdk(client, token) as api:
        events = [e async for e in await api.responses.create(model=model, input="What is 2 + 40?", stream=True,
                                                                tools=[mcp_tool(client, "name")])]
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [item.type for item in done] == ["mcp_list_tools", "mcp_call", "message"]
    assert done[1].output == "42"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "The tool said: 42"
    assert events[-1].type == "response.completed"
    assert [item.id for item in events[-1].response.output] == [item.id for item in done]
    assert all(seen.get("stream") is not True for seen in upstream.seen)  # the rounds run whole
    await assert_charged(client, user, token, model, rounds=2, calls=1)


async def test_a_streamed_messages_request_gets_the_blocks_as_events(client, root, fake, aiohttp_server) -> None:
    script = add_script()
    upstream, user, token, model = await setup(client, root, fake, aiohttp_server, "openai", script)
    async with claude_sdk(client, token) as api, api.beta.messages.stream(
            model=model, max_tokens=512, messages=[{"role": "user", "content": "What is 2 + 40?"}],
            mcp_servers=[{"type": "url", "url": "https://mcp.elsewhere.example/mcp", "name": "fake"}],
            betas=["mcp-client-2025-04-04"]) as stream:
        kinds = [event.type async for event in stream]
        message = await stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert [block.type for block in message.content] == ["mcp_tool_use", "mcp_tool_result", "text"]
    assert message.content[0].input == {"a": 2, "b": 40} and message.content[1].content[0].text == "42"
    assert message.content[2].text == "The tool said: 42" and message.usage.output_tokens == 40
    assert all(seen.get("stream") is not True for seen in upstream.seen)
    await assert_charged(client, user, token, model, rounds=2, calls=1)
