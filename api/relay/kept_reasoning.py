"""Reasoning state kept on the gateway's side for clients that drop it.

Claude signs its thinking and Gemini 3 its function calls (api/upstream/reasoning.py); the next turn
must carry them back (Claude: "Expected thinking or redacted_thinking, but found text" when a tool
turn comes back without its thinking; Gemini 3: a 400 without the call's `thoughtSignature`). Many
OpenAI-format clients echo an assistant turn's `content`, `tool_calls` and `reasoning_content` but
neither `thinking_blocks` nor `extra_content` (opencode's and Qwen Code's OpenAI-compatible
providers, `llm`, LangChain's ChatOpenAI). So the state of each converted answer is kept, and found
again by what every client echoes:

  {u<user>}:rsn:<family>:<digest>   one assistant turn's state (JSON), for TTL_SECONDS
  {u<user>}:rsn                     the user's entries by when they were kept (a sorted set)

`<family>` is the adaptor's (`claude`: thinking blocks; `gemini`: thought signatures, and the
search's own toolCall/toolResponse parts of the tool-combination mode, which no client ever gets:
Adaptor.circulates/hidden_parts), so a state goes back only to a channel of the family that made
it; `<digest>` digests the turn's first tool call id, or, for a turn without tool calls, its text.
Keys live under the user's hash tag: one user's state is never read for another, and every API
process finds it (Redis). A state larger than MAX_ENTRY_BYTES with hidden parts is kept without them.

Bounds: at most MAX_ENTRIES per user (the oldest go first), MAX_ENTRY_BYTES per entry (a larger
state is not kept), TTL_SECONDS each (renewed for the index on every write).

Cost on the relay's path: no Redis call of its own. The lookup (`lookups`) rides on the admission
script's MGET, only when a chat request to a group and model some Claude or Gemini channel serves has
an assistant turn with tool calls but without that family's state; the attempt then finds the values
in the admission's answer (a family it did not foresee, or the tool combination's every turn, is read
at the attempt: one MGET). The write (`taken`) rides on the settlement script, for an answer that
carries state, from a client whose history does not show it keeps that state itself (tool
combination: from any client); a settlement that could not carry it (Redis away then) leaves it to
`flush`, in the background. What a stream's chunks carry is gathered as they pass (about 0.4 µs a
chunk; bench/kept_reasoning_cost.py).
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import RedisError

from api.services import redis_keys
from api.services.billing.quota import KEEP_STATES, Kept
from api.services.store import Script, Store
from api.upstream.base import Adaptor, RelayMode
from api.upstream.reasoning import (
    CLAUDE_FAMILY,
    GEMINI_FAMILY,
    GEMINI_SERVER_PARTS,
    gemini_signature,
    is_sealed,
    with_gemini_signature,
)
from api.upstream.registry import get_adaptor

if TYPE_CHECKING:
    from api.relay.job import Job

log = logging.getLogger("api.relay")

TTL_SECONDS = 3600  # an agent's next turn comes within seconds to minutes; an hour covers a pause
MAX_ENTRIES = 256  # per user: a few long-running agents' recent turns
MAX_ENTRY_BYTES = 64 * 1024  # Claude's summarized thinking with its signature is a few KiB
MAX_LOOKUPS = 16  # the most recent turns looked up per request (the open tool turn is the last)
FAMILIES = frozenset({CLAUDE_FAMILY, GEMINI_FAMILY})

# KEYS: the index, then the entries; ARGV: now (ms), TTL (s), the cap, then each entry's value. The
# same Lua runs in the settlement (quota.KEEP_STATES), which writes an answer's state in its own call.
KEEP = KEEP_STATES + "return keep_states(1, 2, tonumber(ARGV[1]), #KEYS - 1)"


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") == "text"
                       and isinstance(p.get("text"), str))
    return ""


def turn_ref(message: Mapping[str, Any]) -> str:
    """What finds a turn's state again: its first tool call's id, else its text ("" when neither)."""
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict) and isinstance(call.get("id"), str) and call["id"]:
            return _digest("c\0" + call["id"])
    text = _text_of(message.get("content"))
    return _digest("t\0" + text) if text else ""


def _has_state(message: Mapping[str, Any], family: str) -> bool:
    # Bodies and chunks are decoded JSON: dict checks (an ABC's isinstance costs ten times more).
    if family == CLAUDE_FAMILY:
        return any(isinstance(b, dict) and (b.get("type") == "redacted_thinking" or (
            isinstance(b.get("signature"), str) and b["signature"] and not is_sealed(b["signature"])))
            for b in message.get("thinking_blocks") or ())
    return any(gemini_signature(c) for c in message.get("tool_calls") or ()) or (
        "extra_content" in message and bool(gemini_signature(message)))


def keeps_own(messages: Any, family: str) -> bool:
    """Whether an assistant turn of the history carries `family`'s state (the client echoes it)."""
    return survey(messages, family)[0]


