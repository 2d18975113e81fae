"""The layout of every Redis key that holds a user's live billing state, in one place.

A user's keys share the hash tag `{u<id>}` so that each Lua script touches one Redis Cluster slot;
group-wide limits count a whole group under `{g:<group>}`. Under the deployment's prefix:

  {u}:quota   {u}:tq:<token>          live balances of the user and of a limited key
  {u}:gen     {u}:tgen:<token>        a random id written when a balance is (re)loaded
  {u}:pend    {u}:pver                settlement records not yet in the database; their version
  {u}:resv                            open reservations (api.services.reservations)
  {u}:rpm:<minute> {u}:tpm:<minute> {u}:conc, {u}:trpm:<token>:<minute> {u}:ttpm:… {u}:tconc:<token>
  {u}:refunded:<platform>:<row>       a task's refund, once
  {u}:aff:<model>:<session>           a conversation's channel and key (api.relay.affinity)
  {g:<group>}:rpm:<minute> …:tpm:<minute> …:conc

Outside the users' layout, the relay keeps `relay:native_missing` (a hash: `<channel id>:<path>` →
the base URL and time a channel was found without a native endpoint; api.relay.responses_support).
"""
from __future__ import annotations

from typing import Protocol


class Prefixed(Protocol):
    prefix: str


def user_tag(user_id: int) -> str:
    return f"{{u{user_id}}}"


def user_key(store: Prefixed, user_id: int, *parts: object) -> str:
    return f"{store.prefix}{user_tag(user_id)}:" + ":".join(str(p) for p in parts)


def group_key(store: Prefixed, group: str, *parts: object) -> str:
    return f"{store.prefix}{{g:{group}}}:" + ":".join(str(p) for p in parts)


def every_user(store: Prefixed, *parts: str) -> str:
    """A SCAN pattern for that key of every user."""
    return f"{store.prefix}{{u*}}:" + ":".join(parts)


def user_of(store: Prefixed, key: str) -> int | None:
    """The user id of one of these keys (None for anything else)."""
    head = f"{store.prefix}{{u"
    if not key.startswith(head):
        return None
    inner = key[len(head):].split("}", 1)[0]
    return int(inner) if inner.isascii() and inner.isdigit() else None


def quota(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "quota")


def token_quota(store: Prefixed, user_id: int, token_id: int) -> str:
    return user_key(store, user_id, "tq", token_id)


def pending(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "pend")


def pending_version(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "pver")


def reservations(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "resv")
