"""A scripted stand-in for the Claude fake until it takes a `script` itself: it reduces its request
to an AgentView and sets its answer from the script's Turn before answering as usual."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.relay.agent_script import AgentView, Script, Turn
from tests.relay.fake_anthropic import FakeClaude


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text"]


def claude_view(body: dict[str, Any]) -> AgentView:
    view = AgentView(tools={t["name"]: t.get("input_schema") or {} for t in body.get("tools") or ()})
    for message in body.get("messages") or ():
        if message["role"] == "assistant":
            view.turns += 1
            continue
        content = message["content"]
        blocks = content if isinstance(content, list) else []
        for block in blocks:
            if block.get("type") == "tool_result":
                view.tool_results.append("".join(_texts(block.get("content"))))
        view.user_texts += _texts(content)
    return view


@dataclass
class ScriptedClaude(FakeClaude):
    script: Script | None = None

    async def messages(self, request: web.Request) -> web.StreamResponse:
        if self.script is not None:
            turn: Turn = self.script(claude_view(await request.json()))
            self.thinking, self.reply, self.tool = turn.thinking, turn.text, turn.tool
        return await super().messages(request)
