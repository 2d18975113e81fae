"""A fake Cohere v2 API: chat at `/v2/chat` (a JSON answer, or SSE events when `stream` is true),
rerank at `/v2/rerank` and embeddings at `/v2/embed`, each as strict as Cohere documents it.

Every rule below cites where Cohere says so. The request schemas are those of Cohere's OpenAPI
document (github.com/cohere-ai/cohere-developer-experience, cohere-openapi.yaml, rendered at
docs.cohere.com/reference/chat, /reference/chat-stream, /reference/rerank, /reference/embed).
Errors are `{"message": …}` with the HTTP status (the same document, components/responses).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

KEY = "co-upstream"
REPLY_PIECES = ["Hello ", "again, ", "from Cohere."]
THOUGHT = "The user greets me twice."
TOOL_PLAN = "I will look the weather up."
UNITS = {"input_tokens": 15, "output_tokens": 7}  # billed_units: what Cohere bills
TOKENS = {"input_tokens": 80, "output_tokens": 9}  # tokens: with Cohere's own prompt template around
SEARCH_UNITS = {"search_units": 1}
EMBED_UNITS = {"input_tokens": 4}
CHAT_MODELS = frozenset({"command-a-03-2025", "command-a-reasoning-08-2025", "command-r7b-12-2024",
                         "command-r-08-2024"})
RERANK_MODELS = frozenset({"rerank-v3.5", "rerank-v4.0-pro"})
EMBED_MODELS = frozenset({"embed-v4.0"})

# docs.cohere.com/reference/chat, request body: the fields /v2/chat takes. Anything else (v1's
# `message`, `chat_history`, `preamble`, `connectors`, OpenAI's `top_p`, `stop`, `n` …) is refused with
# 422 "unknown field: parameter X is not a valid field" (the answer quoted in cohere-ai/notebooks#226).
CHAT_FIELDS = frozenset({"stream", "model", "messages", "tools", "strict_tools", "documents", "citation_options",
                         "response_format", "safety_mode", "max_tokens", "stop_sequences", "temperature", "seed",
                         "frequency_penalty", "presence_penalty", "k", "p", "logprobs", "tool_choice", "thinking",
                         "priority"})
# docs.cohere.com/reference/rerank (v2): no `return_documents`, no `rank_fields` any more.
RERANK_FIELDS = frozenset({"model", "query", "documents", "top_n", "max_tokens_per_doc", "priority"})
# docs.cohere.com/reference/embed (v2).
EMBED_FIELDS = frozenset({"texts", "images", "model", "input_type", "inputs", "max_tokens", "output_dimension",
                          "embedding_types", "truncate", "priority"})
# docs.cohere.com/reference/chat: ChatMessageV2 is one of the user, assistant, system and tool messages.
ROLES = frozenset({"system", "user", "assistant", "tool"})
# docs.cohere.com/reference/embed: EmbedInputType and EmbeddingType.
INPUT_TYPES = frozenset({"search_document", "search_query", "classification", "clustering", "image"})
EMBEDDING_TYPES = frozenset({"float", "int8", "uint8", "binary", "ubinary", "base64"})


def refusal(status: int, message: str) -> web.Response:
    return web.json_response({"message": message}, status=status)


def unknown_field(name: str, page: str) -> web.Response:
    # cohere-ai/notebooks#226: 422 "unknown field: parameter tool_content is not a valid field. For proper
    # usage, please refer to https://docs.cohere.com/reference/chat"
    return refusal(422, f"unknown field: parameter {name} is not a valid field. For proper usage, please refer to "
                        f"https://docs.cohere.com/reference/{page}")


def model_missing(model: Any) -> web.Response:
    # litellm#2515, cohere-python#590: 404 "model 'x' not found, make sure the correct model ID was used and that
    # you have access to the model."
    return refusal(404, f"model '{model}' not found, make sure the correct model ID was used and that you have "
                        "access to the model.")


def _number_in(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high


def chat_problem(body: dict[str, Any]) -> str | None:
    """What Cohere's /v2/chat refuses with 400 "invalid request: …" in a body of known fields."""
    # reference/chat: `model` and `messages` are required.
    if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list) or not body["messages"]:
        return "model and messages are required"
    # reference/chat: temperature 0..1, p 0.01..0.99, k 0..500, penalties 0..1, at most 5 stop sequences.
    for name, low, high in (("temperature", 0, 1), ("p", 0.01, 0.99), ("k", 0, 500), ("frequency_penalty", 0, 1),
                            ("presence_penalty", 0, 1)):
        if name in body and not _number_in(body[name], low, high):
            return f"{name} must be between {low} and {high}"
    stops = body.get("stop_sequences")
    if stops is not None and (not isinstance(stops, list) or len(stops) > 5):
        return "stop_sequences must be a list of up to 5 strings"
    # reference/chat: tool_choice is REQUIRED or NONE, and REQUIRED needs `tools`.
    if "tool_choice" in body and (body["tool_choice"] not in ("REQUIRED", "NONE") or not body.get("tools")):
        return "tool_choice must be REQUIRED or NONE, with tools"
    # reference/chat, tool_choice: "only compatible with models Command-r7b and newer".
    if "tool_choice" in body and body["model"].startswith("command-r-"):
        return f"tool_choice is not supported with {body['model']}"
    # reference/chat, ToolV2: {type: function, function: {name, parameters (JSON schema)}}.
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict) or not function.get("name") \
                or not isinstance(function.get("parameters"), dict):
            return "each tool must be {type: function, function: {name, parameters}}"
    # reference/chat, response_format: "not supported when used in combinations with the documents or tools".
    if body.get("response_format") and (body.get("tools") or body.get("documents")):
        return "response_format is not supported with tools or documents"
    # reference/chat, Thinking: {type: enabled|disabled, token_budget ≥ 1}.
    thinking = body.get("thinking")
    if thinking is not None and (not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled")
                                 or not _number_in(thinking.get("token_budget", 1), 1, 10**9)):
        return "thinking must be {type: enabled|disabled, token_budget}"
    return messages_problem(body["messages"])


