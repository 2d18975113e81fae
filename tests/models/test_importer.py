# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Moving a one-api or new-api deployment over: source databases built from one-api's and new-api's
schemas (one-api of two eras, new-api), on SQLite, MySQL and PostgreSQL, imported with
`python -m importer`; then an imported user logs in with the old password and an imported key
relays through an imported channel, and a second run changes nothing. Run again after this gateway
has served traffic, the import is refused unless told to add only the source's new rows or to let the
source overwrite what was served here."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import bcrypt
import orjson
import pytest

from api import keys
from api.services.audit_queue import write_pending
from api.upstream.catalogue import ChannelType
from models import AuditEntry, Channel, Log, Option, Redemption, Token, User
from models.channel import Ability
from models.enums import LogType
from tests.conftest import ROOT, process_env
from tests.helpers import ApiClient
from tests.relay.fakes import drain, live_balance, relay_of, upstreams  # noqa: F401

KEY = "a" * 16 + "B" * 16 + "c" * 16  # a 48-character key, as both systems store it (no "sk-")

# Column lists of one-api and new-api (their model/*.go): name → portable type.
ONE_API = {
    "users": {"id": "pk", "username": "text", "password": "text", "display_name": "text", "role": "int",
              "status": "int", "email": "text", "github_id": "text", "wechat_id": "text", "lark_id": "text",
              "oidc_id": "text", "access_token": "text", "quota": "big", "used_quota": "big",
              "request_count": "int", "group": "text", "aff_code": "text", "inviter_id": "int"},
    "tokens": {"id": "pk", "user_id": "int", "key": "text", "status": "int", "name": "text", "created_time": "big",
               "accessed_time": "big", "expired_time": "big", "remain_quota": "big", "unlimited_quota": "bool",
               "used_quota": "big", "models": "text", "subnet": "text"},
    "channels": {"id": "pk", "type": "int", "key": "text", "status": "int", "name": "text", "weight": "int",
                 "created_time": "big", "test_time": "big", "response_time": "int", "base_url": "text",
                 "other": "text", "balance": "real", "balance_updated_time": "big", "models": "text",
                 "group": "text", "used_quota": "big", "model_mapping": "text", "priority": "big",
                 "config": "text", "system_prompt": "text"},
    "abilities": {"group": "text", "model": "text", "channel_id": "int", "enabled": "bool", "priority": "big"},
    "options": {"key": "text", "value": "text"},
    "redemptions": {"id": "pk", "user_id": "int", "key": "text", "status": "int", "name": "text", "quota": "big",
                    "created_time": "big", "redeemed_time": "big"},
    "logs": {"id": "pk", "user_id": "int", "created_at": "big", "type": "int", "content": "text",
             "username": "text", "token_name": "text", "model_name": "text", "quota": "int",
             "prompt_tokens": "int", "completion_tokens": "int", "channel_id": "int", "request_id": "text",
             "elapsed_time": "big", "is_stream": "bool", "system_prompt_reset": "bool"},
}
# An older one-api: keys had no model list or subnet, channels no config.
ONE_API_OLD = {**ONE_API, "tokens": {k: v for k, v in ONE_API["tokens"].items() if k not in ("models", "subnet")},
               "channels": {k: v for k, v in ONE_API["channels"].items() if k not in ("config", "system_prompt")}}
