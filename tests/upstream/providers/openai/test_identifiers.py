"""End-user identifiers on an OpenAI-format upstream (api/upstream/providers/openai.py): a converted
request's `user`, `safety_identifier` and `prompt_cache_key` past OpenAI's 64 characters become their
SHA-256 digest (stable: the same user, the same value), shorter ones and OpenAI clients' own untouched."""
from __future__ import annotations

import hashlib
from typing import Any

from api.services.configuration.capability_lookup import table_of
from api.services.model_name import ModelName
from api.upstream.base import RelayMeta
from api.upstream.catalogue import ChannelType
from api.upstream.registry import build_adaptor
from tests.upstream.providers.openai.fake_openai_strict import MODELS, Refused, check_identifiers

# Claude Code's metadata.user_id: a JSON object of the device, account and session (about 150 characters).
CLAUDE_CODE_USER = ('{"device_id":"' + "d" * 64 + '","account_uuid":"0c4a3e2f-5b8d-4f6a-9e1c-2d7b8a9f0e1d",'
                    '"session_id":"7f3e2a1b-9c8d-4e5f-a6b7-c8d9e0f1a2b3"}')


def sent(body: dict[str, Any], inbound: str = "anthropic") -> dict[str, Any]:
    meta = RelayMeta(channel_id=1, channel_type=int(ChannelType.OPENAI), key="k", name=ModelName("gpt-5", "gpt-5"),
                     inbound=inbound, capability=table_of("")("gpt-5"))
    return build_adaptor(meta).convert_request({"model": "gpt-5", "messages": [{"role": "user", "content": "Hi"}],
                                                **body})


def test_long_identifiers_become_their_digest() -> None:
    digest = hashlib.sha256(CLAUDE_CODE_USER.encode()).hexdigest()
    body = sent({"user": CLAUDE_CODE_USER, "safety_identifier": CLAUDE_CODE_USER, "prompt_cache_key": CLAUDE_CODE_USER})
    assert len(CLAUDE_CODE_USER) > 140 and len(digest) == 64
    assert (body["user"], body["safety_identifier"], body["prompt_cache_key"]) == (digest, digest, digest)
    assert sent({"user": CLAUDE_CODE_USER})["user"] == digest  # stable
    check_identifiers(body)  # the strict fake takes it


def test_short_ones_and_openai_clients_own_are_untouched() -> None:
    assert sent({"user": "user_abc"})["user"] == "user_abc"
    assert sent({"user": CLAUDE_CODE_USER}, inbound="")["user"] == CLAUDE_CODE_USER  # relayed as the client sent it


def test_the_fake_refuses_what_openai_refuses() -> None:
    assert "gpt-5" in MODELS
    try:
        check_identifiers({"user": CLAUDE_CODE_USER})
    except Refused as refused:
        assert refused.message == (f"Invalid 'user': string too long. Expected a string with maximum length 64, but "
                                   f"got a string with length {len(CLAUDE_CODE_USER)} instead.")
        assert (refused.param, refused.code) == ("user", "string_above_max_length")
    else:
        raise AssertionError("a 150-character user was taken")
