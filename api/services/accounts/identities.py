"""Third-party identities (GitHub, LINUX DO, WeChat, Telegram): what a provider says of a user, the
account it logs in (made on first use when registration is open) and binding one to an account."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.errors import ApiError
from api.services.accounts.deps import Services
from api.services.accounts.users import (
    DISPLAY_NAME_MAX,
    PROVIDERS,
    USERNAME_MAX,
    NewAccount,
    check_can_log_in,
    create_account,
    email_in_use,
    identity_lock,
    normalize_email,
)
from api.services.passwords import random_string
from models import User


@dataclass
class Identity:
    provider: str  # github, linuxdo, wechat, telegram
    id: str
    username: str = ""
    display_name: str = ""
    email: str = ""
    level: int = 0  # LINUX DO trust level


async def unique_username(prefix: str) -> str:
    """A free username for an account created by a third-party login: prefix + random suffix."""
    for _ in range(10):
        candidate = f"{prefix}_{random_string(8, 'abcdefghijklmnopqrstuvwxyz0123456789')}"[:USERNAME_MAX]
        if not await User.filter(username=candidate).exists():
            return candidate
    raise ApiError("oauth_identity_busy")



def _identity_fields(identity: Identity) -> dict[str, Any]:
    fields: dict[str, Any] = {PROVIDERS[identity.provider][0]: identity.id}
    if identity.provider == "linuxdo":
        fields["linuxdo_level"] = identity.level
    return fields


async def login_with_identity(services: Services, identity: Identity, aff_code: str) -> User:
    """The account bound to the identity, or a new one (when registration is open)."""
    options = services.options
    field_name = PROVIDERS[identity.provider][0]
    async with identity_lock(services, identity.provider, identity.id):
        user = await User.filter(**{field_name: identity.id}).order_by("id").first()
        if user is not None:
            check_can_log_in(user)
            if identity.provider == "linuxdo" and user.linuxdo_level != identity.level:
                await User.filter(id=user.id).update(linuxdo_level=identity.level)
                user.linuxdo_level = identity.level
            return user
        if not options.get_bool("RegisterEnabled"):
            raise ApiError("registration_disabled")
        email = await usable_email(identity.email)
        username = await unique_username(identity.provider)
        display_name = identity.display_name.strip()[:DISPLAY_NAME_MAX] or username
        return await create_account(options, NewAccount(username=username, display_name=display_name, email=email,
                                                        aff_code=aff_code, identity=_identity_fields(identity)))


async def usable_email(address: str) -> str:
    """The e-mail address a provider gave, for a new account: normalised, or "" when it is not a valid
    address or another account already has it (the account is made without one)."""
    if not address:
        return ""
    try:
        candidate = normalize_email(address)
    except ApiError:
        return ""
    return candidate if candidate and not await email_in_use(candidate) else ""


async def bind_identity(services: Services, user: User, identity: Identity) -> None:
    """Bind the identity to the caller; refused when another account (even a deleted one) holds it."""
    field_name, label, _ = PROVIDERS[identity.provider]
    async with identity_lock(services, identity.provider, identity.id):
        if await User.filter(**{field_name: identity.id}).exclude(id=user.id).exists():
            raise ApiError("oauth_identity_bound", provider=label)
        await User.filter(id=user.id).update(**_identity_fields(identity))


