"""The official SDKs driving the weather tool loop through the gateway, each the way its own
documentation shows: the assistant turn goes back exactly as the SDK returned it (thinking blocks,
thought signatures, reasoning items and any extra field included), with the tool's result."""
from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types

from tests.sdk.scenario import (
    QUESTION,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    WEATHER_SCHEMA,
    Location,
    WeatherReport,
    run_tool,
)


@dataclass(frozen=True)
class Loop:
    """Where and how one client runs the loop: the gateway's root URL, the key, the model, streamed or not."""

    base: str
    key: str
    model: str
    stream: bool


Driver = Callable[[Loop], Awaitable[str]]  # runs the loop, returns the final answer's text

# -- Anthropic ------------------------------------------------------------------------------------

ANTHROPIC_TOOL = {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": WEATHER_SCHEMA}
# Adaptive thinking: what current Claude models take (a budget is refused from Opus 4.7 on), and
# what the gateway maps to the target's own reasoning control.
ANTHROPIC_THINKING = {"type": "adaptive"}


def anthropic_client(loop: Loop) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=loop.base, api_key=loop.key, max_retries=0)


async def anthropic_turn(client: anthropic.AsyncAnthropic, loop: Loop, messages: list[Any]) -> Any:
    request: dict[str, Any] = {"model": loop.model, "max_tokens": 4096, "tools": [ANTHROPIC_TOOL],
                               "thinking": ANTHROPIC_THINKING, "messages": messages}
    if not loop.stream:
        return await client.messages.create(**request)
    async with client.messages.stream(**request) as stream:
        return await stream.get_final_message()


async def anthropic_messages(loop: Loop) -> str:
    """messages.create / messages.stream; the assistant's `content` list goes back as it came."""
    async with anthropic_client(loop) as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        first = await anthropic_turn(client, loop, messages)
        call = next(b for b in first.content if b.type == "tool_use")
        messages += [{"role": "assistant", "content": first.content},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                   "content": run_tool(call.name, call.input)}]}]
        second = await anthropic_turn(client, loop, messages)
    assert second.stop_reason == "end_turn", second
    return "".join(b.text for b in second.content if b.type == "text")


# -- Google GenAI ---------------------------------------------------------------------------------


def genai_client(loop: Loop) -> genai.Client:
    return genai.Client(api_key=loop.key, http_options=types.HttpOptions(base_url=loop.base, api_version="v1beta"))


def genai_config(**extra: Any) -> types.GenerateContentConfig:
    """The weather tool as a JSON Schema declaration, automatic function calling off, thoughts on."""
    declaration = types.FunctionDeclaration(name=TOOL_NAME, description=TOOL_DESCRIPTION,
                                            parameters_json_schema=WEATHER_SCHEMA)
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_level=types.ThinkingLevel.LOW), **extra)


def function_response(call: types.FunctionCall) -> types.Part:
    assert call.name is not None
    part = types.Part.from_function_response(name=call.name, response={"result": run_tool(call.name, call.args)})
    if call.id and part.function_response is not None:
        part.function_response.id = call.id
    return part


def only_call(parts: list[types.Part]) -> types.FunctionCall:
    calls = [p.function_call for p in parts if p.function_call is not None]
    assert len(calls) == 1, parts
    return calls[0]


def answer_text(parts: list[types.Part]) -> str:
    return "".join(p.text for p in parts if p.text and not p.thought)


async def genai_turn(client: genai.Client, loop: Loop, contents: list[types.Content]) -> list[types.Part]:
    """The model's parts of one turn; streamed, every chunk's parts in order (Google's guidance:
    keep them all, a signature may come on a part of its own)."""
    if not loop.stream:
        answer = await client.aio.models.generate_content(model=loop.model, contents=contents, config=genai_config())
        assert answer.candidates and answer.candidates[0].content, answer
        return list(answer.candidates[0].content.parts or ())
    parts: list[types.Part] = []
    async for chunk in await client.aio.models.generate_content_stream(model=loop.model, contents=contents,
                                                                       config=genai_config()):
        for candidate in chunk.candidates or ():
            parts.extend(candidate.content.parts or () if candidate.content else ())
    return parts


async def genai_generate(loop: Loop) -> str:
    """models.generate_content(_stream) with the model's Content sent back as it came."""
    client = genai_client(loop)
    contents = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    first = await genai_turn(client, loop, contents)
    contents += [types.Content(role="model", parts=first),
                 types.Content(role="user", parts=[function_response(only_call(first))])]
    return answer_text(await genai_turn(client, loop, contents))


async def chat_send(chat: Any, loop: Loop, message: Any) -> list[types.Part]:
    if not loop.stream:
        answer = await chat.send_message(message)
        return list(answer.candidates[0].content.parts or ())
    parts: list[types.Part] = []
    async for chunk in await chat.send_message_stream(message):
        for candidate in chunk.candidates or ():
            parts.extend(candidate.content.parts or () if candidate.content else ())
    return parts