def messages_problem(messages: list[Any]) -> str | None:
    calls: set[str] = set()
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            return f"invalid role: {role}"
        content = message.get("content")
        if role in ("system", "user", "tool") and not isinstance(content, str | list):
            return f"a {role} message needs content"  # reference/chat: content is required there
        if role == "assistant":
            # reference/chat, AssistantMessageV2: tool_calls [{id, type: function, function}], tool_plan,
            # content as a string or text/thinking blocks.
            for call in message.get("tool_calls") or ():
                if not call.get("id") or call.get("type") != "function":
                    return "a tool call needs its id and type function"
                calls.add(call["id"])
            if isinstance(content, list) and any(b.get("type") not in ("text", "thinking") for b in content):
                return "assistant content blocks are text or thinking"
        if role == "user" and isinstance(content, list) and any(b.get("type") not in ("text", "image_url")
                                                                for b in content):
            return "user content blocks are text or image_url"  # reference/chat, Content
        if role == "tool" and message.get("tool_call_id") not in calls:
            # reference/chat, ToolMessageV2: tool_call_id is "the id of the associated tool call".
            return f"tool_call_id {message.get('tool_call_id')} names no earlier tool call"
    return None


@dataclass
class FakeCohere(FakeBase):
    seen: list[dict[str, Any]] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v2/chat", self.chat)
        app.router.add_post("/v2/rerank", self.rerank)
        app.router.add_post("/v2/embed", self.embed)
        app.router.add_route("*", "/{tail:.*}", self.nowhere)
        return app

    async def nowhere(self, request: web.Request) -> web.Response:
        # components/responses/NotFound: "The endpoint does not exist".
        return refusal(404, f"{request.method} {request.path} not found")

    async def read(self, request: web.Request, fields: frozenset[str], page: str) -> dict[str, Any] | web.Response:
        # reference/chat, Authentication: `Authorization: Bearer <token>`; a wrong one is 401 "invalid api token"
        # (wandb/edu#155, cohere-ai/cohere-toolkit#857).
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return refusal(401, "invalid api token")
        try:
            body = await request.json()
        except ValueError:
            return refusal(400, "invalid request: the body is not valid JSON")  # components/responses/BadRequest
        self.seen.append({"path": request.path, "body": body})
        if not isinstance(body, dict):
            return refusal(400, "invalid request: the body must be an object")
        unknown = sorted(set(body) - fields)
        return unknown_field(unknown[0], page) if unknown else body

    # -- chat ---------------------------------------------------------------------------------------

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await self.read(request, CHAT_FIELDS, "chat")
        if isinstance(body, web.Response):
            return body
        problem = chat_problem(body)
        if problem:
            return refusal(400, f"invalid request: {problem}")
        if body["model"] not in CHAT_MODELS:
            return model_missing(body["model"])
        answer = self.answer(body)
        if body.get("stream") is True:
            return await self.stream(request, answer)
        return web.json_response(answer)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """A tool call when tools are offered to a user turn; otherwise text (which quotes a tool result
        when the last turn is one); thinking first on a reasoning model unless it is disabled."""
        last = body["messages"][-1]
        content: list[dict[str, Any]] = []
        thinks = body["model"].startswith("command-a-reasoning") and (body.get("thinking") or {}).get(
            "type") != "disabled"
        if thinks:
            content.append({"type": "thinking", "thinking": THOUGHT})
        usage = {"billed_units": UNITS, "tokens": TOKENS}
        answer_id = f"c-{next(self._ids)}"
        if body.get("tools") and last["role"] == "user" and body.get("tool_choice") != "NONE":
            call = {"id": f"get_weather_{answer_id}", "type": "function",
                    "function": {"name": body["tools"][0]["function"]["name"], "arguments": '{"city": "Paris"}'}}
            return {"id": answer_id, "finish_reason": "TOOL_CALL", "usage": usage,
                    "message": {"role": "assistant", "tool_plan": TOOL_PLAN, "tool_calls": [call], "content": content}}
        pieces = [f"It is {last['content']}."] if last["role"] == "tool" else REPLY_PIECES
        content.append({"type": "text", "text": "".join(pieces)})
        return {"id": answer_id, "finish_reason": "COMPLETE", "usage": usage,
                "message": {"role": "assistant", "content": content}}

    async def stream(self, request: web.Request, answer: dict[str, Any]) -> web.StreamResponse:
        """The SSE events of reference/chat-stream (its examples): `event: <type>` and `data: <json>`."""
        message = answer["message"]
        events: list[dict[str, Any]] = [{"type": "message-start", "id": answer["id"],
                                         "delta": {"message": {"role": "assistant"}}}]
        for index, block in enumerate(message["content"]):
            kind = block["type"]
            events.append({"type": "content-start", "index": index,
                           "delta": {"message": {"content": {"type": kind, kind: ""}}}})
            text = block[kind]
            pieces = REPLY_PIECES if text == "".join(REPLY_PIECES) else [text[:6], text[6:]]
            events += [{"type": "content-delta", "index": index, "delta": {"message": {"content": {kind: p}}}}
                       for p in pieces]
            events.append({"type": "content-end", "index": index})
        if message.get("tool_calls"):
            events += [{"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}}
                       for p in (TOOL_PLAN[:7], TOOL_PLAN[7:])]
            for index, call in enumerate(message["tool_calls"]):
                start = {**call, "function": {**call["function"], "arguments": ""}}
                events.append({"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": start}}})
                arguments = call["function"]["arguments"]
                events += [{"type": "tool-call-delta", "index": index,
                            "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}}}
                           for p in (arguments[:5], arguments[5:])]
                events.append({"type": "tool-call-end", "index": index})
        events.append({"type": "message-end", "delta": {"finish_reason": answer["finish_reason"],
                                                        "usage": answer["usage"]}})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in events:
            await response.write(b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n")
        await response.write_eof()
        return response

    # -- rerank and embed ---------------------------------------------------------------------------

    async def rerank(self, request: web.Request) -> web.Response:
        body = await self.read(request, RERANK_FIELDS, "rerank")
        if isinstance(body, web.Response):
            return body
        documents = body.get("documents")
        # reference/rerank (v2): model, query and documents are required; documents are strings.
        if not isinstance(body.get("query"), str) or not isinstance(documents, list) or not documents \
                or not all(isinstance(d, str) for d in documents) or not isinstance(body.get("model"), str):
            return refusal(400, "invalid request: model, query and documents (a list of strings) are required")
        if body["model"] not in RERANK_MODELS:
            return model_missing(body["model"])
        results = [{"index": i, "relevance_score": round(1 - i / 10, 2)} for i in range(len(documents))]
        results.reverse()  # the last document ranks first here
        return web.json_response({"id": "rr-1", "results": results[: body.get("top_n") or len(results)],
                                  "meta": {"api_version": {"version": "2"}, "billed_units": SEARCH_UNITS}})

    async def embed(self, request: web.Request) -> web.Response:
        body = await self.read(request, EMBED_FIELDS, "embed")
        if isinstance(body, web.Response):
            return body
        texts = body.get("texts")
        # reference/embed (v2): model and input_type are required; at most 96 texts; the embedding types named.
        if not isinstance(body.get("model"), str) or body.get("input_type") not in INPUT_TYPES:
            return refusal(400, "invalid request: model and a valid input_type are required")
        if not isinstance(texts, list) or not 1 <= len(texts) <= 96 or not all(isinstance(t, str) for t in texts):
            return refusal(400, "invalid request: texts must be a list of 1 to 96 strings")
        types = body.get("embedding_types", ["float"])
        if not isinstance(types, list) or not set(types) <= EMBEDDING_TYPES:
            return refusal(400, "invalid request: unknown embedding type")
        if body["model"] not in EMBED_MODELS:
            return model_missing(body["model"])
        size = body.get("output_dimension") or 4
        vectors = [[round((i + 1) / (d + 2), 3) for d in range(size)] for i in range(len(texts))]
        return web.json_response({"id": "e-1", "response_type": "embeddings_by_type", "texts": texts,
                                  "embeddings": {"float": vectors},
                                  "meta": {"api_version": {"version": "2"}, "billed_units": EMBED_UNITS}})
