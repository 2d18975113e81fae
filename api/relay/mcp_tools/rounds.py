"""The rounds of a request whose MCP tools the gateway serves.

Before the first round: the key's group, its grants on the declared servers (a refusal answers the
request, nothing reserved) and their tools, offered to the model as function tools beside the
client's own. Then each round is a whole relay request through the lifecycle
(api.relay.lifecycle.serve with the chat Flow): its own admission and reservation, channel choice,
retries and chain of models, settlement and log row, as any model call. Each round is converted
(never sent in the client's own format, whose MCP declarations the provider would act on) and not
streamed. When the model's answer calls the offered tools, the gateway runs them in order
(api.relay.mcp_tools.running: each billed as a tool call), adds the calls and their results to the
conversation and asks again; an answer that calls none of them, or calls one of the client's own
tools (which only the client can run), ends the turn. McpMaxRounds (default 8) bounds the model
rounds: the last one's calls are not run and the answer says so.

A round that fails ends the request with its error; the rounds and calls before it stay charged (they
were made). A client that goes away cancels the round or call under way (refunded).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from api.middlewares import REQUEST_ID_HEADER
from api.relay.admission import usable_group
from api.relay.caller import Caller
from api.relay.handler import CHAT_FLOW
from api.relay.inbound.anthropic import AnthropicInbound
from api.relay.inbound.base import Inbound
from api.relay.inbound.responses import ResponsesInbound
from api.relay.job import DROPPED_HEADER, MODEL_HEADER, Job
from api.relay.lifecycle import serve
from api.relay.mcp_tools import streams
from api.relay.mcp_tools.declared import Hosted, take_anthropic, take_responses
from api.relay.mcp_tools.items import Step, add_usage, final_body
from api.relay.mcp_tools.offer import Offer, offer
from api.relay.mcp_tools.running import run_call
from api.relay.state import relay_state
from api.upstream.base import RelayMode
from api.upstream.chat import ChatMessage

DEFAULT_ROUNDS = 8
ANSWER_HEADERS = (REQUEST_ID_HEADER, MODEL_HEADER, DROPPED_HEADER)


def round_body(base: Mapping[str, Any], offered: Offer, history: list[ChatMessage]) -> dict[str, Any]:
    """One round's request: the client's, the offered tools added, the turn so far, not streamed."""
    body = {k: v for k, v in base.items() if k not in ("stream", "stream_options")}
    body["messages"] = [*(base.get("messages") or ()), *history]
    body["tools"] = [*(base.get("tools") or ()), *offered.tools]
    return body


async def serve_hosted(request: web.Request, route: str, caller: Caller, inbound: Inbound,
                       hosted: Hosted) -> web.StreamResponse:
    state = relay_state(request)
    options = state.options
    token = caller.token
    assert token is not None and state.mcp is not None
    inbound.body.update(hosted.restore)  # read without the served declarations; answered with them
    if hosted.notices and isinstance(inbound, ResponsesInbound):
        inbound.conversion_notices.extend(n for n in hosted.notices if n not in inbound.conversion_notices)
    base = inbound.openai
    streamed = base.get("stream") is True
    group = usable_group(request, options, caller.user, token.group)
    taken = {str((t.get("function") or {}).get("name") or "") for t in base.get("tools") or ()}
    offered = await offer(request, state.mcp, hosted, group, token.mcp_tools, taken)
    limit = options.get_int("McpMaxRounds") or DEFAULT_ROUNDS
    answers: list[Mapping[str, Any]] = []
    history: list[ChatMessage] = []
    steps: list[Step] = []
    usage: dict[str, Any] = {}
    stopped = 0
    inbound.on_answer = answers.append
    try:
        for number in range(1, limit + 1):
            job = Job(request, state, options, RelayMode.CHAT, route, caller, round_body(base, offered, history),
                      inbound=inbound)
            outcome = await serve(job, CHAT_FLOW)
            answer = answers[-1]
            add_usage(usage, answer.get("usage"))
            message = dict((answer.get("choices") or [{}])[0].get("message") or {})
            calls = [c for c in message.get("tool_calls") or () if isinstance(c, Mapping)]
            mine = [c for c in calls if (c.get("function") or {}).get("name") in offered.functions]
            step = Step(answer)
            steps.append(step)
            if not mine:
                break
            if number == limit:
                stopped = limit
                break
            for call in mine:
                function = call.get("function") or {}
                step.ran.append(await run_call(request, state, caller, group, offered.functions[function["name"]],
                                               str(call.get("id") or ""), str(function.get("arguments") or "")))
            if len(mine) < len(calls):  # the client's own tools too: the turn goes back to the client
                break
            history.append(message)  # type: ignore[arg-type]
            history.extend({"role": "tool", "tool_call_id": ran.call_id, "content": ran.output} for ran in step.ran)
    finally:
        inbound.on_answer = None
    headers = {name: outcome.response.headers[name] for name in ANSWER_HEADERS if name in outcome.response.headers}
    body = final_body(inbound, hosted.format, offered, steps, usage, stopped)
    if streamed:
        return await streams.respond(request, hosted.format, body, headers)
    return web.json_response(body, headers=headers, dumps=streams.dumps)


async def hosted_of(request: web.Request, caller: Caller, inbound: type[Inbound],
                    body: dict[str, Any]) -> Hosted | None:
    """The MCP declarations of a Responses or Messages request that this gateway serves, taken out
    of `body` (None: none; the playground, which has no key, is never served)."""
    state = relay_state(request)
    if state.mcp is None or caller.token is None or inbound not in (ResponsesInbound, AnthropicInbound):
        return None
    if not isinstance(body.get("tools" if inbound is ResponsesInbound else "mcp_servers"), list):
        return None
    servers = await state.mcp.registry.fresh()
    take = take_responses if inbound is ResponsesInbound else take_anthropic
    return take(body, request, state.options, servers)
