"""Coding-agent tool loops through the gateway to a Gemini 3 channel (a strict fake that refuses
function calls replayed without the signature it issued, and Schema keys Gemini does not define):
the official openai SDK (chat completions), the anthropic SDK (Messages, as Claude Code talks) and
the Responses API, with Claude Code's Bash tool schema (exclusiveMinimum, propertyNames); the second
request must carry the thought signature of the first answer; each charge is checked to the unit
against the usage the fake reported (thoughts as output, cached content as cache reads). Also: a
history from another provider (the documented placeholder), web search with citations, notices."""
from __future__ import annotations

import base64
from typing import Any

import anthropic
import orjson
import pytest

from api import keys
from api.services import redis_keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.reasoning import GEMINI_SKIP_SIGNATURE
from tests.helpers import eventually
from tests.relay.fakes import add_channel, drain, headers_for, make_key, rich_user
from tests.upstream.providers.agent_script import AgentView, Turn
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.gemini.test_gemini_convert import BASH_SCHEMA
from tests.upstream.providers.kit import consume_logs, sdk

MODEL = "gemini-3-pro-preview"
USAGE = {"promptTokenCount": 1200, "candidatesTokenCount": 30, "thoughtsTokenCount": 45,
         "cachedContentTokenCount": 1000, "totalTokenCount": 1275}
QUESTION = "List the files here."
LISTING = "README.md\nsetup.py"
ANSWER = "There are two files: README.md and setup.py."


def bash_script(view: AgentView) -> Turn:
    """Runs `ls` with Bash first (thinking before it), then answers from the tool's output."""
    if view.tool_results:
        return Turn(text=ANSWER if LISTING in view.tool_results[-1] else "no listing", thinking="Two files.")
    return Turn(thinking="I should list the directory.", tool={"id": "", "name": "Bash",
                                                                "input": {"command": "ls", "timeout": 5000}})


@pytest.fixture
async def gemini(gateway, aiohttp_server) -> FakeGemini:
    options = gateway.server.app[keys.OPTIONS]
    for key, table in (("ModelRatio", {MODEL: 1.0}), ("CompletionRatio", {MODEL: 6}), ("CacheRatio", {MODEL: 0.1})):
        await options.update(key, orjson.dumps(table).decode())
    fake = FakeGemini(script=bash_script, usage=USAGE)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    return fake


def charge(gateway) -> int:
    price = pricing.resolve_configured(gateway.server.app[keys.OPTIONS], MODEL)
    return pricing.settle_quota(price, 1200, 75, cached_tokens=1000)


