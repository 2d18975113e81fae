"""Fakes of midjourney-proxy (and its Plus routes) and of a suno-api proxy, speaking their formats:
`mj-api-secret` / Bearer auth, submit answers with midjourney-proxy's codes or suno's
`{code: "success", data: <id>}`, batch fetches, image seeds and images. Tests set a task's state
in `tasks` (as the upstream would report it) and read what the fake received in `seen`.

Both refuse what the real services refuse: a known body field of the wrong type (midjourney-proxy's
Spring binding answers HTTP 400; suno-api its `{code: "invalid_request"}` 400). midjourney-proxy
keeps a submission's notifyHook in the task's properties, as the real one does."""
from __future__ import annotations

import asyncio
import base64
import itertools
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

MJ_SECRET = "mj-upstream-secret"
SUNO_KEY = "suno-upstream-key"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJ"
                       "RU5ErkJggg==")
_ids = itertools.count(1_700_000_000_000)
_STRINGS = ("prompt", "base64", "botType", "notifyHook", "state", "taskId", "action", "customId", "content",
            "dimensions", "maskBase64", "sourceBase64", "targetBase64", "motion", "image", "videoType")
_SUNO_STRINGS = ("prompt", "gpt_description_prompt", "mv", "title", "tags", "negative_tags", "continue_clip_id",
                 "task_id")


def mj_type_error(body: Any) -> str:
    """What midjourney-proxy's binding refuses in a submission ("" if nothing)."""
    if not isinstance(body, dict):
        return "body is not an object"
    for name, value in body.items():
        if value is None:
            continue
        if name in _STRINGS and not isinstance(value, str):
            return name
        if name == "base64Array" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return name
        if name == "index" and (not isinstance(value, int) or isinstance(value, bool)):
            return name
        if name in ("chooseSameChannel", "noStorage", "remix") and not isinstance(value, bool):
            return name
        if name in ("accountFilter", "filter") and not isinstance(value, dict):
            return name
    return ""


def suno_type_error(body: Any) -> str:
    if not isinstance(body, dict):
        return "body is not an object"
    for name, value in body.items():
        if value is None:
            continue
        if name in _SUNO_STRINGS and not isinstance(value, str):
            return name
        if name == "continue_at" and (not isinstance(value, int | float) or isinstance(value, bool)):
            return name
        if name == "make_instrumental" and not isinstance(value, bool):
            return name
    return ""


