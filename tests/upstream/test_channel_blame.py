# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A key holder must not disable a shared channel with requests the upstream refuses as the
client's: a chat model asked of /v1/completions (OpenAI's 404), a Responses item it does not keep
(404), another project's Gemini file (403). Those neither count toward the error rate, nor disable
the channel at once, nor are retried on another channel; a model the upstream does not serve at all
still counts, and a real credential error still disables at once."""
from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from api import keys
from api.channels.error_rules import should_disable_channel, should_retry_error
from api.channels.health import about_the_channel
from api.relay import responses_support
from api.services import redis_keys
from api.upstream.blame import names_the_request
from api.upstream.catalogue import ChannelType
from api.upstream.errors import RelayError
from tests.relay.fakes import (  # noqa: F401
    FakeUpstream,
    add_channel,
    gateway,
    headers_for,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI
from tests.upstream.providers.openai.fake_responses import FakeResponses

CHAT_ON_COMPLETIONS = ("This is a chat model and not supported in the v1/completions endpoint. Did you mean to use "
                       "v1/chat/completions?")
NOT_A_CHAT_MODEL = ("This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you "
                    "mean to use v1/completions?")
ITEM_NOT_KEPT = "Item with id 'rs_abc' not found. Items are not persisted when `store` is set to false."
FOREIGN_FILE = "You do not have permission to access the File 6r3c9bhw1kda or it may not exist."
NO_SUCH_MODEL = "The model `gpt-3.5-turbo` does not exist or you do not have access to it."
GEMINI = ChannelType.GEMINI
OPENAI = ChannelType.OPENAI


@pytest.mark.parametrize("status,err_type,code,message,clients", [
    (404, "invalid_request_error", None, CHAT_ON_COMPLETIONS, True),
    (404, "invalid_request_error", None, NOT_A_CHAT_MODEL, True),
    (404, "invalid_request_error", None, "This model is only supported in v1/responses and not in "
                                         "v1/chat/completions.", True),
    (404, "invalid_request_error", None, ITEM_NOT_KEPT, True),
    (400, "invalid_request_error", "previous_response_not_found", "Previous response with id 'resp_1' not found.",
     True),
    (404, "invalid_request_error", None, "No such File object: file-6F2ksmvXxt4VdoqmHRw6kL", True),
    (404, "invalid_request_error", None, "No thread found with id 'thread_abc'.", True),
    (403, "permission_error", "PERMISSION_DENIED", FOREIGN_FILE, True),
    (403, "permission_error", "PERMISSION_DENIED", "CachedContent not found (or permission denied)", True),
    (404, "not_found_error", "not_found_error", "File not found: file_011CNha8iCJcU1wXNR6q4V8w", True),
    # The channel's: the model itself is missing, the route is, the key or the project is refused.
    (404, "invalid_request_error", "model_not_found", NO_SUCH_MODEL, False),
    (404, "not_found_error", "not_found_error", "model: claude-3-5-sonnet-20241022", False),
    (404, "not_found_error", "not_found_error", "Not Found", False),
    (404, "upstream_error", "NOT_FOUND", "models/gemini-9 is not found for API version v1beta, or is not supported "
                                         "for generateContent. Call ListModels to see the list of available models.",
     False),
    (404, "invalid_request_error", None, "Invalid URL (POST /v1/chat/completions)", False),
    (403, "permission_error", "PERMISSION_DENIED", "The caller does not have permission", False),
    (403, "permission_error", "PERMISSION_DENIED", "Your API key was reported as leaked. Please use another API key.",
     False),
    (401, "invalid_request_error", "invalid_api_key", f"Incorrect API key provided. {ITEM_NOT_KEPT}", False),
    (500, "server_error", None, ITEM_NOT_KEPT, False),
])
def test_which_errors_name_the_request(status, err_type, code, message, clients) -> None:
    assert names_the_request(status, err_type, code, message) is clients
    err = RelayError(status, message, err_type, code)
    if clients:
        assert not about_the_channel(err)
        assert not should_disable_channel(status, err_type, code, message, GEMINI)
        assert not should_retry_error(err, OPENAI, pinned=False, remaining=3)


def test_channel_errors_still_count_disable_and_retry() -> None:
    missing = RelayError(404, NO_SUCH_MODEL, "invalid_request_error", "model_not_found")
    assert about_the_channel(missing) and should_retry_error(missing, OPENAI, pinned=False, remaining=3)
    assert should_disable_channel(403, "permission_error", "PERMISSION_DENIED", "The caller does not have permission",
                                  GEMINI)
    assert should_disable_channel(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.",
                                  OPENAI)
    assert responses_support.route_missing(404, b'{"error": {"message": "Invalid URL (POST /v1/responses)"}}')
    assert responses_support.route_missing(404, b"404: Not Found")
    assert not responses_support.route_missing(404, b'{"error": {"message": "%s"}}' % ITEM_NOT_KEPT.encode())


# -- through the gateway ----------------------------------------------------------------------------


class OpenAIChatModels(FakeUpstream):
    """OpenAI's answers for what it does not serve: a chat model on /v1/completions, a model it does
    not have, a wrong key."""

    key = "sk-upstream-secret"
    served = ("gpt-4", "gpt-4o")

    @staticmethod
    def refuse(status: int, message: str, code: str | None = None, param: str | None = None) -> web.Response:
        return web.json_response({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                            "code": code}}, status=status)

    def check(self, request: web.Request, model: str) -> web.Response | None:
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return self.refuse(401, "Incorrect API key provided: sk-wro*****.", "invalid_api_key")
        if model not in self.served:
            return self.refuse(404, f"The model `{model}` does not exist or you do not have access to it.",
                               "model_not_found")
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        return self.check(request, body.get("model", "")) or await super().chat(request)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        refused = self.check(request, body.get("model", ""))
        if refused is None and body.get("model") in self.served:  # every model here is a chat model
            self.seen.append(body)
            return self.refuse(404, CHAT_ON_COMPLETIONS, param="model")
        return refused or await super().completions(request)


async def start_fake(aiohttp_server, fake: Any) -> Any:
    fake.server = await aiohttp_server(fake.app())
    return fake


async def strict_health(gateway, retries: int = 3) -> None:
    """Two counted failures of two attempts disable a channel; retries left to show none is used."""
    options = gateway.server.app[keys.OPTIONS]
    for name, value in (("AutomaticDisableChannelEnabled", "true"), ("AutomaticDisableMinRequests", "2"),
                        ("AutomaticDisableErrorRate", "0.5"), ("RetryTimes", str(retries))):
        await options.update(name, value)


async def test_ten_completions_of_a_chat_model_leave_the_channel_enabled(gateway, aiohttp_server) -> None:
    shared = await start_fake(aiohttp_server, OpenAIChatModels())
    spare = await start_fake(aiohttp_server, OpenAIChatModels())
    channel = await add_channel(gateway, shared, models="gpt-4,gpt-3.5-turbo", priority=10)
    await add_channel(gateway, spare, models="gpt-4", priority=0)
    await strict_health(gateway)
    token = await make_key(await rich_user())
    relay = relay_of(gateway)
    for _ in range(10):
        resp = await gateway.post("/v1/completions", json={"model": "gpt-4", "prompt": "Say hello"},
                                  headers=headers_for(token))
        body = await resp.json()
        assert resp.status == 404 and body["error"]["message"].startswith(CHAT_ON_COMPLETIONS), body
    assert relay.index.get(channel.id) is not None  # still serving everyone
    assert len(shared.seen) == 10 and spare.seen == []  # never retried elsewhere: every channel says the same
    assert not relay.health._windows.get(channel.id)  # nothing counted against it
    # A model the channel lists but its upstream does not serve is the channel's: it counts.
    for _ in range(2):
        resp = await gateway.post("/v1/chat/completions", json={"model": "gpt-3.5-turbo", "messages": [
            {"role": "user", "content": "hi"}]}, headers=headers_for(token))
        assert resp.status == 404
    assert relay.index.get(channel.id) is None


async def test_a_wrong_key_still_disables_at_once(gateway, aiohttp_server) -> None:
    fake = await start_fake(aiohttp_server, OpenAIChatModels())
    channel = await add_channel(gateway, fake, key="sk-wrong-key-for-this-upstream")
    await strict_health(gateway, retries=0)
    token = await make_key(await rich_user())
    resp = await gateway.post("/v1/chat/completions", json={"model": "gpt-4", "messages": [
        {"role": "user", "content": "hi"}]}, headers=headers_for(token))
    assert resp.status == 401
    assert relay_of(gateway).index.get(channel.id) is None


class GeminiWithFiles(FakeGemini):
    """Gemini refusing a fileUri that is not one of this project's files, as Gemini does."""

    own: tuple[str, ...] = ()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        for content in body.get("contents") or ():
            for part in content.get("parts") or ():
                uri = (part.get("fileData") or part.get("file_data") or {}).get("fileUri")
                if uri and uri not in self.own:
                    self.seen.append({"refused": uri})
                    return self.error(403, "PERMISSION_DENIED", "You do not have permission to access the File "
                                      f"{uri.rsplit('/', 1)[-1]} or it may not exist.")
        return await super().handle(request)


