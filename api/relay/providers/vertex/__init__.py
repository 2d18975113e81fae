"""Vertex AI (type 41): Gemini and Claude models behind Google Cloud's OAuth."""

from api.relay.providers.vertex.adaptor import VertexAdaptor, VertexClaudeAdaptor, VertexGeminiAdaptor

__all__ = ["VertexAdaptor", "VertexClaudeAdaptor", "VertexGeminiAdaptor"]
