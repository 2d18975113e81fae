"""Passkeys (WebAuthn credentials): what the relying party keeps of each authenticator a user registered.

The columns follow new-api's `passkey_credentials` (credential id and public key in standard base64,
the flags, the transports as a JSON list), with a name the user gives and unix-second times as
everywhere else here. A public key is no secret (it only checks signatures), yet the list answers
never carry it.
"""
import orjson
from tortoise import fields

from .base import BaseModel, now


class PasskeyCredential(BaseModel):
    user_id = fields.IntField(db_index=True)
    name = fields.CharField(max_length=64, default="")
    credential_id = fields.CharField(max_length=512, unique=True)  # base64 of the raw credential id
    public_key = fields.TextField()  # base64 of the COSE public key
    attestation_type = fields.CharField(max_length=255, default="none")
    aaguid = fields.CharField(max_length=64, default="")  # the authenticator model, as a UUID string
    sign_count = fields.BigIntField(default=0)  # the last signature counter seen (0: the authenticator counts none)
    clone_warning = fields.BooleanField(default=False)  # an assertion came with a counter not above the stored one
    user_verified = fields.BooleanField(default=False)
    backup_eligible = fields.BooleanField(default=False)
    backup_state = fields.BooleanField(default=False)
    transports = fields.TextField(default="")  # JSON list: "internal", "usb", "hybrid" …
    created_time = fields.BigIntField(default=now)
    last_used_time = fields.BigIntField(default=0)  # 0: never used since it was registered

    class Meta:
        table = "passkey_credentials"

    def public_dict(self) -> dict[str, object]:
        """The wire shape of a passkey in its owner's list: no key material."""
        return {
            "id": self.id,
            "name": self.name,
            "created_time": self.created_time,
            "last_used_time": self.last_used_time,
            "backup_eligible": self.backup_eligible,
            "backup_state": self.backup_state,
            "transports": self.transport_list(),
        }

    def transport_list(self) -> list[str]:
        try:
            value = orjson.loads(self.transports) if self.transports else []
        except orjson.JSONDecodeError:
            return []
        return [t for t in value if isinstance(t, str)] if isinstance(value, list) else []
