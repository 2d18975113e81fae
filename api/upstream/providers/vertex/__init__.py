"""Vertex AI (type 41): Gemini, embedding and Claude models behind a service-account key (OAuth) or
a Vertex AI API key (express mode, Google's models only)."""

from api.upstream.providers.vertex.adaptor import VertexAdaptor, VertexClaudeAdaptor, VertexGeminiAdaptor
from api.upstream.providers.vertex.checks import key_problem, other_problem

__all__ = ["VertexAdaptor", "VertexClaudeAdaptor", "VertexGeminiAdaptor", "key_problem", "other_problem"]
