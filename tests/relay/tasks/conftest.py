"""The task providers' fakes the task machinery is tested against: a midjourney-proxy and a suno-api
proxy (tests/upstream/providers/fake_tasks.py), and the provider kit's `serve` for the video providers'
fixtures these tests borrow."""
from tests.upstream.providers.fake_tasks import proxy, suno_api
from tests.upstream.providers.kit import serve

__all__ = ["proxy", "serve", "suno_api"]
