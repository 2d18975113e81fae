"""The internal form's messages → Gemini's `contents` and `systemInstruction` (pure).

- Leading system/developer messages → `systemInstruction`, one part per text (never joined); a later
  one stays where it stands, as a user-role text part marked as a system instruction.
- Parts are kept apart: text, images (`data:` URLs → `inlineData`; http(s) URLs are fetched and inlined
  by the adaptor's `prepare` step under the media policy), files (`file_data` → `inlineData`, a
  `file_url` → `fileData`, which Gemini fetches itself: blog.google "Increased file size limits and
  expanded inputs support in Gemini API", external public and signed URLs), audio.
- Assistant turns: text parts, the message's thought signature back on its first text part, the images
  it drew (`images`, images.py) as inlineData parts with their own signatures, tool calls
  → `functionCall` parts carrying their `thoughtSignature`; `reasoning_content` and `thinking_blocks`
  are never sent (Gemini's thoughts travel only as signatures; other providers' never).
- Tool results → `functionResponse` parts named after their call (`{"output": …}` unless the result is
  a JSON object: ai.google.dev/api/caching#FunctionResponse), images beside them.
- Gemini 3 validates thought signatures on the current turn: "The first functionCall part in each step
  of the current turn must include its thought_signature" (ai.google.dev/gemini-api/docs/thought-
  signatures#function-calling). A step whose first call came from another provider carries the
  documented placeholder (`GEMINI_SKIP_SIGNATURE`, same page, FAQ); earlier turns are not validated and
  get none.
- In the tool-combination mode (`circulate`), an assistant turn's search parts the gateway kept
  (`gemini_server_parts`, api/upstream/reasoning.py) go back whole, where they stood (`placed`): the
  next turn must carry the previous turn's toolCall and toolResponse parts with their signatures
  (ai.google.dev/gemini-api/docs/tool-combination, "circulate both tool and function context").
"""
from __future__ import annotations

import mimetypes
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from api.upstream.errors import RelayError
from api.upstream.providers.gemini.images import image_part as answered_image
from api.upstream.reasoning import GEMINI_SERVER_PARTS, GEMINI_SKIP_SIGNATURE, gemini_signature

MEDIA_PLACEHOLDER = "gateway:fetch"  # an inlineData whose bytes `prepare` fetches from the URL in `data`
SYSTEM_MARK = "[System instruction]\n"
AUDIO_TYPES = {"mp3": "audio/mpeg", "wav": "audio/wav", "flac": "audio/flac", "ogg": "audio/ogg", "aac": "audio/aac"}
Notice = Callable[[str], None]


def _data_url(url: str, fallback: str) -> dict[str, Any]:
    header, _, data = url.partition(",")
    return {"inlineData": {"mimeType": header[5:].split(";")[0] or fallback, "data": data}}


def image_part(url: str) -> dict[str, Any]:
    if url.startswith("data:"):
        return _data_url(url, "image/png")
    if url[:8].lower().startswith(("http://", "https://")):
        return {"inlineData": {"mimeType": MEDIA_PLACEHOLDER, "data": url}}
    raise RelayError.local_error(400, "image_url must be a data: URL or an http(s) URL", "invalid_image_url")


def file_parts(file: Mapping[str, Any], notice: Notice) -> list[dict[str, Any]]:
    """A document: inline bytes, or a URL Gemini fetches; its title and context as a text before it."""
    parts: list[dict[str, Any]] = []
    data, url = file.get("file_data"), file.get("file_url")
    if isinstance(data, str) and data.startswith("data:"):
        parts.append(_data_url(data, "application/pdf"))
    elif isinstance(url, str) and url.startswith(("http://", "https://", "gs://")):
        mime = mimetypes.guess_type(str(file.get("filename") or url.split("?")[0]))[0]
        parts.append({"fileData": {"fileUri": url, **({"mimeType": mime} if mime else {})}})
    else:
        notice("file.file_id")  # an OpenAI Files API id means nothing to Gemini
    return parts


def _document_note(part: Mapping[str, Any]) -> list[dict[str, Any]]:
    document = part.get("document")
    if not isinstance(document, Mapping):
        return []
    lines = [f"Document: {document['title']}"] if document.get("title") else []
    lines += [str(document["context"])] if document.get("context") else []
    return [{"text": "\n".join(lines)}] if lines else []