async def assert_replayed_and_billed(gateway, fake: FakeGemini, user) -> None:
    """Two requests, both taken; the second carries the first call with the signature it was issued
    (never the placeholder), the schema's meaning in its description, the tool's output; two charges."""
    assert [s["body"]["contents"][-1]["role"] for s in fake.seen] == ["user", "user"]
    second = fake.seen[1]["body"]
    calls = [p for c in second["contents"] if c["role"] == "model" for p in c["parts"] if "functionCall" in p]
    first_signature = base64.b64encode(b"fake-gemini-thought-0").decode()  # the fake's first: the call's
    assert calls == [{"functionCall": {"name": "Bash", "args": {"command": "ls", "timeout": 5000}},
                      "thoughtSignature": first_signature}]
    responses = [p["functionResponse"] for c in second["contents"] for p in c["parts"] if "functionResponse" in p]
    assert responses == [{"name": "Bash", "response": {"output": LISTING}}]
    (bash,) = second["tools"][0]["functionDeclarations"]
    timeout = bash["parameters"]["properties"]["timeout"]
    assert "(must be > 0)" in timeout["description"] and "exclusiveMinimum" not in timeout
    assert "property names matching" in bash["parameters"]["properties"]["env"]["description"]
    for seen in fake.seen:
        assert seen["body"]["generationConfig"]["thinkingConfig"]["includeThoughts"] is True
    await drain(gateway)
    logs = await consume_logs(user)
    assert [(log.model_name, log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (MODEL, 1200, 75, charge(gateway))] * 2
    assert orjson.loads(logs[0].other)["cache_tokens"] == 1000


BASH_TOOL = {"type": "function", "function": {"name": "Bash", "description": "Run a shell command",
                                              "parameters": BASH_SCHEMA}}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_openai_sdk_tool_loop(gateway, gemini: FakeGemini, stream: bool) -> None:
    user = await rich_user()
    token = await make_key(user)
    request: dict[str, Any] = {"model": MODEL, "tools": [BASH_TOOL], "reasoning_effort": "low"}
    async with sdk(gateway, token) as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        if stream:
            async with client.chat.completions.stream(messages=messages, **request) as events:
                first = (await events.get_final_completion()).choices[0]
        else:
            first = (await client.chat.completions.create(messages=messages, **request)).choices[0]
        (call,) = first.message.tool_calls
        assert first.finish_reason == "tool_calls" and call.model_extra["extra_content"]["google"]["thought_signature"]
        assert first.message.model_extra["reasoning_content"] == "I should list the directory."
        messages += [first.message, {"role": "tool", "tool_call_id": call.id, "content": LISTING}]
        second = await client.chat.completions.create(messages=messages, **request)
    assert second.choices[0].message.content == ANSWER
    assert gemini.seen[0]["body"]["generationConfig"]["thinkingConfig"]["thinkingLevel"] == "low"
    await assert_replayed_and_billed(gateway, gemini, user)


async def test_anthropic_sdk_tool_loop_as_claude_code(gateway, gemini: FakeGemini) -> None:
    user = await rich_user()
    token = await make_key(user)
    tool = {"name": "Bash", "description": "Run a shell command", "input_schema": BASH_SCHEMA}
    request: dict[str, Any] = {"model": MODEL, "max_tokens": 8192, "tools": [tool], "thinking": {"type": "adaptive"}}
    async with anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}",
                                        max_retries=0) as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        first = await client.messages.create(messages=messages, **request)
        call = next(b for b in first.content if b.type == "tool_use")
        messages += [{"role": "assistant", "content": first.content},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": LISTING}]}]
        async with client.messages.stream(messages=messages, **request) as events:
            second = await events.get_final_message()
    assert first.stop_reason == "tool_use" and any(b.type == "thinking" for b in first.content)
    assert "".join(b.text for b in second.content if b.type == "text") == ANSWER
    await assert_replayed_and_billed(gateway, gemini, user)


async def test_claude_code_web_search_beside_its_tools(gateway, gemini: FakeGemini) -> None:
    """Claude Code declares Anthropic's web search server tool with its own tools on every request:
    Gemini 3 gets googleSearch and the functions together (the tool-combination mode); the search's
    own toolCall/toolResponse parts stay out of the answer and go back on the next turn, where they
    stood, from the gateway's kept state; only the search's cap is said left out."""
    user = await rich_user()
    token = await make_key(user)
    tools = [{"name": "Bash", "description": "Run a shell command", "input_schema": BASH_SCHEMA},
             {"type": "web_search_20250305", "name": "web_search", "max_uses": 8}]
    request: dict[str, Any] = {"model": MODEL, "max_tokens": 8192, "tools": tools, "thinking": {"type": "adaptive"}}
    async with anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}",
                                        max_retries=0) as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        raw = await client.messages.with_raw_response.create(messages=messages, **request)
        first = await raw.parse()
        call = next(b for b in first.content if b.type == "tool_use")
        messages += [{"role": "assistant", "content": first.content},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": LISTING}]}]
        await kept(gateway, user.id)  # written once the first answer is settled
        second = await client.messages.create(messages=messages, **request)
    assert [b.type for b in first.content] == ["thinking", "tool_use"] and call.name == "Bash"
    assert "".join(b.text for b in second.content if b.type == "text") == ANSWER
    assert raw.headers["X-Gateway-Dropped"] == "tools.web_search.max_uses"  # the search kept, its cap said
    for seen in gemini.seen:
        assert [list(tool) for tool in seen["body"]["tools"]] == [["functionDeclarations"], ["googleSearch"]]
        assert seen["body"]["toolConfig"]["includeServerSideToolInvocations"] is True
    assert "toolCall" not in raw.http_response.text and "toolResponse" not in raw.http_response.text
    (replayed,) = [c["parts"] for c in gemini.seen[1]["body"]["contents"] if c["role"] == "model"]
    search = base64.b64encode(b"fake-gemini-search-1").decode()
    assert [list(p) for p in replayed] == [["toolCall", "thoughtSignature"], ["toolResponse"],
                                           ["functionCall", "thoughtSignature"]]
    assert replayed[0]["thoughtSignature"] == search and replayed[0]["toolCall"]["toolType"] == "GOOGLE_SEARCH_WEB"
    await assert_replayed_and_billed(gateway, gemini, user)


async def kept(gateway, user_id: int) -> None:
    """Until the user has a kept reasoning state (written in the background once an answer is settled)."""
    store = gateway.server.app[keys.STORE]

    async def there() -> bool:
        return bool(await store.redis.zcard(redis_keys.user_key(store, user_id, "rsn")))
    await eventually(there, timeout=10, interval=0.01)


async def test_responses_tool_loop_stateless(gateway, gemini: FakeGemini) -> None:
    user = await rich_user()
    token = await make_key(user)
    tool = {"type": "function", "name": "Bash", "description": "Run a shell command", "parameters": BASH_SCHEMA}
    request: dict[str, Any] = {"model": MODEL, "tools": [tool], "store": False, "reasoning": {"effort": "low"},
                               "include": ["reasoning.encrypted_content"]}
    async with sdk(gateway, token) as client:
        first = await client.responses.create(input=QUESTION, **request)
        call = next(item for item in first.output if item.type == "function_call")
        items = [{"role": "user", "content": QUESTION}, *[i.model_dump(exclude_none=True) for i in first.output],
                 {"type": "function_call_output", "call_id": call.call_id, "output": LISTING}]
        second = await client.responses.create(input=items, **request)
    assert second.output_text == ANSWER
    await assert_replayed_and_billed(gateway, gemini, user)


async def test_history_from_another_provider_gets_the_placeholder(gateway, gemini: FakeGemini) -> None:
    token = await make_key(await rich_user())
    messages = [{"role": "user", "content": QUESTION},
                {"role": "assistant", "content": None, "tool_calls": [  # made by another model: no signature
                    {"id": "toolu_01", "type": "function",
                     "function": {"name": "Bash", "arguments": '{"command":"ls"}'}}]},
                {"role": "tool", "tool_call_id": "toolu_01", "content": LISTING}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=messages, tools=[BASH_TOOL])
    assert answer.choices[0].message.content == ANSWER
    (call,) = [p for p in gemini.seen[0]["body"]["contents"][1]["parts"]]
    assert call["thoughtSignature"] == GEMINI_SKIP_SIGNATURE


async def test_web_search_with_citations_and_what_was_left_out(gateway, gemini: FakeGemini) -> None:
    gemini.script = None
    token = await make_key(await rich_user())
    url = "/v1/chat/completions"
    ask = {"model": MODEL, "messages": [{"role": "user", "content": "News?"}], "max_tokens": 100000}
    searched = await gateway.post(url, json={**ask, "tools": [{"type": "web_search"}]}, headers=headers_for(token))
    both = await gateway.post(url, json={**ask, "tools": [{"type": "web_search"}, BASH_TOOL], "logit_bias": {"1": 2}},
                              headers=headers_for(token))
    assert (searched.status, both.status) == (200, 200)
    message = (await searched.json())["choices"][0]["message"]
    assert message["annotations"] == [{"type": "url_citation", "url_citation": {
        "url": "https://example.org/hello", "title": "example.org", "start_index": 0, "end_index": 5}}]
    assert gemini.seen[0]["body"]["tools"] == [{"googleSearch": {}}]
    assert searched.headers["X-Gateway-Dropped"] == "max_tokens above 65536"
    # Gemini 3 searches beside functions in the tool-combination mode: both sent, nothing said
    assert both.headers["X-Gateway-Dropped"] == "logit_bias,max_tokens above 65536"
    assert [list(t) for t in gemini.seen[1]["body"]["tools"]] == [["functionDeclarations"], ["googleSearch"]]
    assert gemini.seen[1]["body"]["toolConfig"] == {"includeServerSideToolInvocations": True}
