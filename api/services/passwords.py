"""Password hashing (bcrypt) off the event loop, and secret comparison."""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets

import bcrypt

# Cost factor of new hashes (2^rounds iterations); BCRYPT_ROUNDS lowers it for test runs only.
BCRYPT_ROUNDS = int(os.environ.get("BCRYPT_ROUNDS", "10"))
_ALPHANUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _hash(password: str) -> str:
    return bcrypt.hashpw(password.encode()[:72], bcrypt.gensalt(BCRYPT_ROUNDS)).decode()


def _verify(password: str, hashed: str) -> bool:
    if not hashed:
        return False
    try:
        return bcrypt.checkpw(password.encode()[:72], hashed.encode())
    except ValueError:
        return False


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hash, password)


async def verify_password(password: str, hashed: str) -> bool:
    return await asyncio.to_thread(_verify, password, hashed)


def random_string(length: int, alphabet: str = _ALPHANUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def constant_time_equals(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
