"""A Responses request's `input` items → the internal form's messages.

Item shapes (openai-python types/responses/response_input_item_param.py; Codex
codex-rs/protocol/src/models.rs `ResponseItem`):
- `message` (role user / system / developer / assistant; content input_text, output_text,
  input_image, input_file, refusal parts): system and developer messages stay where they stand,
  parts stay apart, files become file parts;
- `reasoning` (`summary`, `content`, `encrypted_content`): a sealed envelope of ours gives the turn
  its provider state back (Claude thinking blocks, Gemini signatures by call id, or plain text);
  anything else in `encrypted_content` is OpenAI's own and of no use to another provider; the
  summary is the turn's `reasoning_content` (DeepSeek needs it back on tool turns);
- `function_call` (`namespace` for a namespaced tool), `custom_tool_call` (`input`),
  `local_shell_call` (`action`), a client-run `tool_search_call` (`arguments`) → the assistant turn's
  tool calls; `function_call_output`, `custom_tool_call_output`, `local_shell_call_output` (whose
  `id` is the call's id) → tool results; a `tool_search_output` → the result naming the tools it
  loaded, which are declared from then on;
- `compaction` (a compacted history): ours carries the summary, which is read back as a message;
- `additional_tools`: tools (read by ToolMap), no message;
- `item_reference` points at a stored item: refused, nothing is stored here.
The items of one assistant turn (reasoning, text, calls) become one assistant message.
"""
from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from api.relay.inbound.responses_tools import LOCAL_SHELL, TOOL_SEARCH, ToolMap, shell_arguments
from api.upstream.chat import ChatMessage, Content, ContentPart, FileRef, ImageURL, ToolCall
from api.upstream.errors import RelayError
from api.upstream.reasoning import ANTHROPIC, GEMINI, TEXT, unseal, with_gemini_signature

TEXT_PARTS = ("input_text", "output_text", "text")
# What a compaction summary is introduced with when the history goes to a model again.
SUMMARY_PREFIX = ("The earlier part of this conversation was compacted. This summary, written by a model at "
                  "that point, replaces it; continue the work from it:")


def _data_url(data: str, filename: str) -> str:
    if data.startswith("data:"):
        return data
    mime = mimetypes.guess_type(filename)[0] if filename else None
    return f"data:{mime or 'application/pdf'};base64,{data}"


def content_of(parts: Any, notices: list[str]) -> Content:
    """Responses content (a string or parts) → internal content: one text stays a string, several
    parts stay a list of parts."""
    if isinstance(parts, str):
        return parts
    out: list[ContentPart] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind in TEXT_PARTS:
            out.append({"type": "text", "text": str(part.get("text") or "")})
        elif kind == "refusal":
            out.append({"type": "text", "text": str(part.get("refusal") or "")})
        elif kind == "input_image":
            url = part.get("image_url") or part.get("url")
            if isinstance(url, str) and url:
                image: ImageURL = {"url": url}
                if part.get("detail") and part["detail"] != "auto":
                    image["detail"] = part["detail"]
                out.append({"type": "image_url", "image_url": image})
            else:  # an uploaded file's id: only OpenAI can read it
                _note(notices, "input.input_image.file_id")
        elif kind == "input_file":
            file = _file(part)
            if file is None:
                _note(notices, "input.input_file.file_id")
            else:
                out.append({"type": "file", "file": file})
        else:
            _note(notices, f"input.{kind or 'unknown'}")
    if len(out) == 1 and out[0]["type"] == "text":
        return str(out[0]["text"])
    return out if out else ""


def _file(part: Mapping[str, Any]) -> FileRef | None:
    filename = str(part.get("filename") or "")
    if isinstance(part.get("file_data"), str) and part["file_data"]:
        file: FileRef = {"file_data": _data_url(part["file_data"], filename)}
        if filename:
            file["filename"] = filename
        return file
    if isinstance(part.get("file_url"), str) and part["file_url"]:
        return {"file_url": part["file_url"]}
    return None


