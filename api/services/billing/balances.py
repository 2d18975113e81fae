"""Live balances in Redis, and how every non-relay change keeps them equal to the database.

Keys (one hash tag per user, so the relay's pre-charge script touching the user's and a key's
balance stays on one Redis Cluster slot):
  {prefix}{u<user_id>}:quota            user quota (string integer)
  {prefix}{u<user_id>}:tq:<token_id>    remaining quota of a limited API key

The relay loads a missing balance from the database minus the settlements still pending, and
charges/refunds it atomically. Everything else that changes a balance in the database (top-up,
redemption, Stripe credit, admin edit, aff transfer) commits the database change first and then
applies the same delta here, only if the key is present (absent = loaded fresh on next use).
"""
from __future__ import annotations

from api.services import redis_keys
from api.services.store import Store

# KEYS[2] is the user's change counter ({u}:pver): a reload of this balance from the database that
# started before the change (and so may have read the old value) sees the counter move and retries.
_ADJUST_IF_PRESENT = """
redis.call('INCR', KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return nil
"""


change_counter_key = redis_keys.pending_version
user_quota_key = redis_keys.quota
token_quota_key = redis_keys.token_quota


async def adjust_user(store: Store, user_id: int, delta: int) -> None:
    """Apply a committed database change of the user's quota to the live balance."""
    if delta:
        await store.redis.eval(_ADJUST_IF_PRESENT, 2, user_quota_key(store, user_id),
                               change_counter_key(store, user_id), int(delta))


async def adjust_token(store: Store, user_id: int, token_id: int, delta: int) -> None:
    if delta:
        await store.redis.eval(_ADJUST_IF_PRESENT, 2, token_quota_key(store, user_id, token_id),
                               change_counter_key(store, user_id), int(delta))


async def forget_token(store: Store, user_id: int, token_id: int) -> None:
    """A key's limit changed wholesale (edited, switched to unlimited, deleted): reload on next use."""
    async with store.redis.pipeline(transaction=True) as pipe:
        pipe.incr(change_counter_key(store, user_id))
        pipe.delete(token_quota_key(store, user_id, token_id))
        await pipe.execute()
