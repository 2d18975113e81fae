"""Domain exceptions of the console API; api.middlewares turns them into envelopes."""
from __future__ import annotations


class ApiError(Exception):
    """A business failure: HTTP 200 with {"success": false, "message": ...}.

    `message` is a key of api.i18n.MESSAGES (translated per request) or a literal text.
    """

    status = 200

    def __init__(self, message: str, /, **params: object) -> None:
        super().__init__(message)
        self.message = message
        self.params = params


class Unauthorized(ApiError):
    status = 401

    def __init__(self, message: str = "not_logged_in", /, **params: object) -> None:
        super().__init__(message, **params)


class Forbidden(ApiError):
    """Logged in, but the role does not allow it (new-api answers 200 success:false as well)."""

    def __init__(self, message: str = "forbidden", /, **params: object) -> None:
        super().__init__(message, **params)


class TooManyRequests(ApiError):
    status = 429

    def __init__(self, message: str = "too_many_requests", /, **params: object) -> None:
        super().__init__(message, **params)


class BadRequest(ApiError):
    """The request itself cannot be taken (a value no field may hold): 400."""

    status = 400


class NotFound(ApiError):
    """No such thing for this caller, where the status matters (a media route a player reads)."""

    status = 404
