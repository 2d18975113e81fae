# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The provider catalogue is the one place that says what a channel type is: every type is one
row, nothing else in the backend or the console names a type, the console reads the rows from
`GET /api/channel/types`, and an OpenAI-compatible provider is added by adding a row."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from api import keys
from api.channels import catalogue_view
from api.services.billing import pricing
from api.services.model_name import ModelName
from api.upstream import catalogue
from api.upstream.base import Adaptor, RelayMeta, RelayMode
from api.upstream.provider import Provider
from api.upstream.providers.openai import OpenAIAdaptor
from api.upstream.providers.unserved import UnservedAdaptor
from api.upstream.registry import bind, build_adaptor, get_adaptor, is_relayable
from models import Channel, Log
from models.enums import LogType
from tests.helpers import ApiClient
from tests.relay.fakes import (  # noqa: F401
    FakeUpstream,
    announce_channel,
    drain,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

ROOT = Path(__file__).resolve().parents[2]
BACKEND = ("api", "workers", "scheduler", "models", "importer")
# The catalogue itself; the importer translates one-api's and new-api's numbering into ours (other
# systems' numbers, by definition a table of type numbers).
ALLOWED = {"api/upstream/catalogue.py", "importer/channels.py"}


def test_every_type_is_one_row() -> None:
    numbers = [row.type for row in catalogue.PROVIDERS]
    names = [row.name for row in catalogue.PROVIDERS]
    assert len(numbers) == len(set(numbers)) and len(names) == len(set(names))
    assert list(catalogue.CATALOGUE) == sorted(numbers)
    for row in catalogue.PROVIDERS:
        assert catalogue.ChannelType[row.name] == row.type
        bound = get_adaptor(row.type)
        assert issubclass(bound, row.adaptor) and bound.provider is row and bound.default_base_url == row.base_url
    with pytest.raises(ValueError, match="described twice"):
        catalogue._index([*catalogue.PROVIDERS, catalogue.PROVIDERS[0]])


def _findings(source: str, path: str) -> Iterator[str]:
    """Where `source` names a channel type: the ChannelType enum, or a type compared with a number."""
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Name) and node.id == "ChannelType" or \
                isinstance(node, ast.Attribute) and node.attr == "ChannelType" or \
                isinstance(node, ast.alias) and node.name == "ChannelType":
            yield f"{path}:{node.lineno} names ChannelType"
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            typed = any(_is_a_type(side) for side in sides)
            numbers = [n for side in sides for n in ast.walk(side)
                       if isinstance(n, ast.Constant) and type(n.value) is int]
            if typed and numbers:
                yield f"{path}:{node.lineno} compares a type with {numbers[0].value}"


def _is_a_type(node: ast.AST) -> bool:
    """`channel_type`, or `<channel>.type` (`channel.type`, `ch.type`, `self.channel.type`)."""
    if isinstance(node, ast.Name):
        return node.id == "channel_type"
    if isinstance(node, ast.Attribute):
        if node.attr == "channel_type":
            return True
        return node.attr == "type" and _name(node.value) in ("channel", "ch", "row", "origin", "upstream")
    return False


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def test_no_backend_code_names_a_type_outside_the_catalogue() -> None:
    found = []
    for package in BACKEND:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            if relative in ALLOWED or "/migrations/" in relative:
                continue
            found += _findings(path.read_text(), relative)
    assert found == []


def test_the_check_sees_a_type_named_elsewhere() -> None:
    sample = ("from models.enums import ChannelType\nif channel.type == 14:\n    pass\n"
              "if channel_type in (3, 4):\n    pass\nif log.type == 2:\n    pass\n")
    found = list(_findings(sample, "sample.py"))
    assert any("names ChannelType" in f for f in found)
    assert any("compares a type with 14" in f for f in found)
    assert any("compares a type with 3" in f for f in found)
    assert not any("with 2" in f for f in found)  # a log's type is not a channel type


CONSOLE_TABLES = re.compile(r"\b(CHANNEL_TYPES|KEY_FORMATS|OTHER_FIELD|DEFAULT_OTHER|BASE_URL_REQUIRED|"
                            r"VERTEX_REGION_TEMPLATE)\b")


def test_the_console_has_no_type_table_and_reads_the_catalogue() -> None:
    src = ROOT / "frontend" / "src"
    sources = [p for p in src.rglob("*.js*") if "__tests__" not in p.parts and ".test." not in p.name]
    tables = [str(p.relative_to(ROOT)) for p in sources if CONSOLE_TABLES.search(p.read_text())]
    assert tables == []
    assert any("/api/channel/types" in p.read_text() for p in sources)
    for lang in ("en", "zh"):
        texts = (src / "i18n" / f"{lang}.json").read_text()
        assert not re.search(r'"(14|41|46)": "', texts), f"{lang}.json still labels channel types"


async def test_the_console_gets_every_row(root: ApiClient, login_as) -> None:
    body = await root.get("/api/channel/types")
    assert body["success"] is True
    types = {entry["type"]: entry for entry in body["data"]}
    assert list(types) == list(catalogue.CATALOGUE)
    vertex, palm, azure = types[41], types[11], types[3]
    assert vertex["key_whole"] is True and vertex["other"]["template"] and vertex["base_url_required"] is False
    assert palm["retired"]["en"].startswith("Google decommissioned PaLM 2") and palm["retired"]["zh"]
    assert azure["base_url_required"] is True and azure["label"] == {"en": "Azure OpenAI", "zh": "Azure OpenAI"}
    assert types[14]["presets"] and all(p["base_url"].startswith("https://") for p in types[14]["presets"])
    # the contract's fields and no others (texts and flags: no check, no adaptor, nothing of a channel)
    assert {key for entry in body["data"] for key in entry} == {
        "type", "name", "label", "base_url", "base_url_required", "base_url_label", "base_url_help", "key_hint",
        "key_whole", "other", "notice", "models", "fetch_models", "balance", "task", "organization", "retired",
        "native", "presets"}
    user, _ = await login_as("carol")
    refused = await user.get("/api/channel/types")
    assert refused["success"] is False


