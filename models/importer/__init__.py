"""Move a one-api or new-api deployment over: `python -m models.importer SOURCE_URL [--logs] [--dry-run]`.

The source (a SQLite file, or a PostgreSQL or MySQL URL of the old database) is only read. Rows keep
their ids, so tokens, logs and tasks keep pointing at their users and channels; every table is copied
in batches, one transaction per batch, and a row already here with the same content is left alone:
running the import twice gives the same result. What has no equivalent here is skipped and listed
(unknown channel types, options this gateway does not have, account bindings it does not support),
and so are rows that collide with a different row already here (a username, a key, a trade number).

Passwords keep their bcrypt hashes (users log in with their old passwords) and keys stay as they were
(every client keeps working). one-api's channel type numbers are remapped to this gateway's (those of
new-api); its per-channel `config` becomes the key or `other` where the provider needs it. Abilities
are rebuilt from the channels. After the import the live balances, key caches and options in Redis
are dropped so that every process reloads them from the database (after a `new_only` import only the
new users' and keys' balances: the others did not change).

Rows already here that differ from the source are set to the source's values, unless `new_only`:
then only rows whose id is not here are created and every existing row is left as it is (counted as
`left`). Which of the two a run may do is decided by the command (models.importer.__main__) from
whether this gateway has served traffic since the last import (models.importer.live).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from tortoise import Model, Tortoise
from tortoise.transactions import in_transaction

from api.upstream import catalogue
from models import Channel, Log, Option, Redemption, Token, TopUp, User, keyring
from models.channel import Ability
from models.log import QuotaData
from models.task import Midjourney, Task

from .live import BALANCE_COLUMNS
from .source import Source

BATCH = 500
TAG_MAX = 64  # models.channel.Channel.tag
LOG_CURSOR = "_importer_log_cursor"  # an option row: the last log id imported (resumable --logs)

# OpenAI-compatible providers this gateway speaks to as OpenAI (type 1) with their base URL.
# new-api's 53 (Submodel) is one too.
COMPATIBLE_BASE_URLS = {6: "https://api.openaimax.com", 7: "https://api.ohmygpt.com", 9: "https://api.caipacity.com",
                        53: "https://llm.submodel.ai"}
# new-api types with no counterpart here, and why (the report lists the channels left behind).
NOT_CARRIED = {
    49: "Coze bots speak Coze's own chat API, which has no adaptor here",
    50: "Kling video generation tasks have no relay here yet",
    51: "Jimeng generation tasks have no relay here yet",
    52: "Vidu video generation tasks have no relay here yet",
    54: "Doubao (Seedance) video tasks have no relay here yet",
    55: "Sora video tasks: OpenAI shut the Sora API down on 2026-09-24",
    56: "Replicate predictions have no adaptor here",
    57: "Codex channels sign in with a ChatGPT account (OAuth), which this gateway does not hold",
}
# one-api's numbering → new-api's (docs/compatibility.md, one-api's type numbers), with a base URL where the
# type becomes plain OpenAI.
ONE_API_TYPES: dict[int, tuple[int, str]] = {
    2: (1, "https://oa.api2d.net"), 4: (1, "https://api.closeai-proxy.xyz"), 5: (1, "https://api.openai-sb.com"),
    26: (1, "https://api.baichuan-ai.com"), 27: (35, ""), 28: (42, ""), 29: (1, "https://api.groq.com/openai"),
    30: (4, ""), 32: (1, "https://api.stepfun.com"), 33: (33, ""), 35: (34, ""), 36: (43, ""), 37: (39, ""),
    39: (1, "https://api.together.xyz"), 40: (45, ""), 41: (1, "https://api.novita.ai/v3/openai"), 42: (41, ""),
    44: (40, ""), 45: (48, ""), 47: (46, ""), 48: (18, ""), 49: (17, ""), 50: (1, ""), 51: (1, ""),
}
ONE_API_SAME = {1, 3, *range(6, 26), 31}


@dataclass
class TableReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    left: int = 0  # rows here that differ from the source, left as they are (new_only)
    balances: int = 0  # of the rows that differ: those whose balance columns differ
    skipped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the balances left as they are here, with the source's


@dataclass
class Report:
    flavour: str = ""
    era: list[str] = field(default_factory=list)
    tables: dict[str, TableReport] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # users and keys whose balances the import created or changed (their live balances reload)
    new_users: list[int] = field(default_factory=list)
    new_tokens: list[tuple[int, int]] = field(default_factory=list)  # (user id, key id)
    changed_users: list[int] = field(default_factory=list)
    changed_tokens: list[tuple[int, int]] = field(default_factory=list)

    def table(self, name: str) -> TableReport:
        return self.tables.setdefault(name, TableReport())

    def totals(self) -> tuple[int, int]:
        """(rows new in the source, rows here that differ from the source)."""
        tables = self.tables.values()
        return sum(t.created for t in tables), sum(t.updated + t.left for t in tables)

    def balances(self, table: str) -> int:
        part = self.tables.get(table)
        return part.balances if part else 0

    def render(self, dry: bool) -> str:
        verb = "would be" if dry else "were"
        lines = [f"source: {self.flavour} ({', '.join(self.era) or 'base schema'})"]
        for name, t in self.tables.items():
            left = f"{t.left} left as they are here, " if t.left else ""
            lines.append(f"  {name}: {t.created} {verb} created, {t.updated} updated, {t.unchanged} unchanged, "
                         f"{left}{len(t.skipped)} skipped")
            for label, items in (("skipped", t.skipped), ("left as here", t.kept)):
                lines += [f"    {label}: {item}" for item in items[:50]]
                if len(items) > 50:
                    lines.append(f"    … and {len(items) - 50} more")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


# -- value conversions -------------------------------------------------------------------------------
def epoch(value: Any) -> int | None:
    """A gorm DeletedAt / created_at (datetime, text or number) → unix seconds."""
    if value in (None, "", 0):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, dt.datetime):
        return int(value.replace(tzinfo=value.tzinfo or dt.UTC).timestamp())
    try:
        return int(dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def text(value: Any) -> str:
    return "" if value is None else str(value)


def integer(value: Any) -> int:
    if value in (None, ""):
        return 0
    return int(value)


def pick(row: dict[str, Any], model: type[Model], renames: dict[str, str] | None = None) -> dict[str, Any]:
    """The row's columns that `model` has (after renames), None left out (the model's default)."""
    names = set(model._meta.fields_map) - {"lease_until", "lease_owner", "billing"}
    out: dict[str, Any] = {}
    for column, value in row.items():
        target = (renames or {}).get(column, column)
        if target in names and value is not None:
            out[target] = value
    return out


# -- per table ---------------------------------------------------------------------------------------
def convert_user(row: dict[str, Any]) -> dict[str, Any]:
    out = pick(row, User, {"linux_do_id": "linuxdo_id", "aff_history": "aff_history_quota", "created_at": "_"})
    token = row.get("access_token")
    out["access_token"] = hashlib.sha256(token.encode()).hexdigest() if token else None
    out["aff_code"] = row.get("aff_code") or None
    out["deleted_at"] = epoch(row.get("deleted_at"))
    if row.get("created_at"):
        out["created_time"] = epoch(row["created_at"]) or 0
    for name in ("username", "display_name", "email", "group", "github_id", "wechat_id", "telegram_id", "linuxdo_id"):
        if name in out:
            out[name] = text(out[name])
    return out


def convert_token(row: dict[str, Any], one_api: bool) -> dict[str, Any] | str:
    if row.get("deleted_at"):
        return "deleted in the source"
    out = pick(row, Token, {"models": "_", "subnet": "_"})
    if one_api:
        models = text(row.get("models")).strip()
        out["model_limits_enabled"] = bool(models)
        out["model_limits"] = models
        out["allow_ips"] = "\n".join(p.strip() for p in text(row.get("subnet")).split(",") if p.strip())
    out["unlimited_quota"] = bool(out.get("unlimited_quota"))
    if "model_limits_enabled" in out:
        out["model_limits_enabled"] = bool(out["model_limits_enabled"])
    return out


def convert_channel(row: dict[str, Any], one_api: bool) -> dict[str, Any] | str:
    out = pick(row, Channel, {"config": "_", "system_prompt": "_"})
    kind = integer(row.get("type"))
    base_url = text(row.get("base_url"))
    if one_api and kind not in ONE_API_SAME:
        if kind not in ONE_API_TYPES:
            return f"one-api channel type {kind} has no equivalent here"
        kind, default_url = ONE_API_TYPES[kind]
        base_url = base_url or default_url
    if kind in COMPATIBLE_BASE_URLS:
        kind, base_url = 1, base_url or COMPATIBLE_BASE_URLS[kind]
    if kind == 47:  # new-api's Xinference: OpenAI-compatible at its own address
        kind = 1
    if kind in NOT_CARRIED:
        return f"channel type {kind}: {NOT_CARRIED[kind]}"
    if not catalogue.known(kind):
        return f"channel type {kind} is not supported here"
    out["type"], out["base_url"] = kind, base_url
    config = _json(row.get("config")) if one_api else {}
    row_of_type = catalogue.provider(kind)
    if config and row_of_type.import_config is not None:
        # one-api keeps provider settings in `config`; this gateway, like new-api, in key and other
        out.update(row_of_type.import_config(config))
    for name in ("models", "group", "model_mapping", "status_code_mapping", "other", "other_info", "name",
                 "openai_organization", "test_model", "key", "tag"):
        if name in out:
            out[name] = text(out[name])
    out["weight"] = integer(out.get("weight"))
    out["priority"] = integer(out.get("priority"))
    out["tag"] = out.get("tag", "").strip()[:TAG_MAX]
    out["channel_info"] = ""
    refused = None if one_api else carry_keys(row, out)
    return refused or out


def carry_keys(row: dict[str, Any], out: dict[str, Any]) -> str | None:
    """A new-api multi-key channel (`channel_info.is_multi_key`) as one here: its keys, its mode
    (new-api's random or polling; none given meant random there), and each key's state, reason and
    time, each following its key (new-api numbers keys by position, blank lines and repeats included;
    here they are dropped). A channel new-api disabled automatically with no key left enabled gets the
    reason under which it comes back by itself when a key is enabled again. Returns why the channel
    cannot be carried, None when it was."""
    from api.channels.keys import ALL_KEYS_DISABLED
    from api.channels.pasted_keys import check_storable
    from api.errors import ApiError

    raw = row.get("channel_info")
    info = raw if isinstance(raw, dict) else _json(raw if isinstance(raw, str | bytes) else None)
    if not info.get("is_multi_key"):
        return None
    keys = _source_keys(text(row.get("key")))
    statuses, reasons, times = (keyring.by_position(info.get(name)) for name in (
        "multi_key_status_list", "multi_key_disabled_reason", "multi_key_disabled_time"))
    states = {i: keyring.KeyState(status, text(reasons.get(i))[:500], _time(times.get(i)))
              for i, status in statuses.items() if 0 <= i < len(keys) and status in (keyring.MANUAL, keyring.AUTO)}
    mode = str(info.get("multi_key_mode") or "")
    mode = mode if mode in keyring.MODES else "random"
    ring = keyring.Keyring(True, mode, keys, states).with_keys(keys)
    try:
        check_storable(ring.keys)
    except ApiError:
        return "a multi-key channel whose keys mix JSON documents and one-line keys"
    out["key"], out["channel_info"] = ring.key_text(), ring.info_text()
    if integer(row.get("status")) == keyring.AUTO and not ring.enabled():
        out["other_info"] = orjson.dumps({**_json(out.get("other_info")),
                                          "status_reason": ALL_KEYS_DISABLED}).decode()
    return None


def _source_keys(key: str) -> list[str]:
    """new-api's key list (model.Channel.GetKeys): a JSON array's elements, else the lines."""
    trimmed = key.strip()
    if trimmed.startswith("["):
        try:
            docs = orjson.loads(trimmed)
        except orjson.JSONDecodeError:
            docs = None
        if isinstance(docs, list):
            return [d.strip() if isinstance(d, str) else orjson.dumps(d).decode() for d in docs]
    return [line.strip() for line in key.strip("\n").split("\n")]


def _time(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def channel_converter(one_api: bool, report: Report) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    """convert_channel, noting each channel carried over with a type whose API its provider switched off
    (it keeps its row and shows the reason in the console, but is never picked)."""
    def convert(row: dict[str, Any]) -> dict[str, Any] | str:
        out = convert_channel(row, one_api)
        if len(text(row.get("tag")).strip()) > TAG_MAX:
            report.notes.append(f"channel {row.get('id')} ({text(row.get('name'))}): its tag cut to {TAG_MAX} "
                                "characters")
        if not isinstance(out, str):
            retired = catalogue.provider(out["type"]).retired
            if retired is not None:
                report.notes.append(f"channel {row.get('id')} ({text(row.get('name'))}) carried over retired, never "
                                    f"picked: {retired[0]}")
        return out

    return convert


def convert_plain(model: type[Model]) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    def convert(row: dict[str, Any]) -> dict[str, Any] | str:
        if row.get("deleted_at"):
            return "deleted in the source"
        return pick(row, model)

    return convert


def convert_log(row: dict[str, Any]) -> dict[str, Any]:
    out = pick(row, Log, {"channel": "channel_id", "elapsed_time": "_", "request_id": "_"})
    if "use_time" not in row and row.get("elapsed_time"):
        out["use_time"] = int(row["elapsed_time"]) // 1000
    out["is_stream"] = bool(out.get("is_stream"))
    for name in ("content", "username", "token_name", "model_name", "group", "other"):
        if name in out:
            out[name] = text(out[name])
    return out


def _json(value: Any) -> dict[str, Any]:
    try:
        data = orjson.loads(value or "{}")
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


# -- writing ------------------------------------------------------------------------------------------
UNIQUE: dict[Any, tuple[str, ...]] = {User: ("username",), Token: ("key",), Redemption: ("key",),
                                     TopUp: ("trade_no",)}


async def upsert(model: Any, rows: list[dict[str, Any]], report: TableReport, dry: bool,
                 new_only: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Create what is missing (keeping ids), update what differs (`new_only`: leave it), in one
    transaction; returns the rows created and the rows updated."""
    ids = [r["id"] for r in rows]
    existing = {o.id: o for o in await model.filter(id__in=ids)}
    for name in UNIQUE.get(model, ()):
        values = [r[name] for r in rows if name in r]
        taken = {getattr(o, name): o.id for o in await model.filter(**{f"{name}__in": values})}
        kept = []
        for r in rows:
            owner = taken.get(r.get(name))
            if owner is not None and owner != r["id"]:
                report.skipped.append(f"id {r['id']}: {name} {r.get(name)!r} belongs to row {owner} here")
            else:
                kept.append(r)
        rows = kept
    balance_columns = BALANCE_COLUMNS.get(model, ())
    creates: list[dict[str, Any]] = []
    updates: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for r in rows:
        row = existing.get(r["id"])
        if row is None:
            creates.append(r)
            continue
        changed = {k: v for k, v in r.items() if k != "id" and getattr(row, k) != v}
        if not changed:
            report.unchanged += 1
            continue
        money = [k for k in balance_columns if k in changed]
        if money:
            report.balances += 1
        if not new_only:
            updates.append((r, changed))
            continue
        report.left += 1
        if money:
            report.kept.append(f"id {r['id']}: " + ", ".join(f"{k} {getattr(row, k)} here, {changed[k]} in the source"
                                                             for k in money))
    report.created += len(creates)
    report.updated += len(updates)
    if not dry:
        async with in_transaction():
            if creates:
                await model.bulk_create([model(**r) for r in creates], batch_size=BATCH)
            for r, changed in updates:
                await model.filter(id=r["id"]).update(**changed)
    return creates, [r for r, _ in updates]


async def copy_table(source: Source, table: str, model: type[Model], convert: Callable[[dict[str, Any]], Any],
                     report: Report, dry: bool, after_id: int = 0, progress: bool = False,
                     new_only: bool = False) -> int:
    """Every row of `table`; returns the last source id seen."""
    part = report.table(model._meta.db_table)
    total = await source.count(table) if progress else 0
    done, started, last = 0, time.monotonic(), after_id
    async for chunk in source.rows(table, after_id=after_id, batch=BATCH):
        rows = []
        for raw in chunk:
            converted = convert(raw)
            if isinstance(converted, str):
                part.skipped.append(f"id {raw.get('id')}: {converted}")
                continue
            converted["id"] = raw["id"]
            rows.append(converted)
        if rows:
            created, updated = await upsert(model, rows, part, dry, new_only)
            if model is User:
                report.new_users += [r["id"] for r in created]
                report.changed_users += [r["id"] for r in updated]
            elif model is Token:
                report.new_tokens += [(int(r["user_id"]), r["id"]) for r in created]
                report.changed_tokens += [(int(r.get("user_id", 0)), r["id"]) for r in updated]
        last = chunk[-1]["id"]
        done += len(chunk)
        if progress:
            rate = done / max(time.monotonic() - started, 1e-6)
            bar = "#" * int(30 * done / max(total, 1))
            print(f"\r  {table}: [{bar:<30}] {done:,}/{total:,} {rate:,.0f} rows/s", end="", file=sys.stderr)
            if not dry:
                await Option.update_or_create(key=LOG_CURSOR, defaults={"value": str(last)})
    if progress:
        print(file=sys.stderr)
    return last


async def fix_sequences(models: Iterable[type[Model]]) -> None:
    """Rows came with their ids: move PostgreSQL's id sequences past them (MySQL and SQLite do it alone)."""
    conn = Tortoise.get_connection("default")
    if conn.capabilities.dialect != "postgres":
        return
    for model in models:
        table = model._meta.db_table
        await conn.execute_script(
            f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
            f"COALESCE((SELECT MAX(id) FROM \"{table}\"), 0) + 1, false)")


# -- the whole run -------------------------------------------------------------------------------------
async def detect(source: Source, report: Report) -> tuple[bool, set[str]]:
    tables = await source.tables()
    for needed in ("users", "tokens", "channels", "options"):
        if needed not in tables:
            raise ValueError(f"the source has no {needed!r} table: not a one-api or new-api database")
    user_columns = await source.columns("users")
    token_columns = await source.columns("tokens")
    new_api = "aff_count" in user_columns or "top_ups" in tables or "model_limits_enabled" in token_columns
    report.flavour = "new-api" if new_api else "one-api"
    if new_api:
        report.era += [name for name, present in (
            ("token model limits", "model_limits_enabled" in token_columns),
            ("soft-deleted users", "deleted_at" in user_columns),
            ("tasks", "tasks" in tables), ("midjourney", "midjourneys" in tables),
            ("top-ups", "top_ups" in tables)) if present]
    else:
        channel_columns = await source.columns("channels")
        report.era += [name for name, present in (
            ("token model lists", "models" in token_columns), ("token subnets", "subnet" in token_columns),
            ("channel config", "config" in channel_columns)) if present]
    for column in ("lark_id", "oidc_id", "discord_id"):
        if column in user_columns:
            report.notes.append(f"users.{column}: logins through that provider are not supported here (not carried)")
    return not new_api, tables


async def import_options(source: Source, report: Report, dry: bool, new_only: bool = False) -> None:
    from api.services.configuration.option_rules import DEFAULTS

    part = report.table("option")
    for row in await source.all_rows("options"):
        key, value = text(row.get("key")), text(row.get("value"))
        if key not in DEFAULTS:
            part.skipped.append(f"{key}: no such option here")
            continue
        current = await Option.filter(key=key).first()
        if current is not None and current.value == value:
            part.unchanged += 1
            continue
        if current is None:
            part.created += 1
        elif new_only:
            part.left += 1
            continue
        else:
            part.updated += 1
        if not dry:
            await Option.update_or_create(key=key, defaults={"value": value})


async def rebuild_abilities(report: Report, dry: bool) -> None:
    from api.channels.admin import abilities_of

    if dry:
        return
    async with in_transaction():
        await Ability.all().delete()
        rows = [a for channel in await Channel.all() for a in abilities_of(channel)]
        await Ability.bulk_create(rows, batch_size=BATCH)
    report.notes.append(f"abilities rebuilt: {len(rows)} (group × model × channel)")


async def run(url: str, *, logs: bool = False, dry: bool = False, new_only: bool = False) -> Report:
    report = Report()
    source = await Source(url).open()
    try:
        one_api, tables = await detect(source, report)

        async def copy(table: str, model: type[Model], convert: Callable[[dict[str, Any]], Any], **kw: Any) -> None:
            await copy_table(source, table, model, convert, report, dry, new_only=new_only, **kw)

        await copy("users", User, convert_user)
        await copy("tokens", Token, lambda r: convert_token(r, one_api))
        await copy("channels", Channel, channel_converter(one_api, report))
        await import_options(source, report, dry, new_only)
        for table, model in (("redemptions", Redemption), ("top_ups", TopUp), ("midjourneys", Midjourney),
                             ("tasks", Task)):
            if table in tables:
                await copy(table, model, convert_plain(model))
        copied: list[type[Model]] = [User, Token, Channel, Redemption, TopUp, Midjourney, Task]
        if logs:
            cursor = await Option.filter(key=LOG_CURSOR).first()
            await copy("logs", Log, convert_log, after_id=int(cursor.value) if cursor else 0, progress=True)
            if "quota_data" in tables:
                await copy("quota_data", QuotaData, convert_plain(QuotaData))
            copied += [Log, QuotaData]
        else:
            report.notes.append("logs and dashboard aggregates not imported (add --logs)")
        await rebuild_abilities(report, dry)
        if not dry:
            await fix_sequences(copied)
    finally:
        await source.close()
    return report
