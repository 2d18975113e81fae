# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""AWS Bedrock Claude channels (type 33) against a fake Bedrock runtime that checks the SigV4
signature of what reaches it over the wire, and answers InvokeModel (JSON) and
InvokeModelWithResponseStream (AWS event-stream frames carrying Claude's events)."""
from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api.relay.decoders import encode_event_stream_message
from api.relay.signing import sigv4
from api.services import pricing
from models import Log
from models.enums import ChannelType, LogType
from tests.helpers import ApiClient
from tests.relay.fake_anthropic import REPLY, FakeClaude
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401

ACCESS, SECRET, REGION = "AKIAFAKE", "fake/Secret+Key", "us-west-2"
MODEL = "claude-3-5-sonnet-20240620"
BEDROCK_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"
MESSAGES = [{"role": "user", "content": "Say hello."}]
ON_DEMAND = {"anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-sonnet-20240229-v1:0",
             "anthropic.claude-3-opus-20240229-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0"}


class FakeBedrock:
    def __init__(self, claude: FakeClaude, secret: str = SECRET) -> None:
        self.claude = claude
        self.secret = secret
        self.seen: list[dict[str, Any]] = []
        self.exception: str | None = None  # stream: send this exception instead of the answer

    def check_signature(self, request: web.Request, body: bytes) -> str | None:
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return "missing SigV4 authorization"
        fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        access, date, region, service, _ = fields["Credential"].split("/")
        if (access, region, service) != (ACCESS, REGION, "bedrock"):
            return "wrong credential scope"
        if request.headers.get("X-Amz-Content-Sha256") != hashlib.sha256(body).hexdigest():
            return "payload hash mismatch"
        signed = {name: request.headers[name] for name in fields["SignedHeaders"].split(";")}
        wire_url = f"http://{request.host}{request.raw_path}"  # the path exactly as sent, still encoded
        canonical, _ = sigv4.canonical_request(request.method, wire_url, signed, hashlib.sha256(body).hexdigest())
        scope = f"{date}/{region}/{service}/aws4_request"
        expected = hmac.new(sigv4.signing_key(self.secret, date, region, service),
                            sigv4.string_to_sign(request.headers["X-Amz-Date"], scope, canonical).encode(),
                            hashlib.sha256).hexdigest()
        return None if hmac.compare_digest(expected, fields["Signature"]) else "signature mismatch"

    async def invoke(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = orjson.loads(raw)
        model = request.match_info["model"]
        self.seen.append({"model": model, "action": request.match_info["action"],
                          "path": request.raw_path, "body": body, "headers": dict(request.headers)})
        problem = self.check_signature(request, raw)
        if problem:
            return web.json_response({"message": "The request signature we calculated does not match the "
                                                 f"signature you provided ({problem})"}, status=403)
        problem = self.model_problem(model) or self.body_problem(body, model)
        if problem:
            return web.json_response({"message": problem}, status=400)
        if request.match_info["action"] == "invoke":
            return web.json_response(self.claude.message(body, model))
        resp = web.StreamResponse(headers={"Content-Type": "application/vnd.amazon.eventstream"})
        await resp.prepare(request)
        if self.exception:
            await resp.write(encode_event_stream_message(
                {":exception-type": self.exception, ":content-type": "application/json", ":message-type": "exception"},
                b'{"message": "Too many requests, please wait before trying again."}'))
            return resp
        for event in self.claude.events(body, model):
            payload = orjson.dumps({"bytes": base64.b64encode(orjson.dumps(event)).decode()})
            await resp.write(encode_event_stream_message(
                {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload))
        return resp

    @staticmethod
    def model_problem(model: str) -> str | None:
        """Claude 3.5 Sonnet v2 and later run through inference profiles only: invoking their base id
        on demand is refused (docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html)."""
        if model.startswith("anthropic.") and model not in ON_DEMAND:
            return (f"Invocation of model ID {model} with on-demand throughput isn't supported. Retry your request "
                    "with the ID or ARN of an inference profile that contains this model.")
        return None

    def body_problem(self, body: dict[str, Any], model: str) -> str | None:
        """InvokeModel's body: `anthropic_version` bedrock-2023-05-31 required, the model in the URL
        (docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html)."""
        if body.get("anthropic_version") != "bedrock-2023-05-31":
            return "Malformed input request: #: required key [anthropic_version] not found"
        beta = body.get("anthropic_beta")
        if beta is not None and not (isinstance(beta, list) and all(isinstance(f, str) for f in beta)):
            return "Malformed input request: #/anthropic_beta: expected type: JSONArray"
        return self.claude.problem(body, "bedrock", model)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/model/{model}/{action}", self.invoke)
        return app


@pytest.fixture
async def bedrock(aiohttp_server):
    async def start(**claude: Any) -> tuple[FakeBedrock, str]:
        fake = FakeBedrock(FakeClaude(**claude))
        server = await aiohttp_server(fake.app())
        return fake, str(server.make_url("")).rstrip("/")
    return start


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


async def test_invoke_and_stream_signed_and_billed(gateway, bedrock) -> None:
    fake, url = await bedrock()
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0)
        stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert answer.choices[0].message.content == REPLY and text == REPLY
    assert [(s["model"], s["action"]) for s in fake.seen] == [(BEDROCK_ID, "invoke"),
                                                              (BEDROCK_ID, "invoke-with-response-stream")]
    assert fake.seen[0]["path"] == "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke"
    assert fake.seen[0]["body"]["temperature"] == 0 and fake.seen[0]["body"]["max_tokens"] == 8192
    assert SECRET not in str(fake.seen[0]["headers"])  # only the signature travels
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    expected = pricing.settle_quota(pricing.resolve_price(MODEL), 21, 9)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [(21, 9, expected)] * 2


async def test_tools_over_the_event_stream(gateway, bedrock) -> None:
    fake, url = await bedrock(reply="", tool={"id": "toolu_9", "name": "lookup", "input": {"q": "x"}})
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    token = await make_key(await rich_user())
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    async with sdk(gateway, token) as client:
        stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=tools, stream=True)
        chunks = [c async for c in stream]
    calls = [c.choices[0].delta.tool_calls[0] for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    assert calls[0].id == "toolu_9" and calls[0].function.name == "lookup"
    assert orjson.loads("".join(c.function.arguments or "" for c in calls)) == {"q": "x"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert fake.seen[0]["body"]["tools"][0]["name"] == "lookup"


async def test_signature_refused_and_stream_exception_mapped(gateway, bedrock) -> None:
    fake, url = await bedrock()
    fake.secret = "another secret"
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.PermissionDeniedError, match="signature"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        fake.secret, fake.exception = SECRET, "throttlingException"
        with pytest.raises(openai.APIStatusError) as caught:
            stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
            [c async for c in stream]
    assert caught.value.status_code == 429


async def test_channel_test_is_signed_too(gateway, bedrock, root: ApiClient) -> None:
    fake, url = await bedrock()
    channel = await add_channel(gateway, None, models=MODEL, type=int(ChannelType.AWS), base_url=url,
                                key=f"{ACCESS}|{SECRET}|{REGION}")
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"], body
    assert fake.seen[-1]["headers"]["Authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS}/")
    assert datetime.now(UTC).strftime("%Y%m%d") in fake.seen[-1]["headers"]["X-Amz-Date"]
