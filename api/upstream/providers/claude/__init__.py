"""Anthropic Claude: the Messages API (convert.py, stream.py) and its adaptor."""

from api.upstream.providers.claude.adaptor import ClaudeAdaptor

__all__ = ["ClaudeAdaptor"]
