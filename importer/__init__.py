"""Move a one-api or new-api deployment over: `python -m importer SOURCE_URL [--logs] [--dry-run]`.

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
`left`). Which of the two a run may do is decided by the command (importer.__main__) from
whether this gateway has served traffic since the last import (importer.live).

This module is the run itself; the source is read by `source.py`, its rows converted by `rows.py` and
`channels.py`, written by `writing.py`, and what happened told by `report.py`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tortoise import Model
from tortoise.transactions import in_transaction

from api.channels.admin import abilities_of
from api.services.configuration.option_rules import DEFAULTS
from models import Channel, CustomOAuthProvider, Log, Option, Redemption, Token, TopUp, User, UserOAuthBinding
from models.channel import Ability
from models.log import QuotaData
from models.task import Midjourney, Task

from .channels import channel_converter
from .oauth import import_custom_oauth
from .oidc_builtin import CARRIED_OPTIONS, import_builtin_oidc
from .report import Report as Report
from .rows import convert_log, convert_plain, convert_token, convert_user, text
from .source import Source
from .writing import BATCH, LOG_CURSOR, copy_table, fix_sequences


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
        if column in user_columns and not (new_api and column == "oidc_id"):  # new-api's: oidc_builtin
            report.notes.append(f"users.{column}: logins through that provider are not supported here (not carried)")
    return not new_api, tables


async def import_options(source: Source, report: Report, dry: bool, new_only: bool = False) -> None:
    part = report.table("option")
    for row in await source.all_rows("options"):
        key, value = text(row.get("key")), text(row.get("value"))
        if key in CARRIED_OPTIONS:
            continue  # carried by the custom provider `oidc`
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
        await import_custom_oauth(source, tables, report, dry, new_only)
        if not one_api:
            await import_builtin_oidc(source, tables, report, dry)
        copied: list[type[Model]] = [User, Token, Channel, Redemption, TopUp, Midjourney, Task,
                                     CustomOAuthProvider, UserOAuthBinding]
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
