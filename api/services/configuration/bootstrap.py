"""First start: the root account."""
from __future__ import annotations

import logging

from tortoise.exceptions import IntegrityError

from api.services.passwords import hash_password
from models import User
from models.enums import Role

log = logging.getLogger(__name__)
DEFAULT_ROOT_USERNAME = "root"
DEFAULT_ROOT_PASSWORD = "123456"


async def ensure_root_user(initial_password: str = "") -> bool:
    """Create `root` when no root account exists; True when it was created now."""
    if await User.filter(role=Role.ROOT).exists():
        return False
    password = initial_password or DEFAULT_ROOT_PASSWORD
    try:
        await User.create(username=DEFAULT_ROOT_USERNAME, display_name="Root User", role=int(Role.ROOT),
                          password=await hash_password(password), quota=100_000_000)
    except IntegrityError:
        return False  # another process created it first
    log.info("created the root account%s", "" if initial_password else " with the default password: change it")
    return True
