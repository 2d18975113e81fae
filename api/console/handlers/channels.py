"""Channel management (admin): list, search, edit, delete, test, balances, model lists, the keys of
a multi-key channel, tags."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from api import keys
from api.channels import admin as service
from api.channels import catalogue_view, channel_test, monitor, multi_key, queries, tags
from api.console.auth import admin_required, root_required, the_user, user_required
from api.console.handlers.secure_verify import require_fresh
from api.errors import ApiError
from api.i18n import language, translate
from api.response import json_body, ok, read_json
from api.services import locks
from api.services.billing import pricing
from api.services.events import EventBus
from api.services.paging import id_sort, read_page
from api.services.params import body_ids, id_value
from api.upstream import catalogue
from api.web import audit
from models import Channel
from models.enums import ChannelStatus, Role


def _events(request: web.Request) -> EventBus:
    return request.config_dict[keys.EVENTS]


def _text(request: web.Request, key: str, **params: object) -> str:
    return translate(key, language(request), **params)


def _channel_id(request: web.Request) -> int:
    channel_id = id_value(request.match_info["id"])
    if channel_id is None:
        raise ApiError("channel_not_found")
    return channel_id


def _unpriced(request: web.Request, models: list[str]) -> list[str]:
    """The models among `models` the relay has no price for (every call to them would be refused)."""
    options = request.config_dict[keys.OPTIONS]
    return [m for m in dict.fromkeys(models) if not pricing.is_priced(options, m)]


def _with_unpriced(request: web.Request, page: dict[str, Any]) -> dict[str, Any]:
    """A page of channels, each with unpriced_models: its models that have no price."""
    for item in page["items"]:
        item["unpriced_models"] = _unpriced(request, [m.strip() for m in item["models"].split(",") if m.strip()])
    return page


def _deps(request: web.Request) -> monitor.Deps:
    app = request.config_dict
    return monitor.Deps(app[keys.STORE], app[keys.OPTIONS], app[keys.EVENTS], app[keys.HTTP])


# -- model lists -----------------------------------------------------------------------------------

@user_required
async def list_type_models(request: web.Request) -> web.Response:
    """Channel type → built-in model list (the console keeps it as channel_models)."""
    return ok(service.models_by_type())


@admin_required
async def list_channel_types(request: web.Request) -> web.Response:
    """The provider catalogue as the channel form needs it (api/upstream/catalogue.py): every type's
    label, default address, key format, `other` field, models, presets and whether it is retired."""
    return ok(catalogue_view.types())


@admin_required
async def list_all_models(request: web.Request) -> web.Response:
    return ok([{"id": m, "object": "model", "owned_by": "system"} for m in await service.all_model_ids()])


@admin_required
async def list_unpriced_models(request: web.Request) -> web.Response:
    """{models: [...]} → those of them without a price (the channel form marks them)."""
    models = (await read_json(request)).get("models")
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ApiError("invalid_param", name="models")
    return ok(_unpriced(request, [m.strip() for m in models if m.strip()]))


# -- reads -----------------------------------------------------------------------------------------

@admin_required
async def list_channels(request: web.Request) -> web.Response:
    """A page of channels (`tag` keeps those of one tag)."""
    page, newest_first = read_page(request.query, first=0), id_sort(request.query)
    where = service.search_filter(tag=request.query.get("tag", ""))
    return ok(_with_unpriced(request, await service.page_of(Channel.filter(where), page, newest_first)))


@admin_required
async def search_channels(request: web.Request) -> web.Response:
    query = request.query
    page, newest_first = read_page(query, first=0), id_sort(query)
    where = service.search_filter(query.get("keyword", ""), query.get("group", ""), query.get("model", ""),
                                  query.get("tag", ""))
    return ok(_with_unpriced(request, await service.page_of(Channel.filter(where), page, newest_first)))


@admin_required
async def get_channel(request: web.Request) -> web.Response:
    return ok((await service.get_channel(_channel_id(request))).public_dict())


@root_required
async def reveal_channel_key(request: web.Request) -> web.Response:
    """A channel's stored key text (every key of a multi-key channel, one a line), root's only and
    in a session verified in the last minutes (POST /api/verify), as new-api shows it: `{"key": …}`."""
    await require_fresh(request, the_user(request))
    channel = await service.get_channel(_channel_id(request))
    return ok({"key": channel.key})


# -- writes ----------------------------------------------------------------------------------------

@admin_required
async def create_channel(request: web.Request) -> web.Response:
    created = await service.create_channels(await read_json(request), _events(request))
    await audit.new_rows(request, "channel.create", created)
    return ok([c.public_dict() for c in created], _text(request, "channel_created"))


@admin_required
async def update_channel(request: web.Request) -> web.Response:
    """Only root may send a channel's stored keys to a new address; an admin gives the key again."""
    keeps_keys = the_user(request).role >= Role.ROOT
    body = await read_json(request)
    channel = await audit.each_row(request, "channel.update", Channel.filter(id__in=audit.ids(body.get("id"))),
                                   multi_key.update_channel(body, _events(request), keeps_keys=keeps_keys))
    return ok(channel.public_dict(), _text(request, "channel_updated"))