NEW_API = {
    "users": {"id": "pk", "username": "text", "password": "text", "display_name": "text", "role": "int",
              "status": "int", "email": "text", "github_id": "text", "discord_id": "text", "oidc_id": "text",
              "wechat_id": "text", "telegram_id": "text", "access_token": "text", "quota": "int",
              "used_quota": "int", "request_count": "int", "group": "text", "aff_code": "text", "aff_count": "int",
              "aff_quota": "int", "aff_history": "int", "inviter_id": "int", "deleted_at": "stamp",
              "linux_do_id": "text", "setting": "text", "remark": "text", "created_at": "big"},
    "tokens": {"id": "pk", "user_id": "int", "key": "text", "status": "int", "name": "text", "created_time": "big",
               "accessed_time": "big", "expired_time": "big", "remain_quota": "int", "unlimited_quota": "bool",
               "model_limits_enabled": "bool", "model_limits": "text", "allow_ips": "text", "used_quota": "int",
               "group": "text", "deleted_at": "stamp"},
    "channels": {"id": "pk", "type": "int", "key": "text", "openai_organization": "text", "test_model": "text",
                 "status": "int", "name": "text", "weight": "int", "created_time": "big", "test_time": "big",
                 "response_time": "int", "base_url": "text", "other": "text", "balance": "real",
                 "balance_updated_time": "big", "models": "text", "group": "text", "used_quota": "big",
                 "model_mapping": "text", "status_code_mapping": "text", "priority": "big", "auto_ban": "int",
                 "other_info": "text", "tag": "text", "setting": "text", "param_override": "text"},
    "abilities": ONE_API["abilities"],
    "options": ONE_API["options"],
    "redemptions": {**ONE_API["redemptions"], "used_user_id": "int", "expired_time": "big", "deleted_at": "stamp"},
    "top_ups": {"id": "pk", "user_id": "int", "amount": "big", "money": "real", "trade_no": "text",
                "create_time": "big", "complete_time": "big", "status": "text"},
    "midjourneys": {"id": "pk", "code": "int", "user_id": "int", "action": "text", "mj_id": "text",
                    "prompt": "text", "prompt_en": "text", "description": "text", "state": "text",
                    "submit_time": "big", "start_time": "big", "finish_time": "big", "image_url": "text",
                    "status": "text", "progress": "text", "fail_reason": "text", "channel_id": "int",
                    "quota": "big", "buttons": "text", "properties": "text"},
    "tasks": {"id": "pk", "created_at": "big", "updated_at": "big", "task_id": "text", "platform": "text",
              "user_id": "int", "channel_id": "int", "quota": "big", "action": "text", "status": "text",
              "fail_reason": "text", "submit_time": "big", "start_time": "big", "finish_time": "big",
              "progress": "text", "properties": "text", "data": "text"},
    "logs": {"id": "pk", "user_id": "int", "created_at": "big", "type": "int", "content": "text",
             "username": "text", "token_name": "text", "model_name": "text", "quota": "int",
             "prompt_tokens": "int", "completion_tokens": "int", "use_time": "int", "is_stream": "bool",
             "channel_id": "int", "token_id": "int", "group": "text", "other": "text"},
    "quota_data": {"id": "pk", "user_id": "int", "username": "text", "model_name": "text", "created_at": "big",
                   "token_used": "int", "count": "int", "quota": "int"},
}
# A newer new-api: multi-key channels (channel_info, a JSON column).
NEW_API_MULTI_KEY = {**NEW_API, "channels": {**NEW_API["channels"], "channel_info": "json"}}
TYPES = {
    "sqlite": {"pk": "INTEGER PRIMARY KEY", "int": "INTEGER", "big": "INTEGER", "text": "TEXT", "bool": "NUMERIC",
               "real": "REAL", "stamp": "DATETIME", "json": "TEXT"},
    "postgres": {"pk": "BIGSERIAL PRIMARY KEY", "int": "BIGINT", "big": "BIGINT", "text": "TEXT", "bool": "BOOLEAN",
                 "real": "DOUBLE PRECISION", "stamp": "TIMESTAMPTZ", "json": "JSON"},
    "mysql": {"pk": "BIGINT AUTO_INCREMENT PRIMARY KEY", "int": "BIGINT", "big": "BIGINT", "text": "LONGTEXT",
              "bool": "TINYINT(1)", "real": "DOUBLE", "stamp": "DATETIME(3)", "json": "JSON"},
}


def go_hash(password: str) -> str:
    """A bcrypt hash as Go's x/crypto/bcrypt writes it ($2a$)."""
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(4)).decode().replace("$2b$", "$2a$", 1)


