"""Custom OAuth 2 / OpenID Connect providers that root adds, and the accounts bound to them.

Tables and columns are new-api's (`custom_oauth_providers`, `user_oauth_bindings`) so that the
importer carries them as they are. The client secret is kept as channel keys are: in its column,
never returned by any route nor logged.
"""
from tortoise import fields

from .base import BaseModel, now

KIND_OAUTH_CODE = "oauth_code"  # the authorization code flow (with PKCE): the only kind served here


class CustomOAuthProvider(BaseModel):
    name = fields.CharField(max_length=64)
    slug = fields.CharField(max_length=64, unique=True)  # the callback is /oauth/{slug}
    icon = fields.CharField(max_length=128, default="")
    kind = fields.CharField(max_length=32, default=KIND_OAUTH_CODE)
    enabled = fields.BooleanField(default=False)
    client_id = fields.CharField(max_length=256, default="")
    client_secret = fields.CharField(max_length=512, default="")  # never returned, never logged
    authorization_endpoint = fields.CharField(max_length=512, default="")
    token_endpoint = fields.CharField(max_length=512, default="")
    user_info_endpoint = fields.CharField(max_length=512, default="")
    scopes = fields.CharField(max_length=256, default="openid profile email")
    # OpenID Connect: with `openid` among the scopes the ID token is required and verified against these.
    issuer = fields.CharField(max_length=512, default="")
    audience = fields.CharField(max_length=256, default="")  # "" = the client id
    jwks_url = fields.CharField(max_length=512, default="")
    well_known = fields.CharField(max_length=512, default="")  # the discovery document it was filled from
    # Where the user's fields are in the claims or the userinfo answer (dotted paths, as new-api's).
    user_id_field = fields.CharField(max_length=128, default="sub")
    username_field = fields.CharField(max_length=128, default="preferred_username")
    display_name_field = fields.CharField(max_length=128, default="name")
    email_field = fields.CharField(max_length=128, default="email")
    auth_style = fields.IntField(default=0)  # client credentials: 0 auto (= 1), 1 in the form, 2 HTTP Basic
    created_at = fields.BigIntField(default=now)
    updated_at = fields.BigIntField(default=now)

    class Meta:
        table = "custom_oauth_providers"

    @property
    def is_oidc(self) -> bool:
        return "openid" in self.scopes.split()


class UserOAuthBinding(BaseModel):
    user_id = fields.IntField()
    provider_id = fields.IntField(db_index=True)
    provider_user_id = fields.CharField(max_length=256)  # the provider's stable id of the user (`sub`)
    created_at = fields.BigIntField(default=now)

    class Meta:
        table = "user_oauth_bindings"
        unique_together = (("user_id", "provider_id"), ("provider_id", "provider_user_id"))
