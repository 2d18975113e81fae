from tortoise import fields

from .base import BaseModel, now
from .enums import TopUpStatus


class TopUp(BaseModel):
    """An online payment order."""

    user_id = fields.IntField(db_index=True)
    amount = fields.BigIntField(default=0)  # dollars of quota bought
    money = fields.FloatField(default=0)  # what the user pays
    quota = fields.BigIntField(default=0)  # quota credited on success
    currency = fields.CharField(max_length=8, default="usd")
    trade_no = fields.CharField(max_length=64, unique=True)
    session_id = fields.CharField(max_length=255, default="", db_index=True)
    payment_method = fields.CharField(max_length=32, default="stripe")
    create_time = fields.BigIntField(default=now)
    complete_time = fields.BigIntField(default=0)
    status = fields.CharField(max_length=16, default=TopUpStatus.PENDING.value, db_index=True)

    class Meta:
        table = "top_up"
