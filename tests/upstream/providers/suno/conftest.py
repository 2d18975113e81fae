"""The fake suno-api proxy of every Suno test (tests/upstream/providers/fake_tasks.py)."""
from tests.upstream.providers.fake_tasks import suno_api

__all__ = ["suno_api"]