def rows_for(schema: dict, upstream_url: str, one_api: bool) -> dict[str, list[dict[str, Any]]]:
    users = [
        {"id": 1, "username": "root", "password": go_hash("old-root-pass"), "display_name": "Root", "role": 100,
         "status": 1, "email": "", "quota": 0, "used_quota": 0, "request_count": 0, "group": "default",
         "aff_code": "ROOT", "inviter_id": 0, "access_token": "0123456789abcdef0123456789abcdef"},
        {"id": 7, "username": "alice", "password": go_hash("alice-old-pass"), "display_name": "Alice", "role": 1,
         "status": 1, "email": "alice@example.com", "github_id": "gh-7", "quota": 800_000, "used_quota": 12_345,
         "request_count": 9, "group": "default", "aff_code": "ALIC", "inviter_id": 1},
    ]
    tokens = [{"id": 3, "user_id": 7, "key": KEY, "status": 1, "name": "laptop", "created_time": 1_700_000_000,
               "accessed_time": 1_700_000_100, "expired_time": -1, "remain_quota": 300_000,
               "unlimited_quota": False, "used_quota": 1_000}]
    channels = [
        {"id": 5, "type": 1, "key": "sk-old-upstream", "status": 1, "name": "main", "weight": 1,
         "created_time": 1_700_000_000, "base_url": upstream_url, "models": "gpt-4,gpt-3.5-turbo",
         "group": "default", "priority": 10, "model_mapping": ""},
        {"id": 6, "type": 36 if one_api else 43, "key": "sk-deepseek", "status": 1, "name": "deepseek",
         "weight": 0, "models": "deepseek-chat", "group": "default", "priority": 0, "base_url": ""},
        {"id": 8, "type": 38 if one_api else 44, "key": "x", "status": 1, "name": "unsupported", "models": "m",
         "group": "default", "priority": 0, "base_url": ""},
    ]
    if one_api and "config" in schema["channels"]:
        channels.append({"id": 9, "type": 33, "key": "", "status": 1, "name": "bedrock", "models": "claude-3",
                         "group": "default", "priority": 0, "base_url": "",
                         "config": '{"region": "us-east-1", "ak": "AKIAEXAMPLE", "sk": "secret"}'})
        tokens[0]["models"] = "gpt-4"
        tokens[0]["subnet"] = "10.0.0.0/8,127.0.0.1"
    if not one_api:
        tokens[0].update(model_limits_enabled=True, model_limits="gpt-4", allow_ips="", group="")
        users.append({"id": 9, "username": "gone", "password": go_hash("x" * 8), "role": 1, "status": 1,
                      "quota": 5, "group": "default", "deleted_at": "2024-05-01 10:00:00", "aff_code": "GONE"})
    rows: dict[str, list[dict[str, Any]]] = {
        "users": users, "tokens": tokens, "channels": channels,
        "options": [{"key": "SystemName", "value": "Old Gateway"}, {"key": "QuotaPerUnit", "value": "500000"},
                    {"key": "LarkClientId", "value": "not here"}],
        "redemptions": [{"id": 2, "user_id": 1, "key": "R" * 32, "status": 1, "name": "gift", "quota": 50_000,
                         "created_time": 1_700_000_000, "redeemed_time": 0}],
        "logs": [{"id": i, "user_id": 7, "created_at": 1_700_000_000 + i, "type": 2, "content": "old",
                  "username": "alice", "token_name": "laptop", "model_name": "gpt-4", "quota": 100 * i,
                  "prompt_tokens": 10, "completion_tokens": 5, "channel_id": 5, "is_stream": False}
                 for i in range(1, 4)],
    }
    if not one_api:
        rows["top_ups"] = [{"id": 1, "user_id": 7, "amount": 10, "money": 10.0, "trade_no": "T-1",
                            "create_time": 1_700_000_000, "complete_time": 1_700_000_100, "status": "success"}]
        rows["midjourneys"] = [{"id": 1, "code": 1, "user_id": 7, "action": "IMAGINE", "mj_id": "mj-1",
                                "prompt": "a cat", "status": "SUCCESS", "progress": "100%", "channel_id": 5,
                                "quota": 100, "submit_time": 1, "start_time": 2, "finish_time": 3}]
        rows["tasks"] = [{"id": 1, "created_at": 1, "updated_at": 2, "task_id": "suno-1", "platform": "suno",
                          "user_id": 7, "channel_id": 5, "quota": 100, "action": "MUSIC", "status": "SUCCESS",
                          "progress": "100%", "data": "[]"}]
        rows["quota_data"] = [{"id": 1, "user_id": 7, "username": "alice", "model_name": "gpt-4",
                               "created_at": 1_700_000_000, "token_used": 15, "count": 3, "quota": 600}]
    return rows


def sql_schema(schema: dict, dialect: str) -> list[str]:
    q = (lambda n: f"`{n}`") if dialect == "mysql" else (lambda n: f'"{n}"')
    return [f"CREATE TABLE {q(t)} (" + ", ".join(f"{q(c)} {TYPES[dialect][k]}" for c, k in cols.items()) + ")"
            for t, cols in schema.items()]


