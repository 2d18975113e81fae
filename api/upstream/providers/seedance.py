"""Video tasks converted for Volcengine Ark's Seedance (Doubao video; channel type 54, new-api's DoubaoVideo).

Wire facts (Ark API reference, "创建视频生成任务 API" volcengine.com/docs/82379/1520757 and "查询视频生成任务
API" volcengine.com/docs/82379/1521309; BytePlus ModelArk's copy docs.byteplus.com/en/docs/ModelArk/1520757):
- `Authorization: Bearer <Ark API key>`; base https://ark.cn-beijing.volces.com (BytePlus:
  https://ark.ap-southeast.bytepluses.com, the same paths);
- `POST /api/v3/contents/generations/tasks` with `{"model", "content": [{"type": "text", "text": prompt},
  {"type": "image_url", "image_url": {"url": <URL or data:image/<fmt>;base64,…>}, "role": "first_frame"}],
  "resolution": "480p" | "720p" | "1080p", "ratio": "16:9" | "4:3" | "1:1" | "3:4" | "9:16" | "21:9",
  "duration": seconds}` answers `{"id": "cgt-…"}` (the parameters as body fields, the documented
  form beside the older `--resolution … --duration …` text commands);
- `GET /api/v3/contents/generations/tasks/{id}` answers `{id, model, status: queued | running |
  succeeded | failed | cancelled, error: {code, message} | null, content: {video_url}, usage,
  created_at, updated_at, duration, ratio, resolution}`; `content.video_url` is an mp4 on TOS, signed
  (`X-Tos-Signature`, `X-Tos-Expires=86400`): it needs no key and is cleaned up after 24 hours;
- errors: `{"error": {"code", "message", "param", "type"}}` with the HTTP status (e.g. 404
  `InvalidEndpointOrModel.NotFound`, 400 `InvalidParameter`).

OpenAI's `size` becomes the resolution and ratio (SIZES: the pixel sizes Ark's table gives for each,
and the usual 16:9 and 9:16 sizes); `seconds` the duration, within what the model renders
(durations). The content is the signed URL, fetched without the key under the media policy (or handed
to the client in VideoContentMode = redirect).
"""
from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import quote

import orjson

from api.upstream.base import UpstreamRequest
from api.upstream.task_base import (
    FAILURE,
    SUCCESS,
    Submitted,
    TaskUpdate,
    VideoAdaptor,
    json_or_none,
    keepable_id,
    mapped_status,
    not_json,
    text,
    upstream_request,
)

ARK_HOST = "https://ark.cn-beijing.volces.com"
TASKS = "/api/v3/contents/generations/tasks"
# OpenAI's size → Seedance's (resolution, ratio): the width×height Ark's table lists for each
# (volcengine.com/docs/82379/1520757, "宽高像素值"), and the common sizes of each 16:9 / 9:16 resolution.
SIZES: dict[str, tuple[str, str]] = {
    "864x480": ("480p", "16:9"), "480x864": ("480p", "9:16"), "736x544": ("480p", "4:3"),
    "544x736": ("480p", "3:4"), "640x640": ("480p", "1:1"), "960x416": ("480p", "21:9"),
    "854x480": ("480p", "16:9"), "480x854": ("480p", "9:16"),
    "1248x704": ("720p", "16:9"), "704x1248": ("720p", "9:16"), "1120x832": ("720p", "4:3"),
    "832x1120": ("720p", "3:4"), "960x960": ("720p", "1:1"), "1504x640": ("720p", "21:9"),
    "1280x720": ("720p", "16:9"), "720x1280": ("720p", "9:16"),
    "1920x1088": ("1080p", "16:9"), "1088x1920": ("1080p", "9:16"), "1664x1248": ("1080p", "4:3"),
    "1248x1664": ("1080p", "3:4"), "1440x1440": ("1080p", "1:1"), "2176x928": ("1080p", "21:9"),
    "1920x1080": ("1080p", "16:9"), "1080x1920": ("1080p", "9:16"),
}
_STATUSES = {"queued": "QUEUED", "running": "IN_PROGRESS", "succeeded": SUCCESS, "failed": FAILURE,
             "cancelled": FAILURE, "expired": FAILURE}


class SeedanceUnfit(ValueError):
    """A request Seedance cannot take (a size or a duration it has not): the client's 400."""

    def __init__(self, param: str, problem: str) -> None:
        super().__init__(problem)
        self.param = param


