"""Logging in through a custom OAuth 2 / OpenID Connect provider, and the accounts bound to one.

A login is a `Flow`: made when the browser asks for the provider's authorization URL, kept in that
browser's session, taken (once) when the provider sends it back. It holds the `state` the callback
must return, the PKCE verifier (the provider gets only its S256 challenge), the OIDC `nonce` the ID
token must carry, the provider, who started it (0 for a login, the user for a binding), the invite
code, and when it expires (FLOW_TTL).

What the provider says of the user (the ID token's claims, or the userinfo answer) is read through the
provider's field mappings (dotted paths such as `sub` or `data.user.id`, as new-api's). The account is
the one bound to (provider, the provider's user id) in `user_oauth_bindings`; a new one is made when
registration is open, as for the built-in logins.
"""
from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlencode

import orjson
from tortoise.transactions import in_transaction

from api.errors import ApiError
from api.services.accounts.deps import Services
from api.services.accounts.identities import unique_username, usable_email
from api.services.accounts.users import (
    DISPLAY_NAME_MAX,
    PROVIDERS,
    NewAccount,
    check_can_log_in,
    create_account,
    identity_lock,
)
from api.services.passwords import constant_time_equals
from models import CustomOAuthProvider, PasskeyCredential, User, UserOAuthBinding

FLOW_TTL = 600  # seconds a started login may take at the provider
SLUG_PREFIX = 11  # of a new account's username: slug[:11] + "_" + 8 random characters (20 at most)


