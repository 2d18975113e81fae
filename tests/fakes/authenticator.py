"""A software passkey authenticator, strict like a real one: an ES256 key (`cryptography`), the COSE
public key and the attestation object in CBOR, clientDataJSON as a browser writes it, the rp id hash,
the flags (UP, UV, AT, BE/BS) and a signature counter. It answers the options the server sent the way
navigator.credentials.create() / get() would, after checking them as a browser and authenticator
do (the rp id, the excluded and allowed credentials, a resident key); a test can make it lie about
the origin, the rp id, user verification or its counter to see the server refuse.
"""
from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP, UV, BE, BS, AT = 0x01, 0x04, 0x08, 0x10, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    """One passkey (made by `create`), used by `get`; `counting=False`: its counter stays 0, as
    synced passkeys' do."""

    def __init__(self, origin: str, counting: bool = True, backed_up: bool = False) -> None:
        self.origin = origin
        self.counting = counting
        self.backed_up = backed_up
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(32)
        self.sign_count = 0
        self.rp_id = ""
        self.user_handle = b""

    def clone(self) -> Authenticator:
        """A copy of the passkey's key and counter as they are now (what an extracted key gives)."""
        twin = copy.copy(self)
        return twin

    def _cose_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def _flags(self, verified: bool, attested: bool = False) -> int:
        flags = UP | (UV if verified else 0) | (AT if attested else 0)
        return flags | (BE | BS if self.backed_up else 0)

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin or self.origin,
                           "crossOrigin": False}, separators=(",", ":")).encode()

    def create(self, options: dict[str, Any], *, origin: str | None = None, rp_id: str | None = None,
               verified: bool = True) -> dict[str, Any]:
        """navigator.credentials.create({publicKey: options}) → the credential's JSON."""
        public_key = options["publicKey"]
        assert public_key["authenticatorSelection"]["residentKey"] == "required"
        excluded = {item["id"] for item in public_key.get("excludeCredentials", [])}
        if b64url(self.credential_id) in excluded:
            raise AssertionError("InvalidStateError: this authenticator is excluded")
        assert -7 in [p["alg"] for p in public_key["pubKeyCredParams"]], "ES256 not offered"
        self.rp_id = public_key["rp"]["id"]
        self.user_handle = from_b64url(public_key["user"]["id"])
        client_data = self._client_data("webauthn.create", public_key["challenge"], origin)
        attested = bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id + self._cose_key()
        auth_data = (hashlib.sha256((rp_id or self.rp_id).encode()).digest()
                     + bytes([self._flags(verified, attested=True)]) + self.sign_count.to_bytes(4, "big") + attested)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return {"id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
                "authenticatorAttachment": "platform", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation),
                             "transports": ["internal"]}}

    def get(self, options: dict[str, Any], *, origin: str | None = None, rp_id: str | None = None,
            verified: bool = True) -> dict[str, Any]:
        """navigator.credentials.get({publicKey: options}) → the assertion's JSON; the counter moves."""
        public_key = options["publicKey"]
        assert public_key["rpId"] == self.rp_id, "a browser offers only the site's own passkeys"
        allowed = [item["id"] for item in public_key.get("allowCredentials", [])]
        if allowed and b64url(self.credential_id) not in allowed:
            raise AssertionError("NotAllowedError: this passkey is not among the allowed ones")
        if self.counting:
            self.sign_count += 1
        client_data = self._client_data("webauthn.get", public_key["challenge"], origin)
        auth_data = (hashlib.sha256((rp_id or self.rp_id).encode()).digest() + bytes([self._flags(verified)])
                     + self.sign_count.to_bytes(4, "big"))
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
                "authenticatorAttachment": "platform", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                             "signature": b64url(signature), "userHandle": b64url(self.user_handle)}}
