"""The encodings of passkeys: WebAuthn's base64url on the wire, standard base64 in the columns (as
new-api stores them), the user handle, credential descriptors and transports, the backup flags."""
from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson
from webauthn.helpers import parse_attestation_object
from webauthn.helpers.structs import AuthenticatorTransport, PublicKeyCredentialDescriptor

_TRANSPORTS = frozenset(t.value for t in AuthenticatorTransport)


def user_handle(user_id: int) -> bytes:
    """The WebAuthn user handle: the user id in decimal, as new-api makes it."""
    return str(user_id).encode()


def descriptor(credential_id: str, transports: str) -> PublicKeyCredentialDescriptor:
    known = [AuthenticatorTransport(t) for t in transport_names(transports)]
    return PublicKeyCredentialDescriptor(id=from_b64(credential_id), transports=known or None)


def transport_names(value: str) -> list[str]:
    try:
        names = orjson.loads(value) if value else []
    except orjson.JSONDecodeError:
        return []
    return [t for t in names if t in _TRANSPORTS] if isinstance(names, list) else []


def transports(credential: dict[str, Any]) -> str:
    response = credential.get("response")
    given = response.get("transports") if isinstance(response, dict) else None
    names = [t for t in given if isinstance(t, str) and t in _TRANSPORTS][:8] if isinstance(given, list) else []
    return orjson.dumps(sorted(set(names))).decode() if names else ""


def flags(attestation_object: bytes) -> tuple[bool, bool]:
    """Backup eligibility and state from the attestation's authenticator data."""
    bits = parse_attestation_object(attestation_object).auth_data.flags
    return bool(bits.be), bool(bits.bs)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def from_b64(text: str) -> bytes:
    return base64.b64decode(text)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ValueError("not base64url") from exc
