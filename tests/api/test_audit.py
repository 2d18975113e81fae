"""The audit log through the real routes: each administrative change leaves one entry (who, from
where, what, the fields before and after) and no secret anywhere in it, the list and its exports
obey the roles and the filters, and nothing edits or deletes an entry."""
from __future__ import annotations

import csv
import io

import orjson

from api import keys
from api.services.audit_queue import write_pending
from models import AuditEntry, Redemption
from models.enums import Role
from tests.helpers import ApiClient, both_databases, make_user

CHANNEL_KEY = "sk-audit-channel-secret-0123456789abcdef"
CHANNEL_KEY_2 = "sk-audit-channel-secret-second-9876543210"
POOL_KEYS = [f"sk-audit-pool-{n}-{'q' * 24}" for n in range(3)]
USER_PASSWORD = "audit-user-password-1"
USER_PASSWORD_2 = "audit-user-password-2"
SMTP_TOKEN = "smtp-audit-secret-token-77"
STRIPE_SECRET = "sk_live_audit_stripe_secret_55"


async def drained(client) -> list[AuditEntry]:
    """What the workers write: the queued entries into the table."""
    await write_pending(client.server.app[keys.STORE])
    return await AuditEntry.all().order_by("id")


def of(entries: list[AuditEntry], action: str, target_id: object | None = None) -> list[AuditEntry]:
    return [e for e in entries if e.action == action and (target_id is None or e.target_id == str(target_id))]


def sides(entry: AuditEntry) -> tuple[dict | None, dict | None]:
    return (orjson.loads(entry.before) if entry.before else None, orjson.loads(entry.after) if entry.after else None)


async def ok(api: ApiClient, method: str, path: str, body=None) -> dict:
    answer = await api.request(method, path, json=body)
    assert answer["success"], (path, answer)
    return answer


