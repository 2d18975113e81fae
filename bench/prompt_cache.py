"""A provider's prompt cache as bench/cache_upstream.py keeps it: per API key and model, with a TTL.

Tokens are counted deterministically: one token per 4 bytes of a canonical serialization of each
part of the prompt (JSON with sorted keys, `cache_control` markers left out: they mark a breakpoint,
they are not content). No tokenizer, so a run never depends on one.

OpenAI (chat completions; platform.openai.com/docs/guides/prompt-caching): the prompt is the tools,
then the messages. A prompt of at least 1024 tokens is cached in 128-token blocks: `cached_tokens` is
the longest whole-block prefix (1024 tokens or more) seen before on the same key and model whose
entry has not expired; every whole-block prefix of the prompt is then written again with a fresh TTL
(a hit refreshes its entry).

Anthropic (messages): the tools, the system blocks, then each message's content blocks. The cache is
written only at the breakpoints the request marks (`cache_control`) whose prefix is at least 1024
tokens; a read is the longest block-boundary prefix up to the last breakpoint already written and
alive. The usage splits the prompt as Anthropic does: `cache_read_input_tokens` (the read),
`cache_creation_input_tokens` (from there to the last breakpoint) and `input_tokens` (the rest).

The clock and the TTL are injectable (ManualClock): a test or a short run need not wait five minutes.
"""
from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

BYTES_PER_TOKEN = 4
BLOCK_TOKENS = 128  # OpenAI caches whole blocks of 128 tokens ...
MIN_CACHED_TOKENS = 1024  # ... from 1024 tokens on; Anthropic's smallest cacheable prefix for Sonnet and Opus
DEFAULT_TTL = 300.0  # five minutes, refreshed on every hit
SESSION_MARK = re.compile(rb"\[bench-session ([\w.:-]+)\]")  # put in the prompt by bench/agent_sessions.py

Scope = tuple[str, str]  # (API key, model)


class ManualClock:
    """A clock that moves only when told (tests, and `--manual-clock` of the fake)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def tokens(size: int) -> int:
    """Tokens of `size` bytes: one per 4 bytes, rounded up."""
    return -(-size // BYTES_PER_TOKEN)


def _canonical(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _canonical(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def part(value: Any) -> bytes:
    return orjson.dumps(_canonical(value), option=orjson.OPT_SORT_KEYS)


@dataclass(frozen=True, slots=True)
class Prompt:
    """What the cache needs of one request's prompt."""

    tokens: int
    reads: tuple[tuple[int, bytes], ...]  # prefixes a read may match: (tokens, digest), ascending
    writes: tuple[tuple[int, bytes], ...]  # prefixes the request writes
    creation_upto: int = 0  # Anthropic: tokens up to the last breakpoint (cache writes are counted); 0 = OpenAI
    session: str = ""  # the bench session named in the prompt, if any
    digest: bytes = b""  # of the whole prompt (seeds the fake's answer)


def _session(data: bytes) -> str:
    found = SESSION_MARK.search(data)
    return found.group(1).decode() if found else ""


def openai_prompt(body: Mapping[str, Any]) -> Prompt:
    """Chat completions: tools then messages, cached in 128-token blocks from 1024 tokens on."""
    parts = [part(body["tools"])] if body.get("tools") else []
    parts += [part(m) for m in body.get("messages") or ()]
    data = b"".join(parts)
    total = tokens(len(data))
    block = BLOCK_TOKENS * BYTES_PER_TOKEN
    running = hashlib.blake2b(digest_size=16)
    prefixes: list[tuple[int, bytes]] = []
    for end in range(block, len(data) + 1, block):
        running.update(data[end - block:end])
        if end // BYTES_PER_TOKEN >= MIN_CACHED_TOKENS:
            prefixes.append((end // BYTES_PER_TOKEN, running.copy().digest()))
    running.update(data[len(data) - len(data) % block:])
    marks = tuple(prefixes) if total >= MIN_CACHED_TOKENS else ()
    return Prompt(total, marks, marks, 0, _session(data), running.digest())


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, Mapping)]


def anthropic_parts(body: Mapping[str, Any]) -> Iterable[tuple[bytes, bool]]:
    """(serialized block, whether it carries a breakpoint), in Anthropic's cache order."""
    for tool in body.get("tools") or ():
        yield part(tool), isinstance(tool, Mapping) and "cache_control" in tool
    for block in _blocks(body.get("system")):
        yield part(block), "cache_control" in block
    for message in body.get("messages") or ():
        role = message.get("role", "")
        for block in _blocks(message.get("content")):
            yield part({"role": role, **block}), "cache_control" in block


def anthropic_prompt(body: Mapping[str, Any]) -> Prompt:
    running = hashlib.blake2b(digest_size=16)
    size = 0
    boundaries: list[tuple[int, bytes]] = []
    breakpoints: list[tuple[int, bytes]] = []
    chunks: list[bytes] = []
    for data, marked in anthropic_parts(body):
        running.update(data)
        chunks.append(data)
        size += len(data)
        mark = (tokens(size), running.copy().digest())
        boundaries.append(mark)
        if marked:
            breakpoints.append(mark)
    upto = breakpoints[-1][0] if breakpoints else 0
    if upto < MIN_CACHED_TOKENS:
        reads: tuple[tuple[int, bytes], ...] = ()
        writes: tuple[tuple[int, bytes], ...] = ()
        upto = 0
    else:
        reads = tuple(m for m in boundaries if MIN_CACHED_TOKENS <= m[0] <= upto)
        writes = tuple(m for m in breakpoints if m[0] >= MIN_CACHED_TOKENS)
    return Prompt(tokens(size), reads, writes, upto, _session(b"".join(chunks)), running.digest())


@dataclass(frozen=True, slots=True)
class Hit:
    read: int  # tokens read from the cache
    creation: int  # tokens written to it (Anthropic's cache_creation_input_tokens; 0 for OpenAI)


class PromptCache:
    """Prefix entries per scope (key, model), each alive until its expiry."""

    def __init__(self, ttl: float = DEFAULT_TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._entries: dict[Scope, dict[bytes, float]] = {}
        self._uses = 0

    def use(self, scope: Scope, prompt: Prompt) -> Hit:
        """The longest alive prefix of `prompt` in `scope`, then the prompt's own prefixes written."""
        now = self.clock()
        entries = self._entries.setdefault(scope, {})
        read, read_digest = 0, b""
        for count, digest in reversed(prompt.reads):
            if entries.get(digest, 0.0) > now:
                read, read_digest = count, digest
                break
        expiry = now + self.ttl
        if read_digest:
            entries[read_digest] = expiry  # a hit refreshes the entry
        for _count, digest in prompt.writes:
            entries[digest] = expiry
        self._uses += 1
        if self._uses % 1000 == 0:
            self.purge()
        creation = max(0, prompt.creation_upto - read) if prompt.creation_upto else 0
        return Hit(read, creation)

    def purge(self) -> None:
        now = self.clock()
        for scope, entries in list(self._entries.items()):
            alive = {d: e for d, e in entries.items() if e > now}
            if alive:
                self._entries[scope] = alive
            else:
                del self._entries[scope]

    def clear(self) -> None:
        self._entries.clear()

    def entries(self, scope: Scope) -> int:
        now = self.clock()
        return sum(1 for e in self._entries.get(scope, {}).values() if e > now)
