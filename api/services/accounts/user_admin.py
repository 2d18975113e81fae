"""Administration of users by admins and root: who may act on whom, creating, editing (quota,
group, role, password), enabling, disabling, promoting, deleting, and the user list."""
from __future__ import annotations

from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q
from tortoise.transactions import in_transaction

from api.errors import ApiError
from api.services.accounts.deps import Services
from api.services.accounts.users import (
    NewAccount,
    check_display_name,
    check_password,
    check_username,
    create_account,
    email_in_use,
    format_quota,
    group_names,
    normalize_email,
    soft_delete,
    user_changed,
)
from api.services.billing.balances import adjust_user
from api.services.budgets.limits import normalise as normalise_limits
from api.services.columns import text_filter
from api.services.configuration.options import OptionsService
from api.services.logs import log_event
from api.services.params import MAX_ID, id_value, is_integer_text, quota_value
from api.services.passwords import hash_password
from models import Log, User
from models.enums import LogType, Role, UserStatus


def check_may_manage(actor: User, target: User) -> None:
    """An admin acts only on users of a lower role; the super admin on everyone."""
    if actor.role < Role.ROOT and target.role >= actor.role:
        raise ApiError("user_same_or_higher_role")


async def get_managed_user(actor: User, user_id: object) -> User:
    if isinstance(user_id, bool) or not isinstance(user_id, int | str):
        raise ApiError("invalid_param", name="id")
    uid = user_id if isinstance(user_id, int) else id_value(user_id.strip())
    if uid is None and isinstance(user_id, str) and not is_integer_text(user_id.strip()):
        raise ApiError("invalid_param", name="id")
    target = await User.filter(id=uid).first() if uid is not None and 0 < uid <= MAX_ID else None
    if target is None:
        raise ApiError("user_not_found")
    check_may_manage(actor, target)
    return target


async def admin_create_user(options: OptionsService, actor: User, body: dict[str, Any]) -> User:
    username = check_username(body.get("username"))
    password = check_password(body.get("password"))
    display_name = check_display_name(body.get("display_name"), username)
    return await create_account(options, NewAccount(username=username, password=password,
                                                    display_name=display_name))


async def admin_update_user(services: Services, actor: User, body: dict[str, Any]) -> User:
    """Edit a user; the quota is set directly (and the live balance moved by the difference)."""
    options = services.options
    target = await get_managed_user(actor, body.get("id"))
    if target.deleted_at is not None:
        raise ApiError("user_deleted")
    updates: dict[str, Any] = {}
    if "username" in body and body["username"] != target.username:
        username = check_username(body["username"])
        if username != target.username:
            if await User.filter(username=username).exclude(id=target.id).exists():
                raise ApiError("username_taken")
            updates["username"] = username
    if "display_name" in body and body["display_name"] != target.display_name:
        updates["display_name"] = check_display_name(body["display_name"], updates.get("username", target.username))
    if body.get("password") not in (None, ""):
        updates["password"] = await hash_password(check_password(body["password"]))
        updates["access_token"] = None  # an admin reset ends the system access token too
    if "group" in body and body["group"] != target.group:
        group = body["group"]
        if not isinstance(group, str) or group not in group_names(options):
            raise ApiError("group_unknown", group=str(group))
        updates["group"] = group
    if "email" in body and body["email"] not in (None, target.email):
        if body["email"] == "":
            updates["email"] = ""
        else:
            email = normalize_email(body["email"])
            if email != target.email:
                if await email_in_use(email, except_id=target.id):
                    raise ApiError("email_taken")
                updates["email"] = email
    if "limits" in body:  # limits over time; the message names the entry and field refused
        limits = normalise_limits(body["limits"])
        if limits != target.limits:
            updates["limits"] = limits
    new_quota = quota_value(body["quota"]) if body.get("quota") is not None else None
    delta = 0
    try:
        async with in_transaction():
            current = await User.select_for_update().get(id=target.id)
            if new_quota is not None and new_quota != current.quota:
                delta = new_quota - current.quota
                updates["quota"] = new_quota
                await Log.create(user_id=target.id, username=current.username, type=int(LogType.MANAGE),
                                 quota=delta, other=log_event("admin_quota", admin=actor.username,
                                                              old=current.quota, new=new_quota),
                                 content=f"Admin {actor.username} changed the quota from "
                                         f"{format_quota(options, current.quota)} to "
                                         f"{format_quota(options, new_quota)}")
            if updates:
                await User.filter(id=target.id).update(**updates)
    except IntegrityError:
        raise ApiError("username_taken") from None
    await adjust_user(services.store, target.id, delta)
    if updates:
        await user_changed(services, target.id, revoke_sessions="password" in updates)
    return await User.get(id=target.id)


MANAGE_ACTIONS = ("promote", "demote", "disable", "enable", "delete")


async def manage_user(services: Services, actor: User, user_id: object, action: object) -> User:
    """promote / demote / disable / enable / delete, with the role rules of the console."""
    if action not in MANAGE_ACTIONS:
        raise ApiError("unknown_action", action=str(action))
    target = await get_managed_user(actor, user_id)
    if target.deleted_at is not None:
        raise ApiError("user_deleted")
    revoke = False
    if action == "promote":
        if actor.role < Role.ROOT:
            raise ApiError("only_root_promotes")
        if target.role >= Role.ADMIN:
            raise ApiError("already_admin")
        changes: dict[str, Any] = {"role": int(Role.ADMIN)}
    elif action == "demote":
        if target.role >= Role.ROOT:
            raise ApiError("root_cannot_demote")
        if target.role <= Role.USER:
            raise ApiError("already_common")
        changes = {"role": int(Role.USER)}
    elif action == "disable":
        if target.role >= Role.ROOT:
            raise ApiError("root_cannot_disable")
        changes, revoke = {"status": int(UserStatus.DISABLED)}, True
    elif action == "enable":
        changes = {"status": int(UserStatus.ENABLED)}
    else:
        if target.role >= Role.ROOT:
            raise ApiError("root_cannot_delete")
        await soft_delete(services, target.id)
        return await User.get(id=target.id)
    await User.filter(id=target.id).update(**changes)
    await user_changed(services, target.id, revoke_sessions=revoke)
    return await User.get(id=target.id)


async def search_users(keyword: str, group: str, offset: int, limit: int) -> tuple[list[User], int]:
    query = User.all()
    keyword = keyword.strip()
    if keyword:
        match = (text_filter(User, "username", keyword, "icontains")
                 | text_filter(User, "display_name", keyword, "icontains")
                 | text_filter(User, "email", keyword, "icontains"))
        if (row_id := id_value(keyword)) is not None:
            match |= Q(id=row_id)
        query = query.filter(match)
    if group.strip():
        query = query.filter(text_filter(User, "group", group.strip()))
    total = await query.count()
    users = await query.order_by("-id").offset(offset).limit(limit)
    return users, total