@both_databases
async def test_every_audited_action_leaves_one_entry_and_no_secret(client, root: ApiClient, login_as) -> None:
    secrets = [CHANNEL_KEY, CHANNEL_KEY_2, *POOL_KEYS, USER_PASSWORD, USER_PASSWORD_2, SMTP_TOKEN, STRIPE_SECRET]
    # Options: two secret ones, a plain one, a ratio table and its reset
    await ok(root, "PUT", "/api/option/", {"key": "SMTPToken", "value": SMTP_TOKEN})
    await ok(root, "PUT", "/api/option/", {"key": "ServerAddress", "value": "https://gw.example"})
    await ok(root, "PUT", "/api/option/", {"key": "StripeApiSecret", "value": STRIPE_SECRET})
    await ok(root, "PUT", "/api/option/", {"key": "SMTPServer", "value": "smtp.example.com"})
    await ok(root, "PUT", "/api/option/", {"key": "GroupRatio", "value": '{"default": 1, "vip": 2}'})
    await ok(root, "PUT", "/api/option/", {"key": "ModelRatio", "value": '{"gpt-4o": 3}'})
    await ok(root, "POST", "/api/option/rest_model_ratio")
    # Channels: create, edit (its key too), disable, copy, tags, keys of a multi-key channel, delete
    channel = (await ok(root, "POST", "/api/channel/", {"name": "main", "type": 1, "key": CHANNEL_KEY,
                                                         "models": "gpt-4o", "group": "default"}))["data"][0]
    cid = channel["id"]
    await ok(root, "PUT", "/api/channel/", {"id": cid, "name": "main-2", "key": CHANNEL_KEY_2})
    await ok(root, "PUT", "/api/channel/", {"id": cid, "status": 2})
    copy = (await ok(root, "POST", f"/api/channel/copy/{cid}"))["data"]
    await ok(root, "POST", "/api/channel/batch/tag", {"ids": [cid, copy["id"]], "tag": "team"})
    await ok(root, "PUT", "/api/channel/tag", {"tag": "team", "priority": 5})
    await ok(root, "POST", "/api/channel/tag/enabled", {"tag": "team"})
    await ok(root, "POST", "/api/channel/tag/disabled", {"tag": "team"})
    pool = (await ok(root, "POST", "/api/channel/", {"name": "pool", "type": 1, "key": "\n".join(POOL_KEYS[:2]),
                                                      "models": "gpt-4o", "group": "default",
                                                      "multi_key": True}))["data"][0]
    manage = "/api/channel/multi_key/manage"
    await ok(root, "POST", manage, {"channel_id": pool["id"], "action": "add_keys", "keys": POOL_KEYS[2]})
    await ok(root, "POST", manage, {"channel_id": pool["id"], "action": "disable_key", "key_index": 0})
    await ok(root, "POST", manage, {"channel_id": pool["id"], "action": "get_key_status"})  # a read: no entry
    await ok(root, "DELETE", f"/api/channel/{copy['id']}")
    await ok(root, "POST", "/api/channel/batch", {"ids": [cid]})
    # Users: create, edit (password, quota added), promote, demote, disable, enable, delete
    user = (await ok(root, "POST", "/api/user/", {"username": "carol", "password": USER_PASSWORD,
                                                   "display_name": "Carol"}))["data"]
    uid = user["id"]
    await ok(root, "PUT", "/api/user/", {"id": uid, "password": USER_PASSWORD_2, "quota": 5000,
                                         "display_name": "Carol B"})
    await ok(root, "POST", "/api/verify", {"method": "password", "password": "123456"})  # root's role changes
    for action in ("promote", "demote", "disable", "enable"):
        await ok(root, "POST", "/api/user/manage", {"id": uid, "action": action})
    await ok(root, "DELETE", f"/api/user/{uid}")
    # Redemption codes: create, edit, status, delete (their keys are secrets too)
    codes = (await ok(root, "POST", "/api/redemption/", {"name": "gift", "quota": 100, "count": 2}))["data"]
    secrets += codes
    code_ids = [r.id for r in await Redemption.filter(key__in=codes).order_by("id")]
    await ok(root, "PUT", "/api/redemption/", {"id": code_ids[0], "name": "gift-2", "quota": 200})
    await ok(root, "PUT", "/api/redemption/?status_only=true", {"id": code_ids[0], "status": 2})
    await ok(root, "DELETE", f"/api/redemption/{code_ids[1]}")
    # A user's own key: not an administrative change, but no entry may hold it either
    alice_api, _ = await login_as("alice")
    await ok(alice_api, "POST", "/api/token/", {"name": "k", "remain_quota": 0, "unlimited_quota": True})
    token_key = (await ok(alice_api, "GET", "/api/token/"))["data"]["items"][0]["key"]
    secrets.append(token_key.removeprefix("sk-"))

    entries = await drained(client)
    root_user = await root.get("/api/user/self")
    for entry in entries:
        assert (entry.actor_id, entry.actor_name, entry.actor_role) == (root.user_id, "root", Role.ROOT)
        assert entry.actor_ip == "127.0.0.1"
        assert len(entry.entry_id) == 32
    assert root_user["success"]

    # options: the secret values masked, the others as they were
    smtp = of(entries, "option.set", "SMTPToken")
    assert len(smtp) == 1 and sides(smtp[0]) == ({"value": ""}, {"value": "***"})
    assert sides(of(entries, "option.set", "StripeApiSecret")[0]) == ({"value": ""}, {"value": "***"})
    assert sides(of(entries, "option.set", "SMTPServer")[0]) == ({"value": ""}, {"value": "smtp.example.com"})
    assert sides(of(entries, "option.set", "GroupRatio")[0])[1] == {"value": '{"default": 1, "vip": 2}'}
    assert len(of(entries, "option.set", "ModelRatio")) == 1
    reset = of(entries, "option.reset", "ModelRatio")
    assert len(reset) == 1 and sides(reset[0])[0] == {"value": '{"gpt-4o": 3}'}
    # channels
    created = of(entries, "channel.create", cid)
    assert len(created) == 1
    before, after = sides(created[0])
    assert before is None and after["name"] == "main" and after["key"] == "***"
    edits = of(entries, "channel.update", cid)
    assert [sides(e) for e in edits] == [({"name": "main", "key": "***"}, {"name": "main-2", "key": "***"}),
                                         ({"status": 1}, {"status": 2})]
    assert len(of(entries, "channel.copy", copy["id"])) == 1
    assert [sides(e) for e in of(entries, "channel.tag_set")] == [({"tag": ""}, {"tag": "team"})] * 2
    assert [sides(e) for e in of(entries, "channel.tag_edit")] == [({"priority": 0}, {"priority": 5})] * 2
    assert len(of(entries, "channel.tag_enable")) == 2  # both were disabled (the copy of a disabled channel)
    assert len(of(entries, "channel.tag_disable")) == 2
    added = of(entries, "channel.keys.add_keys", pool["id"])
    assert len(added) == 1
    before, after = sides(added[0])
    assert before["key"] == after["key"] == "***"
    assert before["channel_info"]["multi_key_size"] == 2 and after["channel_info"]["multi_key_size"] == 3
    assert len(of(entries, "channel.keys.disable_key", pool["id"])) == 1
    assert of(entries, "channel.keys.get_key_status") == []
    deleted = of(entries, "channel.delete")
    assert sorted(int(e.target_id) for e in deleted) == sorted([cid, copy["id"]])
    assert all(sides(e)[1] is None and sides(e)[0]["key"] == "***" for e in deleted)
    # users
    made = of(entries, "user.create", uid)
    assert len(made) == 1 and sides(made[0])[1]["password"] == "***" and made[0].target_role == Role.USER
    edit = of(entries, "user.update", uid)
    assert len(edit) == 1
    before, after = sides(edit[0])
    assert before["quota"] == 0 and after["quota"] == 5000
    assert before["password"] == after["password"] == "***"
    assert (before["display_name"], after["display_name"]) == ("Carol", "Carol B")
    assert sides(of(entries, "user.promote", uid)[0]) == ({"role": 1}, {"role": 10})
    assert of(entries, "user.promote", uid)[0].target_role == Role.ADMIN  # the higher of the two
    assert sides(of(entries, "user.demote", uid)[0]) == ({"role": 10}, {"role": 1})
    assert sides(of(entries, "user.disable", uid)[0]) == ({"status": 1}, {"status": 2})
    assert sides(of(entries, "user.enable", uid)[0]) == ({"status": 2}, {"status": 1})
    gone = of(entries, "user.delete", uid)
    assert len(gone) == 1 and sides(gone[0])[0]["DeletedAt"] is None and sides(gone[0])[1]["DeletedAt"]
    # redemption codes
    assert sorted(int(e.target_id) for e in of(entries, "redemption.create")) == code_ids
    assert all(sides(e)[1]["key"] == "***" for e in of(entries, "redemption.create"))
    assert sides(of(entries, "redemption.update", code_ids[0])[0]) == ({"name": "gift", "quota": 100},
                                                                       {"name": "gift-2", "quota": 200})
    assert sides(of(entries, "redemption.status", code_ids[0])[0]) == ({"status": 1}, {"status": 2})
    assert len(of(entries, "redemption.delete", code_ids[1])) == 1

    # No secret anywhere: the rows, the list, both exports
    texts = [e.before + e.after + e.target_id for e in entries]
    page = await root.get("/api/audit/?page_size=100")
    assert page["data"]["total"] == len(entries)
    texts.append(await root.last_response.text())
    for fmt in ("ndjson", "csv"):
        resp = await root.client.get(f"/api/audit/export?format={fmt}", headers={"New-Api-User": str(root.user_id)})
        assert resp.status == 200
        texts.append(await resp.text())
    for secret in secrets:
        for text in texts:
            assert secret not in text, secret
    # the MANAGE log of an option change is still written (by its own actor), the secret hidden
    assert any(e.action == "option.set" for e in entries)


