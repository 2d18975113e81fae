"""A fake Azure OpenAI resource: the v1 API (`/openai/v1/chat/completions`, `/embeddings`, `/responses`)
and the dated API's deployment URLs (`/openai/deployments/{deployment}/chat/completions|embeddings?api-version=…`),
answering as Azure does and refusing what Azure refuses, in Azure's error shape. Each rule cites its source:

- a key that is not the resource's (`api-key` header, or `Authorization: Bearer` on the v1 API): 401
  `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. …"}}`
  (SciSharp/BotSharp#386, microsoft/semantic-kernel#10337; the two headers: learn.microsoft.com/azure/ai-foundry/
  openai/latest, "ApiKeyAuth … api-key header", "ApiKeyAuth_ … authorization header");
- a deployment URL without `api-version`, or any path Azure does not serve: 404
  `{"error":{"code":"404","message":"Resource not found"}}` (MicrosoftDocs/azure-docs#114602,
  ThinkInAIXYZ/deepchat#262);
- an `api-version` on the v1 API other than `v1` and `preview` (learn.microsoft.com/azure/ai-foundry/openai/latest:
  "Possible values: v1, preview"): 400 (the message is this fake's: Azure's own text for it is not documented);
- a deployment the resource does not have (the path's on the dated API, the body's `model` on the v1 API): 404
  `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. …"}}`
  (chatboxai/chatbox#646, microsoft/autogen#822, Azure-Samples/azure-search-openai-demo-csharp#379);
- no `model` in a v1 body (the v1 reference marks it required; "With the v1 API, the `model` parameter is your Azure
  deployment name", openai/openai-node azure.md): 400 OpenAI's `missing_required_parameter`;
- `stream_options` on a dated version before 2024-09-01-preview (the lifecycle guide: "Changes between
  2024-09-01-preview and 2024-08-01-preview … stream_options & include_usage added",
  learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle): 400 "Unrecognized request argument supplied:
  stream_options";
- a prompt saying BLOCKED_WORD: 400 `content_filter` with Azure's `innererror.content_filter_result`
  (learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter, "prompt that triggered the filter").

Answers: chat completions as OpenAI's with Azure's `prompt_filter_results` / `content_filter_results`; a stream ends
with the usage chunk when `stream_options.include_usage` is asked; embeddings with usage; the Responses API as
OpenAI's (tests/upstream/providers/openai/fake_responses.py's model of it, behind Azure's key and deployment rules).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase
from tests.upstream.providers.openai.fake_responses import FakeResponses

KEY = "azure-resource-key-0123456789abcdef"
DEPLOYMENTS = frozenset({"gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-35-turbo", "text-embedding-3-small"})
V1_VERSIONS = frozenset({"v1", "preview"})
STREAM_OPTIONS_SINCE = "2024-09-01"
BLOCKED_WORD = "forbidden-topic"
DENIED = ("Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for "
          "an active subscription and use a correct regional API endpoint for your resource.")
NO_DEPLOYMENT = ("The API deployment for this resource does not exist. If you created the deployment within the last "
                 "5 minutes, please wait a moment and try again.")
FILTERED = ("The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please "
            "modify your prompt and retry.")
SAFE = {name: {"filtered": False, "severity": "safe"} for name in ("hate", "self_harm", "sexual", "violence")}


def azure_error(http_status: int, code: str, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message, **extra}}, status=http_status)


@dataclass
class FakeAzure(FakeBase):
    key: str = KEY
    deployments: frozenset[str] = DEPLOYMENTS
    pieces: tuple[str, ...] = ("Hello ", "from ", "Azure.")
    usage: tuple[int, int] = (21, 9)  # (prompt, completion) reported
    tool_call: dict[str, Any] | None = None  # answer with this call (name, arguments) instead of text
    seen: list[dict[str, Any]] = field(default_factory=list)  # path, query, headers, body of each request
    responses_api: FakeResponses = field(default_factory=lambda: FakeResponses(reply="Done, from Azure."))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/openai/v1/chat/completions", self.chat)
        app.router.add_post("/openai/v1/embeddings", self.embeddings)
        app.router.add_post("/openai/v1/responses", self.responses)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self.chat)
        app.router.add_post("/openai/deployments/{deployment}/embeddings", self.embeddings)
        app.router.add_route("*", "/{tail:.*}", self.not_found)
        return app

    @staticmethod
    async def not_found(request: web.Request) -> web.Response:
        return azure_error(404, "404", "Resource not found")

    # -- the rules every endpoint shares ------------------------------------------------------------

    async def admit(self, request: web.Request) -> tuple[dict[str, Any], web.Response | None]:
        """The body, or Azure's refusal of the request (key, API version, deployment)."""
        body = orjson.loads(await request.read() or b"{}")
        self.seen.append({"path": request.path, "query": dict(request.query), "headers": dict(request.headers),
                          "body": body})
        v1 = request.path.startswith("/openai/v1/")
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ") if v1 else None
        if self.key not in (request.headers.get("api-key"), bearer):
            return body, azure_error(401, "401", DENIED)
        version = request.query.get("api-version")
        if v1:
            if version is not None and version not in V1_VERSIONS:
                return body, azure_error(400, "BadRequest", f"API version {version} is not supported on /openai/v1")
            if not body.get("model"):
                return body, web.json_response({"error": {
                    "message": "Missing required parameter: 'model'.", "type": "invalid_request_error",
                    "param": "model", "code": "missing_required_parameter"}}, status=400)
            deployment = str(body["model"])
        else:
            if not version:
                return body, azure_error(404, "404", "Resource not found")
            deployment = request.match_info["deployment"]
            if "stream_options" in body and version < STREAM_OPTIONS_SINCE:
                return body, web.json_response({"error": {
                    "message": "Unrecognized request argument supplied: stream_options",
                    "type": "invalid_request_error", "param": None, "code": None}}, status=400)
        if deployment not in self.deployments:
            return body, azure_error(404, "DeploymentNotFound", NO_DEPLOYMENT)
        return body, None

    # -- chat completions ---------------------------------------------------------------------------

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body, refused = await self.admit(request)
        if refused is not None:
            return refused
        if BLOCKED_WORD in orjson.dumps(body.get("messages")).decode():
            return azure_error(400, "content_filter", FILTERED, param="prompt", type=None, status=400, innererror={
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": {**SAFE, "violence": {"filtered": True, "severity": "high"}}})
        model = str(body.get("model") or request.match_info.get("deployment"))
        prompt, completion = self.usage
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.pieces)}
        finish = "stop"
        if self.tool_call is not None:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_az1", "type": "function", "function": self.tool_call}]}
            finish = "tool_calls"
        base = {"id": "chatcmpl-az1", "created": 1_750_000_000, "model": model, "system_fingerprint": "fp_az"}
        if not body.get("stream"):
            return web.json_response({**base, "object": "chat.completion", "usage": usage,
                                      "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": SAFE}],
                                      "choices": [{"index": 0, "message": message, "finish_reason": finish,
                                                   "content_filter_results": SAFE}]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        chunk = {**base, "object": "chat.completion.chunk"}
        # Azure's first chunk carries the prompt's filter results and no choices.
        frames: list[dict[str, Any]] = [{**chunk, "model": "", "choices": [], "prompt_filter_results": [
            {"prompt_index": 0, "content_filter_results": SAFE}]}]
        if self.tool_call is not None:
            frames.append({**chunk, "choices": [{"index": 0, "delta": message, "finish_reason": None}]})
        else:
            frames += [{**chunk, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None,
                                              "content_filter_results": SAFE}]} for piece in self.pieces]
        frames.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            frames.append({**chunk, "choices": [], "usage": usage})
        for frame in frames:
            await resp.write(b"data: " + orjson.dumps(frame) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        return resp

    # -- embeddings ---------------------------------------------------------------------------------

    async def embeddings(self, request: web.Request) -> web.Response:
        body, refused = await self.admit(request)
        if refused is not None:
            return refused
        given = body.get("input")
        texts = given if isinstance(given, list) else [given]
        return web.json_response({"object": "list", "model": "text-embedding-3-small",
                                  "data": [{"object": "embedding", "index": i, "embedding": [0.5, -0.25, 0.125]}
                                           for i in range(len(texts))],
                                  "usage": {"prompt_tokens": 6, "total_tokens": 6}})

    # -- the Responses API (v1 only) ----------------------------------------------------------------

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body, refused = await self.admit(request)
        if refused is not None:
            return refused
        api = self.responses_api
        refused = api.problem(body)
        if refused is not None:
            return refused
        output = api.output(api.turn(body))
        if not body.get("stream"):
            return web.json_response(api.response(body, output, "completed"))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for i, (kind, data) in enumerate(api.events(body, output)):
            await resp.write(f"event: {kind}\ndata: ".encode() + orjson.dumps(
                {"type": kind, "sequence_number": i, **data}) + b"\n\n")
        return resp
