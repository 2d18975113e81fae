from tortoise import fields

from .base import BaseModel, now


class Log(BaseModel):
    user_id = fields.IntField()
    created_at = fields.BigIntField(default=now)
    type = fields.IntField()
    content = fields.TextField(default="")
    username = fields.CharField(max_length=64, default="", db_index=True)
    token_name = fields.CharField(max_length=64, default="")
    token_id = fields.IntField(default=0)
    model_name = fields.CharField(max_length=255, default="")
    quota = fields.BigIntField(default=0)
    prompt_tokens = fields.IntField(default=0)
    completion_tokens = fields.IntField(default=0)
    use_time = fields.IntField(default=0)  # seconds
    is_stream = fields.BooleanField(default=False)
    channel_id = fields.IntField(default=0)  # wire name: "channel"
    group = fields.CharField(max_length=64, default="")
    other = fields.TextField(default="")  # JSON text
    request_id = fields.CharField(max_length=64, null=True, unique=True)

    class Meta:
        table = "log"
        indexes = (
            ("created_at",),
            ("user_id", "created_at"),
            ("type", "created_at"),
            ("token_name", "created_at"),
            ("model_name", "created_at"),
            ("channel_id", "created_at"),
        )


class QuotaData(BaseModel):
    """Hourly dashboard aggregate of (user, model, hour)."""

    user_id = fields.IntField()
    username = fields.CharField(max_length=64, default="", db_index=True)
    model_name = fields.CharField(max_length=255, default="")
    created_at = fields.BigIntField(db_index=True)  # start of the hour, unix seconds
    token_used = fields.BigIntField(default=0)
    count = fields.IntField(default=0)
    quota = fields.BigIntField(default=0)
    prompt_tokens = fields.BigIntField(default=0)  # input tokens, cached ones included
    cache_tokens = fields.BigIntField(default=0)  # input tokens read from the provider's prompt cache
    saved_quota = fields.BigIntField(default=0)  # what those would have cost more at the full input price

    class Meta:
        table = "quota_data"
        unique_together = (("user_id", "model_name", "created_at"),)


class Settlement(BaseModel):
    """Idempotency record: one row per relayed request whose billing reached the database."""

    request_id = fields.CharField(max_length=64, unique=True)
    user_id = fields.IntField()
    token_id = fields.IntField(default=0)
    quota = fields.BigIntField(default=0)
    created_at = fields.BigIntField(default=now, db_index=True)

    class Meta:
        table = "settlement"