def _note(notices: list[str], what: str) -> None:
    if what not in notices:
        notices.append(what)


@dataclass
class Reasoning:
    """The provider state a reasoning item carried, for its assistant turn."""

    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)  # Claude's thinking blocks
    calls: dict[str, str] = field(default_factory=dict)  # Gemini: call id → thought signature
    text_signature: str | None = None  # Gemini: the signature of the turn's first text part

    @classmethod
    def of(cls, item: Mapping[str, Any], notices: list[str]) -> Reasoning:
        summary = [str(p.get("text") or "") for p in item.get("summary") or () if isinstance(p, Mapping)]
        if not any(summary):  # raw reasoning text (open-weight models) when no summary
            summary = [str(p.get("text") or "") for p in item.get("content") or () if isinstance(p, Mapping)]
        state = cls(text="\n\n".join(s for s in summary if s))
        sealed = unseal(item.get("encrypted_content"))
        if sealed is None:
            if item.get("encrypted_content"):
                _note(notices, "input.reasoning.encrypted_content")
            return state
        provider, payload = sealed
        if provider == ANTHROPIC:
            state.blocks = [dict(b) for b in payload.get("blocks") or () if isinstance(b, Mapping)]
        elif provider == GEMINI:
            calls = payload.get("calls")
            state.calls = {str(k): str(v) for k, v in calls.items()} if isinstance(calls, Mapping) else {}
            state.text_signature = payload.get("text") if isinstance(payload.get("text"), str) else None
        elif provider == TEXT and isinstance(payload.get("text"), str):
            state.text = payload["text"]
        return state


class History:
    """Builds the messages; the assistant message of the turn being read stays open until a
    message of another role comes."""

    def __init__(self, tools: ToolMap, notices: list[str]) -> None:
        self.tools = tools
        self.notices = notices
        self.messages: list[ChatMessage] = []
        self.turn: ChatMessage | None = None  # the open assistant message
        self.pending: list[Reasoning] = []  # reasoning read before its turn's first output
        self.signatures: dict[str, str] = {}  # Gemini signatures of the open turn, by call id

    # -- messages of other roles ------------------------------------------------------------------

    def add(self, message: ChatMessage) -> None:
        self._close()
        self.pending.clear()
        self.messages.append(message)

    def _close(self) -> None:
        turn = self.turn
        if turn is not None and turn.get("content") is None and not turn.get("tool_calls"):
            self.messages.pop()  # only reasoning, no answer: no provider takes an empty turn (it is the last)
        self.turn = None
        self.signatures = {}

    # -- the assistant turn ------------------------------------------------------------------------

    def _open(self) -> ChatMessage:
        if self.turn is None:
            self.turn = {"role": "assistant", "content": None}
            self.messages.append(self.turn)
            for state in self.pending:
                self._apply(state)
            self.pending.clear()
        return self.turn

    def reasoning(self, state: Reasoning) -> None:
        if self.turn is None:
            self.pending.append(state)
        else:
            self._apply(state)

    def _apply(self, state: Reasoning) -> None:
        turn = self.turn
        assert turn is not None
        if state.text:
            turn["reasoning_content"] = "\n\n".join(t for t in (turn.get("reasoning_content"), state.text) if t)
        if state.blocks:
            turn.setdefault("thinking_blocks", []).extend(state.blocks)
        self.signatures.update(state.calls)
        for call in turn.get("tool_calls") or ():
            if "extra_content" not in call:
                with_gemini_signature(call, self.signatures.get(call["id"]))
        if state.text_signature and "extra_content" not in turn:
            with_gemini_signature(turn, state.text_signature)

    def text(self, content: Content) -> None:
        turn = self._open()
        if turn["content"] is None:
            turn["content"] = content
            return
        parts = [*_parts(turn["content"]), *_parts(content)]
        turn["content"] = parts

    def call(self, call_id: str, name: str, arguments: str) -> None:
        turn = self._open()  # first: the turn's pending reasoning may carry this call's signature
        call: ToolCall = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        with_gemini_signature(call, self.signatures.get(call_id))
        turn.setdefault("tool_calls", []).append(call)

    def finish(self) -> list[ChatMessage]:
        self._close()
        return self.messages


