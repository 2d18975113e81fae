"""The jobs that keep channels healthy: test-all rules, probing with backoff, root's summary mail,
balances, log retention; in-process against fake upstreams, then through a real worker process."""
from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from api import keys
from api.channels import channel_test, monitor, probes, queries, status_mail, verdicts
from api.services import locks, redis_keys
from api.upstream.catalogue import ChannelType
from api.upstream.errors import RelayError
from models import Ability, Channel, Log, User
from models.enums import ChannelStatus, LogType
from tests.fakes.upstreams import INVALID_KEY_ERROR, REQUESTS, TOGGLE_OK, upstream_app
from tests.helpers import ApiClient, both_databases, eventually
from workers.actors.logs import purge_consume_logs


@pytest.fixture
async def upstream(aiohttp_server):
    return await aiohttp_server(upstream_app())


class Sent(list):
    async def __call__(self, actor: str, *args: object) -> None:
        self.append((actor, *args))


@pytest.fixture
def sent() -> Sent:
    return Sent()


@pytest.fixture
def deps(client, sent: Sent) -> monitor.Deps:
    app = client.app
    return monitor.Deps(app[keys.STORE], app[keys.OPTIONS], app[keys.EVENTS], app[keys.HTTP], sent)


async def set_options(deps: monitor.Deps, **values: str) -> None:
    for key, value in values.items():
        await deps.options.update(key, value)


async def channel(upstream, kind: str = "healthy", **fields) -> Channel:
    defaults = {"name": kind, "type": int(ChannelType.OPENAI), "key": f"sk-{kind}", "models": "gpt-4o-mini",
                "base_url": str(upstream.make_url(f"/{kind}"))}
    return await Channel.create(**{**defaults, **fields})


async def status_of(channel_id: int) -> int:
    return (await Channel.get(id=channel_id)).status


# -- the rules -------------------------------------------------------------------------------------

class Options:
    def __init__(self, **values: str) -> None:
        self.values = {"ChannelDisableThreshold": "5", "AutomaticDisableChannelEnabled": "true",
                       "AutomaticEnableChannelEnabled": "true", **values}

    def get_float(self, key: str) -> float:
        return float(self.values[key])

    def get_bool(self, key: str) -> bool:
        return self.values[key] == "true"


