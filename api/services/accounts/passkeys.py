"""Passkeys (WebAuthn): registering a user's authenticators, logging in with one, proving oneself again.

The ceremonies are py_webauthn's (`webauthn`): it builds the options the browser's
`navigator.credentials` takes and checks the answers (CBOR, COSE keys, clientDataJSON, the rp id hash,
the flags, the signature). What this module adds is the relying party's part:

- the relying party is the `ServerAddress` option: its host is the rp id, scheme://host[:port] the one
  origin accepted (no ServerAddress, no passkeys: a clear error). A console opened at another address
  gets answers made for another site, refused;
- each ceremony's challenge is kept in Redis for CHALLENGE_TTL under the purpose and a binding (the
  caller's console session), taken with GETDEL when the answer comes: used once, by that browser only,
  and a second begin replaces the first;
- user verification (PIN, fingerprint, face) is required: a passkey is a strong factor by itself;
- the signature counter: an answer whose counter is not above the stored one (unless both are 0: the
  authenticator counts nothing, as synced passkeys do) is refused as a possible clone and the passkey
  marked; the new counter is stored with a conditional UPDATE, so two answers with one counter
  cannot both pass.

Login is discoverable (no name: the authenticator offers the site's passkeys) or, given a username,
limited to that user's passkeys, as new-api's console and its scripts do it.
"""
from __future__ import annotations

import ipaddress
import logging
import time
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
from tortoise.exceptions import IntegrityError
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import options_to_json_dict
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from api.errors import ApiError
from api.services import redis_keys
from api.services.accounts import passkey_codec as codec
from api.services.accounts.user_admin import get_managed_user
from api.services.configuration.options import OptionsService
from api.services.store import Store
from models import PasskeyCredential, User
from models.enums import UserStatus

log = logging.getLogger(__name__)

CHALLENGE_TTL = 300  # seconds a begun ceremony may take
MAX_PER_USER = 10
NAME_MAX = 64
REGISTER, LOGIN, VERIFY = "register", "login", "verify"
OPTION = "PasskeyLoginEnabled"
_MAX_ID_BYTES = 380  # what the credential_id column holds once in base64 (512 characters)
# What the library's refusals say, sorted into messages a user can act on (its texts are English only).
_WRONG_SITE = ("origin", "RP ID")
_NOT_VERIFIED = ("User verification is required",)
# A malformed answer surfaces from the parsers as one of these as well (bad base64, CBOR, types).
_MALFORMED = (WebAuthnException, ValueError, TypeError, KeyError, AttributeError, IndexError)

clock = time.time  # the challenges' "now"; tests move it


@dataclass(frozen=True, slots=True)
class RelyingParty:
    id: str  # the host of ServerAddress
    origin: str  # scheme://host[:port]
    name: str  # SystemName, shown by the authenticator


@dataclass(frozen=True, slots=True)
class Pending:
    """A begun ceremony: its challenge, for whom (0: anyone, -1: nobody), the name to register under."""

    challenge: bytes
    user_id: int
    issued: float
    name: str = ""


def require_enabled(options: OptionsService) -> None:
    if not options.get_bool(OPTION):
        raise ApiError("passkey_disabled")