@admin_required
async def copy_channel(request: web.Request) -> web.Response:
    """Copy server-side, so the copy keeps the key the browser never sees."""
    suffix = request.query.get("suffix", "_copy")
    channel = await service.copy_channel(_channel_id(request), suffix, _events(request))
    await audit.new_rows(request, "channel.copy", [channel])
    return ok(channel.public_dict(), _text(request, "channel_copied"))


@admin_required
async def delete_disabled_channels(request: web.Request) -> web.Response:
    disabled = Channel.filter(status__in=[ChannelStatus.MANUALLY_DISABLED, ChannelStatus.AUTO_DISABLED])
    count = await audit.each_row(request, "channel.delete", disabled, service.delete_disabled(_events(request)))
    return ok(count, _text(request, "channel_deleted_disabled", count=count))


@admin_required
async def delete_channel(request: web.Request) -> web.Response:
    channel_id = _channel_id(request)
    if not await audit.each_row(request, "channel.delete", Channel.filter(id=channel_id),
                                service.delete_channels([channel_id], _events(request))):
        raise ApiError("channel_not_found")
    return ok()


@admin_required
async def delete_channel_batch(request: web.Request) -> web.Response:
    ids = (await read_json(request)).get("ids")
    if not isinstance(ids, list) or not ids:
        raise ApiError("channel_ids_required")
    count = await audit.each_row(request, "channel.delete", Channel.filter(id__in=audit.ids(ids)),
                                 service.delete_channels(body_ids(ids), _events(request)))
    return ok(count, _text(request, "channel_deleted_count", count=count))


@admin_required
async def fix_channels(request: web.Request) -> web.Response:
    count = await service.fix_abilities(_events(request))
    await audit.record(request, "channel.fix", "channel", "", None, {"channels": count})
    return ok(count, _text(request, "channel_fixed_count", count=count))


# -- multi-key channels and tags ------------------------------------------------------------------

@admin_required
async def manage_channel_keys(request: web.Request) -> web.Response:
    """The keys of a multi-key channel: {channel_id, action, key_index | fingerprint, keys, page, page_size,
    status} (api/channels/multi_key.py)."""
    app = request.config_dict
    body = await read_json(request)
    outcome = await audit.each_row(request, f"channel.keys.{str(body.get('action'))[:40]}",
                                   Channel.filter(id__in=audit.ids(body.get("channel_id"))),
                                   multi_key.manage(body, app[keys.STORE], app[keys.EVENTS]))
    message = _text(request, outcome.message, **(outcome.params or {})) if outcome.message else ""
    return ok(outcome.data, message)


@admin_required
async def disable_tag_channels(request: web.Request) -> web.Response:
    """{tag}: every channel of the tag disabled by hand; data: the count changed."""
    tag = tags.tag_of(await read_json(request))
    count = await audit.each_row(request, "channel.tag_disable", Channel.filter(tag=tag),
                                 tags.disable_tag(tag, _events(request)))
    return ok(count, _text(request, "channel_tag_disabled", count=count, tag=tag))


@admin_required
async def enable_tag_channels(request: web.Request) -> web.Response:
    """{tag}: every disabled channel of the tag enabled; data: the count changed."""
    tag = tags.tag_of(await read_json(request))
    count = await audit.each_row(request, "channel.tag_enable", Channel.filter(tag=tag),
                                 tags.enable_tag(tag, _events(request)))
    return ok(count, _text(request, "channel_tag_enabled", count=count, tag=tag))


@admin_required
async def edit_tag_channels(request: web.Request) -> web.Response:
    """{tag, new_tag?, priority?, weight?, models?, groups?, model_mapping?} on every channel of the tag."""
    body = await read_json(request)
    count = await audit.each_row(request, "channel.tag_edit", Channel.filter(tag=tags.tag_of(body)),
                                 tags.edit_tag(body, _events(request)))
    return ok(count, _text(request, "channel_tag_updated", count=count))


@admin_required
async def set_channel_tags(request: web.Request) -> web.Response:
    """{ids, tag}: the tag of these channels (null or "" removes it); data: the count found."""
    body = await read_json(request)
    count = await audit.each_row(request, "channel.tag_set", Channel.filter(id__in=audit.ids(body.get("ids"))),
                                 tags.set_tags(body.get("ids"), body.get("tag"), _events(request)))
    return ok(count, _text(request, "channel_tag_set", count=count))


# -- tests -----------------------------------------------------------------------------------------