def durations(model: str) -> range:
    """The clip lengths a Seedance model renders: 2.0 four to fifteen seconds (Ark's Seedance 2.0 skill,
    skills.volces.com byted-ark-seedance-skill: "支持 4-15 秒"); 1.5 pro four to twelve (its parameters as
    UCloudDoc-Team/modelverse api_doc/video_api/doubao-seedance-1-5-pro-251215.md relays them: "`4~12` 秒");
    1.0 three to twelve ("Seedance 支持 3~12 秒", volcengine.com/docs/82379/1520757, duration)."""
    if "seedance-2" in model:
        return range(4, 16)
    return range(4, 13) if "seedance-1-5" in model else range(3, 13)


def seedance_body(body: dict[str, Any]) -> dict[str, Any]:
    """The client's request (api/relay/tasks/video_shape.py) as Ark's task creation request."""
    fit = SIZES.get(body["size"])
    if fit is None:
        raise SeedanceUnfit("size", f"size {body['size']} is not one Seedance renders ({', '.join(SIZES)})")
    allowed = durations(body["model"])
    if body["seconds"] not in allowed:
        raise SeedanceUnfit("seconds", f"{body['model']} renders {allowed.start} to {allowed.stop - 1} seconds")
    content: list[dict[str, Any]] = [{"type": "text", "text": body["prompt"]}]
    image = body.get("image")
    if image:
        url = f"data:{image['mime']};base64,{base64.b64encode(image['data']).decode()}"
        content.append({"type": "image_url", "image_url": {"url": url}, "role": "first_frame"})
    return {"model": body["model"], "content": content, "resolution": fit[0], "ratio": fit[1],
            "duration": body["seconds"]}


class SeedanceAdaptor(VideoAdaptor):
    """Seedance on Volcengine Ark (or BytePlus ModelArk at its own base URL)."""

    @classmethod
    def unfit(cls, body: dict[str, Any]) -> tuple[str, str] | None:
        try:
            seedance_body(body)
        except SeedanceUnfit as unfit:
            return unfit.param, str(unfit)
        return None

    def _base(self) -> str:
        """The channel's base URL; one given with Ark's `/api/v3` (as Ark's SDKs take it) is the same host."""
        return (self.base_url or ARK_HOST).removesuffix("/api/v3")

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        return upstream_request("POST", self._base() + TASKS, {**self._auth(), "Content-Type": "application/json"},
                        seedance_body(body))

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        body = json_or_none(raw)
        if not isinstance(body, dict):
            return not_json(status)
        answer = self.mask(body)
        task_id = body.get("id")
        if status != 200 or not isinstance(task_id, str) or not task_id:
            error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
            return Submitted(False, answer=answer, reason=str(error.get("message") or f"HTTP {status}"),
                             retry_elsewhere=status >= 500 or status == 429)
        if not keepable_id(task_id):
            return Submitted(False, answer=answer, reason="the upstream answered a task id too long to keep")
        return Submitted(True, task_id=task_id, answer=answer)

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        [task_id] = task_ids
        return upstream_request("GET", f"{self._base()}{TASKS}/{quote(task_id, safe='')}", self._auth())

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        task = json_or_none(raw)
        if not isinstance(task, dict) or not isinstance(task.get("id"), str):
            raise ValueError(f"not a generation task: {str(self.mask(task))[:200]}")
        status = mapped_status(_STATUSES, task.get("status"), "task status")
        fields: dict[str, Any] = {"status": status}
        if status == FAILURE:
            error: dict[str, Any] = task["error"] if isinstance(task.get("error"), dict) else {}
            reason = error.get("message") or error.get("code") or f"the video task was {task.get('status')}"
            fields["fail_reason"] = self.mask(text(reason, 1000))
        elif status == SUCCESS:
            content = task.get("content") if isinstance(task.get("content"), dict) else {}
            url = content.get("video_url") if isinstance(content, dict) else None
            if not isinstance(url, str) or not url.startswith(("https://", "http://")):
                fields.update(status=FAILURE, fail_reason="the upstream finished the task without a video URL")
                return [TaskUpdate(task["id"], FAILURE, fields)]
            updated = task.get("updated_at")
            finished = (updated if isinstance(updated, int) and not isinstance(updated, bool)
                        and 0 < updated < 2**40 else int(time.time()))
            fields["finish_time"] = finished
            # The signed URL lives 24 hours (the query API reference: "生成的视频会在24小时后被清理").
            fields["data"] = orjson.dumps({"kind": "seedance", "url": url, "expires_at": finished + 86_400}).decode()
        return [TaskUpdate(task["id"], status, fields)]
