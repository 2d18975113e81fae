"""Suno through a suno-api proxy (channel type 36).

Wire facts: `Authorization: Bearer <channel key>`; `POST {base}/suno/submit/music` (or `/lyrics`)
with `{prompt, gpt_description_prompt, mv, title, tags, continue_at, continue_clip_id, task_id,
make_instrumental}` answers `{"code": "success", "message": "", "data": "<task id>"}`; `POST
{base}/suno/fetch {"ids": [...]}` answers `{"code": "success", "data": [{task_id, action, status,
fail_reason, submit_time, start_time, finish_time, progress, data}]}` (times in seconds; statuses
NOT_START, SUBMITTED, QUEUED, IN_PROGRESS, FAILURE, SUCCESS, or their lower-case spellings
submitted, queueing, processing, success, failed); an error is `{"code": "<code>", "message": …}`.
"""
from __future__ import annotations

from typing import Any

import orjson

from api.upstream.base import UpstreamRequest
from api.upstream.task_base import (
    FAILURE,
    SUCCESS,
    Submitted,
    TaskAdaptor,
    TaskUpdate,
    keepable_id,
    percent,
    text,
    upstream_request,
)

_STATUSES = {
    "not_start": "NOT_START", "submitted": "SUBMITTED", "queued": "QUEUED", "queueing": "QUEUED",
    "in_progress": "IN_PROGRESS", "processing": "IN_PROGRESS", "streaming": "IN_PROGRESS",
    "success": SUCCESS, "complete": SUCCESS, "completed": SUCCESS, "failure": FAILURE, "failed": FAILURE,
    "error": FAILURE, "unknown": "UNKNOWN",
}


def status_of(value: Any) -> str:
    return _STATUSES.get(text(value).strip().lower(), "UNKNOWN" if value else "")


class SunoAdaptor(TaskAdaptor):
    platform = "suno"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        return upstream_request("POST", f"{self.base_url}/suno{path}", self._headers(), body)

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            return Submitted(False, reason=f"the upstream answered HTTP {status} without a JSON object",
                             retry_elsewhere=status >= 500 or status == 429 or status == 200)
        answer = self.mask(body)
        if status != 200 or body.get("code") != "success":
            reason = str(answer.get("message") or answer.get("code") or f"HTTP {status}")
            return Submitted(False, answer=answer, reason=reason, retry_elsewhere=status >= 500 or status == 429)
        task_id = body.get("data")
        if not keepable_id(task_id):
            return Submitted(False, answer=answer, reason="the upstream accepted the task without an id")
        return Submitted(True, task_id=task_id, answer={**answer, "data": task_id})

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        return upstream_request("POST", f"{self.base_url}/suno/fetch", self._headers(), {"ids": task_ids})

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        body = orjson.loads(raw)
        if not isinstance(body, dict) or body.get("code") != "success" or not isinstance(body.get("data"), list):
            raise ValueError(f"fetch failed: {str(body)[:200]}")
        updates = []
        for item in body["data"]:
            if not isinstance(item, dict) or not item.get("task_id"):
                continue
            status = status_of(item.get("status"))
            fields: dict[str, Any] = {"status": status, "fail_reason": self.mask(text(item.get("fail_reason"))),
                                      "progress": percent(item.get("progress"))}
            for name in ("start_time", "finish_time"):
                if isinstance(item.get(name), int) and not isinstance(item.get(name), bool) and 0 <= item[name] < 2**62:
                    fields[name] = item[name]
            if "data" in item and item["data"] is not None:
                fields["data"] = orjson.dumps(self.mask(item["data"])).decode()
            updates.append(TaskUpdate(str(item["task_id"]), status, fields))
        return updates
