"""Azure OpenAI channels (type 3) through the official openai SDK against a fake Azure resource
(tests/upstream/providers/azure/fake_azure.py): the v1 API by default (OpenAI's paths under `/openai/v1`, the deployment
named in `model`, no api-version), chat streamed and not with the usage billed to the unit, tools,
embeddings, the Responses API relayed as sent, Azure's errors; a channel with a dated api-version on
the deployment URLs."""
from __future__ import annotations

from typing import Any

import openai
import orjson
import pytest

from api.services.billing import pricing
from api.services.model_name import ModelName
from api.upstream.base import RelayMeta, RelayMode
from api.upstream.catalogue import ChannelType
from api.upstream.providers.azure import AzureAdaptor, endpoint_of, other_problem
from models import Channel
from tests.relay.fakes import add_channel, drain, make_key, rich_user
from tests.upstream.providers.azure.fake_azure import BLOCKED_WORD, KEY, FakeAzure
from tests.upstream.providers.kit import consume_logs, finish_reasons, sdk, settled_log, stream_chat

MESSAGES: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
REPLY = "Hello from Azure."
WEATHER: Any = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                            "parameters": {"type": "object", "required": ["city"],
                                                           "properties": {"city": {"type": "string"}}}}}


@pytest.fixture
async def azure(serve) -> FakeAzure:
    return await serve(FakeAzure())


async def azure_channel(gateway, fake: FakeAzure, models: str = "gpt-4.1", **fields) -> Channel:
    return await add_channel(gateway, None, models=models, type=int(ChannelType.AZURE),
                             base_url=fields.pop("base_url", fake.url), key=fields.pop("key", KEY), **fields)


def quota(model: str, prompt: int, completion: int, **cache: int) -> int:
    return pricing.settle_quota(pricing.resolve_price(model), prompt, completion, **cache)


# -- the v1 API --------------------------------------------------------------------------------------


async def test_chat_on_the_v1_api_billed_to_the_unit(gateway, azure) -> None:
    await azure_channel(gateway, azure)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="gpt-4.1", messages=MESSAGES, max_tokens=40)
    assert answer.choices[0].message.content == REPLY and answer.choices[0].finish_reason == "stop"
    (seen,) = azure.seen
    assert (seen["path"], seen["query"]) == ("/openai/v1/chat/completions", {})
    assert seen["headers"]["api-key"] == KEY and "Authorization" not in seen["headers"]
    assert seen["body"]["model"] == "gpt-4.1"  # the deployment's name as is, dots and all
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (21, 9, quota("gpt-4.1", 21, 9))


async def test_a_stream_asks_for_the_usage_chunk(gateway, azure) -> None:
    await azure_channel(gateway, azure)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model="gpt-4.1", messages=MESSAGES)
        asked, usage_chunks = await stream_chat(client, model="gpt-4.1", messages=MESSAGES,
                                                stream_options={"include_usage": True})
    assert text == REPLY == asked and finish_reasons(chunks) == ["stop"]
    assert all(c.usage is None for c in chunks)  # not asked: the usage chunk is the gateway's only
    assert (usage_chunks[-1].usage.prompt_tokens, usage_chunks[-1].usage.completion_tokens) == (21, 9)
    assert [s["body"]["stream_options"] for s in azure.seen] == [{"include_usage": True}] * 2
    await drain(gateway)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (21, 9, quota("gpt-4.1", 21, 9))] * 2