async def test_another_projects_gemini_file_does_not_disable_the_channel(gateway, aiohttp_server) -> None:
    fake = await start_fake(aiohttp_server, GeminiWithFiles())
    channel = await add_channel(gateway, None, models="gemini-2.0-flash", type=int(GEMINI), base_url=fake.url,
                                key=fake.key)
    await strict_health(gateway)
    token = await make_key(await rich_user())
    foreign = {"contents": [{"role": "user", "parts": [
        {"text": "Summarise this."},
        {"fileData": {"mimeType": "application/pdf",
                      "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/6r3c9bhw1kda"}}]}]}
    for _ in range(3):
        resp = await gateway.post("/v1beta/models/gemini-2.0-flash:generateContent", json=foreign,
                                  headers={"x-goog-api-key": f"sk-{token.key}"})
        body = await resp.json()
        assert resp.status == 403 and "permission to access the File" in body["error"]["message"], body
    relay = relay_of(gateway)
    assert relay.index.get(channel.id) is not None and len(fake.seen) == 3
    # A 403 about the project itself still disables a Gemini channel at once.
    fake.fail_status = 403
    fake.fail_body = {"error": {"code": 403, "message": "The caller does not have permission",
                                "status": "PERMISSION_DENIED"}}
    resp = await gateway.post("/v1beta/models/gemini-2.0-flash:generateContent",
                              json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                              headers={"x-goog-api-key": f"sk-{token.key}"})
    assert resp.status == 403
    assert relay.index.get(channel.id) is None