def relying_party(options: OptionsService) -> RelyingParty:
    """The relying party ServerAddress names; ApiError when it is unset or cannot be one."""
    address = options.get("ServerAddress").strip()
    if not address:
        raise ApiError("passkey_server_address_required")
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        raise ApiError("passkey_server_address_invalid", address=address) from None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host or _is_ip(host):
        raise ApiError("passkey_server_address_invalid", address=address)
    default = 443 if parts.scheme == "https" else 80
    origin = f"{parts.scheme}://{host}" + (f":{port}" if port is not None and port != default else "")
    return RelyingParty(host, origin, options.get("SystemName") or host)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def check_name(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ApiError("invalid_param", name="name")
    name = value.strip()
    if len(name) > NAME_MAX:
        raise ApiError("passkey_name_too_long", max=NAME_MAX)
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise ApiError("passkey_name_invalid")
    return name


# -- challenges ------------------------------------------------------------------------------------
async def _save(store: Store, purpose: str, binding: str, pending: Pending) -> None:
    value = orjson.dumps({"c": codec.b64url(pending.challenge), "u": pending.user_id, "t": pending.issued,
                          "n": pending.name})
    await store.redis.set(redis_keys.passkey_challenge(store, purpose, binding), value, ex=CHALLENGE_TTL)


async def _take(store: Store, purpose: str, binding: str) -> Pending:
    """The ceremony begun under this purpose and binding, deleted as it is read (GETDEL: once only)."""
    raw = await store.redis.getdel(redis_keys.passkey_challenge(store, purpose, binding))
    if raw is None:
        raise ApiError("passkey_challenge_missing")
    data = orjson.loads(raw)
    pending = Pending(codec.from_b64url(data["c"]), int(data["u"]), float(data["t"]), str(data.get("n", "")))
    if clock() - pending.issued > CHALLENGE_TTL:
        raise ApiError("passkey_challenge_expired")
    return pending


# -- registration ----------------------------------------------------------------------------------
async def registration_options(store: Store, options: OptionsService, user: User, binding: str,
                               name: object) -> dict[str, Any]:
    """Begin registering a passkey for `user`: the options for navigator.credentials.create()."""
    require_enabled(options)
    rp = relying_party(options)
    label = check_name(name)
    existing = await PasskeyCredential.filter(user_id=user.id).values_list("credential_id", "transports")
    if len(existing) >= MAX_PER_USER:
        raise ApiError("passkey_limit", max=MAX_PER_USER)
    created = generate_registration_options(
        rp_id=rp.id, rp_name=rp.name, user_name=user.username, user_id=codec.user_handle(user.id),
        user_display_name=user.display_name or user.username, timeout=CHALLENGE_TTL * 1000,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.REQUIRED),
        exclude_credentials=[codec.descriptor(cid, transports) for cid, transports in existing])
    await _save(store, REGISTER, binding, Pending(created.challenge, user.id, clock(), label))
    return {"publicKey": options_to_json_dict(created)}


async def register(store: Store, options: OptionsService, user: User, binding: str,
                   credential: object) -> PasskeyCredential:
    """Finish registering: check the authenticator's answer to the challenge begun by this session."""
    require_enabled(options)
    rp = relying_party(options)
    pending = await _take(store, REGISTER, binding)
    if pending.user_id != user.id:
        raise ApiError("passkey_challenge_missing")
    if not isinstance(credential, dict):
        raise ApiError("passkey_response_invalid")
    try:
        verified = verify_registration_response(
            credential=credential, expected_challenge=pending.challenge, expected_rp_id=rp.id,
            expected_origin=rp.origin, require_user_verification=True)
    except _MALFORMED as exc:
        raise _refusal(exc, rp, "passkey_register_failed") from exc
    count = await PasskeyCredential.filter(user_id=user.id).count()
    if count >= MAX_PER_USER:
        raise ApiError("passkey_limit", max=MAX_PER_USER)
    credential_id = codec.b64(verified.credential_id)
    if len(verified.credential_id) > _MAX_ID_BYTES:
        raise ApiError("passkey_response_invalid")
    if await PasskeyCredential.filter(credential_id=credential_id).exists():
        raise ApiError("passkey_already_registered")
    flags = codec.flags(verified.attestation_object)
    attestation = str(getattr(verified.fmt, "value", verified.fmt))  # the library may give the raw text
    try:
        return await PasskeyCredential.create(
            user_id=user.id, name=pending.name or f"Passkey {count + 1}", credential_id=credential_id,
            public_key=codec.b64(verified.credential_public_key), attestation_type=attestation,
            aaguid=verified.aaguid, sign_count=verified.sign_count, user_verified=verified.user_verified,
            backup_eligible=flags[0], backup_state=flags[1], transports=codec.transports(credential))
    except IntegrityError:
        raise ApiError("passkey_already_registered") from None


