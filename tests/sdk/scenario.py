"""The one conversation every client has with every channel: a question, a weather tool call with
thinking before it, the tool's answer sent back, the model's final words; and the scripted model
that plays it behind each fake upstream (tests/upstream/providers/agent_script.py)."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from tests.upstream.providers.agent_script import AgentView, Turn

QUESTION = "What is the weather in Paris today? Use the tool."
TOOL_NAME = "get_weather"
TOOL_DESCRIPTION = "The current weather at a place."
# Nested objects, an enum and a nullable field: what every converter has to carry to its provider.
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "country": {"type": "string", "description": "ISO 3166-1 alpha-2 code"},
            },
            "required": ["city", "country"],
        },
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "date": {"type": ["string", "null"], "description": "YYYY-MM-DD; null for today"},
    },
    "required": ["location", "unit", "date"],
}
CALL_ID = "call_weather_1"
CALL_ARGS: dict[str, Any] = {"location": {"city": "Paris", "country": "FR"}, "unit": "celsius", "date": None}
TOOL_RESULT = '{"temperature": 18, "unit": "celsius", "sky": "sunny"}'
ANSWER = "It is 18 degrees and sunny in Paris."
FIRST_THOUGHT = "The user wants the weather in Paris, so I call get_weather."
SECOND_THOUGHT = "The tool says 18 degrees and sunny."


def run_tool(name: str, args: Any) -> str:
    """The client's side of the tool: it answers only the call the script makes."""
    assert name == TOOL_NAME, name
    assert args == CALL_ARGS, args
    return TOOL_RESULT


@dataclass
class WeatherScript:
    """Calls get_weather first (thinking before it), then answers from the tool's result.
    Keeps every view it was shown, for the assertions."""

    views: list[AgentView] = field(default_factory=list)

    def __call__(self, view: AgentView) -> Turn:
        self.views.append(copy.deepcopy(view))
        if not view.tool_results:
            return Turn(thinking=FIRST_THOUGHT, tool={"id": CALL_ID, "name": TOOL_NAME, "input": CALL_ARGS})
        return Turn(thinking=SECOND_THOUGHT, text=ANSWER)


class Location(BaseModel):
    city: str
    country: str


class WeatherReport(BaseModel):
    """What the structured-output requests ask the model for."""

    location: Location
    sky: Literal["sunny", "cloudy", "rain"]
    temperature: float
    note: str | None


REPORT = WeatherReport(location=Location(city="Paris", country="FR"), sky="sunny", temperature=18.0, note=None)


@dataclass
class ReportScript:
    """Answers with the report as JSON text (every structured-output request here asks for a JSON
    Schema answer, none for a forced tool call). Keeps every view it was shown."""

    views: list[AgentView] = field(default_factory=list)

    def __call__(self, view: AgentView) -> Turn:
        self.views.append(copy.deepcopy(view))
        return Turn(thinking=FIRST_THOUGHT, text=REPORT.model_dump_json())
