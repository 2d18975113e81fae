"""new-api's built-in OpenID Connect login (its `oidc.*` options and each user's `users.oidc_id`),
carried as a custom provider with slug `oidc` and the users' bindings to it.

new-api sends the browser to its authorization endpoint with the scopes `openid profile email` and the
callback `{ServerAddress}/oauth/oidc` (the slug keeps that URL, so the registration at the identity
provider still fits), exchanges the code with the client credentials in the form, and reads the user
from the userinfo endpoint: `sub`, `preferred_username`, `name`, `email`. Here a provider with `openid`
among its scopes is an OpenID Connect one, whose ID token must be verified against the issuer's JWKS,
so the provider is completed from the discovery document (`oidc.well_known`) fetched at import time
under the policy for user-supplied URLs: its issuer and JWKS URL, and any endpoint new-api left empty.
When that document cannot be had (no network, no `oidc.well_known`, no issuer or JWKS in it), the
provider is carried disabled, its well-known URL kept, with a note: root runs Discover on it in the
console and turns it on. It is never carried as a plain userinfo provider: without `openid` in the
scopes an OpenID Connect provider's userinfo endpoint does not answer, and with it this gateway
requires the ID token. The bindings are carried either way, so users log in as before once it is on.

A provider with slug `oidc` already here (carried earlier, or made by root) is left as it is, and the
bindings go to it: a second run changes nothing. The rows made here get ids past the source's, and
importer.oauth skips a source row that later takes such an id.
"""
from __future__ import annotations

from typing import Any, cast

from api.console.oidc_client import AddressRefused, CallFailed, call
from api.errors import ApiError
from api.services.accounts.oidc_providers import check_url
from models import CustomOAuthProvider, Option, User, UserOAuthBinding

from .report import Report
from .rows import text
from .source import Source
from .writing import BATCH

SLUG = "oidc"
PREFIX = "oidc."
# The options carried by the provider (the others, such as role claims, stay "no such option here").
CARRIED_OPTIONS = frozenset(PREFIX + name for name in (
    "enabled", "display_name", "client_id", "client_secret", "well_known", "authorization_endpoint",
    "token_endpoint", "user_info_endpoint"))
ENDPOINTS = {"authorization_endpoint": "authorization_endpoint", "token_endpoint": "token_endpoint",
             "user_info_endpoint": "userinfo_endpoint"}  # this gateway's field → the discovery document's


class NotCarried(Exception):
    """The built-in login cannot be carried: the reason, with no secret in it."""


async def _settings(source: Source) -> dict[str, str]:
    return {text(r.get("key"))[len(PREFIX):]: text(r.get("value")).strip()
            for r in await source.all_rows("options") if text(r.get("key")) in CARRIED_OPTIONS}


async def _discover(url: str) -> dict[str, Any]:
    """The discovery document, fetched as the console's Discover does (private addresses only when
    MediaFetchPrivateEnabled is on here); NotCarried with the reason otherwise."""
    allowed = await Option.filter(key="MediaFetchPrivateEnabled").first()
    try:
        status, body = await call(url, allow_private=allowed is not None and allowed.value == "true")
    except AddressRefused:
        raise NotCarried(f"the address of {url} is refused (private addresses need MediaFetchPrivateEnabled)") from None
    except CallFailed as failed:
        raise NotCarried(f"{url} could not be fetched ({failed})") from None
    if status != 200 or not isinstance(body, dict):
        raise NotCarried(f"{url} answered HTTP {status}")
    return body


def _url(name: str, value: object) -> str:
    try:
        return check_url(name, value)
    except ApiError:
        raise NotCarried(f"{name} is not an http(s) URL") from None