# -- login and re-verification ---------------------------------------------------------------------
async def login_options(store: Store, options: OptionsService, binding: str, username: object) -> dict[str, Any]:
    """Begin a passkey login: discoverable without a username; with one, that user's passkeys only
    (a name that is nobody's gets the same answer, and no passkey will do)."""
    require_enabled(options)
    rp = relying_party(options)
    allowed: list[PublicKeyCredentialDescriptor] = []
    user_id = 0
    if isinstance(username, str) and username.strip():
        user = await User.filter(username=username.strip(), deleted_at=None).first()
        user_id = user.id if user is not None else -1
        if user is not None:
            rows = await PasskeyCredential.filter(user_id=user.id).values_list("credential_id", "transports")
            allowed = [codec.descriptor(cid, transports) for cid, transports in rows]
    return await _assertion_options(store, rp, LOGIN, binding, user_id, allowed)


async def login(store: Store, options: OptionsService, binding: str, credential: object) -> User:
    """Finish a passkey login: the user whose passkey signed this session's challenge."""
    require_enabled(options)
    rp = relying_party(options)
    pending = await _take(store, LOGIN, binding)
    stored = await _stored_for(credential)
    if stored is None or (pending.user_id and stored.user_id != pending.user_id):
        raise ApiError("passkey_unknown")
    await _check_assertion(rp, pending, stored, credential)
    user = await User.filter(id=stored.user_id, deleted_at=None).first()
    if user is None or user.status != UserStatus.ENABLED:
        raise ApiError("user_banned")
    return user


async def verification_options(store: Store, options: OptionsService, user: User, binding: str) -> dict[str, Any]:
    """Begin proving again, with one of the user's own passkeys, that the session's user is there."""
    require_enabled(options)
    rp = relying_party(options)
    rows = await PasskeyCredential.filter(user_id=user.id).values_list("credential_id", "transports")
    if not rows:
        raise ApiError("passkey_none")
    allowed = [codec.descriptor(cid, transports) for cid, transports in rows]
    return await _assertion_options(store, rp, VERIFY, binding, user.id, allowed)


async def verify(store: Store, options: OptionsService, user: User, binding: str, credential: object) -> None:
    """Finish the proof: only a passkey of `user` counts (another user's is refused as unknown)."""
    require_enabled(options)
    rp = relying_party(options)
    pending = await _take(store, VERIFY, binding)
    if pending.user_id != user.id:
        raise ApiError("passkey_challenge_missing")
    stored = await _stored_for(credential)
    if stored is None or stored.user_id != user.id:
        raise ApiError("passkey_unknown")
    await _check_assertion(rp, pending, stored, credential)


async def _assertion_options(store: Store, rp: RelyingParty, purpose: str, binding: str, user_id: int,
                             allowed: list[PublicKeyCredentialDescriptor]) -> dict[str, Any]:
    request = generate_authentication_options(
        rp_id=rp.id, timeout=CHALLENGE_TTL * 1000, allow_credentials=allowed,
        user_verification=UserVerificationRequirement.REQUIRED)
    await _save(store, purpose, binding, Pending(request.challenge, user_id, clock()))
    return {"publicKey": options_to_json_dict(request)}


async def _stored_for(credential: object) -> PasskeyCredential | None:
    """The registered passkey an assertion names by its rawId (None for any other)."""
    if not isinstance(credential, dict) or not isinstance(credential.get("rawId"), str):
        raise ApiError("passkey_response_invalid")
    try:
        raw_id = codec.from_b64url(credential["rawId"])
    except ValueError:
        raise ApiError("passkey_response_invalid") from None
    if not raw_id or len(raw_id) > _MAX_ID_BYTES:
        return None
    return await PasskeyCredential.filter(credential_id=codec.b64(raw_id)).first()


