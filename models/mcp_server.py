"""A remote Model Context Protocol server the gateway offers to its keys: a channel for tools.

The credential the gateway sends is stored as given, like a channel's key (never returned, masked
everywhere): `headers` (a JSON object of header → value sent with every request), or OAuth client
credentials (`oauth_token_url`, `oauth_client_id`, `oauth_client_secret`, `oauth_scope`) that the
gateway exchanges for an access token itself and caches until it expires.
"""
from __future__ import annotations

from typing import Any

import orjson
from tortoise import fields

from .base import BaseModel, now
from .enums import ChannelStatus
from .keyring import mask

TRANSPORTS = ("streamable_http", "sse")


def json_object(text: str) -> dict[str, str]:
    """A stored JSON object of strings ({} for anything else)."""
    try:
        value = orjson.loads(text) if text else {}
    except orjson.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def json_list(text: str) -> list[str]:
    """A stored JSON list of strings ([] for anything else)."""
    try:
        value = orjson.loads(text) if text else []
    except orjson.JSONDecodeError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


class McpServer(BaseModel):
    name = fields.CharField(max_length=64, unique=True)  # [a-z0-9_-]: the prefix of its tools' names
    description = fields.CharField(max_length=255, default="")
    url = fields.CharField(max_length=1024)
    transport = fields.CharField(max_length=32, default="streamable_http")  # one of TRANSPORTS
    headers = fields.TextField(default="")  # JSON object: secret, never returned
    oauth_token_url = fields.CharField(max_length=1024, default="")
    oauth_client_id = fields.CharField(max_length=255, default="")
    oauth_client_secret = fields.TextField(default="")  # secret, never returned
    oauth_scope = fields.CharField(max_length=512, default="")
    groups = fields.TextField(default="")  # JSON list of the groups whose keys may use it
    tools = fields.TextField(default="")  # JSON list of the tools offered ([]: all of them)
    price = fields.BigIntField(default=0)  # quota units per tool call
    timeout_seconds = fields.IntField(default=60)  # one call's bound
    status = fields.IntField(default=int(ChannelStatus.ENABLED), db_index=True)  # 3: down (health)
    status_reason = fields.TextField(default="")  # why it was disabled automatically (masked)
    test_time = fields.BigIntField(default=0)
    response_time = fields.IntField(default=0)  # milliseconds of the last listing of its tools
    tool_count = fields.IntField(default=0)  # tools it offered at its last listing
    created_time = fields.BigIntField(default=now)

    class Meta:
        table = "mcp_server"

    def public_dict(self) -> dict[str, Any]:
        """The wire shape: credentials masked (header names kept, values masked; the secret masked)."""
        return {
            "id": self.id, "name": self.name, "description": self.description, "url": self.url,
            "transport": self.transport,
            "headers": {name: mask(value) for name, value in json_object(self.headers).items()},
            "oauth_token_url": self.oauth_token_url, "oauth_client_id": self.oauth_client_id,
            "oauth_client_secret": mask(self.oauth_client_secret) if self.oauth_client_secret else "",
            "oauth_scope": self.oauth_scope, "groups": json_list(self.groups), "tools": json_list(self.tools),
            "price": self.price, "timeout_seconds": self.timeout_seconds, "status": self.status,
            "status_reason": self.status_reason, "test_time": self.test_time, "response_time": self.response_time,
            "tool_count": self.tool_count, "created_time": self.created_time,
        }
