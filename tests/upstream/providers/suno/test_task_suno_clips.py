"""Suno continuations: a user continues only a clip of one of their own tasks; someone else's clip
is refused in Suno's shape, nothing charged, nothing sent upstream."""
from __future__ import annotations

from api import keys
from api.relay.tasks.poll import SUNO, poll
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Task
from tests.relay.fakes import add_channel, live_balance, make_key, rich_user
from tests.upstream.providers.fake_tasks import SUNO_KEY

MUSIC = pricing.per_call_quota(0.1)


async def song(gateway, suno_api, key, clip: str) -> str:
    """A finished music task of the key's user, with one clip; its task id."""
    resp = await gateway.post("/suno/submit/music", json={"prompt": "a song"},
                              headers={"Authorization": f"Bearer sk-{key.key}"})
    task_id = (await resp.json())["data"]
    suno_api.tasks[task_id].update(status="complete", data=[{"id": clip, "audio_url": "https://cdn1.suno.ai/x.mp3"}])
    await poll(SUNO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])
    assert (await Task.get(task_id=task_id)).status == "SUCCESS"
    return task_id


async def test_only_a_clip_of_ones_own_task_can_be_continued(gateway, suno_api) -> None:
    await add_channel(gateway, None, models="suno_music", type=int(ChannelType.SUNO), base_url=suno_api.url,
                      key=SUNO_KEY)
    alice, bob = await rich_user("alice", quota=1_000_000), await rich_user("bob", quota=1_000_000)
    alice_key, bob_key = await make_key(alice), await make_key(bob)
    await song(gateway, suno_api, alice_key, "clip-alice")
    bobs = await song(gateway, suno_api, bob_key, "clip-bob")
    sent = len(suno_api.seen)
    # Bob names his own task but Alice's clip.
    resp = await gateway.post("/suno/submit/music", headers={"Authorization": f"Bearer sk-{bob_key.key}"},
                              json={"prompt": "more", "task_id": bobs, "continue_clip_id": "clip-alice",
                                    "continue_at": 30})
    body = await resp.json()
    assert resp.status == 404 and body["code"] == "clip_not_found" and body["data"] is None, body
    assert "continue_clip_id" in body["message"]
    assert len(suno_api.seen) == sent
    assert await live_balance(gateway, bob.id) == 1_000_000 - MUSIC
    # His own clip is continued, on the channel of its task.
    resp = await gateway.post("/suno/submit/music", headers={"Authorization": f"Bearer sk-{bob_key.key}"},
                              json={"prompt": "more", "task_id": bobs, "continue_clip_id": "clip-bob",
                                    "continue_at": 30})
    body = await resp.json()
    assert body["code"] == "success", body
    assert suno_api.seen[-1][1]["continue_clip_id"] == "clip-bob"
    assert await live_balance(gateway, bob.id) == 1_000_000 - 2 * MUSIC
