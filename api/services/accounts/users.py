"""Accounts: registration, profile rules, administration, invite earnings and access tokens.

Every credit to a user (new-user quota, invitee and inviter bonuses) is written in the same
transaction as its log row. Every committed change of a user's quota outside the relay is applied to
the live balance (api.services.billing.balances); every change of status, role, group or deletion is
published as a "user" event so the relay's caches drop the user at once, and disabling or deleting a
user ends its sessions.
"""
from __future__ import annotations

import contextlib
import re
import secrets
import unicodedata
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import F, Q, Subquery
from tortoise.transactions import in_transaction

from api.errors import ApiError
from api.services import locks, redis_keys
from api.services.accounts.deps import Services
from api.services.billing import pricing
from api.services.billing.balances import adjust_user
from api.services.configuration.options import OptionsService
from api.services.logs import log_event
from api.services.params import quota_value
from api.services.passwords import hash_password, random_string, sha256_hex, verify_password
from models import Ability, Channel, Log, User
from models.base import now
from models.enums import ChannelStatus, LogType, Role, UserStatus

USERNAME_MAX = 20
DISPLAY_NAME_MAX = 20
PASSWORD_MIN = 8
PASSWORD_MAX = 64  # bcrypt reads 72 bytes at most; a longer secret would be silently cut
EMAIL_MAX = 128
AFF_CODE_LENGTH = 6
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")

# Third-party identities: provider → (User field, display name, option that enables it).
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "github": ("github_id", "GitHub", "GitHubOAuthEnabled"),
    "linuxdo": ("linuxdo_id", "LINUX DO", "LinuxDoOAuthEnabled"),
    "wechat": ("wechat_id", "WeChat", "WeChatAuthEnabled"),
    "telegram": ("telegram_id", "Telegram", "TelegramOAuthEnabled"),
}


# -- validation ------------------------------------------------------------------------------------
def check_username(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ApiError("login_fields_required")
    username = value.strip()
    if len(username) > USERNAME_MAX:
        raise ApiError("username_too_long", max=USERNAME_MAX)
    if any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in username):
        raise ApiError("username_invalid")
    return username


def check_display_name(value: object, fallback: str) -> str:
    if value is None or value == "":
        return fallback
    if not isinstance(value, str):
        raise ApiError("invalid_param", name="display_name")
    name = value.strip() or fallback
    if len(name) > DISPLAY_NAME_MAX:
        raise ApiError("display_name_too_long", max=DISPLAY_NAME_MAX)
    return name


def check_password(value: object, again: object = None) -> str:
    if not isinstance(value, str) or value == "":
        raise ApiError("login_fields_required")
    if len(value) < PASSWORD_MIN:
        raise ApiError("password_too_short", min=PASSWORD_MIN)
    if len(value) > PASSWORD_MAX or len(value.encode()) > 72:
        raise ApiError("password_too_long", max=PASSWORD_MAX)
    if again is not None and again != value:
        raise ApiError("passwords_differ")
    return value