def wanted(messages: Any, family: str, every: bool = False) -> list[tuple[int, str]]:
    """(message index, ref) of the recent assistant turns without `family`'s state; none unless one
    of them calls a tool (a turn with tool calls is where a missing state is refused). `every`: the
    recent assistant turns whatever they carry (their hidden parts are never in the history)."""
    return survey(messages, family, every)[1]


def survey(messages: Any, family: str, every: bool = False) -> tuple[bool, list[tuple[int, str]]]:
    """(keeps_own, wanted) in one pass over the history; a turn's ref (a digest of its first call id
    or of its whole text) is only made when something is to be looked up."""
    if family not in FAMILIES or not isinstance(messages, list):
        return False, []
    own, calls = False, every
    candidates: list[tuple[int, dict[str, Any]]] = []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        if _has_state(message, family):
            own = True
            if not every:
                continue
        if len(candidates) < MAX_LOOKUPS:
            candidates.append((index, message))
            calls = calls or bool(message.get("tool_calls"))
    if not calls:
        return own, []
    out: list[tuple[int, str]] = []
    for index, message in candidates:
        ref = turn_ref(message)
        if ref:
            out.append((index, ref))
    return own, out


def restored(body: dict[str, Any], family: str, found: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """`body` with the kept states put back on their turns (a copy: the request's own body is kept
    for an attempt on a channel of another family)."""
    messages = list(body["messages"])
    for index, state in found.items():
        message = dict(messages[index])
        if family == CLAUDE_FAMILY and isinstance(state.get("blocks"), list):
            message["thinking_blocks"] = state["blocks"]
        elif family == GEMINI_FAMILY:
            given = state.get("calls")
            signatures: Mapping[Any, Any] = given if isinstance(given, Mapping) else {}
            if message.get("tool_calls"):
                message["tool_calls"] = [with_gemini_signature(dict(c), signatures.get(c.get("id")))
                                         if isinstance(c, Mapping) and isinstance(signatures.get(c.get("id")), str)
                                         else c for c in message["tool_calls"]]
            if isinstance(state.get("text"), str):
                with_gemini_signature(message, state["text"])
            if isinstance(state.get("server"), list):
                message[GEMINI_SERVER_PARTS] = state["server"]
        messages[index] = message
    return {**body, "messages": messages}


def state_of(message: Mapping[str, Any], family: str,
             hidden: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The state to keep of an answer's message (None: nothing to keep); `hidden`: the answer's parts
    the client did not get (Adaptor.hidden_parts)."""
    if family == CLAUDE_FAMILY:
        blocks = [dict(b) for b in message.get("thinking_blocks") or () if isinstance(b, Mapping)]
        blocks = [{k: v for k, v in b.items() if k != "index"} for b in blocks
                  if b.get("type") == "redacted_thinking" or (b.get("signature") and not is_sealed(b["signature"]))]
        return {"blocks": blocks} if blocks else None
    calls = {c["id"]: sig for c in message.get("tool_calls") or ()
             if isinstance(c, Mapping) and isinstance(c.get("id"), str) and (sig := gemini_signature(c))}
    return _gemini_state(calls, gemini_signature(message), hidden)


def _gemini_state(calls: dict[str, str], text: str | None,
                  hidden: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    if not calls and not text and not hidden:
        return None
    return {"calls": calls, **({"text": text} if text else {}), **({"server": hidden} if hidden else {})}


class StreamCollector:
    """A streamed answer's state, gathered from its chunks as they go to the client: Claude's
    thinking text (`reasoning_content`) up to each signature makes one block; tool call ids, Gemini's
    signatures and the text (digested as it comes) as they arrive."""

    __slots__ = ("blocks", "calls", "entry", "family", "ids", "reasoning", "signature", "size", "source", "text")

    def __init__(self, family: str, source: Adaptor | None = None) -> None:
        self.family = family
        self.source = source  # the adaptor whose answer has hidden parts to keep (Adaptor.circulates)
        self.blocks: list[dict[str, Any]] = []
        self.reasoning: list[str] = []
        self.ids: dict[int, str] = {}  # tool call index → id
        self.calls: dict[int, str] = {}  # tool call index → Gemini signature
        self.signature: str | None = None
        self.entry: tuple[str, dict[str, Any]] | None = None  # (ref, state) to keep once the answer is complete
        self.size = 0  # bytes of state gathered: past MAX_ENTRY_BYTES nothing is kept (memory stays bounded)
        self.text = hashlib.blake2b(b"t\0", digest_size=16)  # only for a turn without tool calls

    def add(self, chunks: list[Any]) -> None:
        for chunk in chunks:
            for choice in chunk.get("choices") or () if isinstance(chunk, dict) else ():
                delta = choice.get("delta")
                if isinstance(delta, dict):
                    self._delta(delta)

    def _delta(self, delta: dict[str, Any]) -> None:
        """Most deltas carry text only: each other field is looked at only when it is there."""
        content = delta.get("content")
        if content and isinstance(content, str):
            self.text.update(content.encode("utf-8", "surrogatepass"))
        if "reasoning_content" in delta and self.family == CLAUDE_FAMILY:
            reasoning = delta["reasoning_content"]
            if isinstance(reasoning, str) and reasoning:
                self.size += len(reasoning)
                if self.size <= MAX_ENTRY_BYTES:
                    self.reasoning.append(reasoning)
        if "thinking_blocks" in delta:
            self._blocks(delta["thinking_blocks"])
        if "tool_calls" in delta:
            self._calls(delta["tool_calls"])
        if "extra_content" in delta:
            signature = gemini_signature(delta)
            if signature:
                self.signature = signature

    def _blocks(self, blocks: Any) -> None:
        for block in blocks or ():
            if isinstance(block, dict) and block.get("type") == "redacted_thinking":
                self.blocks.append({"type": "redacted_thinking", "data": block.get("data") or ""})
            elif isinstance(block, dict) and isinstance(block.get("signature"), str) and block["signature"]:
                self.blocks.append({"type": "thinking", "thinking": "".join(self.reasoning),
                                    "signature": block["signature"]})
                self.reasoning.clear()

    def _calls(self, calls: Any) -> None:
        for call in calls or ():
            if not isinstance(call, dict):
                continue
            given = call.get("index")
            index = given if isinstance(given, int) else len(self.ids)
            if isinstance(call.get("id"), str) and call["id"]:
                self.ids.setdefault(index, call["id"])
            signature = gemini_signature(call) if "extra_content" in call else None
            if signature:
                self.calls[index] = signature

    def finished(self) -> tuple[str, dict[str, Any]] | None:
        """(ref, state) of the streamed turn, or None."""
        if self.ids:
            ref = _digest("c\0" + self.ids[min(self.ids)])
        else:
            ref = self.text.hexdigest() if self.text.digest() != _EMPTY_TEXT else ""
        if not ref or self.size > MAX_ENTRY_BYTES:
            return None
        if self.family == CLAUDE_FAMILY:
            state: dict[str, Any] | None = {"blocks": self.blocks} if self.blocks else None
        else:
            calls = {self.ids[i]: s for i, s in self.calls.items() if i in self.ids}
            state = _gemini_state(calls, self.signature, self.hidden())
        return (ref, state) if state is not None else None

    def hidden(self) -> list[dict[str, Any]] | None:
        return self.source.hidden_parts() if self.source is not None else None


_EMPTY_TEXT = hashlib.blake2b(b"t\0", digest_size=16).digest()


class KeptReasoning:
    """The kept states in Redis (see the module's docstring)."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock
        self.script = Script(store.redis, KEEP, store)

    def index_key(self, user_id: int) -> str:
        return redis_keys.user_key(self.store, user_id, "rsn")

    def key(self, user_id: int, family: str, ref: str) -> str:
        return redis_keys.user_key(self.store, user_id, "rsn", family, ref)

    async def fetch(self, user_id: int, family: str, refs: list[tuple[int, str]]) -> dict[int, dict[str, Any]]:
        """The kept states of these turns (by message index), in one round trip."""
        values = await self.store.call("MGET", *[self.key(user_id, family, ref) for _, ref in refs])
        return _decoded(refs, values)

    def entries(self, user_id: int, family: str, entries: list[tuple[str, dict[str, Any]]]) -> Kept | None:
        """These (ref, state) entries as a write (None: nothing to write); one larger than
        MAX_ENTRY_BYTES is left out."""
        out: list[tuple[str, bytes]] = []
        for ref, state in entries:
            value = orjson.dumps(state)
            if len(value) > MAX_ENTRY_BYTES and "server" in state:  # the signatures at least
                value = orjson.dumps({k: v for k, v in state.items() if k != "server"})
            if len(value) <= MAX_ENTRY_BYTES:
                out.append((self.key(user_id, family, ref), value))
        if not out:
            return None
        return Kept(self.index_key(user_id), out, TTL_SECONDS, MAX_ENTRIES, int(self.clock() * 1000))

    async def keep(self, user_id: int, family: str, entries: list[tuple[str, dict[str, Any]]]) -> None:
        """Keep these (ref, state) entries, in a call of their own (a settlement carries them instead:
        taken)."""
        kept = self.entries(user_id, family, entries)
        if kept is not None:
            await self.script([kept.index, *(key for key, _ in kept.entries)],
                              [kept.now_ms, kept.ttl, kept.cap, *(value for _, value in kept.entries)])


def _decoded(refs: list[tuple[int, str]], values: list[Any]) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for (index, _), value in zip(refs, values, strict=True):
        if value:
            try:
                state = orjson.loads(value)
            except orjson.JSONDecodeError:
                continue
            if isinstance(state, dict):
                found[index] = state
    return found


# -- the pipeline's calls (api/relay/handler.py, api/relay/streaming.py) ---------------------------------


_families: dict[frozenset[int], tuple[str, ...]] = {}


def families_of(types: frozenset[int]) -> tuple[str, ...]:
    """The reasoning families of these channel types' adaptors."""
    found = _families.get(types)
    if found is None:
        if len(_families) > 256:
            _families.clear()
        found = _families[types] = tuple(sorted({f for t in types if (f := get_adaptor(t).reasoning_family)}))
    return found


def lookups(job: Job) -> list[str]:
    """The kept states a chat request may need, read with its admission (QuotaService.pre_charge's
    `read`: no round trip of their own): for each family of the channels that serve its group and
    model, the turns of the history without that family's state (none when no turn calls a tool)."""
    kept = job.state.reasoning
    if kept is None or job.mode != RelayMode.CHAT:
        return []
    pinned = job.caller.pinned
    types = frozenset((pinned.type,)) if pinned is not None else job.state.index.types(job.group, job.model)
    families = families_of(types)
    if not families:
        return []
    messages, user_id = job.body.get("messages"), job.caller.user.id
    keys: list[str] = []
    surveyed: dict[str, Any] = {}
    job.kept_survey = (messages, surveyed)  # body_for takes them from here: the same history
    for family in families:
        surveyed[family] = found = survey(messages, family)
        keys += [kept.key(user_id, family, ref) for _, ref in found[1]]
    return keys


async def body_for(job: Job, adaptor: Adaptor) -> dict[str, Any]:
    """The request for a converted attempt on this adaptor: with the kept states of its turns put
    back where the client dropped them (the request's own body when there is nothing to look up).
    States read with the admission (lookups) are taken from there; others (another family than the
    admission foresaw, the tool-combination mode's every turn) are read here."""
    family, kept = adaptor.reasoning_family, job.state.reasoning
    job.kept = None
    if not family or kept is None or job.mode != RelayMode.CHAT:
        return job.body
    messages = job.body.get("messages")
    # A client whose history already carries this family's state keeps it itself: its answers are
    # not written (the first turn of a conversation, with no such history yet, is). Parts no client
    # gets (tool combination) are kept and looked up for every client.
    circulating = adaptor.circulates(job.body)
    before = job.kept_survey
    surveyed = before[1].get(family) if before is not None and before[0] is messages and not circulating else None
    own, refs = surveyed if surveyed is not None else survey(messages, family, every=circulating)
    job.kept = StreamCollector(family, adaptor if circulating else None) if circulating or not own else None
    if not refs:
        return job.body
    user_id = job.caller.user.id
    read = job.charge.read if job.charge is not None else {}
    keys = [kept.key(user_id, family, ref) for _, ref in refs]
    if all(key in read for key in keys):
        found = _decoded(refs, [read[key] for key in keys])
    else:
        try:
            found = await kept.fetch(user_id, family, refs)
        except RedisError as exc:  # the turn goes as the client sent it
            log.warning("request %s: kept reasoning state not read: %s", job.facts.request_id if job.facts else "",
                        exc)
            return job.body
    return restored(job.body, family, found) if found else job.body


def keep_answer(job: Job, answer: Mapping[str, Any]) -> None:
    """A whole converted answer's state, noted to be kept once the request is settled."""
    collector = job.kept
    choices = answer.get("choices")
    message = (choices[0].get("message") if isinstance(choices, list) and choices
               and isinstance(choices[0], Mapping) else None)
    if collector is not None and isinstance(message, Mapping):
        ref, state = turn_ref(message), state_of(message, collector.family, collector.hidden())
        collector.entry = (ref, state) if ref and state is not None else None


def keep_stream(job: Job) -> None:
    """A streamed converted answer's state (gathered on the way), noted to be kept."""
    if job.kept is not None:
        job.kept.entry = job.kept.finished()


def taken(job: Job) -> Kept | None:
    """The answer's state, for its settlement to write (QuotaService.settle's `keep`), taken from the
    job: flush then has nothing left to write."""
    collector, kept = job.kept, job.state.reasoning
    if collector is None or kept is None or collector.entry is None:
        return None
    entry, collector.entry = collector.entry, None
    return kept.entries(job.caller.user.id, collector.family, [entry])


def flush(job: Job) -> None:
    """An answer's state its settlement did not write (Redis unreachable then, or a flow that settles
    later), written in the background: the client never waits for it."""
    collector, kept = job.kept, job.state.reasoning
    if collector is not None and kept is not None and collector.entry is not None:
        job.state.spawn(_keep(kept, job.caller.user.id, collector.family, [collector.entry]))
        collector.entry = None


async def _keep(kept: KeptReasoning, user_id: int, family: str, entries: list[tuple[str, dict[str, Any]]]) -> None:
    try:
        await kept.keep(user_id, family, entries)
    except RedisError as exc:  # the next turn then goes as its client sends it
        log.warning("kept reasoning state not written for user %s: %s", user_id, exc)
