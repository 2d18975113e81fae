"""LangChain's chat models driving the weather tool loop through the gateway: bind_tools, then the
AIMessage the model returned (or the sum of its streamed chunks, as LangChain's guides aggregate
them) goes back in the history with a ToolMessage; whatever reasoning state the integration keeps
on the message travels with it, and nothing else."""
from __future__ import annotations

from typing import Any

from langchain_anthropic import ChatAnthropic
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_google_genai import ChatGoogleGenerativeAI
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from tests.sdk.clients import OPENAI_TOOL, Loop
from tests.sdk.scenario import QUESTION, WeatherReport, run_tool


def chat_anthropic(loop: Loop) -> ChatAnthropic:
    return ChatAnthropic(model_name=loop.model, base_url=loop.base, api_key=SecretStr(loop.key), max_retries=0,
                         max_tokens_to_sample=4096, thinking={"type": "adaptive"}, timeout=30, stop=None)


def chat_google(loop: Loop) -> ChatGoogleGenerativeAI:
    return ChatGoogleGenerativeAI(model=loop.model, google_api_key=loop.key, base_url=loop.base,
                                  api_version="v1beta", include_thoughts=True, thinking_level="low", retries=0)


def chat_openai(loop: Loop) -> ChatOpenAI:
    return ChatOpenAI(model=loop.model, base_url=loop.base + "/v1", api_key=SecretStr(loop.key),
                      max_retries=0, reasoning_effort="low", stream_usage=True)


def chat_openai_responses(loop: Loop) -> ChatOpenAI:
    # Stateless (store off), so the reasoning must travel encrypted in the message, as LangChain documents.
    return ChatOpenAI(model=loop.model, base_url=loop.base + "/v1", api_key=SecretStr(loop.key), max_retries=0,
                      use_responses_api=True, reasoning={"effort": "low", "summary": "auto"}, store=False,
                      include=["reasoning.encrypted_content"], stream_usage=True)


async def ask(model: Runnable[Any, Any], history: list[BaseMessage], stream: bool) -> AIMessage:
    if not stream:
        answer = await model.ainvoke(history)
        assert isinstance(answer, AIMessage), answer
        return answer
    total: AIMessageChunk | None = None
    async for chunk in model.astream(history):
        assert isinstance(chunk, AIMessageChunk), chunk
        total = chunk if total is None else total + chunk
    assert total is not None
    return total


async def tool_loop(llm: BaseChatModel, loop: Loop) -> str:
    model = llm.bind_tools([OPENAI_TOOL])
    history: list[BaseMessage] = [HumanMessage(QUESTION)]
    first = await ask(model, history, loop.stream)
    assert len(first.tool_calls) == 1, first
    call = first.tool_calls[0]
    assert call["id"]
    history += [first, ToolMessage(run_tool(call["name"], call["args"]), tool_call_id=call["id"])]
    second = await ask(model, history, loop.stream)
    assert not second.tool_calls, second
    return second.text


async def langchain_anthropic(loop: Loop) -> str:
    return await tool_loop(chat_anthropic(loop), loop)


async def langchain_google(loop: Loop) -> str:
    return await tool_loop(chat_google(loop), loop)


async def langchain_openai(loop: Loop) -> str:
    return await tool_loop(chat_openai(loop), loop)


async def langchain_openai_responses(loop: Loop) -> str:
    return await tool_loop(chat_openai_responses(loop), loop)


async def structured(llm: BaseChatModel, **options: Any) -> WeatherReport:
    answer = await llm.with_structured_output(WeatherReport, **options).ainvoke([HumanMessage(QUESTION)])
    assert isinstance(answer, WeatherReport), answer
    return answer


async def structured_anthropic(loop: Loop) -> WeatherReport:
    # Forced tool use is refused while Claude thinks: the native JSON-schema output instead, as
    # langchain-anthropic advises.
    return await structured(chat_anthropic(loop), method="json_schema")


async def structured_google(loop: Loop) -> WeatherReport:
    return await structured(chat_google(loop))


async def structured_openai(loop: Loop) -> WeatherReport:
    return await structured(chat_openai(loop))


async def structured_openai_responses(loop: Loop) -> WeatherReport:
    return await structured(chat_openai_responses(loop))