def normalize_email(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ApiError("email_required")
    email = value.strip().lower()
    if len(email) > EMAIL_MAX or not _EMAIL_RE.match(email):
        raise ApiError("email_invalid")
    return email


def check_email_allowed(options: OptionsService, value: object) -> str:
    """A normalised address the registration rules accept (domain whitelist, alias restriction)."""
    email = normalize_email(value)
    local, domain = email.rsplit("@", 1)
    if options.get_bool("EmailDomainRestrictionEnabled"):
        allowed = [d.strip().lower() for d in options.get("EmailDomainWhitelist").split(",") if d.strip()]
        if domain not in allowed:
            raise ApiError("email_domain_not_allowed", domains=", ".join(allowed))
    if options.get_bool("EmailAliasRestrictionEnabled") and "+" in local:
        raise ApiError("email_alias_not_allowed")
    return email


async def email_in_use(email: str, except_id: int = 0) -> bool:
    """Deleted accounts keep their addresses, like their usernames."""
    return await User.filter(email=email).exclude(id=except_id).exists()


def format_quota(options: OptionsService, quota: int) -> str:
    if options.get_bool("DisplayInCurrencyEnabled"):
        per_unit = options.get_float("QuotaPerUnit") or 500000
        return f"${quota / per_unit:.6f}"
    return f"{quota} quota"


def group_names(options: OptionsService) -> list[str]:
    ratios = options.get_json("GroupRatio")
    return list(ratios) if isinstance(ratios, dict) else []


# -- side effects shared by the mutations --------------------------------------------------------
async def user_changed(services: Services, user_id: int, *, revoke_sessions: bool = False) -> None:
    """After a committed change of status, role, group, deletion or password."""
    if revoke_sessions:
        await services.sessions.revoke_user(user_id)
    await services.events.publish("user", id=user_id)


@contextlib.asynccontextmanager
async def identity_lock(services: Services, provider: str, ident: str) -> AsyncIterator[None]:
    """One request at a time per third-party identity: no duplicate account or double binding."""
    store = services.store
    key = redis_keys.lock(store, "identity", provider, sha256_hex(ident)[:32])
    token = await locks.acquire(store, key, 30)
    if token is None:
        raise ApiError("oauth_identity_busy")
    try:
        yield
    finally:
        await locks.release(store, key, token)


# -- registration ----------------------------------------------------------------------------------
@dataclass
class NewAccount:
    username: str
    password: str = ""  # clear text; hashed here ("" = no password login, e.g. OAuth accounts)
    display_name: str = ""
    email: str = ""
    aff_code: str = ""
    identity: dict[str, Any] = field(default_factory=dict)  # e.g. {"github_id": "42"}


async def find_inviter(aff_code: object) -> User | None:
    if not isinstance(aff_code, str) or not aff_code.strip():
        return None
    return await User.filter(aff_code=aff_code.strip(), deleted_at=None).first()


async def create_account(options: OptionsService, account: NewAccount) -> User:
    """Create a user with its new-user and invite credits, each with a log row, in one transaction."""
    if await User.filter(username=account.username).exists():
        raise ApiError("username_taken")
    inviter = await find_inviter(account.aff_code)
    password_hash = await hash_password(account.password) if account.password else ""
    new_user_quota = max(options.get_int("QuotaForNewUser"), 0)
    invitee_quota = max(options.get_int("QuotaForInvitee"), 0) if inviter else 0
    inviter_quota = max(options.get_int("QuotaForInviter"), 0) if inviter else 0
    try:
        async with in_transaction():
            user = await User.create(
                username=account.username, password=password_hash,
                display_name=account.display_name or account.username, email=account.email,
                role=int(Role.USER), status=int(UserStatus.ENABLED), quota=new_user_quota + invitee_quota,
                inviter_id=inviter.id if inviter else 0, **account.identity)
            logs = []
            if new_user_quota:
                logs.append(Log(user_id=user.id, username=user.username, type=int(LogType.SYSTEM),
                                quota=new_user_quota, other=log_event("new_user_bonus", quota=new_user_quota),
                                content=f"New user bonus: {format_quota(options, new_user_quota)}"))
            if inviter is not None:
                await User.filter(id=inviter.id).update(
                    aff_count=F("aff_count") + 1, aff_quota=F("aff_quota") + inviter_quota,
                    aff_history_quota=F("aff_history_quota") + inviter_quota)
                if invitee_quota:
                    logs.append(Log(user_id=user.id, username=user.username, type=int(LogType.SYSTEM),
                                    quota=invitee_quota, other=log_event("invitee_bonus", quota=invitee_quota),
                                    content=f"Invite code bonus: {format_quota(options, invitee_quota)}"))
                if inviter_quota:
                    logs.append(Log(user_id=inviter.id, username=inviter.username, type=int(LogType.SYSTEM),
                                    quota=inviter_quota,
                                    other=log_event("inviter_bonus", username=user.username, quota=inviter_quota),
                                    content=f"Invited user {user.username}: "
                                            f"{format_quota(options, inviter_quota)} of invite quota"))
            if logs:
                await Log.bulk_create(logs)
    except IntegrityError:
        raise ApiError("username_taken") from None
    return user


# -- login -----------------------------------------------------------------------------------------
async def login_candidate(identifier: str) -> User | None:
    """The account a password login names: the username matching first, then the e-mail; a live
    account before a deleted one."""
    query = Q(username=identifier)
    if "@" in identifier:
        query |= Q(email=identifier.strip().lower())
    users = await User.filter(query)
    return min(users, key=lambda u: (u.username != identifier, u.deleted_at is not None, u.id), default=None)


async def check_login(user: User | None, password: str) -> User:
    """The user when the password is theirs; ApiError with the reason otherwise. A name that matches
    nobody, or an account without a password, costs the same bcrypt check as a wrong password, so
    neither the answer nor its time tells whether the account exists."""
    hashed = user.password if user is not None and user.password else await _decoy_hash()
    if not await verify_password(password, hashed) or user is None or not user.password:
        raise ApiError("login_failed")
    check_can_log_in(user)
    return user


async def authenticate(identifier: str, password: str) -> User:
    """The user of a password login (username or e-mail); ApiError with the reason otherwise."""
    return await check_login(await login_candidate(identifier), password)


_decoy: list[str] = []


async def _decoy_hash() -> str:
    """A hash of a random password at the current cost, made once per process."""
    if not _decoy:
        _decoy.append(await hash_password(secrets.token_urlsafe(16)))
    return _decoy[0]


def check_can_log_in(user: User) -> None:
    if user.deleted_at is not None:
        raise ApiError("user_deleted")
    if user.status != UserStatus.ENABLED:
        raise ApiError("user_banned")


# -- self-service ----------------------------------------------------------------------------------
async def update_self(services: Services, user: User, body: dict[str, Any]) -> bool:
    """Profile fields and password of the caller; True when the password changed."""
    updates: dict[str, Any] = {}
    if "username" in body and body["username"] not in (None, "", user.username):
        username = check_username(body["username"])
        if username != user.username:
            if await User.filter(username=username).exclude(id=user.id).exists():
                raise ApiError("username_taken")
            updates["username"] = username
    if "display_name" in body and body["display_name"] not in (None, user.display_name):
        updates["display_name"] = check_display_name(body["display_name"], user.username)
    new_password = body.get("password")
    password_changed = False
    if new_password not in (None, ""):
        check_password(new_password, body.get("password2"))
        if user.password:
            original = body.get("original_password")
            if not isinstance(original, str) or not original:
                raise ApiError("original_password_required")
            if not await verify_password(original, user.password):
                raise ApiError("original_password_wrong")
        updates["password"] = await hash_password(new_password)
        updates["access_token"] = None  # a new password ends the system access token too
        password_changed = True
    if not updates:
        return False
    try:
        await User.filter(id=user.id).update(**updates)
    except IntegrityError:
        raise ApiError("username_taken") from None
    await user_changed(services, user.id, revoke_sessions=password_changed)
    return password_changed


async def soft_delete(services: Services, user_id: int) -> int:
    """Deregister: the row stays (username and identities reserved), every credential stops at once."""
    deleted_at = now()
    await User.filter(id=user_id, deleted_at=None).update(deleted_at=deleted_at, access_token=None)
    await user_changed(services, user_id, revoke_sessions=True)
    return deleted_at


async def delete_self(services: Services, user: User) -> None:
    options = services.options
    if user.role >= Role.ROOT:
        raise ApiError("root_cannot_delete_self")
    if not options.get_bool("UserSelfDeletionEnabled"):
        raise ApiError("self_deletion_disabled")
    await soft_delete(services, user.id)


async def new_access_token(user: User) -> str:
    """A fresh system access token; only its hash is stored, so the previous one stops working."""
    token = secrets.token_urlsafe(24)
    await User.filter(id=user.id).update(access_token=sha256_hex(token))
    return token


async def aff_code_of(user: User) -> str:
    """The invite code, created on first use (a conditional write: concurrent calls agree)."""
    if user.aff_code:
        return user.aff_code
    for _ in range(10):
        code = random_string(AFF_CODE_LENGTH)
        try:
            await User.filter(id=user.id, aff_code=None).update(aff_code=code)
        except IntegrityError:
            continue  # another user has this code
        row = await User.filter(id=user.id).first()
        if row is not None and row.aff_code:
            user.aff_code = row.aff_code
            return row.aff_code
    raise ApiError("internal_error")


async def transfer_aff_quota(services: Services, user: User, amount: object) -> int:
    """Move invite earnings into quota; one conditional UPDATE, so aff_quota never goes negative."""
    options = services.options
    minimum = max(int(options.get_float("QuotaPerUnit")), 1)
    quota = quota_value(amount)
    if quota < minimum:
        raise ApiError("aff_transfer_min", min=format_quota(options, minimum))
    async with in_transaction():
        moved = await User.filter(id=user.id, aff_quota__gte=quota).update(
            aff_quota=F("aff_quota") - quota, quota=F("quota") + quota)
        if not moved:
            raise ApiError("aff_insufficient")
        await Log.create(user_id=user.id, username=user.username, type=int(LogType.SYSTEM), quota=quota,
                         other=log_event("aff_transfer", quota=quota),
                         content=f"Invite quota transferred to balance: {format_quota(options, quota)}")
    await adjust_user(services.store, user.id, quota)
    return quota


async def usable_models(group: str, options: OptionsService) -> list[str]:
    """Models of the group served by at least one enabled channel and priced (the relay refuses the others)."""
    enabled = Channel.filter(status=int(ChannelStatus.ENABLED)).values("id")
    rows = (await Ability.filter(group=group, enabled=True, channel_id__in=Subquery(enabled))
            .distinct().values_list("model", flat=True))
    return sorted({str(model) for model in rows if pricing.is_priced(options, str(model))})


def selectable_groups(options: OptionsService, user: User) -> dict[str, dict[str, Any]]:
    """Groups the user may pick for a key: UserUsableGroups plus the user's own, with ratios."""
    usable = options.get_json("UserUsableGroups")
    usable = usable if isinstance(usable, dict) else {}
    ratios = options.get_json("GroupRatio")
    ratios = ratios if isinstance(ratios, dict) else {}
    groups = {name: str(desc) for name, desc in usable.items()}
    groups.setdefault(user.group, user.group)
    return {name: {"ratio": ratios.get(name, 1), "desc": desc} for name, desc in groups.items()}


def public_groups(options: OptionsService) -> dict[str, str]:
    """Groups anyone may pick (in both UserUsableGroups and GroupRatio): name → description."""
    usable = options.get_json("UserUsableGroups")
    ratios = options.get_json("GroupRatio")
    if not isinstance(usable, dict) or not isinstance(ratios, dict):
        return {}
    return {name: str(desc) for name, desc in usable.items() if name in ratios}


async def bind_email(services: Services, user: User, email: str) -> None:
    async with identity_lock(services, "email", email):
        if await email_in_use(email, except_id=user.id):
            raise ApiError("email_taken")
        await User.filter(id=user.id).update(email=email)
