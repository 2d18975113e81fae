"""A strict fake of the Amazon Bedrock runtime of one region: InvokeModel and
InvokeModelWithResponseStream for Claude (Anthropic's Messages body, answered by FakeClaude),
Converse and ConverseStream for the other models, both streams in AWS's binary event-stream framing.

What it refuses, as Bedrock does (each rule cites its source):
- a request neither SigV4-signed for this region with the known key pair nor carrying a known
  Bedrock API key as a Bearer token (403);
- the base id of a model served through inference profiles only, and a profile of a geography the
  region is not in (400 ValidationException);
- a Converse body outside the documented request syntax (400 ValidationException).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from api.upstream.decoders import encode_event_stream_message
from api.upstream.signing import sigv4
from tests.upstream.providers.claude.fake_anthropic import FakeClaude

ACCESS, SECRET, REGION = "AKIAFAKE", "fake/Secret+Key", "us-west-2"
API_KEY = "ABSKQmVkcm9ja0FQSUtleS1mYWtlLWF0LTEyMzQ1Njc4OTA="
GEOGRAPHIES = {"us": ("us-",), "us-gov": ("us-gov-",), "eu": ("eu-",), "apac": ("ap-",), "global": ("",)}

# Base ids invoked on demand; any other id of these families must go through an inference profile
# (docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html; the model cards list
# each model's profile ids).
ON_DEMAND = {"anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-sonnet-20240229-v1:0",
             "anthropic.claude-3-opus-20240229-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0",
             "mistral.mistral-large-2407-v1:0", "deepseek.v3-v1:0"}
PROFILE_ONLY = ("anthropic.", "amazon.nova-", "meta.llama3-3-", "meta.llama4-", "deepseek.r1-", "mistral.pixtral-")
# Tool use per model family, Converse and ConverseStream
# (docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-supported-models-features.html).
NO_TOOLS = ("deepseek.r1-",)
NO_STREAMING_TOOLS = ("meta.llama", "mistral.mistral-large")
# toolChoice `any`/`tool`: Claude, Mistral Large and Nova only
# (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolChoice.html).
TOOL_CHOICE = ("anthropic.", "amazon.nova", "mistral.mistral-large")
# The request syntax (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
CONVERSE_FIELDS = {"messages", "system", "inferenceConfig", "toolConfig", "guardrailConfig",
                   "additionalModelRequestFields", "additionalModelResponseFieldPaths", "promptVariables",
                   "requestMetadata", "performanceConfig", "serviceTier", "outputConfig"}
INFERENCE_FIELDS = {"maxTokens", "temperature", "topP", "stopSequences"}
# ContentBlock is a union: exactly one member
# (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html).
BLOCK_MEMBERS = {"text", "image", "document", "video", "toolUse", "toolResult", "guardContent", "cachePoint",
                 "reasoningContent", "citationsContent", "searchResult"}
IMAGE_FORMATS = {"png", "jpeg", "gif", "webp"}  # API_runtime_ImageBlock.html
CORAL = "http://internal.amazon.com/coral/com.amazon.bedrock/"


def aws_error(status: int, kind: str, message: str, key: str = "message") -> web.Response:
    """Bedrock's error answer: the exception's name in `x-amzn-ErrorType`, its message in the body
    (docs.aws.amazon.com/bedrock/latest/userguide/troubleshooting-api-error-codes.html)."""
    return web.json_response({key: message}, status=status, headers={"x-amzn-ErrorType": f"{kind}:{CORAL}"})


def event(name: str, payload: dict[str, Any]) -> bytes:
    """One event-stream message of ConverseStream (its payload padded with `p`, as Bedrock does)."""
    body = orjson.dumps({**payload, "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"[: 8 + len(name) % 9]})
    return encode_event_stream_message(
        {":event-type": name, ":content-type": "application/json", ":message-type": "event"}, body)


@dataclass
class ConverseScript:
    """What the fake's Converse answers: text, an optional tool call, optional reasoning, usage."""

    reply: str = "Hello from Nova."
    tool: dict[str, Any] | None = None
    reasoning: str = ""
    usage: dict[str, int] = field(default_factory=lambda: {"inputTokens": 17, "outputTokens": 6})


