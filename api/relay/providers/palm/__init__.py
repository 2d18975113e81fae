"""Google PaLM 2 (type 11): the legacy generateMessage API."""

from api.relay.providers.palm.adaptor import PaLMAdaptor

__all__ = ["PaLMAdaptor"]
