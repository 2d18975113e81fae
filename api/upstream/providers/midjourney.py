"""Midjourney through midjourney-proxy (channel type 2) and its Plus variant (type 5).

Wire facts (midjourney-proxy's API): every call carries `mj-api-secret: <channel key>`; a submission
`POST {base}/mj/submit/<action>` answers HTTP 200 with `{code, description, result, properties}`,
where code 1 = submitted (result = task id), 21 = already exists, 22 = queued, 23 = queue full,
24 = banned prompt, 3 = not found, 4 = validation error, 9 = failure; `POST {base}/mj/task/
list-by-condition {"ids": [...]}` answers the tasks as a list of `{id, action, status, progress,
prompt, promptEn, description, submitTime, startTime, finishTime, imageUrl, failReason, buttons,
properties}` (times in milliseconds, statuses NOT_START, SUBMITTED, MODAL, IN_PROGRESS, FAILURE,
SUCCESS, CANCEL).
"""
from __future__ import annotations

import uuid
from typing import Any

import orjson

from api.services.task_callbacks import without_callbacks
from api.upstream.base import UpstreamRequest
from api.upstream.task_base import (
    FAILURE,
    SUCCESS,
    Submitted,
    TaskAdaptor,
    TaskUpdate,
    keepable_id,
    masked,
    percent,
    text,
    upstream_request,
)

ACCEPTED = frozenset({1, 21, 22})
QUEUE_FULL = 23

# Route below /mj → the task action it submits (None: the action is in the body).
SUBMIT_ACTIONS: dict[str, str | None] = {
    "/submit/imagine": "IMAGINE", "/submit/change": None, "/submit/simple-change": None,
    "/submit/describe": "DESCRIBE", "/submit/blend": "BLEND", "/submit/action": None, "/submit/modal": "MODAL",
    "/submit/shorten": "SHORTEN", "/submit/upload-discord-images": "UPLOAD", "/submit/video": "VIDEO",
    "/submit/edits": "EDITS", "/insight-face/swap": "SWAP_FACE",
}
# What only the Plus variant (type 5) serves.
PLUS_ONLY = frozenset({"/submit/action", "/submit/modal", "/submit/shorten", "/submit/upload-discord-images",
                       "/submit/video", "/submit/edits", "/insight-face/swap"})


class MidjourneyAdaptor(TaskAdaptor):
    platform = "mj"
    table = "midjourney"

    @classmethod
    def relays_refusal(cls, answer: dict[str, Any]) -> bool:
        """midjourney-proxy's own refusal (queue full, banned prompt): HTTP 200 with its code."""
        return isinstance(answer.get("code"), int)

    def _headers(self) -> dict[str, str]:
        return {"mj-api-secret": self.key.removeprefix("Bearer ").strip(), "Content-Type": "application/json"}

    def mask(self, value: Any) -> Any:
        """Upstream words (text or JSON) with the channel's key and address masked."""
        value = masked(value, self.key, self.base_url)
        secret = self.key.removeprefix("Bearer ").strip()
        return masked(value, secret, "") if secret != self.key else value

    def public(self, body: dict[str, Any]) -> dict[str, Any]:
        """A submission's or image seed's answer as the client sees it: all but `code` and `result`
        masked, and the properties without callbacks."""
        out: dict[str, Any] = {}
        for name, value in body.items():
            if name in ("code", "result"):
                out[name] = value
            else:
                out[name] = self.mask(without_callbacks(value) if name == "properties" else value)
        return out

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        return upstream_request("POST", f"{self.base_url}/mj{path}", self._headers(), body)

    def image_seed(self, task_id: str) -> UpstreamRequest:
        return upstream_request("GET", f"{self.base_url}/mj/task/{task_id}/image-seed", self._headers())

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        if status != 200:
            return Submitted(False, reason=f"the upstream answered HTTP {status}",
                             retry_elsewhere=status >= 500 or status == 429)
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return Submitted(False, reason="the upstream's answer is not JSON", retry_elsewhere=True)
        if not isinstance(body, dict):
            return Submitted(False, reason="the upstream's answer is not an object", retry_elsewhere=True)
        code = body.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            return Submitted(False, reason="the upstream's answer has no code", retry_elsewhere=True)
        answer = self.public(body)  # what the client and the task row may hold
        description = str(answer.get("description") or "")
        if code not in ACCEPTED:
            return Submitted(False, answer=answer, reason=description or f"code {code}", busy=code == QUEUE_FULL)
        result = body.get("result")
        props = body.get("properties") if isinstance(body.get("properties"), dict) else {}
        row: dict[str, Any] = {"code": int(code), "description": description}
        if isinstance(result, list):  # upload-discord-images: the uploaded images' URLs, done at once
            task_id = f"upload-{uuid.uuid4().hex[:16]}"
            row.update(status=SUCCESS, progress="100%", image_url=text(result[0]) if result else "")
        else:
            task_id = str(result or "") if isinstance(result, str | int) and not isinstance(result, bool) else ""
            if not keepable_id(task_id):
                return Submitted(False, answer=answer, reason="the upstream accepted the task without an id")
            if code == 21 and props:  # an existing task: its state comes with the answer
                row.update(status=text(props.get("status"), 20), image_url=text(props.get("imageUrl")))
        answer = {**answer, "code": 1} if code in (21, 22) else answer
        return Submitted(True, task_id=task_id, answer=answer, row=row)

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        return upstream_request("POST", f"{self.base_url}/mj/task/list-by-condition", self._headers(),
                                {"ids": task_ids})

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        items = orjson.loads(raw)
        if not isinstance(items, list):
            raise ValueError("list-by-condition did not answer a list")
        updates = []
        for item in items:
            if not isinstance(item, dict) or not item.get("id"):
                continue
            status = text(item.get("status"), 20)
            fields: dict[str, Any] = {
                "progress": percent(item.get("progress")), "image_url": text(item.get("imageUrl")),
                "prompt_en": text(item.get("promptEn")), "description": self.mask(text(item.get("description"))),
                "fail_reason": self.mask(text(item.get("failReason"))), "start_time": _int(item.get("startTime")),
                "finish_time": _int(item.get("finishTime")),
                "buttons": orjson.dumps(item["buttons"]).decode() if isinstance(item.get("buttons"), list) else "",
                "properties": orjson.dumps(self.mask(without_callbacks(item["properties"]))).decode()
                if isinstance(item.get("properties"), dict) else "",
            }
            if status == "CANCEL":
                status = FAILURE
                fields["fail_reason"] = fields["fail_reason"] or "cancelled upstream"
            fields["status"] = status
            updates.append(TaskUpdate(str(item["id"]), status, fields))
        return updates


def _int(value: Any) -> int:
    """A time as the columns hold it (a 64-bit integer); anything else is 0."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 2**62 else 0


class MidjourneyPlusAdaptor(MidjourneyAdaptor):
    """Midjourney Proxy Plus (type 5): the same protocol, and the routes of PLUS_ONLY."""