INVALID = RelayError(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")
OVERLOADED = RelayError(503, "overloaded", "upstream_error", None)


@pytest.mark.parametrize(("status", "auto_ban", "result", "options", "expected"), [
    (1, 1, channel_test.TestResult(False, "bad key", 0.2, error=INVALID), {}, "disable"),
    (1, 1, channel_test.TestResult(False, "overloaded", 0.2, error=OVERLOADED), {}, None),  # not a disabling error
    (1, 1, channel_test.TestResult(True, "", 6.0), {}, "disable"),  # over ChannelDisableThreshold
    (1, 1, channel_test.TestResult(True, "", 6.0), {"ChannelDisableThreshold": "0"}, None),  # 0 = never by time
    (1, 1, channel_test.TestResult(False, "timeout", 5, timed_out=True, timeout=5), {}, "disable"),
    (1, 1, channel_test.TestResult(False, "timeout", 2, timed_out=True, timeout=2), {}, None),  # gave up early
    (1, 0, channel_test.TestResult(False, "bad key", 0.2, error=INVALID), {}, None),  # auto_ban off
    (1, 1, channel_test.TestResult(False, "bad key", 0.2, error=INVALID), {"AutomaticDisableChannelEnabled": "false"},
     None),
    (2, 1, channel_test.TestResult(False, "bad key", 0.2, error=INVALID), {}, None),  # manual disable: never touched
    (2, 1, channel_test.TestResult(True, "", 0.2), {}, None),
    (3, 1, channel_test.TestResult(True, "", 0.2), {}, "enable"),
    (3, 0, channel_test.TestResult(True, "", 0.2), {}, "enable"),
    (3, 1, channel_test.TestResult(True, "", 0.2), {"AutomaticEnableChannelEnabled": "false"}, None),
    (3, 1, channel_test.TestResult(True, "", 6.0), {}, None),  # still too slow
    (3, 1, channel_test.TestResult(False, "bad key", 0.2, error=INVALID), {}, None),
])
def test_verdict(status, auto_ban, result, options, expected) -> None:
    ch = Channel(id=1, type=1, status=status, auto_ban=auto_ban, name="c", key="k")
    decision = verdicts.verdict(ch, result, Options(**options))
    assert (decision[0] if decision else None) == expected


# -- test all, in process --------------------------------------------------------------------------

@both_databases
async def test_test_all_disables_and_enables_per_the_rules(deps, sent, upstream) -> None:
    await set_options(deps, AutomaticDisableChannelEnabled="true", AutomaticEnableChannelEnabled="true",
                      ChannelDisableThreshold="1", ChannelTestTimeoutSeconds="1")
    await User.filter(username="root").update(email="root@example.com")
    healthy = await channel(upstream)
    invalid = await channel(upstream, "invalid")
    invalid_no_ban = await channel(upstream, "invalid", name="no-ban", auto_ban=0)
    hang = await channel(upstream, "hang")
    manual = await channel(upstream, "invalid", name="manual", status=ChannelStatus.MANUALLY_DISABLED)
    manual_ok = await channel(upstream, name="manual-ok", status=ChannelStatus.MANUALLY_DISABLED)
    back = await channel(upstream, name="back", status=ChannelStatus.AUTO_DISABLED)
    mj = await channel(upstream, name="mj", type=int(ChannelType.MIDJOURNEY))
    for c in (invalid, back):
        await Ability.create(group="default", model="gpt-4o-mini", channel_id=c.id,
                             enabled=c.status == ChannelStatus.ENABLED)
    events: list[int] = []
    deps.events.subscribe("channel", lambda m: events.append(m["id"]))
    lock = monitor.lock_key(deps.store, "channel_test_all")
    token = await locks.acquire(deps.store, lock, 60)

    summary = await monitor.test_all(deps, token)

    assert summary.tested == 7 and summary.succeeded == 3 and summary.skipped == 0
    assert sorted(summary.disabled) == [invalid.id, hang.id] and summary.enabled == [back.id]
    assert await status_of(healthy.id) == ChannelStatus.ENABLED
    assert await status_of(invalid_no_ban.id) == ChannelStatus.ENABLED
    assert await status_of(manual.id) == ChannelStatus.MANUALLY_DISABLED
    assert await status_of(manual_ok.id) == ChannelStatus.MANUALLY_DISABLED
    assert await status_of(back.id) == ChannelStatus.ENABLED
    stored = await Channel.get(id=invalid.id)
    assert stored.status == ChannelStatus.AUTO_DISABLED and stored.test_time > 0
    info = orjson.loads(stored.other_info)
    assert info["status_reason"] == INVALID_KEY_ERROR["error"]["message"]
    assert abs(info["status_time"] - time.time()) < 60
    assert orjson.loads((await Channel.get(id=hang.id)).other_info)["status_reason"] == "No answer within 1 s"
    assert (await Channel.get(id=mj.id)).test_time == 0  # task channels are not testable
    # Abilities follow the status; the relay hears about every change.
    assert not (await Ability.get(channel_id=invalid.id)).enabled
    assert (await Ability.get(channel_id=back.id)).enabled
    await eventually(lambda: asyncio.sleep(0, len(events) >= 3))
    assert sorted(events) == sorted([invalid.id, hang.id, back.id])
    # Disabled channels get a probe schedule; the re-enabled one none.
    assert (await probes.probe_state(deps.store, invalid.id))[0] == 0
    assert (await probes.probe_state(deps.store, invalid.id))[1] > time.time()
    assert await probes.probe_state(deps.store, back.id) == (0, 0.0)
    # One summary mail to root.
    assert len(sent) == 1
    actor, to, subject, html = sent[0]
    assert actor == "mail.send" and to == "root@example.com"
    assert subject == "AI Gateway: 2 channel(s) disabled, 1 enabled"
    assert f"#{invalid.id} invalid" in html and "Incorrect API key provided" in html and f"#{back.id} back" in html
    # The run kept its lock alive; the caller releases it.
    assert await deps.store.redis.get(lock) == token


async def test_a_key_quoted_by_the_upstream_is_never_stored_or_shown(deps, root: ApiClient, upstream) -> None:
    await set_options(deps, AutomaticDisableChannelEnabled="true")
    leaky = await channel(upstream, "leaky", key="sk-very-secret-key-123")
    body = await root.get(f"/api/channel/test/{leaky.id}")
    assert body["message"] == "Incorrect API key provided: ***."
    body = await root.get(f"/api/channel/update_balance/{leaky.id}/")
    assert body["message"] == "Balance query failed: status 401: Incorrect API key provided: ***."
    await monitor.test_all(deps, "token")
    stored = await Channel.get(id=leaky.id)
    assert stored.status == ChannelStatus.AUTO_DISABLED
    assert "sk-very-secret" not in stored.other_info and "***" in stored.other_info


async def test_test_all_skips_a_channel_under_test_elsewhere(deps, upstream) -> None:
    busy = await channel(upstream)
    free = await channel(upstream, name="free")
    await deps.store.redis.set(monitor.lock_key(deps.store, "channel_test", busy.id), "x", ex=30)
    summary = await monitor.test_all(deps, "token")
    assert summary.tested == 1 and summary.skipped == 1
    assert (await Channel.get(id=busy.id)).test_time == 0 and (await Channel.get(id=free.id)).test_time > 0


# -- probing ---------------------------------------------------------------------------------------

async def test_probe_backoff_and_recovery(deps, sent, upstream) -> None:
    await set_options(deps, AutomaticEnableChannelEnabled="true")
    upstream.app[TOGGLE_OK]["ok"] = False
    down = await channel(upstream, "toggle", status=ChannelStatus.AUTO_DISABLED)
    await channel(upstream, name="fine")
    now = time.time()
    assert await probes.due_probes(deps, now) == [down.id]  # never probed: at once
    assert await probes.due_probes(deps, now) == []  # pushed back while its probe is queued
    assert await monitor.test_one(deps, down.id) is None  # still failing
    attempts, next_at = await probes.probe_state(deps.store, down.id)
    assert attempts == 1 and next_at == pytest.approx(time.time() + 120, abs=5)
    assert await probes.due_probes(deps, now + 60) == []
    assert await probes.due_probes(deps, next_at + 1) == [down.id]
    assert await monitor.test_one(deps, down.id) is None
    attempts, next_at = await probes.probe_state(deps.store, down.id)
    assert attempts == 2 and next_at == pytest.approx(time.time() + 240, abs=5)
    assert probes.probe_delay(10) == probes.PROBE_MAX_DELAY
    # The provider comes back: the next probe enables it and forgets its backoff.
    upstream.app[TOGGLE_OK]["ok"] = True
    assert await monitor.test_one(deps, down.id) == "enable"
    assert await status_of(down.id) == ChannelStatus.ENABLED
    assert await probes.probe_state(deps.store, down.id) == (0, 0.0)
    assert await probes.due_probes(deps, now + 10_000) == []
    # Without AutomaticEnableChannelEnabled nothing is probed.
    await Channel.filter(id=down.id).update(status=ChannelStatus.AUTO_DISABLED)
    await set_options(deps, AutomaticEnableChannelEnabled="false")
    assert await probes.due_probes(deps, now + 10_000) == []


async def test_test_one_never_touches_a_manual_disable(deps, upstream) -> None:
    await set_options(deps, AutomaticEnableChannelEnabled="true", AutomaticDisableChannelEnabled="true")
    manual = await channel(upstream, status=ChannelStatus.MANUALLY_DISABLED)
    assert await monitor.test_one(deps, manual.id) is None
    assert await status_of(manual.id) == ChannelStatus.MANUALLY_DISABLED
    assert await monitor.test_one(deps, 999999) is None


# -- root's mail -----------------------------------------------------------------------------------

async def test_summary_mail_is_throttled(deps, sent) -> None:
    await User.filter(username="root").update(email="root@example.com")
    a = Channel(id=1, name="<a>")
    await status_mail.note_status_change(deps.store, verdicts.DISABLE, a, "bad <key>")
    assert await status_mail.flush_notifications(deps)
    assert "&lt;a&gt;" in sent[0][3] and "bad &lt;key&gt;" in sent[0][3]
    await status_mail.note_status_change(deps.store, verdicts.ENABLE, Channel(id=2, name="b"), "")
    await status_mail.note_status_change(deps.store, verdicts.DISABLE, Channel(id=3, name="c"), "slow")
    assert not await status_mail.flush_notifications(deps)  # within the throttle window: kept
    assert len(sent) == 1
    await deps.store.redis.delete(redis_keys.channel_notice_throttle(deps.store))  # the window passed
    assert await status_mail.flush_notifications(deps)
    assert sent[1][2] == "AI Gateway: 1 channel(s) disabled, 1 enabled"
    assert not await status_mail.flush_notifications(deps)  # nothing pending


async def test_no_mail_without_roots_address(deps, sent) -> None:
    await status_mail.note_status_change(deps.store, verdicts.DISABLE, Channel(id=1, name="a"), "x")
    assert not await status_mail.flush_notifications(deps)
    assert sent == []


# -- periodic runs, balances, log retention --------------------------------------------------------

async def test_claim_run_follows_the_interval(deps) -> None:
    assert await monitor.claim_run(deps.store, "job", 600, now=1000)
    assert not await monitor.claim_run(deps.store, "job", 600, now=1599)
    assert await monitor.claim_run(deps.store, "job", 600, now=1600)
    assert await monitor.claim_run(deps.store, "job", 60, now=1660)  # a shorter interval applies at once


@both_databases
async def test_update_all_balances(deps, upstream) -> None:
    openai = await channel(upstream)
    silicon = await channel(upstream, type=int(ChannelType.SILICONFLOW))
    failing = await channel(upstream, "invalid")
    disabled = await channel(upstream, status=ChannelStatus.MANUALLY_DISABLED)
    claude = await channel(upstream, type=int(ChannelType.ANTHROPIC))
    assert await queries.update_all_balances(deps, "token") == 2
    assert (await Channel.get(id=openai.id)).balance == 74.875
    assert (await Channel.get(id=silicon.id)).balance == 12.34
    for untouched in (failing, disabled, claude):
        assert (await Channel.get(id=untouched.id)).balance_updated_time == 0


@both_databases
async def test_log_purge_deletes_old_consume_logs_in_batches(client) -> None:
    now = int(time.time())
    old, recent = now - 10 * 86400, now - 3600
    for i in range(7):
        await Log.create(user_id=1, type=LogType.CONSUME, created_at=old + i, content=f"old {i}")
    await Log.create(user_id=1, type=LogType.TOPUP, created_at=old, content="old top-up")
    await Log.create(user_id=1, type=LogType.CONSUME, created_at=recent, content="recent")
    await Log.create(user_id=1, type=LogType.CONSUME, created_at=old + 99, content="old, after a recent id")
    assert await purge_consume_logs(now - 7 * 86400, batch=3) == 8
    assert sorted(await Log.all().values_list("content", flat=True)) == ["old top-up", "recent"]
    assert await purge_consume_logs(now - 7 * 86400, batch=3) == 0


# -- through a real worker -------------------------------------------------------------------------

@pytest.fixture
async def auto_rules(client) -> None:
    """Both automatic rules on before the worker starts (it loads the options at boot)."""
    for key in ("AutomaticDisableChannelEnabled", "AutomaticEnableChannelEnabled"):
        await client.app[keys.OPTIONS].update(key, "true")


async def tick_until(actor: str, check) -> None:
    """Send a scheduler tick until `check` passes: an option changed just before may reach the
    worker after the first tick, which then (rightly) does nothing."""
    from workers.broker import send

    async def ticked() -> bool:
        if await check():
            return True
        await asyncio.to_thread(send, actor, time.time(), "scheduler")
        return False

    await eventually(ticked, timeout=30, interval=0.5)


async def _status_is(channel_id: int, status: ChannelStatus) -> bool:
    return await status_of(channel_id) == status


async def _gone(store, key: str) -> bool:
    return not await store.redis.exists(key)


async def test_test_all_from_the_api_runs_in_the_workers(auto_rules, root: ApiClient, client, upstream,
                                                         worker) -> None:
    healthy = await channel(upstream)
    invalid = await channel(upstream, "invalid")
    body = await root.get("/api/channel/test")
    assert body["success"] and body["message"].startswith("Testing all channels has started")
    assert (await root.get("/api/channel/test"))["message"] == "A test of all channels is already running"

    async def done() -> bool:
        return (await status_of(invalid.id) == ChannelStatus.AUTO_DISABLED
                and (await Channel.get(id=healthy.id)).test_time > 0)

    await eventually(done, timeout=30)
    assert await status_of(healthy.id) == ChannelStatus.ENABLED
    store = client.app[keys.STORE]
    await eventually(lambda: _gone(store, monitor.lock_key(store, "channel_test_all")), timeout=30)
    assert (await root.get("/api/channel/test"))["success"]  # the lock was released: a new run may start
    # Balances of all enabled channels, in the workers too.
    assert (await root.get("/api/channel/update_balance"))["success"]

    async def balanced() -> bool:
        return (await Channel.get(id=healthy.id)).balance == 74.875

    await eventually(balanced, timeout=30)


async def test_scheduled_jobs_in_the_workers(auto_rules, root: ApiClient, client, upstream, worker) -> None:
    store = client.app[keys.STORE]
    healthy = await channel(upstream)
    down = await channel(upstream, "toggle", status=ChannelStatus.AUTO_DISABLED)
    await Log.create(user_id=1, type=LogType.CONSUME, created_at=int(time.time()) - 3 * 86400, content="old")
    # Probing brings the automatically disabled channel back without a full run; the periodic test
    # (interval 0 by default) does nothing.
    await tick_until("channel.probe_disabled", lambda: _status_is(down.id, ChannelStatus.ENABLED))
    assert any(r[0] == "toggle" for r in upstream.app[REQUESTS])
    assert (await Channel.get(id=healthy.id)).test_time == 0
    # With an interval, the periodic test runs (and records its run for the next ticks).
    await root.put("/api/option/", {"key": "ChannelTestIntervalMinutes", "value": "30"})

    async def tested() -> bool:
        return (await Channel.get(id=healthy.id)).test_time > 0

    await tick_until("channel.test_all", tested)
    assert await store.redis.get(redis_keys.run_claim(store, "channel.test_all"))
    # Log retention.
    await root.put("/api/option/", {"key": "LogRetentionDays", "value": "1"})

    async def purged() -> bool:
        return not await Log.filter(content="old").exists()

    await tick_until("logs.purge", purged)