@dataclass
class FakeMidjourney(FakeBase):
    code: int = 1  # what a submission answers (1 submitted, 21 exists, 22 queued, 23 queue full, 24 banned)
    http_status: int = 200
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    fetches: list[list[str]] = field(default_factory=list)
    fetch_gate: asyncio.Event | None = None  # list-by-condition waits for it (a poll held mid-batch)
    fetch_started: asyncio.Event = field(default_factory=asyncio.Event)
    refusal: str = ""  # the description of a refusal (code 23, 24, …), when set
    seed_answer: dict[str, Any] | None = None  # what image-seed answers, when set
    image_hits: int = 0
    image_redirect: str = ""  # where /images/* redirects to, when set
    fetch_error: str = ""  # list-by-condition answers HTTP 500 with this text, when set
    callback_first: dict[str, Any] | None = None  # a callback (these task fields) sent before the answer
    callbacks: list[int] = field(default_factory=list)  # the gateway's statuses for those callbacks

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/mj/submit/{action}", self.submit)
        app.router.add_post("/mj/insight-face/swap", self.submit)
        app.router.add_post("/mj/task/list-by-condition", self.list_by_condition)
        app.router.add_get("/mj/task/{id}/image-seed", self.image_seed)
        app.router.add_get("/images/{name}", self.image)
        return app

    def _authorised(self, request: web.Request) -> bool:
        return request.headers.get("mj-api-secret") == MJ_SECRET

    def finish(self, task_id: str, status: str, **fields: Any) -> None:
        """Set a task as the upstream would report it next."""
        self.tasks[task_id].update(status=status, **fields)

    async def submit(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return web.Response(status=401, text="Unauthorized")
        body = await request.json()
        self.seen.append((request.path, body))
        wrong = mj_type_error(body)
        if wrong:
            return web.json_response({"timestamp": 0, "status": 400, "error": "Bad Request", "path": request.path,
                                      "message": f"JSON parse error: {wrong}"}, status=400)
        if self.http_status != 200:
            return web.json_response({"error": "proxy exploded"}, status=self.http_status)
        prompt = body.get("prompt") or ""
        if self.code not in (1, 21, 22):
            description = self.refusal or {23: "队列已满，请稍后尝试", 24: "可能包含敏感词"}.get(self.code, "失败")
            return web.json_response({"code": self.code, "description": description,
                                      "result": None, "properties": {"promptEn": prompt, "reason": description}})
        if request.path.endswith("upload-discord-images"):
            return web.json_response({"code": 1, "description": "success",
                                      "result": [f"{self.url}/images/upload.png"]})
        task_id = str(next(_ids))
        properties = {"notifyHook": body["notifyHook"]} if body.get("notifyHook") else {}
        self.tasks[task_id] = {"id": task_id, "action": request.match_info.get("action", "SWAP_FACE").upper(),
                               "prompt": prompt, "promptEn": prompt,
                               "description": "/imagine " + prompt, "status": "SUBMITTED",
                               "progress": "0%", "submitTime": 1, "startTime": 0, "finishTime": 0, "imageUrl": "",
                               "failReason": "", "buttons": [], "properties": properties}
        if self.callback_first is not None and body.get("notifyHook"):
            # midjourney-proxy's notify runs on its own thread: it may reach the gateway first.
            async with aiohttp.ClientSession() as http:
                async with http.post(body["notifyHook"], json={**self.tasks[task_id], **self.callback_first}) as r:
                    self.callbacks.append(r.status)
        if self.code == 21:
            properties = {**properties, "status": "SUCCESS", "imageUrl": f"{self.url}/images/{task_id}.png"}
        return web.json_response({"code": self.code, "description": "提交成功", "result": task_id,
                                  "properties": properties})

    async def list_by_condition(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return web.Response(status=401, text="Unauthorized")
        ids = (await request.json())["ids"]
        self.fetches.append(ids)
        self.fetch_started.set()
        if self.fetch_error:
            return web.Response(status=500, text=self.fetch_error)
        if self.fetch_gate is not None:
            await self.fetch_gate.wait()
        return web.json_response([self.tasks[i] for i in ids if i in self.tasks])

    async def image_seed(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return web.Response(status=401, text="Unauthorized")
        return web.json_response(self.seed_answer or {"code": 1, "description": "success", "result": "2911893021"})

    async def image(self, request: web.Request) -> web.Response:
        self.image_hits += 1
        if self.image_redirect:
            raise web.HTTPFound(self.image_redirect)
        return web.Response(body=PNG, content_type="image/png")


@dataclass
class FakeSuno(FakeBase):
    fail_submit: bool = False
    refusal: str = "no suno account available"  # the message of a refused submission
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/suno/submit/{action}", self.submit)
        app.router.add_post("/suno/fetch", self.fetch)
        return app

    def _authorised(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {SUNO_KEY}"

    async def submit(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return web.json_response({"code": "unauthorized", "message": "invalid key", "data": None}, status=401)
        body = await request.json()
        self.seen.append((request.path, body))
        wrong = suno_type_error(body)
        if wrong:
            return web.json_response({"code": "invalid_request", "message": f"{wrong}: wrong type", "data": None},
                                     status=400)
        if self.fail_submit:
            return web.json_response({"code": "error", "message": self.refusal, "data": None})
        task_id = f"suno-{next(_ids)}"
        self.tasks[task_id] = {"task_id": task_id, "action": request.match_info["action"].upper(),
                               "status": "submitted", "fail_reason": "", "submit_time": 1, "start_time": 0,
                               "finish_time": 0, "data": None}
        return web.json_response({"code": "success", "message": "", "data": task_id})

    async def fetch(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return web.json_response({"code": "unauthorized", "message": "invalid key", "data": None}, status=401)
        ids = (await request.json())["ids"]
        return web.json_response({"code": "success", "message": "",
                                  "data": [self.tasks[i] for i in ids if i in self.tasks]})


# -- fixtures: each fake started on a local port (the conftest.py of the task tests' folders) ---------


@pytest.fixture
async def proxy(aiohttp_server: Any) -> FakeMidjourney:
    fake = FakeMidjourney()
    fake.server = await aiohttp_server(fake.app())
    return fake


@pytest.fixture
async def suno_api(aiohttp_server: Any) -> FakeSuno:
    fake = FakeSuno()
    fake.server = await aiohttp_server(fake.app())
    return fake
