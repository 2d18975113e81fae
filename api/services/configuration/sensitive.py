"""The sensitive-word check of prompts (CheckSensitiveEnabled, CheckSensitiveOnPromptEnabled,
SensitiveWords: one word per line, matched case-insensitively anywhere in the text)."""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=4)
def _pattern(words_text: str) -> re.Pattern[str] | None:
    words = sorted({w.strip().lower() for w in words_text.splitlines() if w.strip()}, key=len, reverse=True)
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in words))


def find_sensitive(texts: Iterator[str] | list[str], words_text: str) -> str | None:
    """The first sensitive word found in `texts`, or None."""
    pattern = _pattern(words_text)
    if pattern is None:
        return None
    for text in texts:
        if text:
            match = pattern.search(text.lower())
            if match:
                return match.group(0)
    return None


def _content_texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                yield part
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                yield part["text"]


def prompt_texts(body: Mapping[str, Any]) -> Iterator[str]:
    """The text a client sends: chat messages, completions prompt, embeddings/moderation input,
    image prompt, speech input, rerank query and documents."""
    for message in body.get("messages") or ():
        if isinstance(message, Mapping):
            yield from _content_texts(message.get("content"))
    for name in ("prompt", "input", "query"):
        value = body.get(name)
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, str))
    for doc in body.get("documents") or ():
        if isinstance(doc, str):
            yield doc
        elif isinstance(doc, Mapping) and isinstance(doc.get("text"), str):
            yield doc["text"]
