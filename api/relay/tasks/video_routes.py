"""OpenAI's video API under /v1/videos (the openai SDK's `videos.create`, `retrieve`, `list`,
`download_content`, `poll`): a submission goes through the task pipeline (api/relay/tasks/relay.py:
admission, the attempts over channels that speak a video protocol, the settlement) and is answered as
OpenAI's `Video` object with the gateway's own id; the workers poll it (api/relay/tasks/poll.py). A
video is only ever seen by its owner: another user's id is 404, as an unknown one. `delete` (once the
video is completed or failed) hides it from its owner's API for good — retrieve, list and content
answer as for an unknown id — and deletes the upstream's copy where the protocol can; its task row
stays, with its charge, for the console's task log.
"""
from __future__ import annotations

import os
import time
from typing import Any

import orjson
from aiohttp import web

from api.relay.caller import key_caller
from api.relay.forms import read_form
from api.relay.middleware import relay_sub_app
from api.relay.state import relay_state
from api.relay.tasks.relay import Submission, json_body, path_id, submit, task_error
from api.relay.tasks.video_content import VARIANTS, delete_upstream, video_content
from api.relay.tasks.video_shape import (
    ACTION,
    PLATFORM,
    VIDEO_FORM,
    BadVideoRequest,
    VideoRequest,
    read_request,
    video_object,
)
from api.services.params import is_integer_text
from api.upstream.base import RelayMode
from api.upstream.errors import RelayError
from api.upstream.registry import VIDEO_ADAPTORS
from api.upstream.task_base import FAILURE, SUCCESS
from models import Task

LIST_LIMIT = 100
VIDEO_TYPES = frozenset(VIDEO_ADAPTORS)


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def _bad(request: web.Request, param: str, reason: str) -> RelayError:
    err = task_error(request, 400, "relay_task_invalid", "invalid_request", reason=reason)
    err.param = param
    return err


async def _read(request: web.Request) -> VideoRequest:
    """The request, a JSON object or a multipart form (what the SDK sends), checked."""
    try:
        if request.content_type.startswith("multipart/"):
            fields, form = await read_form(request, VIDEO_FORM)
            if len(form.files) > 1:
                raise BadVideoRequest("input_reference", "one image at most")
            file = (form.files[0][2], form.files[0][3]) if form.files else None
            return read_request(fields, file)
        return read_request(await json_body(request))
    except BadVideoRequest as bad:
        raise _bad(request, bad.param, str(bad)) from None


async def create_video(request: web.Request) -> web.Response:
    """POST /v1/videos."""
    caller = await key_caller(request, relay_state(request))
    video = await _read(request)
    video_id = "video_" + os.urandom(16).hex()

    def for_channel(channel: Any, body: dict[str, Any], request_id: str) -> dict[str, Any]:
        out = {**body, "model": channel.upstream_model(video.model)}
        if video.image is not None:
            out["image"] = {"mime": video.image.mime, "data": video.image.data}
        protocol = VIDEO_ADAPTORS[channel.type]
        unfit = protocol.unfit(out)
        if unfit is not None:  # what the channel's protocol cannot render or take: the client's 400
            raise _bad(request, *unfit)
        return out

    sub = Submission(PLATFORM, ACTION, video.model, "/v1/videos", video.body(), VIDEO_TYPES, None, video.prompt,
                     for_channel, task_id=video_id, adaptors=VIDEO_ADAPTORS, mode=RelayMode.VIDEO,
                     properties={"model": video.model, "seconds": video.seconds, "size": video.size})
    _, row = await submit(request, caller, sub)
    return _json(video_object(row))


async def _own(request: web.Request) -> Any:
    caller = await key_caller(request, relay_state(request))
    video_id = path_id(request)
    row = (await Task.filter(task_id=video_id, platform=PLATFORM, user_id=caller.user.id, deleted_at=0).first()
           if video_id else None)
    if row is None:
        raise task_error(request, 404, "relay_task_not_found", "video_not_found", id=video_id)
    return row


async def retrieve_video(request: web.Request) -> web.Response:
    """GET /v1/videos/{id}."""
    return _json(video_object(await _own(request)))


async def list_videos(request: web.Request) -> web.Response:
    """GET /v1/videos?limit=&after=&order=asc|desc: the caller's videos, a page at a time."""
    caller = await key_caller(request, relay_state(request))
    limit_text, order = request.query.get("limit", "20"), request.query.get("order", "desc")
    if not is_integer_text(limit_text) or not 1 <= int(limit_text) <= LIST_LIMIT or order not in ("asc", "desc"):
        raise _bad(request, "limit", f"limit must be 1 to {LIST_LIMIT}, order asc or desc")
    limit = int(limit_text)
    query = Task.filter(platform=PLATFORM, user_id=caller.user.id, deleted_at=0)
    after = request.query.get("after", "")
    if after:
        cursor = await query.filter(task_id=after).first() if len(after) <= 191 else None
        if cursor is None:
            raise task_error(request, 404, "relay_task_not_found", "video_not_found", id=after)
        query = query.filter(id__lt=cursor.id) if order == "desc" else query.filter(id__gt=cursor.id)
    rows = await query.order_by("-id" if order == "desc" else "id").limit(limit + 1)
    data = [video_object(row) for row in rows[:limit]]
    return _json({"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                  "last_id": data[-1]["id"] if data else None, "has_more": len(rows) > limit})


async def delete_video(request: web.Request) -> web.Response:
    """DELETE /v1/videos/{id}: a finished video deleted (module docstring); one still being made is a 400
    (its charge is settled when it ends: completed, or failed and refunded)."""
    row = await _own(request)
    if row.status not in (SUCCESS, FAILURE):
        raise task_error(request, 400, "relay_task_invalid", "video_not_finished",
                         reason="the video is still being generated: delete it once it is completed or failed")
    await delete_upstream(request, row)
    await Task.filter(id=row.id, deleted_at=0).update(deleted_at=int(time.time()))
    return _json({"id": row.task_id, "object": "video.deleted", "deleted": True})


async def video_content_route(request: web.Request) -> web.StreamResponse:
    """GET /v1/videos/{id}/content?variant=video|thumbnail|spritesheet."""
    row = await _own(request)
    variant = request.query.get("variant", "video")
    if variant not in VARIANTS:
        raise _bad(request, "variant", "variant must be video, thumbnail or spritesheet")
    if row.status != SUCCESS:
        raise task_error(request, 400, "relay_task_invalid", "video_not_ready", reason="the video is not completed")
    return await video_content(request, row, variant)


def create_videos_app() -> web.Application:
    """The /v1/videos sub-app (mounted beside /v1: the longest prefix wins), OpenAI's error shape."""
    app = relay_sub_app()
    app.router.add_post("", create_video)
    app.router.add_get("", list_videos)
    app.router.add_get("/{id}", retrieve_video)
    app.router.add_delete("/{id}", delete_video)
    app.router.add_get("/{id}/content", video_content_route)
    return app