# -- the flow ---------------------------------------------------------------------------------------
@dataclass
class Flow:
    provider_id: int
    state: str
    verifier: str
    nonce: str
    user_id: int  # 0: a login; else the user binding the provider
    aff: str
    expires: int

    def dumps(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def loads(cls, raw: str) -> Flow | None:
        try:
            data = orjson.loads(raw)
            return cls(**data) if isinstance(data, dict) else None
        except (orjson.JSONDecodeError, TypeError):
            return None


def new_flow(provider: CustomOAuthProvider, user_id: int, aff: str) -> Flow:
    return Flow(provider_id=provider.id, state=secrets.token_urlsafe(24), verifier=secrets.token_urlsafe(48),
                nonce=secrets.token_urlsafe(24), user_id=user_id, aff=aff[:32], expires=int(time.time()) + FLOW_TTL)


def check_flow(flow: Flow | None, provider: CustomOAuthProvider, state: str) -> Flow:
    """The flow the callback belongs to: same provider, same state, not expired; else oauth_state_invalid."""
    if (flow is None or not state or flow.provider_id != provider.id
            or not constant_time_equals(flow.state, state) or flow.expires < time.time()):
        raise ApiError("oauth_state_invalid")
    return flow


def code_challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def authorization_url(provider: CustomOAuthProvider, flow: Flow, redirect_uri: str) -> str:
    params = {"response_type": "code", "client_id": provider.client_id, "redirect_uri": redirect_uri,
              "scope": provider.scopes, "state": flow.state, "code_challenge": code_challenge(flow.verifier),
              "code_challenge_method": "S256"}
    if provider.is_oidc:
        params["nonce"] = flow.nonce
    base = provider.authorization_endpoint
    return base + ("&" if "?" in base else "?") + urlencode(params)


# -- what the provider says ------------------------------------------------------------------------
@dataclass
class External:
    provider_user_id: str
    username: str = ""
    display_name: str = ""
    email: str = ""


def field_of(data: Any, path: str) -> str:
    """The value at a dotted path (`a.b.0.c`) as text; "" when absent, an object, or null."""
    value = data
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return ""
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def external_of(provider: CustomOAuthProvider, data: dict[str, Any]) -> External:
    user_id = field_of(data, provider.user_id_field)
    if not user_id or len(user_id) > 256:
        raise ApiError("custom_oauth_no_user_id", provider=provider.name, field=provider.user_id_field)
    return External(user_id, username=field_of(data, provider.username_field),
                    display_name=field_of(data, provider.display_name_field),
                    email=field_of(data, provider.email_field))


# -- accounts ---------------------------------------------------------------------------------------
def _lock_name(provider: CustomOAuthProvider) -> str:
    return f"custom:{provider.id}"


async def login_with_binding(services: Services, provider: CustomOAuthProvider, external: External,
                             aff_code: str) -> User:
    """The account bound to this provider's user, or a new one bound to it (when registration is open)."""
    async with identity_lock(services, _lock_name(provider), external.provider_user_id):
        binding = await UserOAuthBinding.filter(provider_id=provider.id,
                                                provider_user_id=external.provider_user_id).first()
        if binding is not None:
            user = await User.filter(id=binding.user_id).first()
            if user is None:
                raise ApiError("user_deleted")
            check_can_log_in(user)
            return user
        if not services.options.get_bool("RegisterEnabled"):
            raise ApiError("registration_disabled")
        email = await usable_email(external.email)
        username = await unique_username(provider.slug[:SLUG_PREFIX])
        display_name = (external.display_name or external.username).strip()[:DISPLAY_NAME_MAX] or username
        async with in_transaction():
            user = await create_account(services.options, NewAccount(
                username=username, display_name=display_name, email=email, aff_code=aff_code))
            await UserOAuthBinding.create(user_id=user.id, provider_id=provider.id,
                                          provider_user_id=external.provider_user_id)
        return user


async def bind(services: Services, user: User, provider: CustomOAuthProvider, external: External) -> None:
    """Bind the provider's user to the caller (replacing the caller's earlier binding to this provider);
    refused when another account holds it."""
    async with identity_lock(services, _lock_name(provider), external.provider_user_id):
        holder = await UserOAuthBinding.filter(provider_id=provider.id,
                                               provider_user_id=external.provider_user_id).first()
        if holder is not None and holder.user_id != user.id:
            raise ApiError("oauth_identity_bound", provider=provider.name)
        if holder is not None:
            return
        async with in_transaction():
            await UserOAuthBinding.filter(user_id=user.id, provider_id=provider.id).delete()
            await UserOAuthBinding.create(user_id=user.id, provider_id=provider.id,
                                          provider_user_id=external.provider_user_id)


async def other_logins(user: User, provider_id: int) -> bool:
    """Whether the user can still log in without this provider: a password, a passkey, a built-in
    login, or a binding to another provider."""
    if user.password or await PasskeyCredential.filter(user_id=user.id).exists():
        return True
    if any(getattr(user, field_name) for field_name, _, _ in PROVIDERS.values()):
        return True
    return await UserOAuthBinding.filter(user_id=user.id).exclude(provider_id=provider_id).exists()


async def unbind(services: Services, user: User, provider: CustomOAuthProvider, keep_a_login: bool = True) -> None:
    """Remove the user's binding to the provider. The user's own unbinding (`keep_a_login`) is refused
    when it is the account's last way to log in; an admin's is not. One unbinding of a user at a time:
    two at once could each leave the other as the last login."""
    async with identity_lock(services, "logins-of", str(user.id)), in_transaction():
        binding = await UserOAuthBinding.filter(user_id=user.id, provider_id=provider.id).first()
        if binding is None:
            raise ApiError("custom_oauth_not_bound", provider=provider.name)
        if keep_a_login and not await other_logins(user, provider.id):
            raise ApiError("custom_oauth_last_login", provider=provider.name)
        await UserOAuthBinding.filter(id=binding.id).delete()


async def bindings_of(user_id: int) -> list[dict[str, Any]]:
    """new-api's UserOAuthBindingResponse for each of the user's bindings."""
    bindings = await UserOAuthBinding.filter(user_id=user_id).order_by("provider_id")
    providers = {p.id: p for p in await CustomOAuthProvider.filter(id__in=[b.provider_id for b in bindings])}
    return [{"provider_id": b.provider_id, "provider_name": providers[b.provider_id].name,
             "provider_slug": providers[b.provider_id].slug, "provider_icon": providers[b.provider_id].icon,
             "provider_user_id": b.provider_user_id, "created_at": b.created_at}
            for b in bindings if b.provider_id in providers]
