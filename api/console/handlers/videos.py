"""A video task's content for the console's player: the caller's own video (any, for an admin),
fetched from its channel like `GET /v1/videos/{id}/content` (api/relay/tasks/video_content.py), with
the console's session instead of an API key."""
from __future__ import annotations

from aiohttp import web

from api.console.auth import the_user, user_required
from api.errors import ApiError, NotFound
from api.relay.tasks.video_content import video_content
from api.relay.tasks.video_shape import PLATFORM
from api.upstream.errors import RelayError
from api.upstream.task_base import SUCCESS
from models import Task
from models.enums import Role


@user_required
async def own_video_content(request: web.Request) -> web.StreamResponse:
    user = the_user(request)
    video_id = request.match_info["id"]
    query = Task.filter(task_id=video_id, platform=PLATFORM, status=SUCCESS)
    row = (await (query if user.role >= Role.ADMIN else query.filter(user_id=user.id)).first()
           if len(video_id) <= 191 and "\x00" not in video_id else None)
    if row is None:
        raise NotFound("relay_task_not_found", id=video_id[:64])
    try:
        return await video_content(request, row, "video")
    except RelayError as err:  # the player shows nothing; the envelope and the status say why
        raise VideoUnavailable(err.message, err.status) from None


class VideoUnavailable(ApiError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status
