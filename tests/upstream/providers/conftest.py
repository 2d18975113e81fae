"""The fixtures every provider's tests share (video and task providers' too): the gateway and the
OpenAI-format fake upstreams of the pipeline tests, and `serve`, which starts a provider's fake
(tests/upstream/providers/kit.py) on a local port."""
from tests.relay.fakes import gateway, upstreams
from tests.upstream.providers.kit import serve

__all__ = ["gateway", "serve", "upstreams"]
