"""Two-factor login with an authenticator app (TOTP, RFC 6238: SHA-1, 6 digits, 30 s steps, one
step of drift either way) and ten single-use backup codes.

- The secret is sealed at rest with AES-GCM under a key derived (HKDF-SHA256) from SESSION_SECRET,
  bound to its user id: a database dump or a row copied onto another user gives no code. Nothing
  else in the database is encrypted (channel keys and OAuth secrets are stored as given), so the
  process's one secret serves; rotating SESSION_SECRET makes the sealed secrets unreadable: their
  users log in with a backup code (hashed without that key) or are reset by an administrator.
- A code is accepted once: `last_step` moves forward by a conditional UPDATE, so the same code (or
  one of an earlier step) is refused afterwards, even by another process at the same moment.
- Backup codes (XXXX-XXXX-XXXX, 60 random bits each) are stored as SHA-256 of their normalised text
  and spent by a conditional UPDATE: each works once, looked up by its hash without a bcrypt per code.
"""
from __future__ import annotations

import base64
import hashlib
import os
import secrets
import time
from dataclasses import dataclass

import pyotp
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from tortoise.expressions import Subquery
from tortoise.transactions import in_transaction

from api.errors import ApiError
from api.services.configuration.options import OptionsService
from models import TwoFactor, TwoFactorBackupCode, User
from models.enums import Role

STEP = 30  # seconds of a TOTP step
DIGITS = 6
DRIFT = 1  # steps accepted either side of now
BACKUP_CODES = 10
_BACKUP_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # 32 symbols, no 0/O or 1/I look-alikes
_BACKUP_GROUPS = 3  # of 4 symbols: 60 bits
REQUIRED_OPTION = "TwoFactorRequiredForAdminsEnabled"
_SEAL_VERSION = "v1"

clock = time.time  # the codes' "now"; tests move it


# -- sealing the secret ----------------------------------------------------------------------------
def sealing_key(session_secret: str) -> bytes:
    """The AES-256 key of the sealed secrets, derived from SESSION_SECRET for this use only."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                info=b"two-factor secret sealing").derive(session_secret.encode())


def _aad(user_id: int) -> bytes:
    return f"two-factor:{user_id}".encode()


def seal(key: bytes, user_id: int, secret: str) -> str:
    nonce = os.urandom(12)
    sealed = AESGCM(key).encrypt(nonce, secret.encode(), _aad(user_id))
    return f"{_SEAL_VERSION}.{base64.urlsafe_b64encode(nonce + sealed).decode()}"


def unseal(key: bytes, user_id: int, text: str) -> str | None:
    """The secret, or None when it was sealed under another key (SESSION_SECRET rotated) or for
    another user."""
    version, _, payload = text.partition(".")
    if version != _SEAL_VERSION:
        return None
    try:
        raw = base64.urlsafe_b64decode(payload.encode())
        return AESGCM(key).decrypt(raw[:12], raw[12:], _aad(user_id)).decode()
    except (InvalidTag, ValueError):
        return None


# -- codes -----------------------------------------------------------------------------------------
def totp(secret: str) -> pyotp.TOTP:
    return pyotp.TOTP(secret, digits=DIGITS, digest=hashlib.sha1, interval=STEP)


def provisioning_uri(secret: str, username: str, issuer: str) -> str:
    """The otpauth:// URI an authenticator app reads from the QR code."""
    return totp(secret).provisioning_uri(name=username, issuer_name=issuer or None)


def clean_totp(code: object) -> str | None:
    """Six digits (spaces ignored), or None."""
    if not isinstance(code, str):
        return None
    digits = code.replace(" ", "").strip()
    return digits if len(digits) == DIGITS and digits.isascii() and digits.isdigit() else None


def normalize_backup(code: str) -> str:
    return "".join(ch for ch in code.upper() if ch.isalnum())


def new_backup_codes() -> list[str]:
    codes = []
    for _ in range(BACKUP_CODES):
        symbols = "".join(secrets.choice(_BACKUP_ALPHABET) for _ in range(4 * _BACKUP_GROUPS))
        codes.append("-".join(symbols[i:i + 4] for i in range(0, len(symbols), 4)))
    return codes


def backup_hash(code: str) -> str:
    return hashlib.sha256(normalize_backup(code).encode()).hexdigest()


