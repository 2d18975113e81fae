from tortoise import fields

from .base import BaseModel, now
from .enums import TokenStatus


class Token(BaseModel):
    user_id = fields.IntField(db_index=True)
    key = fields.CharField(max_length=48, unique=True)  # shown as "sk-" + key
    status = fields.IntField(default=int(TokenStatus.ENABLED))
    name = fields.CharField(max_length=64, default="", db_index=True)
    created_time = fields.BigIntField(default=now)
    accessed_time = fields.BigIntField(default=now)
    expired_time = fields.BigIntField(default=-1)  # -1 = never
    remain_quota = fields.BigIntField(default=0)
    unlimited_quota = fields.BooleanField(default=False)
    used_quota = fields.BigIntField(default=0)
    model_limits_enabled = fields.BooleanField(default=False)
    model_limits = fields.TextField(default="")  # comma-separated on the wire
    allow_ips = fields.TextField(default="")  # one IP or CIDR per line
    group = fields.CharField(max_length=64, default="")
    # The MCP servers and tools the key is narrowed to, among its group's: a JSON list of "<server>" and
    # "<server>__<tool>" ("" or []: whatever its group may use)
    mcp_tools = fields.TextField(default="")
    limits = fields.TextField(default="")  # limits over time, normalised JSON (api.services.budgets.limits)

    class Meta:
        table = "token"
