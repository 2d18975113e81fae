"""A fake Vertex AI: Google's OAuth token endpoint, the project paths of both publishers
(`/v1/projects/{p}/locations/{r}/publishers/{google|anthropic}/models/{model}:{action}`, Bearer access
token), the express-mode paths (`/v1/publishers/google/models/{model}:{action}`, API key) and text
embeddings (`:predict`). Gemini bodies are judged and answered by FakeGemini, Claude bodies by
FakeClaude; errors come in Google's shape `{"error": {"code", "message", "status", "details"}}`.

Strict where Vertex is (each rule cites where the refusal is documented or reported):
- the token endpoint takes only an RS256 assertion signed by the service account's key
  (developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests);
- project paths refuse an API key: 401 UNAUTHENTICATED "API keys are not supported by this API…",
  reason CREDENTIALS_MISSING (SillyTavern/SillyTavern#4223, google-gemini/gemini-cli#1463), and a
  missing or unknown access token: 401 UNAUTHENTICATED (cloud.google.com/apis/design/errors);
- express paths have no project or location and take an API key only
  (cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/vertex-ai-express-mode-api-reference),
  in `?key=` (…/express-mode/overview) or `x-goog-api-key` (what googleapis/python-genai sends,
  google/genai/_api_client.py); none: 401 UNAUTHENTICATED CREDENTIALS_MISSING
  (cloud.google.com/apis/design/errors); an unknown one: 400 INVALID_ARGUMENT "API key not valid…",
  reason API_KEY_INVALID (cloud.google.com/docs/authentication/api-keys-use); a key whose project
  blocks the API: 403 PERMISSION_DENIED, reason API_KEY_SERVICE_BLOCKED (Portkey-AI/gateway#1441);
- express mode serves Google's models only (…/express-mode/overview, "available models"): another
  publisher is 404 NOT_FOUND;
- Claude bodies carry `anthropic_version: vertex-2023-10-16` and no model
  (platform.claude.com/docs/en/build-with-claude/claude-on-vertex-ai);
- `:predict` takes only `instances` (required), `parameters` and `labels`
  (cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models/predict);
  each instance needs `content`, `task_type` is one of the documented task types and `title` goes
  with RETRIEVAL_DOCUMENT only; `parameters` are `autoTruncate` and `outputDimensionality`, a
  dimension the model does not have is INVALID_ARGUMENT
  (…/generative-ai/docs/model-reference/text-embeddings-api, …/reference/rest/Shared.Types/
  TextEmbeddingPredictionParams); at most 250 instances, one for Gemini embedding models: "N
  instance(s) is allowed per prediction. Actual: M" (…/embeddings/get-text-embeddings "API limits";
  onyx-dot-app/onyx#2343; mem0ai/mem0#6189). Answer: `predictions[].embeddings.{values,
  statistics.{truncated, token_count}}` (…/reference/rest/Shared.Types/TextEmbedding; the snake_case
  names as the prediction carries them: langchain-ai @langchain/google-vertexai
  VertexEmbeddingsResponsePrediction).
"""
from __future__ import annotations

import base64
from typing import Any

import orjson
from aiohttp import web
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini, canonical

API_KEY = "AQ.Ab8RN6Jexpress-mode-key-0123456789abcdef"
BLOCKED_KEY = "AIzaSyBlockedBlockedBlockedBlocked00000"
PROJECT = "proj-7"
# Embedding models and their largest output dimension (text-embeddings-api, "Supported models").
EMBEDDING_MODELS = {"gemini-embedding-001": 3072, "text-embedding-005": 768, "text-multilingual-embedding-002": 768}
TASK_TYPES = {"RETRIEVAL_QUERY", "RETRIEVAL_DOCUMENT", "SEMANTIC_SIMILARITY", "CLASSIFICATION", "CLUSTERING",
              "QUESTION_ANSWERING", "FACT_VERIFICATION", "CODE_RETRIEVAL_QUERY"}
PREDICT_FIELDS = {"instances", "parameters", "labels"}
PARAMETER_FIELDS = {"autoTruncate", "outputDimensionality"}
NO_API_KEYS = ("API keys are not supported by this API. Expected OAuth2 access token or other authentication "
               "credentials that assert a principal. See https://cloud.google.com/docs/authentication")
NO_CREDENTIALS = ("Request is missing required authentication credential. Expected OAuth 2 access token, login "
                  "cookie or other valid authentication credential.")


