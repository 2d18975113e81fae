from typing import Any

import orjson
from tortoise import fields

from .base import BaseModel, now
from .enums import Role, UserStatus


class User(BaseModel):
    username = fields.CharField(max_length=64, unique=True)
    password = fields.CharField(max_length=255, default="")  # bcrypt hash; never serialised
    display_name = fields.CharField(max_length=64, default="")
    role = fields.IntField(default=int(Role.USER))
    status = fields.IntField(default=int(UserStatus.ENABLED), db_index=True)
    email = fields.CharField(max_length=128, default="", db_index=True)
    github_id = fields.CharField(max_length=64, default="", db_index=True)
    linuxdo_id = fields.CharField(max_length=64, default="", db_index=True)
    linuxdo_level = fields.IntField(default=0)
    wechat_id = fields.CharField(max_length=64, default="", db_index=True)
    telegram_id = fields.CharField(max_length=64, default="", db_index=True)
    access_token = fields.CharField(max_length=64, null=True, unique=True)  # sha256 hex of the token
    quota = fields.BigIntField(default=0)
    used_quota = fields.BigIntField(default=0)
    request_count = fields.IntField(default=0)
    group = fields.CharField(max_length=64, default="default", db_index=True)
    aff_code = fields.CharField(max_length=32, null=True, unique=True)
    aff_count = fields.IntField(default=0)
    aff_quota = fields.BigIntField(default=0)
    aff_history_quota = fields.BigIntField(default=0)
    inviter_id = fields.IntField(default=0, db_index=True)
    created_time = fields.BigIntField(default=now)
    deleted_at = fields.BigIntField(null=True, db_index=True)  # soft delete (wire: DeletedAt)
    limits = fields.TextField(default="")  # limits over time, normalised JSON (api.services.budgets.limits)

    class Meta:
        table = "user"

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    def public_dict(self) -> dict[str, Any]:
        """The wire shape of a user: everything but the password hash and access-token hash."""
        return {
            "id": self.id,
            "username": self.username,
            "display_name": self.display_name,
            "role": self.role,
            "status": self.status,
            "email": self.email,
            "github_id": self.github_id,
            "linuxdo_id": self.linuxdo_id,
            "linuxdo_level": self.linuxdo_level,
            "wechat_id": self.wechat_id,
            "telegram_id": self.telegram_id,
            "quota": self.quota,
            "used_quota": self.used_quota,
            "request_count": self.request_count,
            "group": self.group,
            "aff_code": self.aff_code or "",
            "aff_count": self.aff_count,
            "aff_quota": self.aff_quota,
            "aff_history_quota": self.aff_history_quota,
            "inviter_id": self.inviter_id,
            "created_time": self.created_time,
            "DeletedAt": self.deleted_at,
            "limits": orjson.loads(self.limits) if self.limits else [],
        }