async def test_an_unknown_responses_item_is_the_clients_404(gateway, aiohttp_server) -> None:
    fake = await start_fake(aiohttp_server, FakeResponses())
    spare = await start_fake(aiohttp_server, FakeResponses())
    channel = await add_channel(gateway, fake, models="gpt-4o", priority=10)
    await add_channel(gateway, spare, models="gpt-4o", priority=0)
    await strict_health(gateway)
    token = await make_key(await rich_user())
    body = {"model": "gpt-4o", "store": False, "input": [
        {"type": "reasoning", "id": "rs_abc", "summary": []}, {"role": "user", "content": "Go on."}]}
    for _ in range(3):
        resp = await gateway.post("/v1/responses", json=body, headers=headers_for(token))
        answer = await resp.json()
        assert resp.status == 404 and answer["error"]["message"].startswith("Item with id 'rs_abc' not found"), answer
    relay = relay_of(gateway)
    assert relay.index.get(channel.id) is not None and spare.seen == [] and len(fake.seen) == 3
    store = gateway.server.app[keys.STORE]  # and its /v1/responses is not taken for missing
    assert await store.redis.hget(redis_keys.native_missing(store), f"{channel.id}:/v1/responses") is None


async def test_an_endpoint_a_chat_only_upstream_lacks_is_tried_elsewhere(gateway, aiohttp_server, upstreams) -> None:
    chat_only = await start_fake(aiohttp_server, FakeOpenAI())  # any path but chat: OpenAI's 404 "Invalid URL"
    embeds = await upstreams()
    channel = await add_channel(gateway, None, models="gpt-4o,text-embedding-3-small", priority=10,
                                base_url=chat_only.url, key=chat_only.key)
    await add_channel(gateway, embeds, models="text-embedding-3-small", priority=0)
    await strict_health(gateway, retries=0)
    token = await make_key(await rich_user())
    relay = relay_of(gateway)
    for _ in range(10):
        resp = await gateway.post("/v1/embeddings", json={"model": "text-embedding-3-small", "input": "hi"},
                                  headers=headers_for(token))
        assert resp.status == 200, await resp.text()  # served by the channel that has the endpoint
    assert len(embeds.seen) == 10 and relay.index.get(channel.id) is not None
    assert not relay.health._windows.get(channel.id)
    # Chat completions missing is the channel's own fault (a wrong base URL): it counts.
    wrong = await add_channel(gateway, None, models="gpt-4o", priority=20, base_url=chat_only.url + "/wrong",
                              key=chat_only.key)
    for _ in range(2):
        resp = await gateway.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": [
            {"role": "user", "content": "hi"}]}, headers=headers_for(token))
        assert resp.status == 404
    assert relay.index.get(wrong.id) is None