def content_parts(content: Any, notice: Notice) -> list[dict[str, Any]]:
    """A message's content → Gemini parts, each part of the content its own part."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if "cache_control" in part:
            notice("cache_control")  # Gemini caches implicitly; explicit caches are separate resources
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            parts.append({"text": part["text"]})
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if isinstance(url, str):
                parts.append(image_part(url))
        elif kind == "file" and isinstance(part.get("file"), Mapping):
            parts += _document_note(part) + file_parts(part["file"], notice)
        elif kind == "input_audio" and isinstance(part.get("input_audio"), Mapping):
            audio = part["input_audio"]
            mime = AUDIO_TYPES.get(str(audio.get("format")), "audio/wav")
            parts.append({"inlineData": {"mimeType": mime, "data": audio.get("data") or ""}})
    return parts


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = orjson.loads(raw) if isinstance(raw, str | bytes) and raw else {}
    except orjson.JSONDecodeError:
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}


def _response(content: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A tool result → (functionResponse.response, image parts sent beside it)."""
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    if isinstance(content, str):
        texts.append(content)
    for part in content if isinstance(content, list) else ():
        if isinstance(part, Mapping) and part.get("type") == "text":
            texts.append(str(part.get("text") or ""))
        elif isinstance(part, Mapping) and part.get("type") == "image_url":
            media += content_parts([part], lambda _: None)
    if len(texts) == 1:
        try:
            value = orjson.loads(texts[0])
        except orjson.JSONDecodeError:
            value = texts[0]
        return (value if isinstance(value, dict) else {"output": value}), media
    return {"output": texts if texts else ""}, media


def placed(parts: list[dict[str, Any]], hidden: Any) -> list[dict[str, Any]]:
    """A model turn's parts with its hidden parts put back in order: `at` 0 before everything, else
    before call `at - 1` (after the text; at the end past the last call), as answer.py noted them."""
    entries = [(e["at"], e["part"]) for e in hidden if isinstance(e, Mapping) and isinstance(e.get("at"), int)
               and isinstance(e.get("part"), Mapping)] if isinstance(hidden, list) else []
    if not entries:
        return parts
    calls = [i for i, part in enumerate(parts) if "functionCall" in part]
    slots: dict[int, list[dict[str, Any]]] = {}
    for at, part in entries:
        slot = 0 if at <= 0 else calls[at - 1] if at - 1 < len(calls) else len(parts)
        slots.setdefault(slot, []).append(dict(part))
    out: list[dict[str, Any]] = []
    for index in range(len(parts) + 1):
        out += slots.get(index, ())
        if index < len(parts):
            out.append(parts[index])
    return out


class Contents:
    """Builds one request's contents (consecutive same-role turns merged, parts kept apart)."""

    def __init__(self, notice: Notice, circulate: bool = False) -> None:
        self.notice = notice
        self.circulate = circulate
        self.contents: list[dict[str, Any]] = []
        self.system: list[dict[str, Any]] = []
        self.names: dict[str, str] = {}  # tool call id → function name

    def add(self, role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if self.contents and self.contents[-1]["role"] == role:
            self.contents[-1]["parts"].extend(parts)
        else:
            self.contents.append({"role": role, "parts": parts})

    def message(self, message: Mapping[str, Any]) -> None:
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            parts = content_parts(content, self.notice)
            if not self.contents:
                self.system += parts
            else:
                self.add("user", [{"text": SYSTEM_MARK + p["text"]} if "text" in p else p for p in parts])
        elif role == "assistant":
            self.add("model", self.assistant(message))
        elif role == "tool":
            name = self.names.get(str(message.get("tool_call_id") or ""), str(message.get("name") or ""))
            response, media = _response(content)
            self.add("user", [{"functionResponse": {"name": name, "response": response}}, *media])
        else:
            self.add("user", content_parts(content, self.notice))

    def assistant(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        parts = content_parts(message.get("content"), self.notice)
        signature = gemini_signature(message)
        if signature:
            for part in parts:
                if "text" in part:
                    part["thoughtSignature"] = signature
                    break
        for image in message.get("images") or ():  # images the model drew, with their signatures
            drawn = answered_image(image)
            if drawn is not None:
                parts.append(drawn)
        for call in message.get("tool_calls") or ():
            if not isinstance(call, Mapping):
                continue
            function = call.get("function") or {}
            name = str(function.get("name") or "")
            self.names[str(call.get("id") or "")] = name
            call_part: dict[str, Any] = {"functionCall": {"name": name,
                                                          "args": _arguments(function.get("arguments"))}}
            call_signature = gemini_signature(call)
            if call_signature:
                call_part["thoughtSignature"] = call_signature
            parts.append(call_part)
        return placed(parts, message.get(GEMINI_SERVER_PARTS)) if self.circulate else parts


def current_turn(contents: list[dict[str, Any]]) -> int:
    """Index of the content that opens the current turn: the last user content with something other
    than function responses in it (the docs' "most recent user message with standard content")."""
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content["role"] == "user" and any("functionResponse" not in p for p in content["parts"]):
            return index
    return 0


def sign_current_turn(contents: list[dict[str, Any]]) -> None:
    """The placeholder signature on each step's first function call of the current turn that has none."""
    for content in contents[current_turn(contents):]:
        if content["role"] != "model":
            continue
        first = next((p for p in content["parts"] if "functionCall" in p), None)
        if first is not None and not first.get("thoughtSignature"):
            first["thoughtSignature"] = GEMINI_SKIP_SIGNATURE


def convert_contents(messages: Any, notice: Notice, signatures: bool,
                     circulate: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(contents, systemInstruction parts) of the internal form's messages; `circulate`: the
    tool-combination mode (the hidden parts go back)."""
    builder = Contents(notice, circulate)
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, Mapping):
            builder.message(message)
    if signatures:
        sign_current_turn(builder.contents)
    return builder.contents, builder.system