async def test_a_retired_type_is_refused_and_never_picked(root: ApiClient, client, upstreams) -> None:
    fake = await upstreams()
    created = await root.post("/api/channel/", {"type": 16, "name": "glm3", "key": "a.b", "models": "gpt-4o",
                                                "group": "default", "base_url": fake.url})
    assert created["success"] is False and "retired" in created["message"]
    assert "Zhipu GLM v4 channel (type 26)" in created["message"]
    # One stored before the provider switched its API off (an import, an older version): it loads,
    # is listed, but the relay never picks it and its test says why.
    old = await Channel.create(type=16, name="glm3", key="a.b", models="gpt-4o", base_url=fake.url)
    index = relay_of(client).index
    await index.load()
    assert index.get(old.id) is None
    assert not is_relayable(16) and not catalogue.usable(16)
    user = await rich_user("dora")
    token = await make_key(user)
    async with openai.AsyncOpenAI(base_url=str(client.make_url("/v1")), api_key=f"sk-{token.key}",
                                  max_retries=0) as sdk:
        with pytest.raises(openai.APIStatusError) as refused:
            await sdk.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert refused.value.status_code == 503 and fake.seen == []
    tested = await root.get(f"/api/channel/test/{old.id}")
    assert tested["success"] is False and "2023" in tested["message"]
    listed = await root.get("/api/channel/?p=0")
    assert [c["id"] for c in listed["data"]["items"]] == [old.id]


@pytest.fixture
def example_row(upstreams) -> Iterator[Provider]:
    """A new OpenAI-compatible provider: one row, nothing else."""
    row = Provider(900, "EXAMPLE", ("Example AI", "示例 AI"), OpenAIAdaptor, "http://placeholder.invalid",
                   models=("example-1",), modes=frozenset({RelayMode.CHAT}), stream_options=True)
    yield row
    catalogue.CATALOGUE.pop(900, None)  # type: ignore[attr-defined]
    catalogue_view.types.cache_clear()


async def test_a_compatible_provider_is_one_row(root: ApiClient, client, upstreams, example_row) -> None:
    fake: FakeUpstream = await upstreams()
    row = Provider(**{**example_row.__dict__, "base_url": fake.url})
    catalogue.CATALOGUE[900] = row  # type: ignore[index]
    catalogue_view.types.cache_clear()
    offered = {e["type"]: e for e in (await root.get("/api/channel/types"))["data"]}
    assert offered[900]["label"]["en"] == "Example AI" and offered[900]["models"] == ["example-1"]
    created = await root.post("/api/channel/", {"type": 900, "name": "ex", "key": "ex-key", "models": "example-1",
                                                "group": "default"})
    assert created["success"] is True, created
    channel = await Channel.get(name="ex")
    assert channel.base_url == ""  # the row's address is the default
    await announce_channel(client, channel.id)
    adaptor = build_adaptor(RelayMeta(channel.id, 900, "ex-key", name=ModelName("example-1")))
    assert adaptor.request_url(RelayMode.CHAT) == f"{fake.url}/v1/chat/completions"
    assert not adaptor.supports(RelayMode.EMBEDDINGS)

    user = await rich_user("erin")
    token = await make_key(user)
    options = client.server.app[keys.OPTIONS]  # the price of the new model, as an operator sets it
    await options.update("ModelRatio", '{"example-1": 2}')
    async with openai.AsyncOpenAI(base_url=str(client.make_url("/v1")), api_key=f"sk-{token.key}",
                                  max_retries=0) as sdk:
        stream = await sdk.chat.completions.create(model="example-1", stream=True,
                                                   messages=[{"role": "user", "content": "hi"}])
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == fake.reply
    seen = fake.seen[-1]
    assert seen.path == "/v1/chat/completions" and seen.headers["Authorization"] == "Bearer ex-key"
    assert seen.body["stream_options"] == {"include_usage": True}  # the row says the provider takes it
    await drain(client)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    prompt, completion = fake.usage or (0, 0)
    assert (log.prompt_tokens, log.completion_tokens) == (prompt, completion)
    price = pricing.resolve_configured(options, "example-1")
    assert price.model_ratio == 2 and log.quota == pricing.settle_quota(price, prompt, completion) > 0


def test_a_row_replaced_under_its_number_is_bound_anew() -> None:
    first = Provider(902, "FIRST", ("First", "First"), OpenAIAdaptor, "https://first.example")
    second = Provider(902, "SECOND", ("Second", "Second"), OpenAIAdaptor, "https://second.example")
    assert bind(OpenAIAdaptor, first).default_base_url == "https://first.example"
    assert bind(OpenAIAdaptor, second).default_base_url == "https://second.example"
    assert bind(OpenAIAdaptor, second) is bind(OpenAIAdaptor, second)  # made once


def test_retired_and_task_types_are_not_relayable() -> None:
    video_only = [t for t, row in catalogue.CATALOGUE.items() if row.video and row.adaptor is UnservedAdaptor]
    assert 52 in video_only  # Vidu: /v1/videos only
    assert [t for t in catalogue.CATALOGUE if not is_relayable(t)] == sorted([2, 5, 11, 15, 16, 36, *video_only])
    assert all(issubclass(get_adaptor(t), Adaptor) for t in catalogue.CATALOGUE)
    assert get_adaptor(7).provider is catalogue.UNKNOWN  # a reseller type we do not know: OpenAI's format
