"""Google Gemini: generateContent (convert.py, stream.py) and its adaptor."""

from api.relay.providers.gemini.adaptor import GeminiAdaptor

__all__ = ["GeminiAdaptor"]