def _test_answer(success: bool, message: str, seconds: float) -> web.Response:
    """{success, message, time}: `time` (seconds) sits beside success and message, as the reference."""
    body = {"success": success, "message": message, "data": None, "time": seconds}
    return web.Response(body=json_body(body), content_type="application/json")


@admin_required
async def test_channel(request: web.Request) -> web.Response:
    """One minimal request through the channel's adaptor; records response_time and test_time.
    Like the reference, a manual test of one channel never changes its status."""
    channel = await service.get_channel(_channel_id(request))
    retired = catalogue.provider(channel.type).retired
    if retired is not None:
        raise ApiError("channel_type_retired", type=catalogue.label(channel.type), reason=retired[0],
                       reason_zh=retired[1])
    if not channel_test.is_testable(channel):
        raise ApiError("channel_test_unsupported", type=catalogue.label(channel.type))
    deps = _deps(request)
    timeout = channel_test.test_timeout(deps.options)
    lock = monitor.lock_key(deps.store, "channel_test", channel.id)
    token = await locks.acquire(deps.store, lock, timeout + 30)
    if token is None:
        raise ApiError("channel_test_busy")
    try:
        result = await channel_test.run_test(deps.http, channel, request.query.get("model", ""), timeout,
                                       language(request))
        await channel_test.record_test(channel.id, result)
    finally:
        await locks.release(deps.store, lock, token)
    if result.success:
        message = _text(request, "channel_test_success", name=channel.name, time=f"{result.elapsed:.2f}")
        return _test_answer(True, message, result.seconds)
    return _test_answer(False, result.message, result.seconds)


async def _start_run(request: web.Request, lock_name: str, actor: str, running: str, started: str) -> web.Response:
    """Take the run's single-flight lock here (so a second click anywhere is refused at once) and
    hand it to the workers, which release it when done."""
    store = request.config_dict[keys.STORE]
    lock = monitor.lock_key(store, lock_name)
    token = await locks.acquire(store, lock, monitor.RUN_LOCK_TTL)
    if token is None:
        raise ApiError(running)
    try:
        await request.config_dict[keys.JOBS].send(actor, 0.0, "api", run_token=token)
    except BaseException:
        await locks.release(store, lock, token)
        raise
    return ok(None, _text(request, started))


@admin_required
async def test_all_channels(request: web.Request) -> web.Response:
    return await _start_run(request, "channel_test_all", "channel.test_all", "channel_test_all_running",
                            "channel_test_all_started")


# -- balances and provider models ------------------------------------------------------------------

@admin_required
async def update_channel_balance(request: web.Request) -> web.Response:
    channel = await service.get_channel(_channel_id(request))
    if not queries.supports_balance(channel):
        raise ApiError("channel_balance_unsupported", type=channel.type)
    deps = _deps(request)
    try:
        balance = await queries.update_balance(deps.http, channel, channel_test.test_timeout(deps.options))
    except queries.QueryError as exc:
        raise ApiError("channel_balance_failed", error=exc.message) from exc
    return ok(balance, balance=balance)


@admin_required
async def update_all_balances(request: web.Request) -> web.Response:
    return await _start_run(request, "channel_balance_all", "channel.update_balances",
                            "channel_balance_all_running", "channel_balance_all_started")


@admin_required
async def fetch_models_for_form(request: web.Request) -> web.Response:
    """The model list of a channel not saved yet (the form's type, base URL and key), asked by the
    server: browsers cannot ask most providers themselves (no CORS headers)."""
    body = await read_json(request)
    kind, base_url, key = body.get("type"), body.get("base_url") or "", body.get("key") or ""
    if (isinstance(kind, bool) or not isinstance(kind, int) or not isinstance(base_url, str)
            or not isinstance(key, str)):
        raise ApiError("invalid_param", name="type, base_url, key")
    if not catalogue.provider(kind).fetch_models:
        raise ApiError("channel_fetch_models_unsupported")
    key = key.strip().splitlines()[0].strip() if key.strip() else ""
    channel = Channel(type=kind, base_url=base_url.strip().rstrip("/"), key=key, other=str(body.get("other") or ""))
    return ok(await _fetch_models(request, channel))


@admin_required
async def fetch_channel_models(request: web.Request) -> web.Response:
    return ok(await _fetch_models(request, await service.get_channel(_channel_id(request))))


async def _fetch_models(request: web.Request, channel: Channel) -> list[str]:
    """The upstream's model list for a channel, saved or not (its key never in the answer)."""
    if not catalogue.provider(channel.type).fetch_models:
        raise ApiError("channel_fetch_models_unsupported")
    if not channel.key:
        raise ApiError("channel_key_missing")
    deps = _deps(request)
    try:
        return await queries.fetch_models(deps.http, channel, channel_test.test_timeout(deps.options))
    except queries.QueryError as exc:
        raise ApiError("channel_fetch_models_failed", error=exc.message) from exc

