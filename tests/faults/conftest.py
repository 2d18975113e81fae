"""The fault suite runs real processes: see `api_process`, `worker` and `spawn` in tests/conftest.py."""