async def test_tools_streamed_and_not(gateway, azure) -> None:
    azure.tool_call = {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    await azure_channel(gateway, azure)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="gpt-4.1", messages=MESSAGES, tools=[WEATHER],
                                                      tool_choice="auto")
        _, chunks = await stream_chat(client, model="gpt-4.1", messages=MESSAGES, tools=[WEATHER])
    calls: Any = answer.choices[0].message.tool_calls
    call = calls[0]
    assert (call.function.name, orjson.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})
    assert answer.choices[0].finish_reason == "tool_calls" and finish_reasons(chunks) == ["tool_calls"]
    streamed = [c.choices[0].delta.tool_calls[0] for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    assert streamed[0].function.name == "get_weather"
    assert [s["body"]["tools"] for s in azure.seen] == [[WEATHER]] * 2
    assert azure.seen[0]["body"]["tool_choice"] == "auto"


async def test_embeddings_on_the_v1_api(gateway, azure) -> None:
    await azure_channel(gateway, azure, models="text-embedding-3-small")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.embeddings.create(model="text-embedding-3-small", input=["one", "two"])
    assert [d.embedding for d in answer.data] == [[0.5, -0.25, 0.125]] * 2
    (seen,) = azure.seen
    assert seen["path"] == "/openai/v1/embeddings" and seen["body"] == {
        "model": "text-embedding-3-small", "input": ["one", "two"], "encoding_format": "base64"}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.quota) == (6, quota("text-embedding-3-small", 6, 0))


async def test_model_mapping_names_the_deployment_and_the_base_url_may_carry_openai_v1(gateway, azure) -> None:
    await azure_channel(gateway, azure, models="gpt-4o-mini", base_url=azure.url + "/openai/v1/",
                        model_mapping='{"gpt-4o-mini": "gpt-4.1-mini"}', other="preview")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    (seen,) = azure.seen
    assert (seen["path"], seen["query"], seen["body"]["model"]) == (
        "/openai/v1/chat/completions", {"api-version": "preview"}, "gpt-4.1-mini")
    log = await settled_log(gateway, user)
    assert log.quota == quota("gpt-4o-mini", 21, 9)  # billed as asked


# -- the Responses API, as sent --------------------------------------------------------------------


async def test_responses_relayed_as_sent_and_billed(gateway, azure) -> None:
    await azure_channel(gateway, azure, models="gpt-4.1")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.responses.create(model="gpt-4.1", input="Fix the bug.", reasoning={"effort": "low"})
        async with client.responses.stream(model="gpt-4.1", input="Fix the bug.") as stream:
            kinds = [event.type async for event in stream]
            final = await stream.get_final_response()
    assert answer.output_text == "Done, from Azure." == final.output_text
    assert answer.id == "resp_upstream" == final.id
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert [(s["path"], s["query"]) for s in azure.seen] == [("/openai/v1/responses", {})] * 2
    assert azure.seen[0]["body"] == {"model": "gpt-4.1", "input": "Fix the bug.", "reasoning": {"effort": "low"},
                                     "store": False}
    assert azure.seen[1]["body"]["stream"] is True and azure.seen[1]["headers"]["api-key"] == KEY
    await drain(gateway)
    expected = quota("gpt-4.1", 40, 12, cached_tokens=16)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (40, 12, expected)] * 2


# -- a dated api-version: the deployment URLs ----------------------------------------------------------


async def test_a_dated_api_version_keeps_the_deployment_urls(gateway, azure) -> None:
    await azure_channel(gateway, azure, models="gpt-3.5-turbo", other="2024-10-21")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model="gpt-3.5-turbo", messages=MESSAGES)
        text, _ = await stream_chat(client, model="gpt-3.5-turbo", messages=MESSAGES)
        answer = await client.responses.create(model="gpt-3.5-turbo", input="Hi")
    assert text == REPLY and answer.output_text == "Done, from Azure."
    chat, streamed, responses = azure.seen
    assert (chat["path"], chat["query"]) == ("/openai/deployments/gpt-35-turbo/chat/completions",
                                             {"api-version": "2024-10-21"})
    assert streamed["body"]["stream_options"] == {"include_usage": True}  # 2024-10-21 takes it
    # The Responses API lives on the v1 API only; the deployment is named as in the channel's other requests.
    assert (responses["path"], responses["body"]["model"]) == ("/openai/v1/responses", "gpt-35-turbo")
    await drain(gateway)
    assert [(log.prompt_tokens, log.completion_tokens) for log in await consume_logs(user)] == [
        (21, 9), (21, 9), (40, 12)]


