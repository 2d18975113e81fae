"""Two-factor login (TOTP, RFC 6238) of a user, and its single-use backup codes.

The tables are new-api's (`two_fas`, `two_fa_backup_codes`). `secret` is the authenticator's base32
secret sealed with AES-GCM (api.services.accounts.two_factor): a database dump alone gives no code.
A backup code is kept as the SHA-256 of its normalised text only.
"""
from tortoise import fields

from .base import BaseModel, now


class TwoFactor(BaseModel):
    user_id = fields.IntField(unique=True)
    secret = fields.CharField(max_length=255)  # sealed; never serialised
    is_enabled = fields.BooleanField(default=False, db_index=True)
    # The last 30-second TOTP step a code was accepted for: a code is good once, and none of an
    # earlier step after it (a conditional UPDATE moves it forward, atomically across processes).
    last_step = fields.BigIntField(default=0)
    created_time = fields.BigIntField(default=now)
    enabled_time = fields.BigIntField(default=0)

    class Meta:
        table = "two_fas"


class TwoFactorBackupCode(BaseModel):
    user_id = fields.IntField(db_index=True)
    code_hash = fields.CharField(max_length=64)  # sha256 hex of the normalised code
    used_time = fields.BigIntField(null=True)  # set once, by the conditional UPDATE that spends it
    created_time = fields.BigIntField(default=now)

    class Meta:
        table = "two_fa_backup_codes"
        unique_together = (("user_id", "code_hash"),)