async def test_an_update_that_changes_nothing_writes_no_entry(client, root: ApiClient) -> None:
    user = await make_user("dave")
    await ok(root, "PUT", "/api/user/", {"id": user.id, "display_name": "dave"})
    await ok(root, "POST", "/api/verify", {"method": "password", "password": "123456"})  # root's role changes
    refused = await root.post("/api/user/manage", {"id": user.id, "action": "demote"})
    assert not refused["success"]  # already a common user: refused, nothing recorded
    assert await drained(client) == []


async def test_admins_see_entries_on_users_below_them_root_sees_all(client, root: ApiClient, login_as) -> None:
    admin, admin_user = await login_as("ann", Role.ADMIN)
    other_admin = await make_user("bob", role=Role.ADMIN)
    common = await make_user("cid")
    await ok(admin, "POST", "/api/user/manage", {"id": common.id, "action": "disable"})  # by an admin, on a user
    await ok(root, "POST", "/api/user/manage", {"id": common.id, "action": "enable"})  # by root, on a user
    await ok(root, "POST", "/api/user/manage", {"id": other_admin.id, "action": "disable"})  # on an admin
    await ok(root, "PUT", "/api/option/", {"key": "SMTPServer", "value": "mx.example"})  # by root, not a user
    await ok(admin, "POST", "/api/channel/", {"name": "c", "type": 1, "key": "k-1", "models": "m",
                                              "group": "default"})  # by an admin, not a user
    entries = await drained(client)
    assert len(entries) == 5
    seen_by_admin = {(e["action"], e["target_id"]) for e in (await admin.get("/api/audit/"))["data"]["items"]}
    assert seen_by_admin == {("user.disable", str(common.id)), ("user.enable", str(common.id))}
    for_root = await root.get("/api/audit/")
    assert for_root["data"]["total"] == 5
    # the export obeys the same rule
    resp = await admin.client.get("/api/audit/export?format=ndjson", headers={"New-Api-User": str(admin_user.id)})
    lines = [orjson.loads(line) for line in (await resp.text()).splitlines()]
    assert {(e["action"], e["target_id"]) for e in lines} == seen_by_admin
    # common users and anonymous callers: refused
    plain, _ = await login_as("eve")
    for path in ("/api/audit/", "/api/audit/export?format=csv"):
        assert (await plain.get(path, expect_status=None))["success"] is False
        assert (await ApiClient(client).get(path, expect_status=None))["success"] is False