def inserts(rows: dict, dialect: str) -> list[tuple[str, tuple]]:
    q = (lambda n: f"`{n}`") if dialect == "mysql" else (lambda n: f'"{n}"')
    out = []
    for table, items in rows.items():
        for item in items:
            marks = ", ".join(["?" if dialect == "sqlite" else "%s" if dialect == "mysql" else f"${i + 1}"
                               for i in range(len(item))])
            out.append((f"INSERT INTO {q(table)} ({', '.join(q(c) for c in item)}) VALUES ({marks})",
                        tuple(item.values())))
    return out


async def build_source(dialect: str, schema: dict, rows: dict, tmp_path: Path) -> str:
    if dialect == "sqlite":
        import sqlite3

        path = tmp_path / "old.db"
        with sqlite3.connect(path) as conn:
            for statement in sql_schema(schema, dialect):
                conn.execute(statement)
            for statement, args in inserts(rows, dialect):
                conn.execute(statement, args)
        return str(path)
    name = f"gw_src_{os.getpid()}"
    if dialect == "postgres":
        import asyncpg

        from tests.conftest import PG_ADMIN_URL

        admin = await asyncpg.connect(PG_ADMIN_URL + "/postgres")
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.execute(f"CREATE DATABASE {name}")
        await admin.close()
        conn = await asyncpg.connect(f"{PG_ADMIN_URL}/{name}")
        for statement in sql_schema(schema, dialect):
            await conn.execute(statement)
        for statement, args in inserts(rows, dialect):
            args = tuple(_pg_value(v) for v in args)
            await conn.execute(statement, *args)
        await conn.close()
        return f"{PG_ADMIN_URL}/{name}"
    import asyncmy

    conn = await asyncmy.connect(host="127.0.0.1", port=3306, user="root", password="")
    async with conn.cursor() as cursor:
        await cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        await cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
        await cursor.execute(f"USE {name}")
        for statement in sql_schema(schema, dialect):
            await cursor.execute(statement)
        for statement, args in inserts(rows, dialect):
            await cursor.execute(statement, args)
    await conn.commit()
    conn.close()
    return f"mysql://root@127.0.0.1:3306/{name}"


def _pg_value(value: Any) -> Any:
    import datetime as dt

    if isinstance(value, str) and len(value) == 19 and value[4] == "-" and value[10] == " ":
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
    return value


async def drop_source(dialect: str) -> None:
    name = f"gw_src_{os.getpid()}"
    if dialect == "postgres":
        import asyncpg

        from tests.conftest import PG_ADMIN_URL

        admin = await asyncpg.connect(PG_ADMIN_URL + "/postgres")
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()
    elif dialect == "mysql":
        import asyncmy

        conn = await asyncmy.connect(host="127.0.0.1", port=3306, user="root", password="")
        async with conn.cursor() as cursor:
            await cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.close()


def importer(settings, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "importer", *args], cwd=ROOT, env=process_env(settings),
                          capture_output=True, text=True, timeout=300)


# (source flavour, its schema, the source's database, this gateway's database)
CASES = [("one-api", ONE_API, "sqlite", "sqlite"), ("one-api-old", ONE_API_OLD, "sqlite", "sqlite"),
         ("new-api", NEW_API, "sqlite", "sqlite"), ("one-api", ONE_API, "mysql", "sqlite"),
         ("new-api", NEW_API, "postgres", "sqlite"), ("one-api", ONE_API, "sqlite", "postgres")]


@pytest.mark.parametrize("flavour,schema,dialect,database_url", CASES, indirect=["database_url"],
                         ids=[f"{c[0]}-from-{c[2]}-into-{c[3]}" for c in CASES])