async def test_an_old_api_version_streams_without_stream_options(gateway, azure) -> None:
    await azure_channel(gateway, azure, models="gpt-3.5-turbo", other="2024-06-01")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model="gpt-3.5-turbo", messages=MESSAGES,
                                         stream_options={"include_usage": True})
    (seen,) = azure.seen
    assert seen["query"] == {"api-version": "2024-06-01"} and "stream_options" not in seen["body"]
    assert text == REPLY and chunks[-1].usage is not None  # counted here, as the client asked
    log = await settled_log(gateway, user)
    assert log.completion_tokens == chunks[-1].usage.completion_tokens > 0
    assert log.quota == quota("gpt-3.5-turbo", log.prompt_tokens, log.completion_tokens)


# -- Azure's errors ---------------------------------------------------------------------------------


async def test_azure_errors_reach_the_client(gateway, azure) -> None:
    await azure_channel(gateway, azure, models="gpt-4.1,gpt-4o")  # no gpt-4o deployment on the resource
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.NotFoundError, match="API deployment for this resource does not exist") as missing:
            await client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        with pytest.raises(openai.BadRequestError, match="content management policy") as filtered:
            await client.chat.completions.create(
                model="gpt-4.1", messages=[{"role": "user", "content": f"Tell me about {BLOCKED_WORD}."}])
    assert missing.value.code == "DeploymentNotFound" and filtered.value.code == "content_filter"


async def test_a_wrong_key_is_refused_with_azures_message(gateway, azure) -> None:
    await azure_channel(gateway, azure, key="not-the-resource-key")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="Access denied due to invalid subscription key"):
            await client.chat.completions.create(model="gpt-4.1", messages=MESSAGES)


# -- the adaptor's URLs and the `other` field ----------------------------------------------------------


def adaptor(base_url: str = "https://res.openai.azure.com", other: str = "", model: str = "gpt-4.1") -> AzureAdaptor:
    return AzureAdaptor(RelayMeta(channel_id=1, channel_type=int(ChannelType.AZURE), key="k", base_url=base_url,
                                  other=other, name=ModelName(model)))


def test_urls_of_the_v1_and_the_dated_apis() -> None:
    for base in ("https://res.openai.azure.com", "https://res.openai.azure.com/openai/",
                 "https://res.openai.azure.com/openai/v1"):
        assert endpoint_of(base) == "https://res.openai.azure.com"
        assert adaptor(base).request_url() == "https://res.openai.azure.com/openai/v1/chat/completions"
    v1 = adaptor(other="v1")
    assert [v1.request_url(mode) for mode in (RelayMode.EMBEDDINGS, RelayMode.IMAGES, RelayMode.TRANSCRIPTION)] == [
        "https://res.openai.azure.com/openai/v1/embeddings", "https://res.openai.azure.com/openai/v1/images/generations",
        "https://res.openai.azure.com/openai/v1/audio/transcriptions"]
    assert adaptor(other="preview").request_url(RelayMode.SPEECH) == (
        "https://res.openai.azure.com/openai/v1/audio/speech?api-version=preview")
    dated = adaptor(other="2025-04-01-preview")
    assert dated.request_url(RelayMode.EMBEDDINGS) == (
        "https://res.openai.azure.com/openai/deployments/gpt-41/embeddings?api-version=2025-04-01-preview")
    assert dated.request_headers() == {"api-key": "k"}
    assert not dated.has_balance() and not dated.supports(RelayMode.MODERATIONS)
    assert v1.supports_stream_options and dated.supports_stream_options
    assert not adaptor(other="2024-06-01").supports_stream_options


def test_other_field_check() -> None:
    for good in ("", " v1 ", "preview", "2024-10-21", "2025-04-01-preview", "2023-06-01-preview"):
        assert other_problem(good) is None, good
    for bad in ("latest", "2024-10", "v2", "2024-10-21x"):
        assert other_problem(bad) == "channel_azure_api_version_invalid", bad