async def test_no_route_edits_or_deletes_an_entry(client, root: ApiClient) -> None:
    await ok(root, "PUT", "/api/option/", {"key": "SMTPServer", "value": "mx.example"})
    [entry] = await drained(client)
    for method in ("PUT", "DELETE", "POST", "PATCH"):
        for path in ("/api/audit/", f"/api/audit/{entry.id}"):
            resp = await root.client.request(method, path, headers={"New-Api-User": str(root.user_id)})
            assert resp.status in (404, 405), (method, path, resp.status)
    assert await AuditEntry.all().count() == 1


async def test_filters_and_paging(client, root: ApiClient, login_as) -> None:
    admin, admin_user = await login_as("ann", Role.ADMIN)
    users = [await make_user(f"u{n}") for n in range(3)]
    for u in users:
        await ok(admin, "POST", "/api/user/manage", {"id": u.id, "action": "disable"})
    await ok(root, "POST", "/api/user/manage", {"id": users[0].id, "action": "enable"})
    await ok(root, "PUT", "/api/option/", {"key": "SMTPServer", "value": "mx.example"})
    entries = await drained(client)
    assert len(entries) == 5

    async def listed(query: str) -> list[tuple[str, str]]:
        body = await root.get(f"/api/audit/?{query}")
        assert body["success"], body
        return [(e["action"], e["target_id"]) for e in body["data"]["items"]]

    assert len(await listed(f"actor_id={admin_user.id}")) == 3
    assert len(await listed("actor=ann")) == 3
    assert await listed("actor=root&action=user.") == [("user.enable", str(users[0].id))]
    assert await listed("action=option") == [("option.set", "SMTPServer")]
    assert len(await listed(f"target_type=user&target_id={users[0].id}")) == 2
    assert await listed("actor=" + "x" * 200) == []  # longer than its column: nothing, not an error
    newest = entries[-1].created_at
    assert len(await listed(f"start_timestamp={newest + 1}")) == 0
    assert len(await listed(f"end_timestamp={newest}")) == 5
    page = await root.get("/api/audit/?p=2&page_size=2")
    assert page["data"]["total"] == 5 and page["data"]["page"] == 2 and len(page["data"]["items"]) == 2
    assert page["data"]["items"][0]["id"] == entries[2].id  # newest first
    bad = await root.get("/api/audit/?start_timestamp=yesterday")
    assert bad["success"] is False and "start_timestamp" in bad["message"]