async def test_import_then_log_in_and_relay(client, settings, upstreams, tmp_path, flavour, schema,
                                            dialect) -> None:
    fake = await upstreams()
    one_api = flavour.startswith("one-api")
    rows = rows_for(schema, fake.url, one_api)
    url = await build_source(dialect, schema, rows, tmp_path)
    try:
        dry = await asyncio.to_thread(importer, settings, url, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert f"source: {'one-api' if one_api else 'new-api'}" in dry.stdout
        assert "would be created" in dry.stdout and "LarkClientId: no such option here" in dry.stdout
        assert "is not supported here" in dry.stdout or "has no equivalent here" in dry.stdout
        assert not await User.filter(username="alice").exists()  # the dry run changed nothing

        first = await asyncio.to_thread(importer, settings, url, "--logs")
        assert first.returncode == 0, first.stderr + first.stdout
        second = await asyncio.to_thread(importer, settings, url, "--logs")
        assert second.returncode == 0, second.stderr
        for line in second.stdout.splitlines():
            if " were created, " in line:
                assert " 0 were created, 0 updated" in line, second.stdout  # a second run changes nothing
        # Each run leaves one audit entry (root's to read): the tables it changed, no credential.
        await write_pending(client.server.app[keys.STORE])
        runs = await AuditEntry.filter(action="import.run").order_by("id")
        assert [(e.actor_name, e.actor_role, e.target_type) for e in runs] == [("importer", 100, "import")] * 2
        tables = {t["table"]: t for t in orjson.loads(runs[0].after)["tables"]}
        assert tables["token"]["created"] >= 1 and tables["user"]["created"] >= 1
        assert orjson.loads(runs[1].after)["tables"] == []
        for entry in runs:
            assert "@" not in orjson.loads(entry.after)["source"] and KEY not in entry.after

        alice = await User.get(username="alice")
        assert (alice.id, alice.quota, alice.used_quota, alice.github_id) == (7, 800_000, 12_345, "gh-7")
        token = await Token.get(key=KEY)
        assert (token.user_id, token.remain_quota, token.model_limits_enabled, token.model_limits) == (
            7, 300_000, one_api and "models" in schema["tokens"] or not one_api,
            "gpt-4" if (not one_api or "models" in schema["tokens"]) else "")
        if one_api and "subnet" in schema["tokens"]:
            assert token.allow_ips == "10.0.0.0/8\n127.0.0.1"
        main = await Channel.get(id=5)
        assert (main.key, main.base_url, main.priority) == ("sk-old-upstream", fake.url, 10)
        assert (await Channel.get(id=6)).type == int(ChannelType.DEEPSEEK)  # one-api's 36 is new-api's 43
        assert not await Channel.filter(id=8).exists()
        if one_api and "config" in schema["channels"]:
            assert (await Channel.get(id=9)).key == "AKIAEXAMPLE|secret|us-east-1"
        assert await Ability.filter(channel_id=5, model="gpt-4", group="default").exists()
        assert (await Option.get(key="SystemName")).value == "Old Gateway"
        assert await Redemption.filter(key="R" * 32).exists()
        assert await Log.filter(user_id=7, type=LogType.CONSUME).count() == 3
        root = await User.get(id=1)
        assert root.username == "root" and root.access_token != "0123456789abcdef0123456789abcdef"  # hashed
        if not one_api:
            assert await User.filter(username="gone").exclude(deleted_at=None).exists()

        # The imported user logs in with the old password; the imported key relays through the imported channel.
        api = ApiClient(client)
        await api.login("alice", "alice-old-pass")
        async def status_seen() -> bool:
            body = await api.get("/api/status")
            return body["data"]["system_name"] == "Old Gateway"

        from tests.helpers import eventually

        await eventually(status_seen)  # the options event reached the running gateway
        resp = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer sk-{KEY}"},
                                 json={"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]})
        assert resp.status == 200, await resp.text()
        assert fake.seen and fake.seen[-1].headers["Authorization"] == "Bearer sk-old-upstream"
        await drain(client)
        spent = (await Log.filter(user_id=7, type=LogType.CONSUME).order_by("-id").first()).quota
        assert (await User.get(id=7)).quota == 800_000 - spent
        assert (await Token.get(id=3)).remain_quota == 300_000 - spent
        fresh = await User.create(username="after-import", password="")  # ids continue past the imported ones
        assert fresh.id > max(u["id"] for u in rows["users"])
        assert orjson.loads((await Log.filter(user_id=7).order_by("-id").first()).other or "{}") is not None
    finally:
        await drop_source(dialect)


async def test_a_database_that_is_not_one_api_is_refused(settings, tmp_path) -> None:
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE things (id INTEGER PRIMARY KEY)")
    result = await asyncio.to_thread(importer, settings, str(path))
    assert result.returncode == 2 and "not a one-api or new-api database" in result.stderr


async def test_new_api_types_46_and_49_up_carried_or_named(client, settings, tmp_path) -> None:
    """The newer new-api channel types: those with a counterpart here are carried over (Qianfan V2 as
    46, Submodel as an OpenAI-compatible channel at its address, the resellers as their own types),
    the retired ones too with a note, and each one left behind is listed with the reason."""
    base = {"key": "k", "status": 1, "models": "m", "group": "default", "priority": 0, "base_url": ""}
    kinds = {46: "qianfan", 49: "coze", 50: "kling", 51: "jimeng", 52: "vidu", 53: "submodel", 54: "doubao-video",
             55: "sora", 56: "replicate", 57: "codex", 10: "aiproxy", 11: "palm", 15: "baidu-v1", 16: "glm-v3"}
    rows = rows_for(NEW_API, "http://unused.invalid", one_api=False)
    rows["channels"] = [{**base, "id": 100 + kind, "type": kind, "name": name} for kind, name in kinds.items()]
    url = await build_source("sqlite", NEW_API, rows, tmp_path)
    try:
        result = await asyncio.to_thread(importer, settings, url)
        assert result.returncode == 0, result.stderr + result.stdout
    finally:
        await drop_source("sqlite")
    carried = {c.id - 100: c for c in await Channel.all()}
    assert sorted(carried) == [10, 11, 15, 16, 46, 50, 51, 52, 53, 54]
    assert (carried[52].type, carried[52].key) == (52, "k")  # Vidu video
    assert (carried[50].type, carried[50].key) == (50, "k")  # Kling video, its AccessKey|SecretKey as it was
    assert (carried[51].type, carried[51].key) == (51, "k")  # Jimeng video, its AccessKey|SecretKey as it was
    assert carried[46].type == 46 and carried[10].type == 10 and carried[54].type == 54  # Seedance video
    assert (carried[53].type, carried[53].base_url) == (1, "https://llm.submodel.ai")
    out = result.stdout
    for kind, why in ((49, "Coze"), (55, "Sora"),
                      (56, "Replicate"), (57, "ChatGPT account")):
        assert f"id {100 + kind}: channel type {kind}: " in out and why in out, (kind, out)
    for kind, reason in ((11, "PaLM 2"), (15, "2026-08-31"), (16, "ChatGLM v3")):
        assert f"channel {100 + kind} (" in out and "carried over retired, never picked" in out and reason in out


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
async def test_new_api_multi_key_channels_and_tags_carried(client, settings, tmp_path, dialect) -> None:
    """new-api's multi-key channels become multi-key channels here: their keys (new-api numbers them by
    line, blank lines and repeats included; here those are dropped and each state follows its key),
    their mode (random or polling; none meant random there) and each key's state, reason and time.
    A channel new-api disabled automatically with no key left comes back here by itself when a key is
    enabled again. Tags are carried; a second run changes nothing."""
    from api.channels.keys import ALL_KEYS_DISABLED
    from models import keyring

    def info(**fields: Any) -> str:
        return orjson.dumps({"is_multi_key": True, "multi_key_polling_index": 1, **fields}).decode()

    base = {"type": 1, "status": 1, "models": "gpt-4o", "group": "default", "priority": 0, "base_url": ""}
    rows = rows_for(NEW_API_MULTI_KEY, "http://unused.invalid", one_api=False)
    rows["channels"] = [
        {**base, "id": 20, "name": "pool", "tag": "team-a", "key": "sk-a\n\nsk-b\nsk-a\nsk-c\n",
         "channel_info": info(multi_key_size=5, multi_key_mode="polling",
                              multi_key_status_list={"2": 3, "4": 2, "9": 3},
                              multi_key_disabled_reason={"2": "401 Unauthorized", "4": "by hand"},
                              multi_key_disabled_time={"2": 1_700_000_000, "4": 1_700_000_500})},
        {**base, "id": 21, "name": "drained", "status": 3, "key": "sk-d\nsk-e",
         "other_info": '{"status_reason":"All keys are disabled","status_time":1700000900}',
         "channel_info": info(multi_key_size=2, multi_key_status_list={"0": 3, "1": 3})},
        {**base, "id": 22, "name": "array", "key": '["sk-x", "sk-y"]',
         "channel_info": info(multi_key_size=2, multi_key_mode="random")},
        {**base, "id": 23, "name": "single", "key": "sk-single", "tag": None,
         "channel_info": orjson.dumps({"is_multi_key": False, "multi_key_size": 0}).decode()},
        {**base, "id": 24, "name": "mixed", "key": '{"type":"service_account"}\nAIza-one-line',
         "channel_info": info(multi_key_size=2)},
    ]
    url = await build_source(dialect, NEW_API_MULTI_KEY, rows, tmp_path)
    try:
        first = await asyncio.to_thread(importer, settings, url)
        assert first.returncode == 0, first.stderr + first.stdout
        second = await asyncio.to_thread(importer, settings, url)
        assert second.returncode == 0, second.stderr
    finally:
        await drop_source(dialect)
    channel_line = next(line for line in second.stdout.splitlines() if line.strip().startswith("channel:"))
    assert " 0 were created, 0 updated, 4 unchanged" in channel_line, second.stdout
    assert "id 24: a multi-key channel whose keys mix JSON documents and one-line keys" in first.stdout

    def ring(channel: Channel) -> keyring.Keyring:
        return keyring.load(channel.key, channel.channel_info)

    pool = await Channel.get(id=20)
    carried = ring(pool)
    assert (carried.multi, carried.mode, carried.keys) == (True, "polling", ["sk-a", "sk-b", "sk-c"])
    assert {i: (s.status, s.reason, s.time) for i, s in carried.states.items()} == {
        1: (keyring.AUTO, "401 Unauthorized", 1_700_000_000), 2: (keyring.MANUAL, "by hand", 1_700_000_500)}
    assert (pool.tag, pool.status, pool.key) == ("team-a", 1, "sk-a\nsk-b\nsk-c")
    drained = await Channel.get(id=21)
    assert ring(drained).mode == "random" and ring(drained).enabled() == []
    assert orjson.loads(drained.other_info) == {"status_reason": ALL_KEYS_DISABLED, "status_time": 1_700_000_900}
    assert ring(await Channel.get(id=22)).keys == ["sk-x", "sk-y"]
    single = await Channel.get(id=23)
    assert (single.key, single.channel_info, single.tag) == ("sk-single", "", "")

    # The drained channel comes back when one of its keys is enabled here.
    api = ApiClient(client)
    await api.login("root", "old-root-pass")
    body = await api.post("/api/channel/multi_key/manage", {"channel_id": 21, "action": "enable_key", "key_index": 1})
    assert body["success"], body
    assert (await Channel.get(id=21)).status == 1


async def served_state(client) -> dict[str, Any]:
    """Alice's and her key's balances in the database and live in Redis, channel 5 as it is here."""
    alice, token, main = await User.get(id=7), await Token.get(id=3), await Channel.get(id=5)
    return {"quota": alice.quota, "used": alice.used_quota, "requests": alice.request_count,
            "remain": token.remain_quota, "token_used": token.used_quota, "priority": main.priority,
            "channel_used": main.used_quota, "live": await live_balance(client, 7),
            "live_token": await live_balance(client, 7, 3)}


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_import_again_after_traffic_refuses_or_merges_new_rows(client, settings, upstreams,
                                                                    tmp_path) -> None:
    """Imported, then this gateway serves a relayed request and a redemption: a plain import is
    refused and changes nothing; --new-only adds what is new in the source and leaves every balance as
    served (Redis equal to the database, the live balances kept); --overwrite-live sets the source back.
    The dry run says which each would do."""
    import sqlite3

    from tests.helpers import eventually

    fake = await upstreams()
    url = await build_source("sqlite", NEW_API, rows_for(NEW_API, fake.url, one_api=False), tmp_path)
    assert (await asyncio.to_thread(importer, settings, url)).returncode == 0

    # Traffic here: a relayed request billed, and a redemption code made here and redeemed.
    async def channel_known() -> bool:
        return relay_of(client).index.get(5) is not None

    await eventually(channel_known)
    resp = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer sk-{KEY}"},
                             json={"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]})
    assert resp.status == 200, await resp.text()
    waiting = await asyncio.to_thread(importer, settings, url, "--dry-run")  # billed in Redis, not in the DB yet
    assert "a run would be refused" in waiting.stdout and "1 charge(s) waiting in Redis" in waiting.stdout
    await drain(client)
    code = await Redemption.create(key="H" * 32, name="made here", quota=70_000)
    api = ApiClient(client)
    await api.login("alice", "alice-old-pass")
    assert (await api.post("/api/user/topup", {"key": code.key}))["data"] == 70_000
    served = await served_state(client)
    spent = served["used"] - 12_345
    assert spent > 0 and served["quota"] == 800_000 - spent + 70_000 and served["remain"] == 300_000 - spent
    assert (served["live"], served["live_token"]) == (served["quota"], served["remain"])

    # Meanwhile in the old gateway: a new user and channel, alice topped up there, channel 5 edited.
    with sqlite3.connect(url) as conn:
        conn.execute("INSERT INTO users (id, username, password, role, status, quota, \"group\", aff_code) "
                     "VALUES (20, 'bob', 'x', 1, 1, 5000, 'default', 'BOBB')")
        conn.execute("INSERT INTO channels (id, type, key, status, name, models, \"group\", priority, base_url) "
                     "VALUES (30, 1, 'sk-new', 1, 'late', 'gpt-4o', 'default', 0, 'http://late.invalid')")
        conn.execute("UPDATE users SET quota = 900000 WHERE id = 7")
        conn.execute("UPDATE channels SET priority = 20 WHERE id = 5")

    async def unchanged() -> None:
        assert await served_state(client) == served
        assert not await User.filter(id=20).exists() and not await Channel.filter(id=30).exists()

    dry = await asyncio.to_thread(importer, settings, url, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "a run would be refused: the gateway has served traffic since the last import" in dry.stdout
    assert "With --new-only 2 rows would be created" in dry.stdout, dry.stdout
    assert "the balances of 1 user and 1 key" in dry.stdout, dry.stdout
    refused = await asyncio.to_thread(importer, settings, url)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    message = refused.stderr
    assert "import refused: this gateway has served traffic since the last import" in message, message
    assert "balances of users or keys changed here" in message and "1 request(s) settled" in message, message
    assert "1 consume" in message and "1 top-up" in message, message
    assert "--new-only" in message and "--overwrite-live" in message and "2 rows new in the source" in message
    await unchanged()

    dry = await asyncio.to_thread(importer, settings, url, "--dry-run", "--new-only")
    assert dry.returncode == 0, dry.stderr
    assert "--new-only (the gateway has served traffic" in dry.stdout, dry.stdout
    assert "2 rows new in the source would be created" in dry.stdout, dry.stdout
    assert f"id 7: quota {served['quota']} here, 900000 in the source" in dry.stdout, dry.stdout
    await unchanged()

    merged = await asyncio.to_thread(importer, settings, url, "--new-only")
    assert merged.returncode == 0, merged.stderr + merged.stdout
    assert "2 rows new in the source were created" in merged.stdout, merged.stdout
    assert (await User.get(id=20)).quota == 5000 and (await Channel.get(id=30)).base_url == "http://late.invalid"
    assert await Ability.filter(channel_id=30, model="gpt-4o").exists()
    assert await served_state(client) == served  # balances as served, live ones kept (not dropped), channel 5 too
    # The live balances keep billing where they were: another request, settled, leaves Redis equal to the DB.
    resp = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer sk-{KEY}"},
                             json={"model": "gpt-4", "messages": [{"role": "user", "content": "again"}]})
    assert resp.status == 200, await resp.text()
    await drain(client)
    served = await served_state(client)
    assert (served["live"], served["live_token"]) == (served["quota"], served["remain"])
    assert served["quota"] < 800_000 - spent + 70_000

    again = await asyncio.to_thread(importer, settings, url)  # still live: the new-only run kept changes
    assert again.returncode == 2 and "the last import (--new-only) kept balances changed here" in again.stderr
    assert await served_state(client) == served

    dry = await asyncio.to_thread(importer, settings, url, "--dry-run", "--overwrite-live")
    assert dry.returncode == 0, dry.stderr
    assert "--overwrite-live: the gateway has served traffic" in dry.stdout, dry.stdout
    assert "0 rows would be created" in dry.stdout and "the balances of 1 user and 1 key" in dry.stdout
    assert await served_state(client) == served

    overwritten = await asyncio.to_thread(importer, settings, url, "--overwrite-live")
    assert overwritten.returncode == 0, overwritten.stderr + overwritten.stdout
    assert "WARNING --overwrite-live" in overwritten.stderr and "set to the source's values" in overwritten.stderr
    alice, token = await User.get(id=7), await Token.get(id=3)
    assert (alice.quota, alice.used_quota, token.remain_quota) == (900_000, 12_345, 300_000)
    assert (await Channel.get(id=5)).priority == 20
    assert await live_balance(client, 7) in (None, 900_000) and await live_balance(client, 7, 3) in (None, 300_000)

    after = await asyncio.to_thread(importer, settings, url, "--dry-run")  # equal to the source again
    assert after.returncode == 0 and "the gateway has served no traffic since the last import" in after.stdout
