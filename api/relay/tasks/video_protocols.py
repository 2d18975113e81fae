"""The video protocols (a catalogue row's `video`) and their adaptors, by channel type."""
from __future__ import annotations

from api.relay.tasks.base import TaskAdaptor
from api.relay.tasks.video_jimeng import JimengAdaptor
from api.relay.tasks.video_kling import KlingAdaptor
from api.relay.tasks.video_openai import OpenAIVideoAdaptor
from api.relay.tasks.video_seedance import SeedanceAdaptor
from api.relay.tasks.video_veo import VeoGeminiAdaptor, VeoVertexAdaptor
from api.relay.tasks.video_vidu import ViduAdaptor
from api.upstream import catalogue

PROTOCOLS: dict[str, type[TaskAdaptor]] = {
    "openai": OpenAIVideoAdaptor,
    "kling": KlingAdaptor,
    "veo": VeoGeminiAdaptor,
    "veo-vertex": VeoVertexAdaptor,
    "seedance": SeedanceAdaptor,
    "vidu": ViduAdaptor,
    "jimeng": JimengAdaptor,
}
VIDEO_ADAPTORS: dict[int, type[TaskAdaptor]] = {
    number: PROTOCOLS[row.video] for number, row in catalogue.CATALOGUE.items() if row.video in PROTOCOLS
}
VIDEO_TYPES = frozenset(VIDEO_ADAPTORS)
