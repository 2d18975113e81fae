"""The fake midjourney-proxy of every Midjourney test (tests/upstream/providers/fake_tasks.py)."""
from tests.upstream.providers.fake_tasks import proxy

__all__ = ["proxy"]
