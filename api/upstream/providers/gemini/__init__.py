"""Google Gemini: generateContent (convert.py, stream.py) and its adaptor."""

from api.upstream.providers.gemini.adaptor import GeminiAdaptor

__all__ = ["GeminiAdaptor"]