async def _check_assertion(rp: RelyingParty, pending: Pending, stored: PasskeyCredential, credential: object) -> None:
    """Signature, challenge, origin, rp id and flags by the library; then the counter, here.

    The library compares counters before it checks the signature; it is given 0 (no comparison) so
    that only a signed answer can mark a passkey as cloned, and the comparison is made below with
    the same rule (WebAuthn §7.2 step 21)."""
    if not isinstance(credential, dict) or not isinstance(response := credential.get("response"), dict):
        raise ApiError("passkey_response_invalid")
    user_handle = response.get("userHandle")
    if isinstance(user_handle, str) and user_handle:
        try:
            handle = codec.from_b64url(user_handle)
        except ValueError:
            raise ApiError("passkey_response_invalid") from None
        if handle != codec.user_handle(stored.user_id):
            raise ApiError("passkey_unknown")
    try:
        checked = verify_authentication_response(
            credential=credential, expected_challenge=pending.challenge, expected_rp_id=rp.id,
            expected_origin=rp.origin, credential_public_key=codec.from_b64(stored.public_key),
            credential_current_sign_count=0, require_user_verification=True)
    except _MALFORMED as exc:
        raise _refusal(exc, rp, "passkey_login_failed") from exc
    new, old = checked.new_sign_count, stored.sign_count
    now = int(clock())
    if (new > 0 or old > 0) and new <= old:
        await _cloned(stored, new)
    if new > 0:
        # Only if nobody stored this counter or a later one meanwhile (two answers of one count).
        moved = await PasskeyCredential.filter(id=stored.id, sign_count__lt=new).update(
            sign_count=new, last_used_time=now, backup_state=checked.credential_backed_up)
        if not moved:
            await _cloned(stored, new)
    else:
        await PasskeyCredential.filter(id=stored.id).update(last_used_time=now,
                                                           backup_state=checked.credential_backed_up)


async def _cloned(stored: PasskeyCredential, count: int) -> None:
    await PasskeyCredential.filter(id=stored.id).update(clone_warning=True)
    log.warning("passkey %s of user %s answered with signature counter %s, not above %s: refused as a clone",
                stored.id, stored.user_id, count, stored.sign_count)
    raise ApiError("passkey_cloned")


def _refusal(exc: Exception, rp: RelyingParty, fallback: str) -> ApiError:
    text = str(exc)
    log.info("passkey answer refused: %s", text)
    if any(part in text for part in _WRONG_SITE):
        return ApiError("passkey_wrong_site", origin=rp.origin)
    if any(part in text for part in _NOT_VERIFIED):
        return ApiError("passkey_user_verification")
    return ApiError(fallback)


# -- the user's list, deletion, the administrators' reset --------------------------------------------
async def list_of(user: User) -> list[PasskeyCredential]:
    return await PasskeyCredential.filter(user_id=user.id).order_by("-created_time", "-id")


async def status_of(user: User) -> dict[str, Any]:
    """new-api's status fields (`enabled`, `last_used_at`) and the list of the user's passkeys."""
    passkeys = await list_of(user)
    last_used = max((p.last_used_time for p in passkeys), default=0)
    return {"enabled": bool(passkeys), "last_used_at": last_used or None,
            "passkeys": [p.public_dict() for p in passkeys]}


async def delete_own(user: User, passkey_id: int | None) -> int:
    """Delete one of the user's passkeys (by id), or all of them (none given, as new-api does)."""
    query = PasskeyCredential.filter(user_id=user.id)
    if passkey_id is not None:
        query = query.filter(id=passkey_id)
    deleted = await query.delete()
    if passkey_id is not None and not deleted:
        raise ApiError("passkey_not_found")
    return deleted


async def reset_for(actor: User, user_id: object) -> User:
    """An administrator removes every passkey of a user of a lower role (root: of anyone)."""
    target = await get_managed_user(actor, user_id)
    if not await PasskeyCredential.filter(user_id=target.id).delete():
        raise ApiError("passkey_none_for_user")
    return target