def matching_step(secret: str, code: str, now: float) -> int | None:
    """The step within the drift window whose code this is (the latest first), or None."""
    otp = totp(secret)
    current = int(now // STEP)
    for step in range(current + DRIFT, current - DRIFT - 1, -1):
        if pyotp.utils.strings_equal(otp.at(step * STEP), code):
            return step
    return None


async def _accept_totp(row: TwoFactor, key: bytes, code: str) -> bool:
    secret = unseal(key, row.user_id, row.secret)
    if secret is None:
        return False
    step = matching_step(secret, code, clock())
    if step is None:
        return False
    # Atomic: two requests with the same code (or a code of an earlier step) cannot both pass.
    moved = await TwoFactor.filter(id=row.id, last_step__lt=step).update(last_step=step)
    if moved:
        row.last_step = step
    return bool(moved)


async def _spend_backup(user_id: int, code: str) -> bool:
    cleaned = normalize_backup(code)
    if len(cleaned) != 4 * _BACKUP_GROUPS:
        return False
    spent = await TwoFactorBackupCode.filter(user_id=user_id, code_hash=backup_hash(cleaned),
                                             used_time=None).update(used_time=int(clock()))
    return bool(spent)


# -- state -----------------------------------------------------------------------------------------
async def enabled_row(user_id: int) -> TwoFactor | None:
    return await TwoFactor.filter(user_id=user_id, is_enabled=True).first()


async def is_enabled(user_id: int) -> bool:
    return await TwoFactor.filter(user_id=user_id, is_enabled=True).exists()


def required_for(options: OptionsService, user: User) -> bool:
    """Whether the option makes two-factor login compulsory for this user (admins and root)."""
    return user.role >= Role.ADMIN and options.get_bool(REQUIRED_OPTION)


async def status(user_id: int) -> dict[str, object]:
    """new-api's status: `enabled`, `locked` (never: waits are per source, not a lock of the
    account) and, when enabled, `backup_codes_remaining`."""
    answer: dict[str, object] = {"enabled": False, "locked": False}
    if await is_enabled(user_id):
        answer["enabled"] = True
        answer["backup_codes_remaining"] = await TwoFactorBackupCode.filter(user_id=user_id,
                                                                           used_time=None).count()
    return answer


@dataclass(frozen=True, slots=True)
class Setup:
    secret: str
    uri: str
    backup_codes: list[str]


async def begin_setup(key: bytes, user: User, issuer: str) -> Setup:
    """A new secret and backup codes, kept pending (not enabled) until a code of it is confirmed;
    a previous pending setup is replaced."""
    if await is_enabled(user.id):
        raise ApiError("two_factor_already_enabled")
    secret = pyotp.random_base32()  # 160 bits, as RFC 4226 recommends
    codes = new_backup_codes()
    async with in_transaction():
        await TwoFactor.filter(user_id=user.id, is_enabled=False).delete()
        await TwoFactorBackupCode.filter(user_id=user.id).delete()
        await TwoFactor.create(user_id=user.id, secret=seal(key, user.id, secret), is_enabled=False)
        await TwoFactorBackupCode.bulk_create(
            [TwoFactorBackupCode(user_id=user.id, code_hash=backup_hash(c)) for c in codes])
    return Setup(secret, provisioning_uri(secret, user.username, issuer), codes)


async def confirm_setup(key: bytes, user: User, code: object) -> None:
    """Enable the pending setup with a code of its authenticator (the code is spent)."""
    if await is_enabled(user.id):
        raise ApiError("two_factor_already_enabled")
    row = await TwoFactor.filter(user_id=user.id, is_enabled=False).first()
    if row is None:
        raise ApiError("two_factor_setup_first")
    digits = clean_totp(code)
    if digits is None:
        raise ApiError("two_factor_code_format")
    if not await _accept_totp(row, key, digits):
        raise ApiError("two_factor_code_invalid")
    moved = await TwoFactor.filter(id=row.id, is_enabled=False).update(is_enabled=True, enabled_time=int(clock()))
    if not moved:
        raise ApiError("two_factor_already_enabled")


async def check_code(key: bytes, user_id: int, code: object, backup: bool = True) -> bool:
    """A TOTP code of the user's enabled authenticator, or (with `backup`) one of their unused
    backup codes; True spends it. False when neither (or 2FA is off)."""
    if not isinstance(code, str) or not code.strip() or len(code) > 64:
        return False
    row = await enabled_row(user_id)
    if row is None:
        return False
    digits = clean_totp(code)
    if digits is not None:
        return await _accept_totp(row, key, digits)
    return backup and await _spend_backup(user_id, code)


async def new_backup_set(user_id: int) -> list[str]:
    """Ten new backup codes in place of every earlier one (used or not); shown once."""
    if not await is_enabled(user_id):
        raise ApiError("two_factor_not_enabled")
    codes = new_backup_codes()
    async with in_transaction():
        await TwoFactorBackupCode.filter(user_id=user_id).delete()
        await TwoFactorBackupCode.bulk_create(
            [TwoFactorBackupCode(user_id=user_id, code_hash=backup_hash(c)) for c in codes])
    return codes


async def remove(user_id: int) -> bool:
    """Two-factor login off for the user (its secret and backup codes gone); False when it was off."""
    async with in_transaction():
        was_on = await TwoFactor.filter(user_id=user_id, is_enabled=True).exists()
        await TwoFactor.filter(user_id=user_id).delete()
        await TwoFactorBackupCode.filter(user_id=user_id).delete()
    return was_on


async def stats() -> dict[str, object]:
    """new-api's admin figures: users, users with 2FA on, and the share as text."""
    total = await User.filter(deleted_at=None).count()
    live = Subquery(User.filter(deleted_at=None).values("id"))
    enabled = await TwoFactor.filter(is_enabled=True, user_id__in=live).count()
    rate = enabled / total * 100 if total else 0.0
    return {"total_users": total, "enabled_users": enabled, "enabled_rate": f"{rate:.1f}%"}

