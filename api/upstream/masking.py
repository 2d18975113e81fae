"""The one masking step between an upstream and a user or a log: every upstream text (an error
answer, a mid-stream error event, the reason a stream stopped, an auto-disable reason, a log line)
goes through `mask_secrets` before anyone reads it.

Masked: the channel's key and each part of a multi-part key; the credentials made from keys in this
process while they are live (a Vertex AI OAuth access token, registered by `remember` where it is
received, so masking replaces it whoever calls); anything shaped like a credential (OpenAI-style
keys, bearer tokens, AWS access key ids, Google API keys and OAuth access tokens, JWTs); and the
upstream's address (base URL and host).
"""
from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable
from urllib.parse import quote, urlsplit

MASK = "***"
# Credentials an upstream may quote in its error, whoever they belong to: OpenAI-style keys, bearer
# tokens, AWS access key ids, Google API keys, Google OAuth access tokens (`ya29.`), JWTs (a signed
# OAuth assertion, any provider's token).
_CREDENTIALS = re.compile(
    r"(?i)\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}|(?<=Bearer )[^\s\"',]{6,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|\bya29\.[0-9A-Za-z_\-.]{10,}|\beyJ[A-Za-z0-9_\-]{6,}\.eyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}")
_KEY_PARTS = re.compile(r"[\n|,:]")  # Spark's HTTP key is APIKey:APISecret
MIN_PART = 6  # key parts shorter than this (a region, a flag) are not secrets
MIN_DERIVED = 8
MAX_DERIVED = 4096  # live derived credentials remembered per process (the oldest go first)


class DerivedSecrets:
    """Credentials made from channel keys in this process, each until it expires. Bounded: past
    `limit` the oldest registered goes (a credential cache holds one per key, so a process has far
    fewer). Safe to use from several threads (Dramatiq's worker threads). The list masking reads is
    kept ready between changes (an error storm does not sort it again for every error)."""

    def __init__(self, limit: int = MAX_DERIVED, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.clock = clock
        self._live: dict[str, float] = {}  # secret → unix seconds it expires at; insertion order = age
        self._ready: list[tuple[str, str]] | None = None  # (secret, as URL-encoded), longest first
        self._next_expiry = math.inf
        self._lock = threading.Lock()

    def remember(self, secret: str, expires_at: float) -> None:
        if len(secret) < MIN_DERIVED or expires_at <= self.clock():
            return
        with self._lock:
            self._live.pop(secret, None)
            self._live[secret] = expires_at
            while len(self._live) > self.limit:
                del self._live[next(iter(self._live))]
            self._ready = None

    def live(self) -> list[tuple[str, str]]:
        """The secrets still valid with their URL-encoded form, longest first (so a secret
        containing another is masked whole)."""
        now = self.clock()
        with self._lock:
            if self._ready is None or now >= self._next_expiry:
                for secret in [s for s, until in self._live.items() if until <= now]:
                    del self._live[secret]
                self._ready = [(s, quote(s, safe="")) for s in sorted(self._live, key=len, reverse=True)]
                self._next_expiry = min(self._live.values(), default=math.inf)
            return self._ready

    def forget_all(self) -> None:
        with self._lock:
            self._live.clear()
            self._ready = None


DERIVED = DerivedSecrets()


def remember(secret: str, expires_at: float) -> None:
    """Register a credential made from a channel's key: masked everywhere until `expires_at`."""
    DERIVED.remember(secret, expires_at)


def _replace_all(text: str, secrets: list[tuple[str, str]]) -> str:
    """Each secret, and its URL-encoded form (as it travels in a query string), replaced by `***`."""
    for secret, encoded in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
        if encoded != secret and encoded in text:
            text = text.replace(encoded, MASK)
    return text


def mask_secrets(text: str, key: str = "", base_url: str = "") -> str:
    """Upstream text made safe to show a user or store: the channel's key and every part of a
    multi-part key (lines, `|`-separated fields) replaced by `***`, the live credentials derived
    from keys and anything shaped like a credential too, and the upstream's address (base URL and
    host) replaced by `upstream`."""
    if not text:
        return text
    parts = sorted({p.strip() for p in [key, *_KEY_PARTS.split(key)] if len(p.strip()) >= MIN_PART}, key=len,
                   reverse=True)
    text = _replace_all(text, [(p, quote(p, safe="")) for p in parts])
    text = _replace_all(text, DERIVED.live())
    text = _CREDENTIALS.sub(MASK, text)
    if base_url:
        host = urlsplit(base_url if "://" in base_url else f"//{base_url}").hostname or ""
        for value in (base_url.rstrip("/"), host):
            if len(value) >= 4:
                text = re.sub(re.escape(value), "upstream", text, flags=re.IGNORECASE)
    return text


def mask_bytes(raw: bytes, key: str = "", base_url: str = "") -> bytes:
    """`mask_secrets` of upstream bytes relayed as they came (a native stream's error event)."""
    text = raw.decode("utf-8", "surrogateescape")
    masked = mask_secrets(text, key, base_url)
    return raw if masked == text else masked.encode("utf-8", "surrogateescape")
