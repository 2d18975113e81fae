"""Video tasks on upstreams that speak OpenAI's video API (another gateway, compatible vendors):
relayed as they are.

Wire facts (openai-python, openai/resources/videos.py and openai/types/video*.py):
- `POST {base}/v1/videos`, `Authorization: Bearer <key>`, a multipart form (`prompt`, `model`,
  `seconds`, `size`, the `input_reference` file part) — what the SDK itself sends — answers the
  `Video` object: `{id, object: "video", model, status, progress, created_at, …}`;
- `GET {base}/v1/videos/{id}` answers the same object; statuses queued, in_progress, completed,
  failed; a failure carries `error: {code, message}`; `completed_at`, `expires_at` in seconds;
- `GET {base}/v1/videos/{id}/content?variant=video|thumbnail|spritesheet` answers the bytes;
- `DELETE {base}/v1/videos/{id}` deletes it (`{id, object: "video.deleted", deleted}`);
- errors: `{"error": {"message", "type", "param", "code"}}` with the HTTP status.
"""
from __future__ import annotations

import os
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
    not_json,
    percent,
    text,
    upstream_request,
)

_STATUSES = {"queued": "QUEUED", "in_progress": "IN_PROGRESS", "completed": SUCCESS, "failed": FAILURE}


def multipart(fields: dict[str, str], files: list[tuple[str, str, str, bytes]]) -> tuple[str, bytes]:
    """(content type, body) of a multipart form: text fields, then (name, file name, type, bytes) files."""
    boundary = "----gateway" + os.urandom(12).hex()
    out = bytearray()
    for name, value in fields.items():
        out += (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n').encode()
        out += value.encode() + b"\r\n"
    for name, filename, content_type, data in files:
        out += (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                f"Content-Type: {content_type}\r\n\r\n").encode()
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return f"multipart/form-data; boundary={boundary}", bytes(out)


class OpenAIVideoAdaptor(VideoAdaptor):

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        fields = {"prompt": body["prompt"], "model": body["model"], "seconds": str(body["seconds"]),
                  "size": body["size"]}
        image = body.get("image")
        files = ([("input_reference", "reference" + _suffix(image["mime"]), image["mime"], image["data"])]
                 if image else [])
        content_type, raw = multipart(fields, files)
        return upstream_request("POST", f"{self.base_url}/v1/videos", {**self._auth(), "Content-Type": content_type},
                        raw=raw)

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        body = json_or_none(raw)
        if not isinstance(body, dict):
            return not_json(status)
        answer = self.mask(body)
        if status != 200 or not isinstance(body.get("id"), str):
            error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
            reason = str(error.get("message") or f"HTTP {status}")
            return Submitted(False, answer=answer, reason=reason, retry_elsewhere=status >= 500 or status == 429)
        task_id = body["id"]
        if not keepable_id(task_id):
            return Submitted(False, answer=answer, reason="the upstream accepted the video without an id")
        return Submitted(True, task_id=task_id, answer=answer)

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        [task_id] = task_ids
        return upstream_request("GET", f"{self.base_url}/v1/videos/{quote(task_id, safe='')}", self._auth())

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        body = json_or_none(raw)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise ValueError(f"not a video object: {str(self.mask(body))[:200]}")
        status = _STATUSES.get(str(body.get("status")), "")
        if not status:
            raise ValueError(f"unknown video status {str(body.get('status'))[:40]!r}")
        fields: dict[str, Any] = {"status": status, "progress": percent(body.get("progress"))}
        if status == FAILURE:
            error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
            fields["fail_reason"] = self.mask(text(error.get("message") or error.get("code") or "the video failed"))
        completed = body.get("completed_at")
        if (status == SUCCESS and isinstance(completed, int) and not isinstance(completed, bool)
                and 0 < completed < 2**40):
            fields["finish_time"] = completed
        expires = body.get("expires_at")
        if status == SUCCESS:
            data: dict[str, Any] = {"kind": "openai"}
            if isinstance(expires, int) and not isinstance(expires, bool):
                data["expires_at"] = expires
            fields["data"] = orjson.dumps(data).decode()
        return [TaskUpdate(body["id"], status, fields)]

    def delete(self, task_id: str) -> UpstreamRequest:
        return upstream_request("DELETE", f"{self.base_url}/v1/videos/{quote(task_id, safe='')}", self._auth())

    def content(self, task_id: str, variant: str) -> UpstreamRequest:
        """The video's bytes (or its thumbnail, spritesheet), asked of the upstream with the channel's key."""
        return upstream_request("GET", f"{self.base_url}/v1/videos/{quote(task_id, safe='')}/content?variant={variant}",
                        self._auth())


def _suffix(mime: str) -> str:
    return {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}.get(mime, "")
