"""The channel's end of a Realtime session: its WebSocket URL and credential, and the one attempt per
channel that opens it (the attempt loop's Route, api/relay/attempts.py: a refused handshake moves to
another channel like a failed request; once open, the session stays on that channel).

- OpenAI (and gateways speaking its API): `{base}/v1/realtime?model=<model>`, `Authorization: Bearer`
  (developers.openai.com/api/docs/guides/realtime-websocket; the openai SDK's resources/realtime/realtime.py
  `_prepare_url`: the base URL + `/realtime`, `model` in the query).
- Azure OpenAI, the v1 API (the channel's `other` empty, `v1` or `preview`):
  `{endpoint}/openai/v1/realtime?model=<deployment>` with the `api-key` header
  (learn.microsoft.com/azure/foundry/openai/how-to/realtime-audio-websockets;
  `wss://<resource>.openai.azure.com/openai/v1/realtime?model=…` with the API key header).
- Azure OpenAI, a dated api-version: `{endpoint}/openai/realtime?api-version=<version>&deployment=<deployment>`
  with `api-key` (the openai SDK's lib/azure.py `_configure_realtime`).
"""
from __future__ import annotations

import asyncio
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

from api.channels.index import ChannelInfo
from api.i18n import language, translate
from api.relay.attempts import Route
from api.relay.job import Job, Outcome
from api.services.configuration.capability_lookup import table_of
from api.upstream import client
from api.upstream.base import Adaptor, RelayMeta, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.providers.azure import AzureAdaptor
from api.upstream.registry import build_adaptor

MAX_FRAME = 16 * 1024 * 1024  # bytes; OpenAI takes audio chunks of up to 15 MiB in input_audio_buffer.append
HANDSHAKE_TIMEOUT = 30.0  # seconds for the upstream's upgrade
SERVED_TYPES = frozenset({1, 3})  # OpenAI and Azure OpenAI (api/upstream/catalogue.py)


def target(adaptor: Adaptor) -> tuple[str, dict[str, str]]:
    """The upstream's realtime URL and headers for the session's model (after the channel's mapping)."""
    model = adaptor.meta.name.sent
    if isinstance(adaptor, AzureAdaptor):
        if adaptor.dated:
            query = urlencode({"api-version": adaptor.api_version, "deployment": adaptor.deployment})
            return f"{adaptor.base_url}/realtime?{query}", adaptor.request_headers()
        params = {"model": model, **({"api-version": "preview"} if adaptor.api_version == "preview" else {})}
        return f"{adaptor.base_url}/v1/realtime?{urlencode(params)}", adaptor.request_headers()
    return f"{adaptor.base_url}/v1/realtime?{urlencode({'model': model})}", adaptor.request_headers()


def adaptor_for(job: Job, channel: ChannelInfo) -> Adaptor:
    meta = RelayMeta(channel_id=channel.id, channel_type=channel.type, key=channel.key, base_url=channel.base_url,
                     other=channel.other, organization=channel.organization, name=job.name, mode=job.mode,
                     capability=table_of(job.options.get("ModelCapabilities") or "")(job.name.sent))
    return build_adaptor(meta)


async def connect(job: Job, channel: ChannelInfo) -> Outcome:
    """One attempt: the upstream's WebSocket open (the outcome's `result`), or a RelayError."""
    url, headers = target(adaptor_for(job, channel))
    lang = language(job.request)
    try:
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            ws = await job.state.http.ws_connect(url, headers=headers, max_msg_size=MAX_FRAME, autoping=True,
                                                 timeout=aiohttp.ClientWSTimeout(ws_close=10))
    except aiohttp.WSServerHandshakeError as exc:
        reason = job.mask(f"status {exc.status}: {exc.message}")
        raise RelayError(exc.status, translate("relay_realtime_upstream", lang, reason=reason), "upstream_error",
                         "bad_response_status_code") from None
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:  # in the client's words: never the address
        reason = "the upstream did not answer in time" if isinstance(exc, TimeoutError) else job.mask(
            client.what_failed(exc, where=False))
        raise RelayError(502, translate("relay_realtime_upstream", lang, reason=reason), "upstream_error",
                         "do_request_failed") from None
    return Outcome(web.Response(), TokenUsage(0, 0), 0, result=ws)


UPSTREAM = Route(attempt=connect, serves=lambda channel: channel.type in SERVED_TYPES)
