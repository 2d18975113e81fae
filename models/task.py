from tortoise import fields

from .base import BaseModel, now


class Midjourney(BaseModel):
    code = fields.IntField(default=0)
    user_id = fields.IntField(db_index=True)
    token_id = fields.IntField(default=0)
    action = fields.CharField(max_length=40, default="")
    mj_id = fields.CharField(max_length=191, default="", db_index=True)
    prompt = fields.TextField(default="")
    prompt_en = fields.TextField(default="")
    description = fields.TextField(default="")
    state = fields.TextField(default="")
    created_at = fields.BigIntField(default=now, db_index=True)
    submit_time = fields.BigIntField(default=0)  # milliseconds
    start_time = fields.BigIntField(default=0)
    finish_time = fields.BigIntField(default=0)
    image_url = fields.TextField(default="")
    status = fields.CharField(max_length=20, default="", db_index=True)
    progress = fields.CharField(max_length=30, default="", db_index=True)
    fail_reason = fields.TextField(default="")
    channel_id = fields.IntField(default=0)
    quota = fields.BigIntField(default=0)
    buttons = fields.TextField(default="")
    properties = fields.TextField(default="")
    lease_until = fields.BigIntField(default=0)  # seconds: a poller holds the row until then
    lease_owner = fields.CharField(max_length=40, default="")
    billing = fields.TextField(default="")  # JSON: how the submission was charged (see api.relay.tasks.billing)

    class Meta:
        table = "midjourney"


class Task(BaseModel):
    created_at = fields.BigIntField(default=now, db_index=True)
    updated_at = fields.BigIntField(default=now)
    task_id = fields.CharField(max_length=191, default="", db_index=True)
    platform = fields.CharField(max_length=30, default="", db_index=True)
    user_id = fields.IntField(db_index=True)
    token_id = fields.IntField(default=0)
    channel_id = fields.IntField(default=0)
    quota = fields.BigIntField(default=0)
    action = fields.CharField(max_length=40, default="")
    status = fields.CharField(max_length=20, default="", db_index=True)
    fail_reason = fields.TextField(default="")
    submit_time = fields.BigIntField(default=0)
    start_time = fields.BigIntField(default=0)
    finish_time = fields.BigIntField(default=0)
    progress = fields.CharField(max_length=20, default="", db_index=True)
    properties = fields.TextField(default="")
    data = fields.TextField(default="")
    lease_until = fields.BigIntField(default=0)
    lease_owner = fields.CharField(max_length=40, default="")
    billing = fields.TextField(default="")
    deleted_at = fields.BigIntField(default=0)  # seconds: its owner deleted it (DELETE /v1/videos/{id}); 0: not

    class Meta:
        table = "task"
