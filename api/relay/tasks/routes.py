"""The task routes: midjourney-proxy's API under /mj (and /mj-fast/mj, /mj-turbo/mj, /mj-relax/mj,
whose mode prefix is dropped), suno-api's under /suno, OpenAI's video API under /v1/videos
(api/relay/tasks/video_routes.py). Keys come as `Authorization` or
`mj-api-secret`; errors take each API's own shape.
"""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from api import keys
from api.relay.caller import key_caller
from api.relay.inbound.base import REQUEST_INBOUND
from api.relay.middleware import cors_middleware, openai_errors_middleware
from api.relay.state import relay_state
from api.relay.tasks import bodies
from api.relay.tasks import mj_shape as mj
from api.relay.tasks import suno_shape as suno
from api.relay.tasks.mj_media import mj_image, mj_image_seed
from api.relay.tasks.notify import mj_notify, notify_hook, take_early
from api.relay.tasks.relay import Refused, Submission, json_body, origin_channel, path_id, submit, task_error
from api.relay.tasks.video_routes import create_videos_app
from api.upstream.errors import RelayError
from api.upstream.providers.midjourney import PLUS_ONLY, SUBMIT_ACTIONS, MidjourneyAdaptor, MidjourneyPlusAdaptor
from api.upstream.providers.suno import SunoAdaptor
from api.upstream.registry import task_types
from api.upstream.task_base import SUCCESS
from models import Midjourney, Task

MJ_TYPES = task_types(MidjourneyAdaptor)
MJ_PLUS_TYPES = task_types(MidjourneyPlusAdaptor)
SUNO_TYPES = task_types(SunoAdaptor)
MJ_MODES = ("mj-fast", "mj-turbo", "mj-relax")


class MidjourneyErrors:
    """midjourney-proxy's answer shape for errors: `{code, description, result}` (code 4: a request
    the gateway refused, 5: a failure on the way)."""

    name = "midjourney"
    query_key = False

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        description = f"{err.message} (request id: {request_id})" if request_id else err.message
        return {"code": 4 if err.status < 500 else 5, "description": description, "result": None,
                "properties": {}, "type": err.type, "error": err.code or ""}


class SunoErrors:
    """suno-api's error shape: `{code, message, data}`."""

    name = "suno"
    query_key = False

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        message = f"{err.message} (request id: {request_id})" if request_id else err.message
        return {"code": err.code or "error", "message": message, "data": None}


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


# -- Midjourney: submissions ----------------------------------------------------------------------


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    return value.strip() if isinstance(value, str) else ""


def _invalid(request: web.Request, reason: str) -> RelayError:
    return task_error(request, 400, "relay_task_invalid", "invalid_request", reason=reason)


def _mj_action(request: web.Request, path: str, body: dict[str, Any]) -> tuple[str, str]:
    """(action, origin task id or "") of a submission, with the request checked."""
    fixed = SUBMIT_ACTIONS[path]
    if path == "/submit/imagine" and not _text(body, "prompt"):
        raise _invalid(request, "prompt is required")
    if path == "/submit/shorten" and not _text(body, "prompt"):
        raise _invalid(request, "prompt is required")
    if path == "/submit/describe" and not _text(body, "base64"):
        raise _invalid(request, "base64 is required")
    if path == "/submit/blend":
        images = body.get("base64Array")
        if not isinstance(images, list) or not 2 <= len(images) <= 5 or not all(isinstance(i, str) for i in images):
            raise _invalid(request, "base64Array must hold 2 to 5 images")
    if path == "/submit/upload-discord-images":
        images = body.get("base64Array")
        if not isinstance(images, list) or not images or not all(isinstance(i, str) for i in images):
            raise _invalid(request, "base64Array must hold at least one image")
    if path == "/insight-face/swap" and not (_text(body, "sourceBase64") and _text(body, "targetBase64")):
        raise _invalid(request, "sourceBase64 and targetBase64 are required")
    if path == "/submit/change":
        action = body.get("action")
        if action not in mj.CHANGE_ACTIONS:
            raise _invalid(request, "action must be UPSCALE, VARIATION or REROLL")
        index = body.get("index")
        if action != "REROLL" and (not isinstance(index, int) or isinstance(index, bool) or not 1 <= index <= 4):
            raise _invalid(request, "index must be 1 to 4")
        if not _text(body, "taskId"):
            raise _invalid(request, "taskId is required")
        return str(action), _text(body, "taskId")
    if path == "/submit/simple-change":
        parsed = mj.simple_change(body.get("content"))
        if parsed is None:
            raise _invalid(request, 'content must be "<task id> U1..U4 | V1..V4 | R"')
        return parsed[1], parsed[0]
    if path == "/submit/action":
        action = mj.action_of_custom_id(body.get("customId"))
        if action is None:
            raise _invalid(request, "customId is not a known button")
        if not _text(body, "taskId"):
            raise _invalid(request, "taskId is required")
        return action, _text(body, "taskId")
    if path == "/submit/modal":
        if not _text(body, "taskId"):
            raise _invalid(request, "taskId is required")
        return "MODAL", _text(body, "taskId")
    assert fixed is not None
    return fixed, _text(body, "taskId") if path in ("/submit/video", "/submit/edits") else ""


