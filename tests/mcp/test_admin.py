"""The console's /api/mcp/: servers added, listed, edited, deleted and tested by administrators;
credentials never shown; bad input refused naming the field, changing nothing; changes audited."""
from __future__ import annotations

import orjson

from models import AuditEntry, McpServer
from models.enums import Role
from tests.helpers import eventually
from tests.mcp.conftest import allow_private, register
from tests.mcp.fake_server import CREDENTIAL

SECRET = CREDENTIAL[1]


async def test_create_list_update_delete_with_the_credential_masked(client, root, fake, worker) -> None:
    url, _ = fake
    await allow_private(root)
    created = await register(root, url, price=7, tools=["echo"], oauth_token_url="", description="Fake tools")
    assert created["headers"] == {CREDENTIAL[0]: "upstre…3456"} and SECRET not in orjson.dumps(created).decode()
    listed = await root.get("/api/mcp/")
    assert listed["success"] and [s["name"] for s in listed["data"]["items"]] == ["fake"]
    assert SECRET not in orjson.dumps(listed).decode()
    # the form sends the masked value back: the stored credential is kept
    edited = await root.put("/api/mcp/", {"id": created["id"], "headers": created["headers"], "price": 9,
                                          "groups": ["default", "vip"]})
    assert edited["success"], edited
    row = await McpServer.get(id=created["id"])
    assert orjson.loads(row.headers) == {CREDENTIAL[0]: SECRET} and row.price == 9
    tested = await root.post(f"/api/mcp/{created['id']}/test")
    assert tested["success"], tested
    assert {t["name"]: t["offered"] for t in tested["data"]["tools"]}["echo"] is True
    assert {t["name"]: t["offered"] for t in tested["data"]["tools"]}["add"] is False
    replaced = await root.put("/api/mcp/", {"id": created["id"], "headers": {CREDENTIAL[0]: "a-new-secret-value"}})
    assert replaced["success"]
    assert orjson.loads((await McpServer.get(id=created["id"])).headers) == {CREDENTIAL[0]: "a-new-secret-value"}
    assert (await root.delete(f"/api/mcp/{created['id']}"))["success"]
    assert not await McpServer.exists(id=created["id"])

    async def audited() -> list[AuditEntry]:
        rows = await AuditEntry.filter(target_type="mcp_server").order_by("id")
        return rows if len(rows) == 4 else []

    entries = await eventually(audited)
    assert [e.action for e in entries] == ["mcp_server.create", "mcp_server.update", "mcp_server.update",
                                           "mcp_server.delete"]
    assert all(SECRET not in e.before + e.after and "a-new-secret-value" not in e.before + e.after for e in entries)
    assert orjson.loads(entries[2].after)["credential"] == "***"


async def test_bad_input_names_the_field_and_changes_nothing(client, root, fake) -> None:
    url, _ = fake
    refused = await root.post("/api/mcp/", {"name": "fake", "url": url, "headers": {CREDENTIAL[0]: SECRET}})
    assert not refused["success"] and "url" in refused["message"] and "public" in refused["message"]
    assert not await McpServer.exists()
    await allow_private(root)
    for body, field in (({"name": "Bad Name", "url": url}, "name"), ({"name": "a__b", "url": url}, "name"),
                        ({"name": "ok", "url": "ftp://x"}, "url"), ({"name": "ok", "url": url, "price": -1}, "price"),
                        ({"name": "ok", "url": url, "headers": {"Host": "x"}}, "headers"),
                        ({"name": "ok", "url": url, "transport": "ws"}, "transport"),
                        ({"name": "ok", "url": url, "groups": "a b"}, "groups")):
        answer = await root.post("/api/mcp/", body)
        assert not answer["success"] and field in answer["message"], (body, answer)
    assert not await McpServer.exists()
    await register(root, url)
    again = await root.post("/api/mcp/", {"name": "fake", "url": url})
    assert not again["success"] and "already exists" in again["message"]


async def test_roles_users_cannot_and_only_root_sends_a_kept_credential_elsewhere(client, root, login_as,
                                                                                  fake) -> None:
    url, _ = fake
    await allow_private(root)
    created = await register(root, url)
    user, _ = await login_as("plain")
    for method, path in (("GET", "/api/mcp/"), ("POST", "/api/mcp/"), ("PUT", "/api/mcp/"),
                         ("DELETE", f"/api/mcp/{created['id']}")):
        answer = await user.request(method, path, json={"id": created["id"], "name": "x", "url": url})
        assert not answer["success"], (method, path)
    admin, _ = await login_as("admin1", role=Role.ADMIN)
    moved = await admin.put("/api/mcp/", {"id": created["id"], "url": url.replace("/mcp", "/mcp2")})
    assert not moved["success"] and "root" in moved["message"]
    given = await admin.put("/api/mcp/", {"id": created["id"], "url": url.replace("/mcp", "/mcp2"),
                                          "headers": {CREDENTIAL[0]: "given-again-123"}})
    assert given["success"], given
    assert (await McpServer.get(id=created["id"])).url.endswith("/mcp2")


async def test_a_keys_mcp_tools_are_checked_by_the_token_api(client, root) -> None:
    made = await root.post("/api/token/", {"name": "k", "unlimited_quota": True, "mcp_tools": ["docs", "docs__search"]})
    assert made["success"], made
    keys = await root.get("/api/token/?p=0&size=10")
    token = next(t for t in keys["data"]["items"] if t["name"] == "k")
    assert token["mcp_tools"] == ["docs", "docs__search"]
    bad = await root.put("/api/token/", {"id": token["id"], "name": "k", "mcp_tools": ["Bad Server"]})
    assert not bad["success"] and "mcp_tools" in bad["message"]
    assert (await root.get("/api/token/?p=0&size=10"))["data"]["items"][0]["mcp_tools"] == ["docs", "docs__search"]
