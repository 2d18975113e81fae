"""new-api's custom OAuth providers (`custom_oauth_providers`) and the users' bindings to them
(`user_oauth_bindings`), carried with their ids so that each binding keeps its provider and user.

Only providers of the authorization code kind are served here: the others (`jwt_direct`,
`trusted_header`) are skipped with the reason, and so are their bindings. A provider with an access
policy is carried disabled, with a note: the policy is not enforced here, and turning the provider on
is root's decision. Client secrets are carried as they were (stored as channel keys are). A binding
whose provider identity is already held by another binding here is skipped and listed, and so is a
provider or binding whose id here is another row's (one made here for the built-in OIDC login).
"""
from __future__ import annotations

from typing import Any

from models import CustomOAuthProvider, UserOAuthBinding
from models.custom_oauth import KIND_OAUTH_CODE

from .report import Report
from .rows import pick, text
from .source import Source
from .writing import upsert

TEXT_LIMITS: dict[str, int] = {}  # the provider's text columns and their lengths
for _name, _field in CustomOAuthProvider._meta.fields_map.items():
    _length = getattr(_field, "max_length", None)
    if isinstance(_length, int):
        TEXT_LIMITS[_name] = _length


def convert_provider(row: dict[str, Any], report: Report) -> dict[str, Any] | str:
    kind = text(row.get("kind")) or KIND_OAUTH_CODE
    if kind != KIND_OAUTH_CODE:
        return f"provider kind {kind!r} is not served here"
    out = pick(row, CustomOAuthProvider, {"created_at": "_", "updated_at": "_"})
    for name, limit in TEXT_LIMITS.items():
        if name in out:
            out[name] = text(out[name])[:limit]
    out["kind"] = KIND_OAUTH_CODE
    out["enabled"] = bool(out.get("enabled"))
    out["auth_style"] = int(out.get("auth_style") or 0)
    if text(row.get("access_policy")).strip():
        out["enabled"] = False
        report.notes.append(f"custom OAuth provider {row.get('id')} ({text(row.get('slug'))}): carried disabled, "
                            "its access policy is not enforced here")
    return out


async def import_custom_oauth(source: Source, tables: set[str], report: Report, dry: bool,
                              new_only: bool = False) -> None:
    if "custom_oauth_providers" not in tables:
        return
    part = report.table("custom_oauth_providers")
    rows: list[dict[str, Any]] = []
    for raw in await source.all_rows("custom_oauth_providers"):
        converted = convert_provider(raw, report)
        if isinstance(converted, str):
            part.skipped.append(f"id {raw.get('id')}: {converted}")
            continue
        converted["id"] = raw["id"]
        rows.append(converted)
    slugs = {p.slug: p.id for p in await CustomOAuthProvider.filter(slug__in=[r.get("slug") for r in rows])}
    by_id = {p.id: p.slug for p in await CustomOAuthProvider.filter(id__in=[r["id"] for r in rows])}
    for r in list(rows):
        owner = slugs.get(str(r.get("slug")))
        if owner is not None and owner != r["id"]:
            part.skipped.append(f"id {r['id']}: slug {r.get('slug')!r} belongs to provider {owner} here")
            rows.remove(r)
        elif by_id.get(r["id"], r.get("slug")) != r.get("slug"):  # e.g. the built-in OIDC login's, made here
            part.skipped.append(f"id {r['id']}: that id is provider {by_id[r['id']]!r} here")
            rows.remove(r)
    if rows:
        await upsert(CustomOAuthProvider, rows, part, dry, new_only)
    if "user_oauth_bindings" in tables:
        await _import_bindings(source, {r["id"] for r in rows}, report, dry, new_only)


async def _import_bindings(source: Source, providers: set[int], report: Report, dry: bool, new_only: bool) -> None:
    part = report.table("user_oauth_bindings")
    here = await UserOAuthBinding.all()
    held: dict[tuple[Any, Any], int] = {(b.provider_id, b.provider_user_id): b.id for b in here}
    held_by_user: dict[tuple[Any, Any], int] = {(b.user_id, b.provider_id): b.id for b in here}
    pairs = {b.id: (b.user_id, b.provider_id) for b in here}  # a binding's id here, for whom to what
    rows: list[dict[str, Any]] = []
    for raw in await source.all_rows("user_oauth_bindings"):
        out = pick(raw, UserOAuthBinding, {"created_at": "_"})
        out["id"] = raw["id"]
        out["provider_user_id"] = text(out.get("provider_user_id"))
        if out.get("provider_id") not in providers:
            part.skipped.append(f"id {raw['id']}: its provider {out.get('provider_id')} was not carried")
            continue
        if pairs.get(raw["id"], (out.get("user_id"), out["provider_id"])) != (out.get("user_id"), out["provider_id"]):
            part.skipped.append(f"id {raw['id']}: that id is another binding here")
            continue
        for held_at, key in ((held, (out["provider_id"], out["provider_user_id"])),
                             (held_by_user, (out.get("user_id"), out["provider_id"]))):
            owner = held_at.get(key)
            if owner is not None and owner != raw["id"]:
                part.skipped.append(f"id {raw['id']}: that binding is held by binding {owner} here")
                break
        else:
            rows.append(out)
    for start in range(0, len(rows), 500):
        await upsert(UserOAuthBinding, rows[start:start + 500], part, dry, new_only)
