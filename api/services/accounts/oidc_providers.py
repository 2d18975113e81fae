"""Root's custom OAuth 2 / OpenID Connect providers: the fields a request may set, their checks, and
the provider as the console sees it (new-api's fields and names; never the client secret).

A provider with `openid` among its scopes is an OpenID Connect one: its ID token is required and
verified (issuer and JWKS URL needed); any other needs a user info endpoint, where the user's id,
username, display name and e-mail are read through the field mappings.

Administrative changes go through create_provider / update_provider / delete_provider, one function
each, so that what records them can wrap them.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from tortoise.transactions import in_transaction

from api.errors import ApiError
from models import CustomOAuthProvider, UserOAuthBinding
from models.base import now
from models.custom_oauth import KIND_OAUTH_CODE

SLUG = re.compile(r"^[a-z0-9-]{1,64}$")
# Paths under /oauth/ that are the built-in logins' (or the state's) own: a slug may not take them.
RESERVED_SLUGS = frozenset({"state", "github", "linuxdo", "wechat", "telegram", "email", "discord"})
TEXT_FIELDS: dict[str, int] = {  # name → longest value
    "name": 64, "icon": 128, "client_id": 256, "client_secret": 512, "scopes": 256, "issuer": 512,
    "audience": 256, "user_id_field": 128, "username_field": 128, "display_name_field": 128, "email_field": 128,
}
URL_FIELDS = ("authorization_endpoint", "token_endpoint", "user_info_endpoint", "jwks_url", "well_known")
URL_MAX = 512
LABELS = {"name": "name", "slug": "slug", "client_id": "client_id", "authorization_endpoint": "authorization_endpoint",
          "token_endpoint": "token_endpoint"}
# new-api's fields for kinds and features this gateway does not serve: accepted when empty or default,
# refused otherwise (a policy silently dropped would let in the users it was meant to keep out).
UNSUPPORTED_DEFAULTS: dict[str, tuple[Any, ...]] = {
    "access_policy": ("", None), "jwt_source": ("", None, "query"), "trusted_proxy_cidrs": ("", None, "[]"),
    "ticket_exchange_url": ("", None), "group_field": ("", None), "role_field": ("", None),
    "group_mapping": ("", None), "role_mapping": ("", None), "public_key": ("", None),
}


def check_url(name: str, value: object, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ApiError("custom_oauth_field_type", field=name)
    url = value.strip()
    if not url:
        if required:
            raise ApiError("custom_oauth_field_required", field=name)
        return ""
    if len(url) > URL_MAX:
        raise ApiError("custom_oauth_field_too_long", field=name, max=URL_MAX)
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ApiError("custom_oauth_url_invalid", field=name) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise ApiError("custom_oauth_url_invalid", field=name)
    return url


def _text(name: str, value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ApiError("custom_oauth_field_type", field=name)
    text = value.strip()
    if len(text) > TEXT_FIELDS[name]:
        raise ApiError("custom_oauth_field_too_long", field=name, max=TEXT_FIELDS[name])
    return text


def _fields(body: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """The provider's fields after applying `body` to `current` (only the keys present change; an
    empty client_secret keeps the stored one), checked as a whole."""
    for name, allowed in UNSUPPORTED_DEFAULTS.items():
        if name in body and body[name] not in allowed:
            raise ApiError("custom_oauth_field_unsupported", field=name, value=str(body[name])[:64])
    kind = body.get("kind", current.get("kind", KIND_OAUTH_CODE)) or KIND_OAUTH_CODE
    if kind != KIND_OAUTH_CODE:
        raise ApiError("custom_oauth_field_unsupported", field="kind", value=str(kind)[:64])
    out = dict(current)
    out["kind"] = KIND_OAUTH_CODE
    for name in TEXT_FIELDS:
        if name in body:
            value = _text(name, body[name])
            if name == "client_secret" and not value:
                continue
            out[name] = value
    for name in URL_FIELDS:
        if name in body:
            out[name] = check_url(name, body[name])
    if "slug" in body:
        slug = body["slug"].strip().lower() if isinstance(body["slug"], str) else None
        if slug is None or not SLUG.match(slug):
            raise ApiError("custom_oauth_slug_invalid")
        if slug in RESERVED_SLUGS:
            raise ApiError("custom_oauth_slug_reserved", slug=slug)
        out["slug"] = slug
    for name in ("enabled",):
        if name in body:
            if not isinstance(body[name], bool):
                raise ApiError("custom_oauth_field_type", field=name)
            out[name] = body[name]
    if "auth_style" in body:
        style = body["auth_style"]
        if isinstance(style, bool) or not isinstance(style, int) or style not in (0, 1, 2):
            raise ApiError("custom_oauth_field_type", field="auth_style")
        out["auth_style"] = style
    for name in ("user_id_field", "username_field", "display_name_field", "email_field"):
        if not out.get(name):
            out[name] = CustomOAuthProvider._meta.fields_map[name].default
    if not out.get("scopes"):
        out["scopes"] = "openid profile email"
    for name in ("name", "slug", "client_id", "authorization_endpoint", "token_endpoint"):
        if not out.get(name):
            raise ApiError("custom_oauth_field_required", field=LABELS[name])
    if "openid" in out["scopes"].split():
        if not out.get("issuer") or not out.get("jwks_url"):
            raise ApiError("custom_oauth_oidc_fields")
    elif not out.get("user_info_endpoint"):
        raise ApiError("custom_oauth_userinfo_required")
    return out


EDITABLE = ("name", "slug", "icon", "kind", "enabled", "client_id", "client_secret", *URL_FIELDS, "scopes",
            "issuer", "audience", "user_id_field", "username_field", "display_name_field", "email_field",
            "auth_style")


def _current(provider: CustomOAuthProvider) -> dict[str, Any]:
    return {name: getattr(provider, name) for name in EDITABLE}


async def _slug_free(slug: str, except_id: int = 0) -> None:
    if await CustomOAuthProvider.filter(slug=slug).exclude(id=except_id).exists():
        raise ApiError("custom_oauth_slug_taken")


async def create_provider(body: dict[str, Any]) -> CustomOAuthProvider:
    fields = _fields(body, {"enabled": False, "auth_style": 0, "client_secret": ""})
    await _slug_free(fields["slug"])
    return await CustomOAuthProvider.create(**fields)


async def update_provider(provider: CustomOAuthProvider, body: dict[str, Any]) -> CustomOAuthProvider:
    fields = _fields(body, _current(provider))
    await _slug_free(fields["slug"], provider.id)
    fields["updated_at"] = now()
    await CustomOAuthProvider.filter(id=provider.id).update(**fields)
    await provider.refresh_from_db()
    return provider


async def delete_provider(provider: CustomOAuthProvider) -> None:
    """Refused while users are bound to it (as new-api): they would lose that way to log in."""
    async with in_transaction():
        if await UserOAuthBinding.filter(provider_id=provider.id).exists():
            raise ApiError("custom_oauth_has_bindings")
        await CustomOAuthProvider.filter(id=provider.id).delete()


async def provider_by_id(raw: str) -> CustomOAuthProvider:
    try:
        provider_id = int(raw)
    except ValueError:
        raise ApiError("custom_oauth_not_found") from None
    provider = await CustomOAuthProvider.filter(id=provider_id).first()
    if provider is None:
        raise ApiError("custom_oauth_not_found")
    return provider


def provider_data(provider: CustomOAuthProvider) -> dict[str, Any]:
    """The provider for root's console: every field but the secret, and whether one is set."""
    data: dict[str, Any] = {"id": provider.id}
    data.update({name: getattr(provider, name) for name in EDITABLE if name != "client_secret"})
    data["client_secret_set"] = bool(provider.client_secret)
    data["created_at"] = provider.created_at
    data["updated_at"] = provider.updated_at
    return data


def public_data(provider: CustomOAuthProvider) -> dict[str, Any]:
    """What the login page needs of an enabled provider (`custom_oauth_providers` of /api/status)."""
    return {"id": provider.id, "name": provider.name, "slug": provider.slug, "icon": provider.icon,
            "client_id": provider.client_id, "authorization_endpoint": provider.authorization_endpoint,
            "scopes": provider.scopes}


async def enabled_providers() -> list[dict[str, Any]]:
    return [public_data(p) for p in await CustomOAuthProvider.filter(enabled=True).order_by("id")]


def discovery_target(body: dict[str, Any]) -> tuple[str, str]:
    """(the discovery document's URL, the issuer it must name or "") from new-api's request fields."""
    well_known = check_url("well_known_url", body.get("well_known_url"))
    issuer = check_url("issuer_url", body.get("issuer_url"))
    if not well_known and not issuer:
        raise ApiError("custom_oauth_discovery_url_required")
    return well_known or issuer.rstrip("/") + "/.well-known/openid-configuration", "" if well_known else issuer