class FakeBedrock:
    def __init__(self, claude: FakeClaude | None = None, secret: str = SECRET, region: str = REGION) -> None:
        self.claude = claude or FakeClaude()
        self.secret = secret
        self.region = region
        self.api_keys = {API_KEY}
        self.script = ConverseScript()
        self.seen: list[dict[str, Any]] = []
        self.exception: str | None = None  # stream: send this exception instead of the answer

    # -- authentication -------------------------------------------------------------------------

    def auth_problem(self, request: web.Request, body: bytes) -> web.Response | None:
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            return self.api_key_problem(auth[len("Bearer "):])
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            # MissingAuthenticationToken
            # (docs.aws.amazon.com/bedrock/latest/userguide/troubleshooting-api-error-codes.html)
            return aws_error(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        access, date, region, service, _ = fields["Credential"].split("/")
        if access != ACCESS:
            # An unknown access key id: 403 UnrecognizedClientException (AWS common errors).
            return aws_error(403, "UnrecognizedClientException",
                             "The security token included in the request is invalid.")
        if (region, service) != (self.region, "bedrock"):
            return aws_error(403, "InvalidSignatureException",
                             f"Credential should be scoped to a valid region, not '{region}'.")
        if request.headers.get("X-Amz-Content-Sha256") != hashlib.sha256(body).hexdigest():
            return self.bad_signature("payload hash mismatch")
        signed = {name: request.headers[name] for name in fields["SignedHeaders"].split(";")}
        wire_url = f"http://{request.host}{request.raw_path}"  # the path exactly as sent, still encoded
        canonical, _ = sigv4.canonical_request(request.method, wire_url, signed, hashlib.sha256(body).hexdigest())
        scope = f"{date}/{region}/{service}/aws4_request"
        expected = hmac.new(sigv4.signing_key(self.secret, date, region, service),
                            sigv4.string_to_sign(request.headers["X-Amz-Date"], scope, canonical).encode(),
                            hashlib.sha256).hexdigest()
        return None if hmac.compare_digest(expected, fields["Signature"]) else self.bad_signature("signature mismatch")

    @staticmethod
    def bad_signature(why: str) -> web.Response:
        # SigV4 verification failure: 403 InvalidSignatureException (AWS common errors; Bedrock troubleshooting page).
        return aws_error(403, "InvalidSignatureException", "The request signature we calculated does not match the "
                         "signature you provided. Check your AWS Secret Access Key and signing method. "
                         f"Consult the service documentation for details. ({why})")

    def api_key_problem(self, key: str) -> web.Response | None:
        """A Bedrock API key as `Authorization: Bearer`
        (docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html); the answers to a malformed
        or unknown key are those users report (farion1231/cc-switch#1679, anomalyco/opencode#47073)."""
        if not key.startswith(("ABSK", "bedrock-api-key-")):
            return aws_error(403, "AccessDeniedException", "Invalid API Key format: Must start with pre-defined prefix",
                             key="Message")
        if key not in self.api_keys:
            return aws_error(403, "AccessDeniedException",
                             "Authentication failed: Please make sure your API Key is valid.", key="Message")
        return None

    # -- the model id -------------------------------------------------------------------------------

    def model_problem(self, model: str) -> web.Response | None:
        head, _, rest = model.partition(".")
        if head in GEOGRAPHIES:
            # A profile is invoked from a source region of its geography
            # (docs.aws.amazon.com/bedrock/latest/userguide/cross-region-inference.html).
            if not self.region.startswith(GEOGRAPHIES[head]) or (head == "us" and self.region.startswith("us-gov-")):
                return aws_error(400, "ValidationException", "The provided model identifier is invalid.")
            return None
        if model.startswith(PROFILE_ONLY) and model not in ON_DEMAND:
            return aws_error(400, "ValidationException",
                             f"Invocation of model ID {model} with on-demand throughput isn’t supported. Retry your "
                             "request with the ID or ARN of an inference profile that contains this model.")
        return None

    # -- the routes ---------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        model, action = request.match_info["model"], request.match_info["action"]
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        self.seen.append({"model": model, "action": action, "path": request.raw_path, "body": body,
                          "headers": dict(request.headers)})
        refused = self.auth_problem(request, raw) or self.model_problem(model)
        if refused is not None:
            return refused
        if not isinstance(body, dict):
            return aws_error(400, "ValidationException",
                             "Malformed input request, please reformat your input and try again.")
        if action in ("invoke", "invoke-with-response-stream"):
            return await self.invoke(request, body, model, action)
        if action in ("converse", "converse-stream"):
            return await self.converse(request, body, model, action == "converse-stream")
        return aws_error(404, "UnknownOperationException", "Unknown operation")

    async def invoke(self, request: web.Request, body: dict[str, Any], model: str, action: str) -> web.StreamResponse:
        problem = self.claude_problem(body, model)
        if problem:
            return aws_error(400, "ValidationException", problem)
        if action == "invoke":
            return web.json_response(self.claude.message(body, model))
        resp = web.StreamResponse(headers={"Content-Type": "application/vnd.amazon.eventstream"})
        await resp.prepare(request)
        if await self.send_exception(resp):
            return resp
        for item in self.claude.events(body, model):
            payload = orjson.dumps({"bytes": base64.b64encode(orjson.dumps(item)).decode()})
            await resp.write(encode_event_stream_message(
                {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload))
        return resp

    def claude_problem(self, body: dict[str, Any], model: str) -> str | None:
        """InvokeModel's Claude body: `anthropic_version` bedrock-2023-05-31 required, the model in the URL
        (docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html)."""
        if not model.split(".", 1)[-1].startswith("anthropic.") and not model.startswith("anthropic."):
            return "The provided model doesn't support this request body (InvokeModel here speaks Claude only)."
        if body.get("anthropic_version") != "bedrock-2023-05-31":
            return "Malformed input request: #: required key [anthropic_version] not found"
        beta = body.get("anthropic_beta")
        if beta is not None and not (isinstance(beta, list) and all(isinstance(f, str) for f in beta)):
            return "Malformed input request: #/anthropic_beta: expected type: JSONArray"
        return self.claude.problem(body, "bedrock", model)

    async def send_exception(self, resp: web.StreamResponse) -> bool:
        if not self.exception:
            return False
        await resp.write(encode_event_stream_message(
            {":exception-type": self.exception, ":content-type": "application/json", ":message-type": "exception"},
            b'{"message": "Too many requests, please wait before trying again."}'))
        return True

    # -- Converse -----------------------------------------------------------------------------------

    def converse_problem(self, body: dict[str, Any], model: str, stream: bool) -> str | None:
        """The Converse request syntax (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html)."""
        base = model.split(".", 1)[1] if model.split(".", 1)[0] in GEOGRAPHIES else model
        extra = sorted(set(body) - CONVERSE_FIELDS)
        if extra:
            return f"Malformed input request: extraneous key [{extra[0]}] is not permitted"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "The model returned the following errors: messages: required"
        system = body.get("system", [])
        members = {"text", "cachePoint", "guardContent"}
        if not isinstance(system, list) or not all(isinstance(s, dict) and set(s) <= members for s in system):
            return "system: each SystemContentBlock has one of text, cachePoint, guardContent"
        config = body.get("inferenceConfig", {})
        if not isinstance(config, dict) or set(config) - INFERENCE_FIELDS:
            return f"inferenceConfig: unknown field(s) {sorted(set(config) - INFERENCE_FIELDS)}"
        if "maxTokens" in config and not (isinstance(config["maxTokens"], int) and config["maxTokens"] >= 1):
            return "inferenceConfig.maxTokens: must be an integer of at least 1"
        problem = self.messages_problem(messages)
        if problem:
            return problem
        tool_config = body.get("toolConfig")
        uses_tools = any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"])
        if tool_config is None:
            # docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html
            return "The toolConfig field must be defined when using toolUse and toolResult content blocks." \
                if uses_tools else None
        if base.startswith(NO_TOOLS):
            return "This model doesn't support tool use."
        if stream and base.startswith(NO_STREAMING_TOOLS):
            return "This model doesn't support tool use in streaming mode."
        tools = tool_config.get("tools") if isinstance(tool_config, dict) else None
        if not isinstance(tools, list) or not tools:
            return "toolConfig.tools: at least one tool is required"
        for tool in tools:  # API_runtime_ToolSpecification.html: name, description (1+ chars), inputSchema.json
            spec = tool.get("toolSpec") if isinstance(tool, dict) else None
            if not isinstance(spec, dict) or set(spec) - {"name", "description", "inputSchema", "strict"} \
                    or not spec.get("name") or not isinstance((spec.get("inputSchema") or {}).get("json"), dict) \
                    or ("description" in spec and not spec["description"]):
                return "toolConfig.tools: each tool is {toolSpec: {name, description?, inputSchema: {json}}}"
        choice = tool_config.get("toolChoice")
        if choice is not None:
            kind = next(iter(choice)) if isinstance(choice, dict) and len(choice) == 1 else None
            if kind not in ("auto", "any", "tool"):
                return "toolConfig.toolChoice: one of auto, any, tool"
            if kind != "auto" and not base.startswith(TOOL_CHOICE):
                return f"This model doesn't support the toolConfig.toolChoice.{kind} field. Remove " \
                       f"toolConfig.toolChoice.{kind} and try again."
        return None

    @staticmethod
    def messages_problem(messages: list[Any]) -> str | None:
        """Messages alternate user and assistant, starting with the user; each content block has one
        member; text is not blank; a toolResult answers a toolUse of the turn before
        (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html, API_runtime_ContentBlock.html)."""
        previous_uses: set[str] = set()
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant") \
                    or set(message) != {"role", "content"} or not isinstance(message["content"], list):
                return f"messages.{i}: a Message is {{role: user|assistant, content: [...]}}"
            if i == 0 and message["role"] != "user":
                return "A conversation must start with a user message. Try again with a conversation that starts " \
                       "with a user message."
            if i and message["role"] == messages[i - 1]["role"]:
                return "A conversation must alternate between user and assistant roles. Make sure the conversation " \
                       "alternates between user and assistant roles and try again."
            uses: set[str] = set()
            for j, block in enumerate(message["content"]):
                if not isinstance(block, dict) or len(block) != 1 or next(iter(block)) not in BLOCK_MEMBERS:
                    return f"messages.{i}.content.{j}: a ContentBlock has exactly one member"
                if "text" in block and not str(block["text"]).strip():
                    return f"The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add " \
                           "text to the text field, and try again."
                if "image" in block:
                    image = block["image"]
                    data = (image.get("source") or {}).get("bytes") if isinstance(image, dict) else None
                    try:
                        base64.b64decode(str(data), validate=True)
                    except binascii.Error:
                        data = None
                    if image.get("format") not in IMAGE_FORMATS or not data:
                        return f"messages.{i}.content.{j}.image: format png|jpeg|gif|webp and base64 bytes"
                if "toolUse" in block:
                    use = block["toolUse"]
                    if set(use) != {"toolUseId", "name", "input"} or message["role"] != "assistant":
                        return f"messages.{i}.content.{j}.toolUse: {{toolUseId, name, input}} in an assistant turn"
                    uses.add(use["toolUseId"])
                if "toolResult" in block:
                    result = block["toolResult"]
                    if message["role"] != "user" or result.get("toolUseId") not in previous_uses \
                            or not isinstance(result.get("content"), list):
                        return "The number of toolResult blocks at messages.{i}.content exceeds the number of " \
                               "toolUse blocks of previous turn.".replace("{i}", str(i))
            previous_uses = uses
        return None

    async def converse(self, request: web.Request, body: dict[str, Any], model: str,
                       stream: bool) -> web.StreamResponse:
        problem = self.converse_problem(body, model, stream)
        if problem:
            return aws_error(400, "ValidationException", problem)
        script = self.script
        usage = {**script.usage, "totalTokens": sum(script.usage.values())}
        stop = "tool_use" if script.tool else "end_turn"
        if not stream:
            content: list[dict[str, Any]] = []
            if script.reasoning:
                content.append({"reasoningContent": {"reasoningText": {"text": script.reasoning}}})
            if script.reply:
                content.append({"text": script.reply})
            if script.tool:
                content.append({"toolUse": {"toolUseId": script.tool["id"], "name": script.tool["name"],
                                            "input": script.tool["input"]}})
            return web.json_response({"output": {"message": {"role": "assistant", "content": content}},
                                      "stopReason": stop, "usage": usage, "metrics": {"latencyMs": 120}})
        resp = web.StreamResponse(headers={"Content-Type": "application/vnd.amazon.eventstream"})
        await resp.prepare(request)
        if await self.send_exception(resp):
            return resp
        frames = [event("messageStart", {"role": "assistant"})]
        index = 0
        if script.reasoning:
            frames += [event("contentBlockDelta", {"contentBlockIndex": index,
                                                   "delta": {"reasoningContent": {"text": script.reasoning}}}),
                       event("contentBlockDelta", {"contentBlockIndex": index,
                                                   "delta": {"reasoningContent": {"signature": "c2ln"}}}),
                       event("contentBlockStop", {"contentBlockIndex": index})]
            index += 1
        if script.reply:
            half = len(script.reply) // 2
            frames += [event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
                       for piece in (script.reply[:half], script.reply[half:])]
            frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
            index += 1
        if script.tool:
            arguments = orjson.dumps(script.tool["input"]).decode()
            frames.append(event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": {
                "toolUseId": script.tool["id"], "name": script.tool["name"]}}}))
            frames += [event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}})
                       for piece in (arguments[:3], arguments[3:])]
            frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
        frames += [event("messageStop", {"stopReason": stop}),
                   event("metadata", {"usage": usage, "metrics": {"latencyMs": 120}})]
        for frame in frames:
            await resp.write(frame)
        return resp

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/model/{model}/{action}", self.handle)
        return app
