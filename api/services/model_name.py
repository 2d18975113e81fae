"""A request's model, one value from its admission to its log (api.relay.job.Job, the bill's
RequestFacts, each attempt's RelayMeta): the name the client asked for — billed, answered, logged —
and the name one attempt sends upstream after its channel's model_mapping."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModelName:
    requested: str = ""
    upstream: str = ""  # after the channel's mapping; "" before a channel is chosen (the requested name)

    @property
    def sent(self) -> str:
        """The name the upstream gets."""
        return self.upstream or self.requested

    @property
    def answered(self) -> str:
        """The name in the client's answer: what it asked for."""
        return self.requested or self.upstream

    @property
    def mapped(self) -> bool:
        return self.sent != self.answered

    def mapped_to(self, upstream: str) -> ModelName:
        """The same request on a channel that sends `upstream`."""
        return ModelName(self.requested, upstream)