async def provider_fields(settings: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The provider's fields, and "" when it is carried as an OpenID Connect provider or else why it
    comes disabled; NotCarried when the options cannot make a provider."""
    fields: dict[str, Any] = {
        "name": (settings.get("display_name") or "OIDC")[:64], "slug": SLUG, "kind": "oauth_code",
        "enabled": settings.get("enabled") == "true", "client_id": settings.get("client_id", "")[:256],
        "client_secret": settings.get("client_secret", "")[:512], "scopes": "openid profile email",
        "issuer": "", "audience": "", "jwks_url": "", "well_known": "", "user_id_field": "sub",
        "username_field": "preferred_username", "display_name_field": "name", "email_field": "email",
        "auth_style": 1}  # new-api sends the client credentials in the form
    for name in ENDPOINTS:
        fields[name] = _url(PREFIX + name, settings.get(name))
    why = ""
    try:
        fields["well_known"] = _url(PREFIX + "well_known", settings.get("well_known"))
    except NotCarried as bad:
        why = str(bad)
    if not fields["well_known"]:
        why = why or "oidc.well_known is not set, so its issuer and JWKS are not known"
    else:
        try:
            document = await _discover(fields["well_known"])
            issuer = document.get("issuer")
            fields["jwks_url"] = _url("jwks_uri", document.get("jwks_uri"))
            if not isinstance(issuer, str) or not issuer.strip() or not fields["jwks_url"]:
                raise NotCarried(f"{fields['well_known']} names no issuer or no jwks_uri")
            fields["issuer"] = issuer.strip()[:512]
            for name, key in ENDPOINTS.items():
                fields[name] = fields[name] or _url(key, document.get(key))
        except NotCarried as failed:
            fields["issuer"] = fields["jwks_url"] = ""
            why = str(failed)
    if why:
        fields["enabled"] = False
    for name in ("client_id", "authorization_endpoint", "token_endpoint"):
        if not fields[name]:
            raise NotCarried(f"{PREFIX}{name} is empty")
    return fields, why


async def _next_id(model: Any, source: Source, table: str, tables: set[str]) -> int:
    here = await model.all().order_by("-id").first()
    there = [int(r["id"]) for r in await source.all_rows(table)] if table in tables else []
    return max([here.id if here else 0, *there]) + 1


async def _oidc_ids(source: Source) -> dict[int, str]:
    """Each source user bound to the built-in login: id → oidc_id."""
    bound: dict[int, str] = {}
    async for chunk in source.rows("users", batch=BATCH):
        for row in chunk:
            oidc_id = text(row.get("oidc_id")).strip()
            if oidc_id:
                bound[int(row["id"])] = oidc_id
    return bound


async def import_builtin_oidc(source: Source, tables: set[str], report: Report, dry: bool) -> None:
    if "oidc_id" not in await source.columns("users"):
        return
    settings, bound = await _settings(source), await _oidc_ids(source)
    if not settings.get("client_id"):
        if bound:
            report.notes.append(f"users.oidc_id: {len(bound)} users bound to the built-in OIDC login, which has "
                                "no client id in the source: not carried")
        return
    part = report.table("custom_oauth_providers")
    provider = await CustomOAuthProvider.filter(slug=SLUG).first()
    if provider is not None:
        part.unchanged += 1
        report.notes.append(f"built-in OIDC login: the custom provider {SLUG!r} (id {provider.id}) is here "
                            "already and left as it is; the users' oidc_id bindings go to it")
        provider_id = provider.id
    else:
        try:
            fields, why = await provider_fields(settings)
        except NotCarried as refused:
            part.skipped.append(f"built-in OIDC login: {refused}")
            report.table("user_oauth_bindings").skipped.append(
                f"{len(bound)} users.oidc_id: the built-in OIDC login was not carried")
            return
        provider_id = await _next_id(CustomOAuthProvider, source, "custom_oauth_providers", tables)
        part.created += 1
        if why:
            report.notes.append(f"built-in OIDC login: carried as the custom provider {SLUG!r}, disabled: {why}; "
                                "run Discover on it in System settings, then turn it on")
        if not dry:
            await CustomOAuthProvider.create(id=provider_id, **fields)
    await _bind(source, tables, provider_id, bound, report, dry)


async def _bind(source: Source, tables: set[str], provider_id: int, bound: dict[int, str], report: Report,
                dry: bool) -> None:
    """A binding to the provider for each user with an oidc_id, unless that user or that identity is
    bound to it otherwise here (listed), or the user is not here."""
    part = report.table("user_oauth_bindings")
    here = await UserOAuthBinding.filter(provider_id=provider_id)
    by_identity = {b.provider_user_id: b.user_id for b in here}
    by_user = {b.user_id: b.provider_user_id for b in here}
    ids, users = list(bound), set()
    for start in range(0, len(ids), BATCH):
        users.update(cast(list[int], await User.filter(id__in=ids[start:start + BATCH]).values_list("id", flat=True)))
    rows: list[dict[str, Any]] = []
    for user_id, oidc_id in bound.items():
        holder = by_identity.get(oidc_id)
        if holder == user_id:
            part.unchanged += 1
        elif user_id not in users:
            part.skipped.append(f"user {user_id}'s oidc_id: that user is not here")
        elif len(oidc_id) > 256:
            part.skipped.append(f"user {user_id}'s oidc_id: longer than 256 characters")
        elif holder is not None:
            part.skipped.append(f"user {user_id}'s oidc_id: that identity is bound to user {holder} here")
        elif user_id in by_user:
            part.skipped.append(f"user {user_id}'s oidc_id: the user is bound to another identity of it here")
        else:
            rows.append({"user_id": user_id, "provider_id": provider_id, "provider_user_id": oidc_id})
            by_identity[oidc_id] = user_id
    part.created += len(rows)
    if rows and not dry:
        first = await _next_id(UserOAuthBinding, source, "user_oauth_bindings", tables)
        await UserOAuthBinding.bulk_create([UserOAuthBinding(id=first + i, **r) for i, r in enumerate(rows)],
                                           batch_size=BATCH)
