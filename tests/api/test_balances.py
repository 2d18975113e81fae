"""Balance changes made outside the relay keep the live Redis balance equal to the database."""
from __future__ import annotations

from api.services.billing.balances import adjust_token, adjust_user, forget_token, token_quota_key, user_quota_key
from api.services.billing.quota import QuotaService
from api.services.store import Store
from models.settings import Settings
from tests.helpers import make_user


async def test_adjust_applies_only_to_a_loaded_balance(settings: Settings) -> None:
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    try:
        await adjust_user(store, 7, 500)  # not loaded: nothing to correct, it will load fresh
        assert await store.redis.get(user_quota_key(store, 7)) is None
        await store.redis.set(user_quota_key(store, 7), 1000)
        await adjust_user(store, 7, 250)
        assert await store.redis.get(user_quota_key(store, 7)) == "1250"
        await store.redis.set(token_quota_key(store, 7, 3), 40)
        await adjust_token(store, 7, 3, -15)
        assert await store.redis.get(token_quota_key(store, 7, 3)) == "25"
        await forget_token(store, 7, 3)
        assert await store.redis.get(token_quota_key(store, 7, 3)) is None
    finally:
        await store.close()


async def test_a_top_up_during_a_reload_is_not_lost(client, settings: Settings) -> None:
    """A reload reads the database, a top-up commits and adjusts (balance absent: no-op), then the
    reload writes what it read: that write must be refused so the reload retries with the new value."""
    user = await make_user("reloaded", quota=1000)
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    quota = QuotaService(store)
    try:
        pver_before = await store.redis.get(quota._u(user.id, "pver")) or "0"
        # the top-up: database first, then the live balance
        await type(user).filter(id=user.id).update(quota=1500)
        await adjust_user(store, user.id, 500)
        stale_write = await quota._load(keys=[user_quota_key(store, user.id), quota._u(user.id, "gen"),
                                              quota._u(user.id, "pver")], args=[1000, pver_before, "g1"])
        assert stale_write == -1
        assert await store.redis.get(user_quota_key(store, user.id)) is None
        await quota.load_balances(user.id, None)  # the retry reads the committed top-up
        assert await store.redis.get(user_quota_key(store, user.id)) == "1500"
    finally:
        await store.close()