async def test_exports_ndjson_and_csv_with_formula_cells_defused(client, root: ApiClient) -> None:
    user = (await ok(root, "POST", "/api/user/", {"username": "mallory", "password": "password123",
                                                   "display_name": "=HYPERLINK(1)"}))["data"]
    await ok(root, "PUT", "/api/option/", {"key": "SMTPFrom", "value": "@admin+cmd"})
    await drained(client)
    headers = {"New-Api-User": str(root.user_id)}
    resp = await root.client.get("/api/audit/export?format=ndjson&action=user.", headers=headers)
    assert resp.headers["Content-Type"].startswith("application/x-ndjson")
    assert "attachment" in resp.headers["Content-Disposition"]
    [line] = [orjson.loads(raw) for raw in (await resp.text()).splitlines()]
    assert line["action"] == "user.create" and line["target_id"] == str(user["id"])
    assert line["after"]["display_name"] == "=HYPERLINK(1)"
    resp = await root.client.get("/api/audit/export?format=csv", headers=headers)
    assert resp.headers["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(await resp.text())))
    assert rows[0][:3] == ["id", "created_at", "actor_id"]
    assert len(rows) == 3
    for row in rows[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@")), cell
    option_row = next(r for r in rows[1:] if r[6] == "option.set")
    assert orjson.loads(option_row[11]) == {"value": "@admin+cmd"}  # JSON text: starts with {, kept
    refused = await root.get("/api/audit/export?format=xlsx")
    assert refused["success"] is False and "format" in refused["message"]


async def test_a_burst_of_failed_logins_is_one_entry(client, monkeypatch, login_as) -> None:
    from api.web import login_guard

    now = [1_000_000.0]
    monkeypatch.setattr(login_guard, "clock", lambda: now[0])
    dave = await make_user("dave")
    guesser = ApiClient(client)
    for _ in range(login_guard.FREE_FAILURES + 1):
        refused = await guesser.post("/api/user/login", {"username": "dave", "password": "wrong"})
        assert refused["success"] is False
    now[0] += 3600 - 1  # the wait over, the counter not forgotten: the same burst goes on
    await guesser.post("/api/user/login", {"username": "dave", "password": "wrong"})
    for _ in range(login_guard.FREE_FAILURES + 1):  # guesses at a name that is nobody's
        await guesser.post("/api/user/login", {"username": "=cmd|' /C calc'!A0", "password": "wrong"})
    entries = await drained(client)
    assert [(e.action, e.target_type, e.target_id, e.target_role) for e in entries] == [
        ("login.burst", "user", str(dave.id), Role.USER), ("login.burst", "account", "=cmd|' /C calc'!A0", None)]
    assert all((e.actor_id, e.actor_name, e.actor_ip) == (0, "", "127.0.0.1") for e in entries)
    assert sides(entries[0])[1] == {"failures": login_guard.FREE_FAILURES + 1, "wait_seconds": 2,
                                    "known_browser": False}
    # an admin sees the burst on a common user's account and the one on nobody's
    admin, _ = await login_as("ann", Role.ADMIN)
    assert (await admin.get("/api/audit/?action=login."))["data"]["total"] == 2
    # the guessed name is the guesser's text: defused in a CSV export
    resp = await admin.client.get("/api/audit/export?format=csv", headers={"New-Api-User": str(admin.user_id)})
    rows = list(csv.reader(io.StringIO(await resp.text())))
    assert [r[8] for r in rows[1:]] == ["'=cmd|' /C calc'!A0", str(dave.id)]


CLIENT_SECRET = "oidc-audit-client-secret-31415926"


async def test_account_security_actions_leave_their_entries(client, root: ApiClient, login_as) -> None:
    """A custom login provider created, edited and deleted (its client secret in no entry), a user's
    two-factor login turned off by its owner and reset by root, a user's passkeys reset."""
    import pyotp

    from models import PasskeyCredential

    provider = (await ok(root, "POST", "/api/custom-oauth-provider/", {
        "name": "Corp", "slug": "corp", "enabled": True, "client_id": "gw", "client_secret": CLIENT_SECRET,
        "authorization_endpoint": "https://idp.example/authorize", "token_endpoint": "https://idp.example/token",
        "user_info_endpoint": "https://idp.example/userinfo", "scopes": "profile"}))["data"]
    await ok(root, "PUT", f"/api/custom-oauth-provider/{provider['id']}", {**provider, "name": "Corp SSO",
                                                                            "client_secret": CLIENT_SECRET + "2"})
    await ok(root, "DELETE", f"/api/custom-oauth-provider/{provider['id']}")

    dave, dave_user = await login_as("dave", Role.USER)
    for _ in range(2):  # on, off by its owner (after a verification), on again, reset by root
        setup = (await ok(dave, "POST", "/api/user/2fa/setup"))["data"]
        await ok(dave, "POST", "/api/user/2fa/enable", {"code": pyotp.TOTP(setup["secret"]).now()})
        if _ == 0:
            await ok(dave, "POST", "/api/verify", {"method": "password", "password": "password123"})
            await ok(dave, "POST", "/api/user/2fa/disable", {"password": "password123"})
    await ok(root, "DELETE", f"/api/user/{dave_user.id}/2fa")
    await PasskeyCredential.create(user_id=dave_user.id, name="Laptop", credential_id="cred-1", public_key="pk")
    await ok(root, "DELETE", f"/api/user/{dave_user.id}/reset_passkey")

    entries = await drained(client)
    created, updated, deleted = (of(entries, f"oauth_provider.{verb}", provider["id"])
                                 for verb in ("create", "update", "delete"))
    assert len(created) == len(updated) == len(deleted) == 1
    assert sides(updated[0])[1]["name"] == "Corp SSO"
    for verb, entry in (("disable", of(entries, "user.2fa.disable", dave_user.id)),
                        ("reset", of(entries, "user.2fa.reset", dave_user.id)),
                        ("passkeys", of(entries, "user.passkey.reset", dave_user.id))):
        assert len(entry) == 1, verb
    assert of(entries, "user.2fa.reset", dave_user.id)[0].actor_name == "root"
    assert of(entries, "user.2fa.disable", dave_user.id)[0].actor_name == "dave"
    everything = b"".join(orjson.dumps([e.before, e.after]) for e in entries)
    assert CLIENT_SECRET.encode() not in everything
