"""Who may use which MCP tools: the key's group, the server's allow-list, the key's own allow-list;
a refusal names why; a change (a server deleted, a key's list edited) holds at once."""
from __future__ import annotations

import aiohttp
import orjson
import pytest
from mcp.shared.exceptions import MCPError

from models import Token
from tests.mcp.conftest import allow_private, funded_user, gateway_url, make_key, mcp_client, register


async def test_the_keys_allow_list_narrows_the_tools_and_a_refusal_names_why(client, root, fake) -> None:
    url, state = fake
    await allow_private(root)
    await register(root, url, tools=["echo", "add", "broken"])  # the server's own allow-list
    key = await make_key(await funded_user(), mcp_tools=orjson.dumps(["fake__echo", "fake__slow"]).decode())
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        listed = await session.list_tools()
        assert [t.name for t in listed.tools] == ["fake__echo"]  # slow is not offered by the server
        with pytest.raises(MCPError) as not_in_key:
            await session.call_tool("fake__add", {"a": 1, "b": 2})
        assert not_in_key.value.error.data["reason"] == "tool_not_in_key"
        assert "allow-list does not include the tool add of fake" in not_in_key.value.error.message
        with pytest.raises(MCPError) as not_offered:
            await session.call_tool("fake__slow", {})
        assert not_offered.value.error.data["reason"] == "tool_not_offered"
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("nothing__here", {})
        assert unknown.value.error.data["reason"] == "server_unknown"
    assert [name for name, _ in state.calls] == []  # nothing refused reached the server


async def test_a_server_deleted_or_a_key_narrowed_is_gone_at_once(client, root, fake) -> None:
    url, _ = fake
    await allow_private(root)
    await register(root, url)
    other = await register(root, url, name="other")
    user = await funded_user()
    key = await make_key(user)
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"fake__echo", "other__echo"} <= names
        assert (await root.delete(f"/api/mcp/{other['id']}"))["success"]
        names = {t.name for t in (await session.list_tools()).tools}
        assert "other__echo" not in names and "fake__echo" in names
        with pytest.raises(MCPError) as gone:
            await session.call_tool("other__echo", {"text": "x"})
        assert gone.value.error.data["reason"] == "server_unknown"
        # the key's own list edited through the console: effective on the next message
        owner = ApiLogin(client)
        await owner.login(user.username)
        edited = await owner.api.put("/api/token/", {"id": key.id, "name": "mcp-key", "mcp_tools": ["fake__add"]})
        assert edited["success"], edited
        assert (await Token.get(id=key.id)).mcp_tools == '["fake__add"]'
        assert [t.name for t in (await session.list_tools()).tools] == ["fake__add"]


class ApiLogin:
    def __init__(self, client) -> None:
        from tests.helpers import ApiClient

        self.api = ApiClient(client)

    async def login(self, username: str) -> None:
        await self.api.login(username, "password123")


async def test_resources_and_prompts_pass_through_and_one_server_is_reached_by_its_own_path(
        client, root, fake) -> None:
    url, _ = fake
    await allow_private(root)
    await register(root, url)
    key = await make_key(await funded_user())
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        resources = await session.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["memo://hello"]
        read = await session.read_resource("memo://hello")
        assert read.contents[0].text == "hello from the fake"
        prompts = await session.list_prompts()
        assert [p.name for p in prompts.prompts] == ["fake__greet"]
        got = await session.get_prompt("fake__greet", {"name": "Ada"})
        assert "Hello Ada" in got.messages[0].content.text
    async with mcp_client(gateway_url(client, "/mcp/fake"), key.key) as session:
        init = await session.initialize()
        assert init.server_info.name == "fake"
        assert "echo" in {t.name for t in (await session.list_tools()).tools}
        assert (await session.call_tool("echo", {"text": "direct"})).content[0].text == "direct"
        assert (await session.get_prompt("greet", {"name": "Bo"})).messages[0].content.text == "Hello Bo"


async def test_a_server_on_the_old_sse_transport(client, root, fake_sse) -> None:
    url, state = fake_sse
    await allow_private(root)
    await register(root, url, name="legacy", transport="sse")
    key = await make_key(await funded_user())
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        assert "legacy__add" in {t.name for t in (await session.list_tools()).tools}
        result = await session.call_tool("legacy__add", {"a": 1, "b": 1}, progress_callback=on_progress)
        assert result.content[0].text == "2"
        assert progress == [50]
    assert ("add", {"a": 1, "b": 1}) in state.calls


async def _raw(client, key: str, body: dict, **headers: str) -> aiohttp.ClientResponse:
    return await client.post("/mcp", data=orjson.dumps(body), headers={
        "Authorization": f"Bearer sk-{key}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", **headers})


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


async def test_a_foreign_origin_a_bad_key_and_a_missing_session_are_refused(client, root, fake) -> None:
    url, _ = fake
    await allow_private(root)
    await register(root, url)
    key = await make_key(await funded_user())
    foreign = await _raw(client, key.key, INIT, Origin="https://evil.example")
    assert foreign.status == 403
    assert (await foreign.json())["error"]["data"]["reason"] == "origin"
    own = await _raw(client, key.key, INIT, Origin=f"http://{client.server.host}:{client.server.port}")
    assert own.status == 200 and own.headers["Mcp-Session-Id"]
    bad = await _raw(client, "nokey" * 4, INIT)
    assert bad.status == 401 and "WWW-Authenticate" in bad.headers
    no_session = await _raw(client, key.key, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert no_session.status == 400
    unknown = await _raw(client, key.key, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                         **{"Mcp-Session-Id": "0" * 32})
    assert unknown.status == 404
    batch = await client.post("/mcp", data=orjson.dumps([INIT]), headers={
        "Authorization": f"Bearer sk-{key.key}", "Content-Type": "application/json"})
    assert batch.status == 400
    # another key cannot use this key's session
    other = await make_key(await funded_user("bob"))
    stolen = await _raw(client, other.key, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                        **{"Mcp-Session-Id": own.headers["Mcp-Session-Id"]})
    assert stolen.status == 404
    get = await client.get("/mcp", headers={"Authorization": f"Bearer sk-{key.key}"})
    assert get.status == 405
