"""What a Vertex AI channel's key and region field may be (checked when a channel is saved).

The key is one of two credentials:
- a service-account JSON key (the whole file, one line or pretty-printed), exchanged for OAuth access
  tokens: every model (Gemini, Claude, embeddings), in the regions of the region field;
- a Vertex AI API key, one line (`AIza…`, or `AQ.…` for keys bound to a service account): express
  mode, Google's own models only, on the global endpoint `aiplatform.googleapis.com/v1/publishers/
  google/models/…` (cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/
  vertex-ai-express-mode-api-reference).

The region field (`other`) is optional: empty, it means `us-central1` for a service-account key; an
API key ignores it (express mode has no regions). When set, it is a JSON object of model → region,
`default` for the models it does not name.
"""
from __future__ import annotations

import re

import orjson

from api.upstream.signing import google

_API_KEY = re.compile(r"^[A-Za-z0-9._-]{30,}$")
_REGION = re.compile(r"^(global|[a-z]+(-[a-z]+)+\d+)$")
DEFAULT_REGION = "us-central1"


def is_api_key(key: str) -> bool:
    """An API key rather than a service-account JSON key."""
    return not key.lstrip().startswith("{")


def key_problem(key: str) -> str | None:
    """The i18n key of the refusal when `key` is neither credential, else None."""
    key = key.strip()
    if not is_api_key(key):
        try:
            google.parse_service_account(key)
        except ValueError:
            return "channel_key_vertex_json"
        return None
    if key.startswith("ya29."):
        return "channel_key_vertex_token"
    return None if _API_KEY.match(key) else "channel_key_vertex_api_key"


def other_problem(other: str) -> str | None:
    """The i18n key of the refusal when the region field is not empty nor a region table, else None."""
    if not other.strip():
        return None
    try:
        table = orjson.loads(other)
    except orjson.JSONDecodeError:
        return "channel_vertex_region_table"
    if not isinstance(table, dict) or not all(isinstance(v, str) and _REGION.match(v) for v in table.values()):
        return "channel_vertex_region_table"
    return None


def region_for(other: str, *models: str) -> str:
    """The region of the first of `models` the table names, else its `default`, else us-central1."""
    try:
        table = orjson.loads(other) if other.strip() else {}
    except orjson.JSONDecodeError:
        table = {}
    if not isinstance(table, dict):
        table = {}
    for name in (*models, "default"):
        value = table.get(name)
        if isinstance(value, str) and value:
            return value
    return DEFAULT_REGION
