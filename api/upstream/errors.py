"""Relay errors (OpenAI-shaped), and the masking of secrets in what they carry.

What a failed attempt means for the channel (retry elsewhere, disable it) is channel administration's:
api/channels/error_rules.py.
"""

from __future__ import annotations

from typing import Any

from api.upstream.masking import mask_secrets as mask_secrets  # the one masking step (callers import it here)


class RelayError(Exception):
    """An error answered to a relay client as `{"error": {message, type, param, code}}` with `status`.

    `local` = produced by the gateway itself (bad request, quota, conversion...): never retried on
    another channel and never a reason to disable a channel.
    """

    def __init__(
        self,
        status: int,
        message: str,
        type: str = "upstream_error",
        code: str | int | None = None,
        param: str | None = None,
        *,
        local: bool = False,
        headers: dict[str, str] | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(message)
        self.headers = headers or {}  # sent with the answer (Retry-After)
        # The operator's words when `message` leaves something out for the client (a failed connection's
        # host and port): the channel test and the server log show it; no client, nor its log, ever does.
        self.detail = detail
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.local = local

    def __repr__(self) -> str:
        return (
            f"RelayError(status={self.status}, message={self.message!r}, type={self.type!r}, "
            f"code={self.code!r}, local={self.local})"
        )

    def to_body(self, request_id: str | None = None) -> dict[str, Any]:
        message = self.message
        if request_id:
            message = f"{message} (request id: {request_id})"
        return {"error": {"message": message, "type": self.type, "param": self.param, "code": self.code}}

    @classmethod
    def local_error(cls, status: int, message: str, code: str | None = None, type: str = "new_api_error") -> RelayError:
        return cls(status, message, type, code, local=True)


class ChannelCannotServe(RelayError):
    """The chosen channel's type cannot serve this request (an endpoint it lacks, a provider's own
    tool): another channel is tried, and when none can, the client gets this error. Never counts
    against the channel's health."""