def _parts(content: Any) -> list[ContentPart]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _output(value: Any, notices: list[str]) -> Content:
    """A tool call's output (a string, content items, or the `{content, success}` object older Codex
    versions sent for a failure) → the tool message's content."""
    if isinstance(value, str | list):
        return content_of(value, notices)
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    return orjson.dumps(value).decode()


def refuse_reference() -> RelayError:
    return RelayError.local_error(
        400, "item_reference is not supported: this gateway stores no responses or items; send the items "
        "themselves in `input`", "item_reference_not_supported", "invalid_request_error")


def read_items(items: list[Any], tools: ToolMap, notices: list[str]) -> list[ChatMessage]:
    """The input items → messages (see the module's docstring)."""
    history = History(tools, notices)
    for item in items:
        if isinstance(item, Mapping):
            _item(history, item, tools, notices)
    return history.finish()


def _item(history: History, item: Mapping[str, Any], tools: ToolMap, notices: list[str]) -> None:
    kind = item.get("type") or "message"
    call_id = str(item.get("call_id") or item.get("id") or "")
    if kind == "message":
        role = str(item.get("role") or "user")
        content = content_of(item.get("content"), notices)
        if role == "assistant":
            history.text(content)
        else:
            history.add({"role": role, "content": content})
    elif kind == "reasoning":
        history.reasoning(Reasoning.of(item, notices))
    elif kind == "function_call":
        name = tools.flat(str(item.get("name") or ""), item.get("namespace") or None)
        history.call(call_id, name, str(item.get("arguments") or ""))
    elif kind == "custom_tool_call":
        name = tools.flat(str(item.get("name") or ""), item.get("namespace") or None)
        history.call(call_id, name, orjson.dumps({"input": str(item.get("input") or "")}).decode())
    elif kind == "local_shell_call":
        history.call(call_id, LOCAL_SHELL, shell_arguments(item.get("action")))
    elif kind in ("tool_search_call", "tool_search_output") and item.get("execution") == "client":
        _tool_search(history, item, call_id, tools)
    elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        history.add({"role": "tool", "tool_call_id": call_id, "content": _output(item.get("output"), notices)})
    elif kind == "compaction":
        _compaction(history, item, notices)
    elif kind == "item_reference":
        raise refuse_reference()
    elif kind != "additional_tools":  # what OpenAI's own hosted tools did: no other provider takes it
        _note(notices, f"input.{kind or 'unknown'}")


def _tool_search(history: History, item: Mapping[str, Any], call_id: str, tools: ToolMap) -> None:
    """A client-run tool search: the call, or its output, whose tools are declared from then on."""
    if item.get("type") == "tool_search_call":
        history.call(call_id, TOOL_SEARCH, orjson.dumps(item.get("arguments") or {}).decode())
        return
    before = set(tools.declared)
    loaded = item.get("tools")
    tools.read(loaded if isinstance(loaded, list) else ())
    found = [name for name in tools.declared if name not in before]
    text = f"Tools loaded: {', '.join(found)}" if found else "No tools were loaded."
    history.add({"role": "tool", "tool_call_id": call_id, "content": text})


def _compaction(history: History, item: Mapping[str, Any], notices: list[str]) -> None:
    sealed = unseal(item.get("encrypted_content"))
    if sealed is not None and sealed[0] == TEXT and isinstance(sealed[1].get("text"), str):
        history.add({"role": "user", "content": f"{SUMMARY_PREFIX}\n\n{sealed[1]['text']}"})
    else:  # OpenAI's own compaction: only OpenAI can read it
        _note(notices, "input.compaction")