def _upstream_body(request: web.Request, body: dict[str, Any]) -> dict[str, Any]:
    """The client's body as the upstream gets it, per the drawing options."""
    options = relay_state(request).options or request.config_dict[keys.OPTIONS]
    out = dict(body)
    if options.get_bool("MjModeClearEnabled") and "prompt" in out:
        out["prompt"] = mj.clear_mode(out["prompt"])
    if not options.get_bool("MjAccountFilterEnabled"):
        out.pop("accountFilter", None)
    if not options.get_bool("MjNotifyEnabled") or not out.get("notifyHook"):
        out.pop("notifyHook", None)
    return out


def mj_submit(path: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        state = relay_state(request)
        caller = await key_caller(request, state)
        body = await json_body(request, bodies.MIDJOURNEY)
        action, origin_id = _mj_action(request, path, body)
        origin = None
        if origin_id:
            row = await Midjourney.filter(mj_id=origin_id, user_id=caller.user.id).first()
            if row is None:
                raise task_error(request, 404, "relay_task_not_found", "task_not_found", id=origin_id)
            options = state.options
            if options.get_bool("MjActionCheckSuccessEnabled") and action != "MODAL" and row.status != SUCCESS:
                raise task_error(request, 400, "relay_task_not_success", "task_status_not_success", id=origin_id,
                                 task_status=row.status or "-")
            origin = await origin_channel(request, row, origin_id)
        upstream = _upstream_body(request, body)
        if origin is not None and path in PLUS_ONLY and origin.type not in MJ_PLUS_TYPES:
            raise _invalid(request, f"{path} needs a Midjourney Proxy Plus channel")
        prompt = _text(body, "prompt") or _text(body, "content")
        hook = notify_hook(request) if "notifyHook" not in upstream else None
        sub = Submission("mj", action, mj.model_of(action), path, upstream,
                         MJ_PLUS_TYPES if path in PLUS_ONLY else MJ_TYPES, origin, prompt, hook)
        try:
            answer, row = await submit(request, caller, sub)
        except Refused as refused:
            return _json(refused.answer)
        if hook is not None:
            await take_early(request, row)
        return _json(answer)

    handle.__name__ = f"mj_submit_{path.rsplit('/', 1)[-1].replace('-', '_')}"
    return handle


# -- Midjourney: tasks ------------------------------------------------------------------------------


def _image_url(request: web.Request, row: Midjourney) -> str:
    """The task's image as the client sees it: through the gateway when MjForwardUrlEnabled."""
    options = relay_state(request).options or request.config_dict[keys.OPTIONS]
    if not row.image_url or not options.get_bool("MjForwardUrlEnabled"):
        return row.image_url
    base = (options.get("ServerAddress") or f"{request.scheme}://{request.host}").rstrip("/")
    url = f"{base}/mj/image/{row.mj_id}"
    return url if row.status == SUCCESS else f"{url}?rand={int(time.time() * 1000)}"


async def mj_fetch(request: web.Request) -> web.Response:
    caller = await key_caller(request, relay_state(request))
    task_id = path_id(request)
    row = await Midjourney.filter(mj_id=task_id, user_id=caller.user.id).first() if task_id else None
    if row is None:
        raise task_error(request, 404, "relay_task_not_found", "task_not_found", id=task_id)
    return _json(mj.task_answer(row, _image_url(request, row)))


async def mj_list(request: web.Request) -> web.Response:
    caller = await key_caller(request, relay_state(request))
    body = await json_body(request, bodies.MIDJOURNEY)
    ids = body.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(ids) > 1000:
        raise _invalid(request, "ids must be a list of at most 1000 task ids")
    rows = await Midjourney.filter(mj_id__in=ids, user_id=caller.user.id).order_by("id") if ids else []
    return _json([mj.task_answer(row, _image_url(request, row)) for row in rows])


# -- Suno -----------------------------------------------------------------------------------------------


async def _clip_channel(request: web.Request, user_id: int, body: dict[str, Any]) -> Any:
    """A continuation acts on a clip of one of the caller's own tasks (`task_id`), on its channel."""
    origin_id, clip_id = _text(body, "task_id"), body["continue_clip_id"]
    if not origin_id:
        raise _invalid(request, "task_id is required to continue a clip")
    row = (await Task.filter(task_id=origin_id, platform="suno", user_id=user_id).first()
           if len(origin_id) <= 191 else None)
    if row is None:
        raise task_error(request, 404, "relay_task_not_found", "task_not_found", id=origin_id)
    if clip_id not in suno.clip_ids(row):
        raise task_error(request, 404, "relay_task_invalid", "clip_not_found",
                         reason=f"continue_clip_id is not a clip of task {origin_id}")
    return await origin_channel(request, row, origin_id)


async def suno_submit(request: web.Request) -> web.Response:
    state = relay_state(request)
    caller = await key_caller(request, state)
    name = request.match_info["action"].lower()
    action = suno.ACTIONS.get(name)
    if action is None:
        raise _invalid(request, "the action must be music or lyrics")
    body = await json_body(request, bodies.SUNO)
    if action == "LYRICS" and not _text(body, "prompt"):
        raise _invalid(request, "prompt is required")
    if action == "MUSIC" and not body.get("mv"):
        body["mv"] = suno.DEFAULT_MV
    origin = None
    if body.get("continue_clip_id"):
        origin = await _clip_channel(request, caller.user.id, body)
    prompt = _text(body, "prompt") or _text(body, "gpt_description_prompt")
    sub = Submission("suno", action, suno.model_of(action), f"/submit/{name}", body, SUNO_TYPES, origin, prompt)
    answer, _ = await submit(request, caller, sub)
    return _json(answer)


async def suno_fetch(request: web.Request) -> web.Response:
    caller = await key_caller(request, relay_state(request))
    body = await json_body(request, bodies.SUNO)
    ids = body.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(ids) > 1000:
        raise _invalid(request, "ids must be a list of at most 1000 task ids")
    query = Task.filter(task_id__in=ids, platform="suno", user_id=caller.user.id)
    if isinstance(body.get("action"), str) and body["action"]:
        query = query.filter(action=body["action"].upper())
    rows = await query.order_by("id") if ids else []
    return _json({"code": "success", "message": "", "data": [suno.task_answer(r) for r in rows]})


async def suno_fetch_one(request: web.Request) -> web.Response:
    caller = await key_caller(request, relay_state(request))
    task_id = path_id(request)
    row = await Task.filter(task_id=task_id, platform="suno", user_id=caller.user.id).first() if task_id else None
    if row is None:
        raise task_error(request, 404, "relay_task_not_found", "task_not_found", id=task_id)
    return _json({"code": "success", "message": "", "data": suno.task_answer(row)})


# -- mounting ---------------------------------------------------------------------------------------------


def _shaped(errors: type) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        request[REQUEST_INBOUND] = errors
        return await handler(request)

    return middleware


def _task_app(errors: type) -> web.Application:
    sub = web.Application()
    sub.middlewares.extend([_shaped(errors), cors_middleware, openai_errors_middleware])
    return sub


def create_mj_app() -> web.Application:
    app = _task_app(MidjourneyErrors)
    for path in SUBMIT_ACTIONS:
        app.router.add_post(path, mj_submit(path))
    app.router.add_get("/task/{id}/fetch", mj_fetch)
    app.router.add_get("/task/{id}/image-seed", mj_image_seed)
    app.router.add_post("/task/list-by-condition", mj_list)
    app.router.add_get("/image/{id}", mj_image)
    app.router.add_post("/notify", mj_notify)
    return app


def create_suno_app() -> web.Application:
    app = _task_app(SunoErrors)
    app.router.add_post("/submit/{action}", suno_submit)
    app.router.add_post("/fetch", suno_fetch)
    app.router.add_get("/fetch/{id}", suno_fetch_one)
    return app


def setup_tasks(app: web.Application) -> None:
    app.add_subapp("/mj", create_mj_app())
    for mode in MJ_MODES:
        app.add_subapp(f"/{mode}/mj", create_mj_app())
    app.add_subapp("/suno", create_suno_app())
    app.add_subapp("/v1/videos", create_videos_app())


