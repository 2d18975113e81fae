"""Root registers an MCP server in the browser (the strict fake of tests/mcp on a local port), tests
it, narrows its tools, and sets a key's MCP allow-list; the official SDK's client on the backend's
/mcp with that key then sees exactly what the console set."""
from __future__ import annotations

import orjson
from playwright.async_api import expect

from models import McpServer, Token, User
from models.mcp_server import json_list, json_object
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.mcp.conftest import mcp_client
from tests.mcp.fake_server import CREDENTIAL, serve


async def _server(settings) -> McpServer:
    async with database(settings):
        return await McpServer.get(name="fake")


async def test_register_test_narrow_and_allow_on_a_key(page, backend, settings) -> None:
    async with serve() as (url, state), console_api(backend, "root", "123456") as root:
        # the fake listens on loopback: the URL policy must allow private addresses, as the core's tests do
        assert (await root.put("/api/option/", {"key": "MediaFetchPrivateEnabled", "value": "true"}))["success"]
        async with database(settings):
            owner = await User.get(username="root")
            key = await Token.create(user_id=owner.id, key="mcpe2e".ljust(48, "k"), name="agent", unlimited_quota=True)
        await login(page, "root", "123456")
        # the console's page is /mcp-servers: /mcp itself is the gateway's MCP endpoint
        await page.goto("/mcp-servers")
        await expect(page.get_by_test_id("sidebar").get_by_role("link", name="MCP servers")).to_have_attribute(
            "href", "/mcp-servers")

        # Register
        await page.get_by_test_id("mcp-toolbar").get_by_role("button", name="Add MCP server").click()
        drawer = page.get_by_test_id("mcp-drawer")
        await drawer.get_by_test_id("mcp-name").fill("fake")
        await drawer.get_by_test_id("mcp-url").fill(url)
        await drawer.get_by_test_id("mcp-add-header").click()
        await drawer.get_by_label("Header 1 name").fill(CREDENTIAL[0])
        await drawer.get_by_label("Header 1 value").fill(CREDENTIAL[1])
        await drawer.get_by_test_id("mcp-price").fill("1000")
        await drawer.get_by_role("button", name="Submit").click()
        await expect(page.get_by_test_id("toaster")).to_contain_text("MCP server added")
        server = await _server(settings)
        assert (server.url, json_object(server.headers), server.price, json_list(server.groups)) == (
            url, {CREDENTIAL[0]: CREDENTIAL[1]}, 1000, ["default"])
        row = page.get_by_test_id(f"mcp-row-{server.id}")
        await expect(row.get_by_test_id("mcp-price")).to_contain_text("$0.0020 per call")
        await expect(row.get_by_test_id("mcp-tools-cell")).to_contain_text("Not tested yet")

        # Test: the gateway connects with the stored credential and lists the tools
        await row.get_by_role("button", name="Test").click()
        result = page.get_by_test_id("mcp-test-result")
        await expect(result.get_by_test_id("mcp-test-summary")).to_contain_text("5 tools listed")
        await expect(result.get_by_test_id("mcp-test-tool")).to_have_count(5)
        await shot(page, "mcp-test")
        await result.get_by_role("button", name="Close").last.click()
        await expect(row.get_by_test_id("mcp-tools-cell")).to_contain_text("5 tools listed")
        await expect(row.get_by_test_id("mcp-status")).to_have_text("Up")
        assert CREDENTIAL[1] not in await page.content()
        await shot(page, "mcp")

        # Narrow: the allow-list picked from the tools the server lists; the stored header kept unseen
        await row.get_by_role("button", name="Edit").click()
        drawer = page.get_by_test_id("mcp-drawer")
        await expect(drawer.get_by_label("Header 1 value")).to_have_value("")
        await drawer.get_by_test_id("mcp-list-tools").click()
        await expect(drawer.get_by_test_id("mcp-tools-listed")).to_have_text("5 tools listed")
        picker = drawer.get_by_test_id("mcp-tools")
        await picker.get_by_role("option", name="add", exact=True).click()
        await picker.get_by_role("option", name="echo", exact=True).click()
        await drawer.get_by_role("button", name="Submit").click()
        await expect(page.get_by_test_id("toaster")).to_contain_text("MCP server updated")
        server = await _server(settings)
        assert json_list(server.tools) == ["add", "echo"]
        assert json_object(server.headers) == {CREDENTIAL[0]: CREDENTIAL[1]}
        await expect(row.get_by_test_id("mcp-tools-cell")).to_contain_text("add, echo")

        # A key's MCP allow-list: one tool of the server
        await page.goto("/token")
        await page.get_by_test_id(f"token-row-{key.id}").get_by_role("button", name="Edit").click()
        field = page.get_by_test_id("token-mcp-tools")
        await field.get_by_role("option", name="fake__echo", exact=True).click()
        await page.get_by_test_id("token-drawer").get_by_role("button", name="Submit").click()
        await expect(page.get_by_test_id("toaster")).to_contain_text("Token updated!")
        async with database(settings):
            assert orjson.loads((await Token.get(id=key.id)).mcp_tools) == ["fake__echo"]

        # What the key sees on the backend's /mcp, through the official SDK's client
        async with mcp_client(f"{backend}/mcp", key.key) as session:
            await session.initialize()
            assert [tool.name for tool in (await session.list_tools()).tools] == ["fake__echo"]
            answer = await session.call_tool("fake__echo", {"text": "through the console"})
            assert answer.content[0].text == "through the console"
        assert state.calls[-1] == ("echo", {"text": "through the console"})
