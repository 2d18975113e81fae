"""Limits over time through the console: /api/token/ (a key's owner) and /api/user/ (an admin) take
`limits`, stored normalised and cached for the relay; a bad entry is refused with a message naming
it, and nothing changes. GroupLimits and BudgetTimeZone are validated likewise."""
from __future__ import annotations

import orjson

from models import Option, Token, User
from tests.helpers import ApiClient, both_databases, make_user

BASE = {"name": "main", "remain_quota": 500000, "expired_time": -1, "unlimited_quota": False}
LIMITS = [{"window": "day", "quota": 2500000}, {"soft": 80, "quota": 500000, "window": "5h"},
          {"window": "day", "model": "gpt-5*", "requests": 100}]
NORMAL = '[{"window":"day","quota":2500000},{"window":"5h","quota":500000,"soft":80},' \
         '{"window":"day","requests":100,"model":"gpt-5*"}]'


@both_databases
async def test_a_key_takes_limits_and_refuses_a_bad_one_changing_nothing(login_as) -> None:
    alice, _ = await login_as("alice")
    body = await alice.post("/api/token/", {**BASE, "limits": LIMITS})
    assert body["success"], body
    created = body["data"]
    assert created["limits"] == orjson.loads(NORMAL)
    assert (await Token.get(id=created["id"])).limits == NORMAL
    bad = await alice.put("/api/token/", {"id": created["id"], "name": "renamed",
                                          "limits": [*LIMITS, {"window": "day", "quota": 5, "tokens": 5}]})
    assert bad["success"] is False and bad["message"].startswith("limits[3] names quota and tokens"), bad
    row = await Token.get(id=created["id"])
    assert (row.name, row.limits) == ("main", NORMAL)
    bad = await alice.post("/api/token/", {**BASE, "name": "other", "limits": [{"window": "2000h", "quota": 1}]})
    assert bad["success"] is False and "limits[0].window" in bad["message"]
    assert await Token.filter(name="other").count() == 0
    cleared = await alice.put("/api/token/", {"id": created["id"], "limits": []})
    assert cleared["success"] and cleared["data"]["limits"] == []
    assert (await Token.get(id=created["id"])).limits == ""


@both_databases
async def test_an_admin_sets_a_users_limits(root: ApiClient) -> None:
    user = await make_user("bob")
    body = await root.put("/api/user/", {"id": user.id, "limits": LIMITS})
    assert body["success"], body
    assert body["data"]["limits"] == orjson.loads(NORMAL)
    assert (await User.get(id=user.id)).limits == NORMAL
    bad = await root.put("/api/user/", {"id": user.id, "display_name": "Robert",
                                        "limits": [{"window": "day", "requests": -1}]})
    assert bad["success"] is False and bad["message"].startswith("limits[0].requests must be an integer"), bad
    row = await User.get(id=user.id)
    assert (row.display_name, row.limits) == ("bob", NORMAL)


async def test_group_limits_and_the_time_zone_are_validated(root: ApiClient) -> None:
    body = await root.put("/api/option/", {"key": "GroupLimits",
                                           "value": '{"vip": [{"quota": 9, "window": "week"}]}'})
    assert body["success"], body
    stored = await Option.get(key="GroupLimits")
    assert stored.value == '{"vip":[{"window":"week","quota":9}]}'
    bad = await root.put("/api/option/", {"key": "GroupLimits", "value": '{"vip": [{"window": "week", "quota": 1.5}]}'})
    assert bad["success"] is False and bad["message"].startswith("GroupLimits.vip[0].quota"), bad
    assert (await Option.get(key="GroupLimits")).value == stored.value
    assert (await root.put("/api/option/", {"key": "BudgetTimeZone", "value": "Asia/Shanghai"}))["success"]
    bad = await root.put("/api/option/", {"key": "BudgetTimeZone", "value": "Mars/Olympus"})
    assert bad["success"] is False and "Mars/Olympus is not a time zone" in bad["message"]
    assert (await Option.get(key="BudgetTimeZone")).value == "Asia/Shanghai"
