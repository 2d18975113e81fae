from tortoise import fields

from .base import BaseModel, now
from .enums import RedemptionStatus


class Redemption(BaseModel):
    user_id = fields.IntField(default=0)  # the admin who created it
    key = fields.CharField(max_length=32, unique=True)
    status = fields.IntField(default=int(RedemptionStatus.UNUSED))
    name = fields.CharField(max_length=64, default="", db_index=True)
    quota = fields.BigIntField(default=100000)
    created_time = fields.BigIntField(default=now)
    redeemed_time = fields.BigIntField(default=0)
    used_user_id = fields.IntField(default=0)

    class Meta:
        table = "redemption"
