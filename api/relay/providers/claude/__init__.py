"""Anthropic Claude: the Messages API (convert.py, stream.py) and its adaptor."""

from api.relay.providers.claude.adaptor import ClaudeAdaptor

__all__ = ["ClaudeAdaptor"]
