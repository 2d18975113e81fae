"""AWS Bedrock channels (type 33) against a strict fake Bedrock runtime (tests/upstream/providers/aws/fake_bedrock.py)
that checks the SigV4 signature or the Bedrock API key of what reaches it over the wire, refuses base
ids of models served through inference profiles only, and answers InvokeModel (Claude, JSON and
event-stream) and Converse / ConverseStream (Nova, Llama, DeepSeek …)."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import aiohttp
import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.services.model_name import ModelName
from api.upstream.base import RelayMeta
from api.upstream.catalogue import ChannelType
from api.upstream.providers.aws import BedrockAdaptor, BedrockConverseAdaptor, key_problem
from api.upstream.providers.aws.models import bedrock_model_id
from api.upstream.registry import build_adaptor
from models import Log
from models.enums import LogType
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, make_key, rich_user
from tests.upstream.providers.aws.fake_bedrock import ACCESS, API_KEY, REGION, SECRET, ConverseScript, FakeBedrock
from tests.upstream.providers.claude.fake_anthropic import REPLY, FakeClaude
from tests.upstream.providers.kit import settled_log, stream_chat

__all__ = ["ACCESS", "MODEL", "REGION", "SECRET", "FakeBedrock", "bedrock"]

MODEL = "claude-3-5-sonnet-20240620"
BEDROCK_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"
MESSAGES: Any = [{"role": "user", "content": "Say hello."}]
NOVA = "amazon.nova-pro-v1:0"
WEATHER: Any = {"type": "function", "function": {"name": "weather", "description": "The weather of a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}


@pytest.fixture
async def bedrock(aiohttp_server):
    async def start(region: str = REGION, **claude: Any) -> tuple[FakeBedrock, str]:
        fake = FakeBedrock(FakeClaude(**claude), region=region)
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


# -- keys, model ids and variants -------------------------------------------------------------------


@pytest.mark.parametrize(("key", "problem"), [
    (f"{ACCESS}|{SECRET}|us-east-1", None),
    (f"{API_KEY}|eu-central-1", None),
    ("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t|ap-northeast-1", None),
    (f"{ACCESS}|{SECRET}", "channel_key_bedrock"),  # no region
    (f"{API_KEY}", "channel_key_bedrock"),
    ("sk-not-a-bedrock-key|us-east-1", "channel_key_bedrock"),  # refused by Bedrock: not a pre-defined prefix
    (f"{ACCESS}|{SECRET}|US East", "channel_key_bedrock"),
    (f"{ACCESS}||us-east-1", "channel_key_bedrock"),
])
def test_key_forms(key: str, problem: str | None) -> None:
    assert key_problem(key) == problem


@pytest.mark.parametrize(("model", "region", "expected"), [
    ("amazon.nova-pro-v1:0", "us-east-1", "us.amazon.nova-pro-v1:0"),
    ("amazon.nova-lite-v1:0", "eu-west-3", "eu.amazon.nova-lite-v1:0"),
    ("meta.llama3-3-70b-instruct-v1:0", "us-west-2", "us.meta.llama3-3-70b-instruct-v1:0"),
    ("deepseek.r1-v1:0", "us-east-2", "us.deepseek.r1-v1:0"),
    ("mistral.mistral-large-2407-v1:0", "us-west-2", "mistral.mistral-large-2407-v1:0"),  # on demand
    ("claude-sonnet-4-5-20250929", "us-gov-west-1", "us-gov.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("anthropic.claude-sonnet-4-5-20250929-v1:0", "ap-south-1", "apac.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("eu.amazon.nova-pro-v1:0", "us-east-1", "eu.amazon.nova-pro-v1:0"),  # as given
])
def test_model_ids_by_region(model: str, region: str, expected: str) -> None:
    assert bedrock_model_id(model, region) == expected


def test_claude_invokes_and_the_others_converse() -> None:
    def adaptor(model: str) -> object:
        return build_adaptor(RelayMeta(1, int(ChannelType.AWS), f"{API_KEY}|us-east-1", name=ModelName(upstream=model)))
    assert isinstance(adaptor("claude-opus-4-6"), BedrockAdaptor)
    assert isinstance(adaptor("us.anthropic.claude-opus-4-6-v1"), BedrockAdaptor)
    for model in (NOVA, "meta.llama3-3-70b-instruct-v1:0", "deepseek.r1-v1:0"):
        assert isinstance(adaptor(model), BedrockConverseAdaptor) and not isinstance(adaptor(model), BedrockAdaptor)


# -- Claude through inference profiles, both credential kinds ---------------------------------------


async def priced(gateway, *models: str) -> None:
    options = gateway.server.app[keys.OPTIONS]
    for name, value in (("ModelRatio", 1.5), ("CompletionRatio", 4)):
        table = {**(options.get_json(name) or {}), **{model: value for model in models}}
        await options.update(name, orjson.dumps(table).decode())


def charge(gateway, model: str, prompt: int, completion: int) -> int:
    return pricing.settle_quota(pricing.resolve_configured(gateway.server.app[keys.OPTIONS], model), prompt, completion)


async def test_claude_profile_ids_with_signed_and_api_keys(gateway, bedrock) -> None:
    model = "claude-sonnet-4-5-20250929"
    signed, signed_url = await bedrock()
    keyed, keyed_url = await bedrock(region="eu-central-1")
    await add_channel(gateway, None, models=model, type=int(ChannelType.AWS), base_url=signed_url,
                      key=f"{ACCESS}|{SECRET}|{REGION}", priority=1)
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=model, messages=MESSAGES)
        await add_channel(gateway, None, models=model, type=int(ChannelType.AWS), base_url=keyed_url,
                          key=f"{API_KEY}|eu-central-1", priority=2)
        text, _ = await stream_chat(client, model=model, messages=MESSAGES)
    assert answer.choices[0].message.content == REPLY == text
    assert [(s["model"], s["action"]) for s in signed.seen] == [("us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                                                                 "invoke")]
    assert signed.seen[0]["headers"]["Authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS}/")
    assert [(s["model"], s["action"]) for s in keyed.seen] == [("eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
                                                                "invoke-with-response-stream")]
    assert keyed.seen[0]["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert "X-Amz-Date" not in keyed.seen[0]["headers"]
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (21, 9, charge(gateway, model, 21, 9))] * 2


async def test_base_ids_and_foreign_profiles_refused_as_bedrock_does(bedrock) -> None:
    fake, url = await bedrock()
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {API_KEY}"}) as http:
        async with http.post(f"{url}/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
                             json={"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10,
                                   "messages": MESSAGES}) as resp:
            assert resp.status == 400 and resp.headers["x-amzn-ErrorType"].startswith("ValidationException:")
            assert "with on-demand throughput isn’t supported" in (await resp.json())["message"]
        async with http.post(f"{url}/model/eu.amazon.nova-pro-v1%3A0/converse",
                             json={"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}) as resp:
            assert resp.status == 400 and (await resp.json())["message"] == "The provided model identifier is invalid."


async def test_a_bad_api_key_is_refused(gateway, bedrock) -> None:
    fake, url = await bedrock()
    await add_channel(gateway, None, models=NOVA, type=int(ChannelType.AWS), base_url=url,
                      key="ABSKbm90LWEta25vd24ta2V5|us-west-2")
    await priced(gateway, NOVA)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.PermissionDeniedError, match="Authentication failed"):
            await client.chat.completions.create(model=NOVA, messages=MESSAGES)
    assert fake.seen[0]["headers"]["Authorization"] == "Bearer ABSKbm90LWEta25vd24ta2V5"


# -- the other models through Converse ----------------------------------------------------------------


async def test_nova_converse_and_stream_billed(gateway, bedrock) -> None:
    fake, url = await bedrock()
    await add_channel(gateway, None, models=NOVA, type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    await priced(gateway, NOVA)
    user = await rich_user()
    token = await make_key(user)
    messages: Any = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
    async with sdk(gateway, token) as client:
        raw = await client.chat.completions.with_raw_response.create(model=NOVA, messages=messages, max_tokens=100,
                                                                     temperature=0, top_p=0.9, stop="END", seed=3)
        answer = raw.parse()
        log = await settled_log(gateway, user)
        await Log.filter(user_id=user.id).delete()
        text, chunks = await stream_chat(client, model=NOVA, messages=messages,
                                         stream_options={"include_usage": True})
    assert answer.choices[0].message.content == fake.script.reply == text
    assert answer.choices[0].finish_reason == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 17
    assert answer.usage is not None and (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (17, 6)
    assert [(s["model"], s["action"]) for s in fake.seen] == [("us.amazon.nova-pro-v1:0", "converse"),
                                                              ("us.amazon.nova-pro-v1:0", "converse-stream")]
    assert fake.seen[0]["path"] == "/model/us.amazon.nova-pro-v1%3A0/converse"
    assert fake.seen[0]["body"] == {
        "messages": [{"role": "user", "content": [{"text": "Say hello."}]}], "system": [{"text": "Be brief."}],
        "inferenceConfig": {"maxTokens": 100, "temperature": 0, "topP": 0.9, "stopSequences": ["END"]}}
    expected = charge(gateway, NOVA, 17, 6)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (17, 6, expected)
    assert raw.headers["X-Gateway-Dropped"] == "seed"  # Converse has no seed
    streamed = await settled_log(gateway, user)
    assert (streamed.prompt_tokens, streamed.completion_tokens, streamed.quota) == (17, 6, expected)


async def test_nova_tools_round_trip(gateway, bedrock) -> None:
    fake, url = await bedrock()
    fake.script = ConverseScript(reply="", tool={"id": "tooluse_1", "name": "weather", "input": {"city": "Paris"}})
    await add_channel(gateway, None, models=NOVA, type=int(ChannelType.AWS), base_url=url,
                      key=f"{API_KEY}|{REGION}")
    await priced(gateway, NOVA)
    token = await make_key(await rich_user())
    ask: Any = [{"role": "user", "content": "Weather in Paris?"}]
    async with sdk(gateway, token) as client:
        first = await client.chat.completions.create(model=NOVA, messages=ask, tools=[WEATHER],
                                                     tool_choice="required")
        _, chunks = await stream_chat(client, model=NOVA, messages=ask, tools=[WEATHER])
        call = first.choices[0].message.tool_calls[0]
        fake.script = ConverseScript(reply="It is sunny in Paris.")
        follow: Any = [*ask, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                  {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21°C"}]
        final = await client.chat.completions.create(model=NOVA, messages=follow, tools=[WEATHER])
    assert first.choices[0].finish_reason == "tool_calls" and first.choices[0].message.content is None
    assert (call.id, call.function.name, orjson.loads(call.function.arguments)) == ("tooluse_1", "weather",
                                                                                    {"city": "Paris"})
    deltas = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or ()]
    assert deltas[0].id == "tooluse_1" and deltas[0].function.name == "weather"
    assert orjson.loads("".join(t.function.arguments or "" for t in deltas)) == {"city": "Paris"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["tool_calls"]
    assert final.choices[0].message.content == "It is sunny in Paris."
    assert fake.seen[0]["body"]["toolConfig"] == {
        "tools": [{"toolSpec": {"name": "weather", "description": "The weather of a city",
                                "inputSchema": {"json": WEATHER["function"]["parameters"]}}}],
        "toolChoice": {"any": {}}}
    assert fake.seen[2]["body"]["messages"] == [
        {"role": "user", "content": [{"text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "weather",
                                                       "input": {"city": "Paris"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "sunny, 21°C"}]}}]}]


async def test_llama_and_deepseek_reasoning(gateway, bedrock) -> None:
    llama, deepseek = "meta.llama3-3-70b-instruct-v1:0", "deepseek.r1-v1:0"
    fake, url = await bedrock()
    await add_channel(gateway, None, models=f"{llama},{deepseek}", type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    await priced(gateway, llama, deepseek)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=llama, messages=MESSAGES, tools=[WEATHER],
                                                      tool_choice={"type": "function", "function": {"name": "weather"}})
        await drain(gateway)
        fake.script = ConverseScript(reply="42", reasoning="Let me think.", usage={"inputTokens": 9,
                                                                                    "outputTokens": 30})
        thought = await client.chat.completions.create(model=deepseek, messages=MESSAGES)
        _, chunks = await stream_chat(client, model=deepseek, messages=MESSAGES)
    assert answer.choices[0].message.content == "Hello from Nova."
    assert "toolChoice" not in fake.seen[0]["body"]["toolConfig"]  # Llama takes none
    assert fake.seen[0]["model"] == "us.meta.llama3-3-70b-instruct-v1:0"
    assert thought.choices[0].message.content == "42"
    assert (thought.choices[0].message.model_extra or {})["reasoning_content"] == "Let me think."
    assert "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or "" for c in chunks if c.choices) \
        == "Let me think."
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (17, 6, charge(gateway, llama, 17, 6)), (9, 30, charge(gateway, deepseek, 9, 30)),
        (9, 30, charge(gateway, deepseek, 9, 30))]


async def test_converse_refusals_and_stream_exception(gateway, bedrock) -> None:
    fake, url = await bedrock()
    await add_channel(gateway, None, models=NOVA, type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    await priced(gateway, NOVA)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="must start with a user message"):
            await client.chat.completions.create(model=NOVA, messages=[{"role": "assistant", "content": "Hi"}])
        fake.exception = "throttlingException"
        with pytest.raises(openai.APIStatusError) as caught:
            await stream_chat(client, model=NOVA, messages=MESSAGES)
    assert caught.value.status_code == 429


async def test_llama_tools_stream_served_whole(gateway, bedrock) -> None:
    """Llama takes tools in Converse but not in ConverseStream: the stream is served from Converse."""
    llama = "meta.llama3-3-70b-instruct-v1:0"
    fake, url = await bedrock()
    fake.script = ConverseScript(reply="", tool={"id": "tooluse_7", "name": "weather", "input": {"city": "Oslo"}})
    await add_channel(gateway, None, models=llama, type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    await priced(gateway, llama)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        _, chunks = await stream_chat(client, model=llama, messages=MESSAGES, tools=[WEATHER],
                                      stream_options={"include_usage": True})
        text, _ = await stream_chat(client, model=llama, messages=MESSAGES)
    calls = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or ()]
    assert [(t.id, t.function.name, orjson.loads(t.function.arguments)) for t in calls] == [
        ("tooluse_7", "weather", {"city": "Oslo"})]
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["tool_calls"]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 6
    assert [s["action"] for s in fake.seen] == ["converse", "converse-stream"]  # without tools it streams
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (17, 6, charge(gateway, llama, 17, 6))] * 2
