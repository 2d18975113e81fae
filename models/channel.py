from collections.abc import Callable
from typing import Any, TypeVar

from tortoise import fields
from tortoise.transactions import in_transaction

from .base import BaseModel, now
from .enums import ChannelStatus
from .keyring import Keyring, load, public_channel_info

T = TypeVar("T")


class Channel(BaseModel):
    type = fields.IntField(default=1)  # the catalogue's default type (OpenAI)
    key = fields.TextField()  # upstream secret: never returned by list/search/get, never logged
    openai_organization = fields.CharField(max_length=128, default="")
    test_model = fields.CharField(max_length=128, default="")
    status = fields.IntField(default=int(ChannelStatus.ENABLED), db_index=True)
    name = fields.CharField(max_length=128, default="", db_index=True)
    weight = fields.IntField(default=0)
    created_time = fields.BigIntField(default=now)
    test_time = fields.BigIntField(default=0)
    response_time = fields.IntField(default=0)  # milliseconds
    base_url = fields.CharField(max_length=512, default="")
    other = fields.TextField(default="")
    balance = fields.FloatField(default=0)
    balance_updated_time = fields.BigIntField(default=0)
    models = fields.TextField(default="")  # comma-separated
    group = fields.CharField(max_length=255, default="default")  # comma-separated
    used_quota = fields.BigIntField(default=0)
    model_mapping = fields.TextField(default="")
    status_code_mapping = fields.TextField(default="")
    priority = fields.BigIntField(default=0)
    auto_ban = fields.IntField(default=1)
    other_info = fields.TextField(default="")  # JSON: status_reason, status_time
    max_input_tokens = fields.IntField(default=0)
    # Several keys in one channel (models/keyring.py): one per line in `key` (a JSON array of
    # documents for whole-document keys), their state in `channel_info` (new-api's field names:
    # is_multi_key, multi_key_mode random|polling|affinity, multi_key_status_list, …).
    channel_info = fields.TextField(default="")
    tag = fields.CharField(max_length=64, default="", db_index=True)  # batch edits across channels
    cache_per_key = fields.IntField(default=1)  # the upstream's prompt cache is per key (else per channel)
    max_inflight = fields.IntField(default=0)  # requests at once across processes; 0 = no limit

    class Meta:
        table = "channel"

    def public_dict(self) -> dict[str, Any]:
        """Wire shape without the key."""
        return {
            "id": self.id,
            "type": self.type,
            "openai_organization": self.openai_organization,
            "test_model": self.test_model,
            "status": self.status,
            "name": self.name,
            "weight": self.weight,
            "created_time": self.created_time,
            "test_time": self.test_time,
            "response_time": self.response_time,
            "base_url": self.base_url,
            "other": self.other,
            "balance": self.balance,
            "balance_updated_time": self.balance_updated_time,
            "models": self.models,
            "group": self.group,
            "used_quota": self.used_quota,
            "model_mapping": self.model_mapping,
            "status_code_mapping": self.status_code_mapping,
            "priority": self.priority,
            "auto_ban": self.auto_ban,
            "other_info": self.other_info,
            "max_input_tokens": self.max_input_tokens,
            "tag": self.tag,
            "cache_per_key": self.cache_per_key,
            "max_inflight": self.max_inflight,
            "channel_info": public_channel_info(self.channel_info, self.key),
        }


async def update_keys(channel_id: int, change: Callable[[Keyring], T]) -> tuple[Channel, T]:
    """Change a channel's keys or their states (models/keyring.py) under a row lock (one writer at a
    time: the console, the workers that disable a key, the monitor that brings one back). Returns the
    saved channel and what `change` returned; raises tortoise's DoesNotExist for an unknown channel."""
    async with in_transaction() as conn:
        channel = await Channel.select_for_update().using_db(conn).get(id=channel_id)
        ring = load(channel.key, channel.channel_info)
        result = change(ring)
        channel.key, channel.channel_info = ring.key_text(), ring.info_text()
        await channel.save(using_db=conn, update_fields=["key", "channel_info"])
    return channel, result


class Ability(BaseModel):
    """One row per (group, model, channel): what the relay may route where."""

    group = fields.CharField(max_length=64)
    model = fields.CharField(max_length=255)
    channel_id = fields.IntField(db_index=True)
    enabled = fields.BooleanField(default=True)
    priority = fields.BigIntField(default=0)
    weight = fields.IntField(default=0)

    class Meta:
        table = "ability"
        unique_together = (("group", "model", "channel_id"),)
        indexes = (("group", "model", "enabled"),)
