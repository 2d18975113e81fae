"""The console's playground: `POST /pg/chat/completions`, a chat relayed for the signed-in user.

The console's session user pays; no key is touched. It answers in the relay's shape (the relay's
sub-application: CORS, OpenAI-shaped errors), so the playground reads errors as any client would.
"""
from __future__ import annotations

from aiohttp import web

from api.console.auth import current_user
from api.relay.auth import UserInfo
from api.relay.caller import Caller
from api.relay.handler import run
from api.relay.middleware import relay_sub_app
from api.relay.refusals import refuse
from api.services.budgets.limits import stored as stored_limits
from api.upstream.base import RelayMode
from api.web.sessions import sessions_of
from models.enums import UserStatus

ROUTE = "/pg/chat/completions"


async def playground(request: web.Request) -> web.StreamResponse:
    session = await sessions_of(request).load(request)
    if session is None or not session.user_id:
        raise refuse(request, 401, "relay_playground_session", "access_token_not_supported")
    user = await current_user(request)
    if user is None:
        raise refuse(request, 401, "relay_playground_session", "access_token_not_supported")
    if user.status != UserStatus.ENABLED:
        raise refuse(request, 403, "relay_user_banned", "user_banned")
    info = UserInfo(user.id, user.username, user.status, user.role, user.group or "default", False,
                    stored_limits(user.limits))
    return await run(request, RelayMode.CHAT, ROUTE, Caller(info, None))


def setup_playground(app: web.Application) -> None:
    pg = relay_sub_app()
    pg.router.add_post("/chat/completions", playground)
    app.add_subapp("/pg", pg)