async def genai_chat(loop: Loop) -> str:
    """A chat session: the SDK keeps the history (the model's turns as it received them)."""
    chat = genai_client(loop).aio.chats.create(model=loop.model, config=genai_config())
    first = await chat_send(chat, loop, QUESTION)
    return answer_text(await chat_send(chat, loop, function_response(only_call(first))))


# -- OpenAI ---------------------------------------------------------------------------------------

OPENAI_TOOL = {"type": "function", "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                                                "parameters": WEATHER_SCHEMA}}
RESPONSES_TOOL = {"type": "function", "name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                  "parameters": WEATHER_SCHEMA}


def openai_client(loop: Loop) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=loop.base + "/v1", api_key=loop.key, max_retries=0)


async def chat_turn(client: openai.AsyncOpenAI, loop: Loop, messages: list[Any]) -> Any:
    request: dict[str, Any] = {"model": loop.model, "messages": messages, "tools": [OPENAI_TOOL],
                               "reasoning_effort": "low"}
    if not loop.stream:
        return (await client.chat.completions.create(**request)).choices[0]
    async with client.chat.completions.stream(stream_options={"include_usage": True}, **request) as stream:
        return (await stream.get_final_completion()).choices[0]


async def openai_chat(loop: Loop) -> str:
    """chat.completions.create / .stream: the SDK's message object goes back in the history (extra
    fields such as reasoning_content kept, as DeepSeek's and Google's guides do it)."""
    async with openai_client(loop) as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        first = await chat_turn(client, loop, messages)
        assert first.finish_reason == "tool_calls", first
        (call,) = first.message.tool_calls
        messages += [first.message, {"role": "tool", "tool_call_id": call.id,
                                     "content": run_tool(call.function.name, json.loads(call.function.arguments))}]
        second = await chat_turn(client, loop, messages)
    assert second.finish_reason == "stop", second
    return str(second.message.content)


async def responses_turn(client: openai.AsyncOpenAI, loop: Loop, items: list[Any]) -> Any:
    # Stateless, as Codex runs it: nothing stored, the reasoning carried in encrypted_content.
    request: dict[str, Any] = {"model": loop.model, "input": items, "tools": [RESPONSES_TOOL],
                               "reasoning": {"effort": "low", "summary": "auto"}, "store": False,
                               "include": ["reasoning.encrypted_content"]}
    if not loop.stream:
        return await client.responses.create(**request)
    async with client.responses.stream(**request) as stream:
        return await stream.get_final_response()


async def openai_responses(loop: Loop) -> str:
    """responses.create / .stream: the response's output items go back as input, then the call's output."""
    async with openai_client(loop) as client:
        items: list[Any] = [{"role": "user", "content": QUESTION}]
        first = await responses_turn(client, loop, items)
        (call,) = [item for item in first.output if item.type == "function_call"]
        items += [*first.output, {"type": "function_call_output", "call_id": call.call_id,
                                  "output": run_tool(call.name, json.loads(call.arguments))}]
        second = await responses_turn(client, loop, items)
    assert second.status == "completed", second
    return str(second.output_text)


# -- Google GenAI: a Python function run by the SDK itself, and a pydantic response schema --------


def get_weather(location: Location, unit: str, date: str | None) -> dict[str, Any]:
    """The current weather at a place.

    Args:
        location: the city and its ISO 3166-1 alpha-2 country code.
        unit: celsius or fahrenheit.
        date: YYYY-MM-DD; null for today.
    """
    # `unit` is a plain string: the SDK checks each argument with isinstance against its annotation,
    # which a Literal or an Enum fails (google/genai/_extra_utils.py, convert_if_exist_pydantic_model).
    args = {"location": location.model_dump(), "unit": unit, "date": date}
    return dict(json.loads(run_tool(TOOL_NAME, args)))


async def genai_function(loop: Loop) -> str:
    """Automatic function calling: the SDK declares the Python function (a JSON Schema built from
    its signature), calls it when the model asks, sends the result back and returns the answer."""
    client = genai_client(loop)
    config = types.GenerateContentConfig(
        tools=[get_weather], thinking_config=types.ThinkingConfig(include_thoughts=True,
                                                                  thinking_level=types.ThinkingLevel.LOW))
    if not loop.stream:
        answer = await client.aio.models.generate_content(model=loop.model, contents=QUESTION, config=config)
        return str(answer.text)
    parts: list[types.Part] = []
    async for chunk in await client.aio.models.generate_content_stream(model=loop.model, contents=QUESTION,
                                                                       config=config):
        for candidate in chunk.candidates or ():
            parts.extend(candidate.content.parts or () if candidate.content else ())
    return answer_text(parts)


async def genai_structured(loop: Loop) -> WeatherReport:
    """A pydantic model as response_schema: the SDK parses the JSON answer into it."""
    config = types.GenerateContentConfig(response_mime_type="application/json", response_schema=WeatherReport,
                                         thinking_config=types.ThinkingConfig(thinking_level=types.ThinkingLevel.LOW))
    answer = await genai_client(loop).aio.models.generate_content(model=loop.model, contents=QUESTION, config=config)
    assert isinstance(answer.parsed, WeatherReport), answer
    return answer.parsed
