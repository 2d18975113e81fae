"""The audit log: one append-only row per administrative change (api.services.audit writes them,
through a Redis queue and the workers; no route edits or deletes a row, only the retention job)."""
from tortoise import fields

from .base import BaseModel, now


class AuditEntry(BaseModel):
    entry_id = fields.CharField(max_length=32, unique=True)  # made by the request: the writer's idempotency
    created_at = fields.BigIntField(default=now)  # unix seconds, when the change was made
    actor_id = fields.IntField(default=0)  # 0: nobody logged in (a login burst), or the importer
    actor_name = fields.CharField(max_length=64, default="")
    actor_role = fields.IntField(default=0)  # the actor's role at the time
    actor_ip = fields.CharField(max_length=64, default="")  # the client address behind TRUSTED_PROXIES
    action = fields.CharField(max_length=64)  # "<target type>.<verb>": channel.update, option.set …
    target_type = fields.CharField(max_length=32, default="")  # channel, user, option, redemption, tag …
    target_id = fields.CharField(max_length=128, default="")  # its id (an option's key, a tag's name)
    target_role = fields.IntField(null=True)  # a user target's role at the time; None: not a user
    before = fields.TextField(default="")  # JSON object of the fields before (secrets masked); "" none
    after = fields.TextField(default="")  # … and after

    class Meta:
        table = "audit_entry"
        indexes = (
            ("created_at",),
            ("actor_id", "created_at"),
            ("action", "created_at"),
            ("target_type", "target_id", "created_at"),
        )
