"""Common model helpers."""
import time

from tortoise import fields
from tortoise.models import Model


def now() -> int:
    """Unix seconds: every *_time / created_at column of the wire is unix seconds."""
    return int(time.time())


class BaseModel(Model):
    id = fields.IntField(primary_key=True)

    class Meta:
        abstract = True