def error(status: int, code: str, message: str, reason: str = "") -> web.Response:
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                "domain": "googleapis.com"}] if reason else []
    return web.json_response({"error": {"code": status, "message": message, "status": code, "details": details}},
                             status=status)


def api_key_of(request: web.Request) -> str | None:
    return request.query.get("key") or request.headers.get("x-goog-api-key")


def token_count(text: str) -> int:
    return len(text.split()) + 1


class FakeVertex:
    """Google's token endpoint plus Vertex's publisher routes, for both kinds of credential."""

    def __init__(self, expires_in: int = 3600, token_prefix: str = "ya29.token-") -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.expires_in = expires_in
        self.token_prefix = token_prefix  # the access tokens issued: prefix + 1, 2, …
        self.tokens: list[str] = []
        self.api_keys = {API_KEY}
        self.blocked_keys = {BLOCKED_KEY}
        self.gemini = FakeGemini(bearers=set())
        self.claude = FakeClaude()
        self.claude_seen: list[dict[str, Any]] = []
        self.express_seen: list[dict[str, Any]] = []  # requests on express paths
        self.predict_seen: list[dict[str, Any]] = []  # `:predict` requests, both kinds of path
        # A batch holding this text is answered 500, as Vertex answers a request past its 20,000-token
        # limit (…/embeddings/get-text-embeddings "API limits", quoted in onyx-dot-app/onyx#2343).
        self.too_long: str | None = None
        self.url = ""

    def service_account(self) -> str:
        pem = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode()
        return orjson.dumps({"type": "service_account", "project_id": PROJECT, "private_key_id": "k1",
                             "private_key": pem, "client_email": f"relay@{PROJECT}.iam.gserviceaccount.com",
                             "token_uri": f"{self.url}/token"}, option=orjson.OPT_INDENT_2).decode()

    def bearer_ok(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") in {f"Bearer {t}" for t in self.tokens}

    # -- routes ------------------------------------------------------------------------------------

    async def token(self, request: web.Request) -> web.Response:
        assertion = (await request.post())["assertion"]
        header, claims, signature = str(assertion).split(".")
        pad = lambda part: base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))  # noqa: E731
        self.key.public_key().verify(pad(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(),
                                     hashes.SHA256())
        token = f"{self.token_prefix}{len(self.tokens) + 1}"
        self.tokens.append(token)
        assert self.gemini.bearers is not None
        self.gemini.bearers.add(token)
        return web.json_response({"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"})

    async def project_google(self, request: web.Request) -> web.StreamResponse:
        if api_key_of(request):
            return error(401, "UNAUTHENTICATED", NO_API_KEYS, "CREDENTIALS_MISSING")
        model, _, action = request.match_info["target"].partition(":")
        if action != "predict":
            return await self.gemini.handle(request)
        if not self.bearer_ok(request):
            return error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        return self.predict(request, await request.json(), model)

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model, _, action = request.match_info["target"].partition(":")
        self.claude_seen.append({"path": request.path, "model": model, "action": action, "body": body,
                                 "authorization": request.headers.get("Authorization"),
                                 "headers": dict(request.headers)})
        if api_key_of(request):
            return error(401, "UNAUTHENTICATED", NO_API_KEYS, "CREDENTIALS_MISSING")
        if not self.bearer_ok(request):
            return error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        if body.get("anthropic_version") != "vertex-2023-10-16":
            return error(400, "INVALID_ARGUMENT", "anthropic_version: vertex-2023-10-16 is required")
        problem = self.claude.problem(body, "vertex", model)
        if problem:
            return web.json_response({"type": "error", "error": {"type": "invalid_request_error",
                                                                 "message": problem}}, status=400)
        if action == "rawPredict":
            return web.json_response(self.claude.message(body, model))
        return await self.claude.stream(request, self.claude.events(body, model))

    async def express(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model, _, action = request.match_info["target"].partition(":")
        self.express_seen.append({"path": request.path, "query": dict(request.query), "model": model,
                                  "action": action, "headers": dict(request.headers), "body": body})
        key = api_key_of(request)
        if not key:
            return error(401, "UNAUTHENTICATED", NO_CREDENTIALS, "CREDENTIALS_MISSING")
        if key in self.blocked_keys:
            return error(403, "PERMISSION_DENIED", "Requests to this API aiplatform.googleapis.com method "
                         "google.cloud.aiplatform.v1.PredictionService.GenerateContent are blocked.",
                         "API_KEY_SERVICE_BLOCKED")
        if key not in self.api_keys:
            return error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                         "API_KEY_INVALID")
        if request.match_info["publisher"] != "google":
            return error(404, "NOT_FOUND", f"Publisher Model `publishers/{request.match_info['publisher']}/models/"
                                           f"{model}` was not found or your project does not have access to it.")
        if action == "predict":
            return self.predict(request, body, model)
        return await self.serve_gemini(request, body, model, action)

    # -- answers -----------------------------------------------------------------------------------

    async def serve_gemini(self, request: web.Request, body: dict[str, Any], model: str,
                           action: str) -> web.StreamResponse:
        """FakeGemini's judgement and answer, once the express path's API key is accepted."""
        gemini = self.gemini
        if gemini.fail_status:
            return web.json_response(gemini.fail_body or {}, status=gemini.fail_status)
        problem = gemini.problem(canonical(body), model)
        if problem:
            return error(400, "INVALID_ARGUMENT", problem)
        turn = gemini.turn(canonical(body))
        parts = gemini.parts(turn, model)
        grounding = gemini.grounding(canonical(body), turn.text)
        if action == "generateContent":
            return web.json_response(gemini.answer(parts, "STOP", True, grounding))
        if action != "streamGenerateContent" or request.query.get("alt") != "sse":
            return error(404, "NOT_FOUND", f"unknown action {action}")
        return await gemini.stream(request, parts, grounding)

    def predict_problem(self, body: dict[str, Any], model: str) -> str | None:
        for key in body:
            if key not in PREDICT_FIELDS:
                return f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
        instances = body.get("instances")
        if not isinstance(instances, list) or not instances:
            return "instances is required."
        allowed = 1 if model.startswith("gemini-embedding") else 250
        if len(instances) > allowed:
            return f"{allowed} instance(s) is allowed per prediction. Actual: {len(instances)}"
        for instance in instances:
            if not isinstance(instance, dict) or not isinstance(instance.get("content"), str):
                return "content is required in every instance."
            task = instance.get("task_type")
            if task is not None and task not in TASK_TYPES:
                return f"Unsupported task type: {task}"
            if "title" in instance and task != "RETRIEVAL_DOCUMENT":
                return "title is only valid with task_type RETRIEVAL_DOCUMENT."
        parameters = body.get("parameters") or {}
        for key in parameters:
            if key not in PARAMETER_FIELDS:
                return f'Invalid parameter "{key}".'
        dims = parameters.get("outputDimensionality")
        if dims is not None and (not isinstance(dims, int) or not 1 <= dims <= EMBEDDING_MODELS[model]):
            return f"Unsupported output dimensionality {dims} for model {model}."
        return None

    def predict(self, request: web.Request, body: dict[str, Any], model: str) -> web.Response:
        self.predict_seen.append({"path": request.path, "query": dict(request.query), "model": model,
                                  "headers": dict(request.headers), "body": body})
        if model not in EMBEDDING_MODELS:
            return error(404, "NOT_FOUND", f"Publisher Model `publishers/google/models/{model}` was not found or "
                                           "your project does not have access to it.")
        problem = self.predict_problem(body, model)
        if problem:
            return error(400, "INVALID_ARGUMENT", problem)
        if self.too_long is not None and any(i["content"] == self.too_long for i in body["instances"]):
            return error(500, "INTERNAL", "Internal error encountered.")
        dims = (body.get("parameters") or {}).get("outputDimensionality") or 4
        predictions = [{"embeddings": {"values": [float(len(i["content"]))] + [0.5] * (dims - 1),
                                       "statistics": {"truncated": False, "token_count": token_count(i["content"])}}}
                       for i in body["instances"]]
        characters = sum(len(i["content"]) for i in body["instances"])
        return web.json_response({"predictions": predictions, "metadata": {"billableCharacterCount": characters}})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/token", self.token)
        app.router.add_post("/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{target}",
                            self.anthropic)
        app.router.add_post("/v1/projects/{project}/locations/{region}/publishers/google/models/{target}",
                            self.project_google)
        app.router.add_post(r"/{version:v1|v1beta1}/publishers/{publisher}/models/{target}", self.express)
        return app
