"""Pure conversion tests of each provider on JSON/SSE fixtures."""

from pathlib import Path

import orjson
import pytest

from api.relay.streaming import convert_events
from api.services.model_name import ModelName
from api.upstream.base import RelayMeta, RelayMode, StreamState, TokenUsage, client_wants_usage
from api.upstream.catalogue import ChannelType
from api.upstream.errors import RelayError
from api.upstream.registry import build_adaptor
from api.upstream.sse import SSEEvent, SSEParser
from api.upstream.tokenizer import count_text

FIXTURES = Path(__file__).parent / "fixtures"


def load_json(name: str):
    return orjson.loads((FIXTURES / name).read_bytes())


def events(name: str) -> list[SSEEvent]:
    parser = SSEParser()
    return parser.feed((FIXTURES / name).read_bytes()) + parser.close()


def meta(channel_type: int = ChannelType.OPENAI, requested_model: str = "gpt-4o", upstream_model: str = "",
         **kw) -> RelayMeta:
    kw.setdefault("key", "sk-upstream")
    return RelayMeta(channel_id=7, channel_type=channel_type, name=ModelName(requested_model, upstream_model), **kw)


def run_stream(adaptor, evs, state: StreamState) -> list:
    """The pipeline's conversion and count of a stream: the frames it would write."""
    out: list = []
    convert_events(adaptor, evs, state, out)
    return out


# --- OpenAI -----------------------------------------------------------------------------------


def test_openai_url_and_headers() -> None:
    a = build_adaptor(meta(organization="org-1"))
    assert a.request_url() == "https://api.openai.com/v1/chat/completions"
    assert a.request_url(RelayMode.EMBEDDINGS) == "https://api.openai.com/v1/embeddings"
    assert a.request_url(RelayMode.TRANSCRIPTION) == "https://api.openai.com/v1/audio/transcriptions"
    assert a.request_headers() == {"Authorization": "Bearer sk-upstream", "OpenAI-Organization": "org-1"}
    assert build_adaptor(meta()).request_headers() == {"Authorization": "Bearer sk-upstream"}
    b = build_adaptor(meta(base_url="https://proxy.example/", mode=RelayMode.IMAGES))
    assert b.request_url() == "https://proxy.example/v1/images/generations"


def test_openai_convert_request_keeps_explicit_falsy_values_and_asks_for_usage() -> None:
    req = load_json("chat_request.json")
    original = orjson.loads(orjson.dumps(req))
    body = build_adaptor(meta(upstream_model="gpt-4o-2024-08-06")).convert_request(req)
    assert req == original  # the client's request is not mutated
    assert body["model"] == "gpt-4o-2024-08-06"
    assert body["temperature"] == 0 and body["top_p"] == 0.0 and body["presence_penalty"] == 0
    assert body["logprobs"] is False
    assert body["stream_options"] == {"include_usage": True}
    assert client_wants_usage(req) is False
    assert {k: v for k, v in body.items() if k not in ("model", "stream_options")} == {
        k: v for k, v in original.items() if k not in ("model", "stream_options")
    }


def test_openai_non_stream_drops_stream_options() -> None:
    body = build_adaptor(meta()).convert_request({"model": "gpt-4o", "stream": False, "stream_options": {}})
    assert "stream_options" not in body and body["stream"] is False and body["model"] == "gpt-4o"


def test_compatible_type_strips_stream_options() -> None:
    req = {"model": "moonshot-v1-8k", "stream": True, "stream_options": {"include_usage": True}}
    body = build_adaptor(meta(ChannelType.MOONSHOT)).convert_request(req)
    assert "stream_options" not in body and body["stream"] is True
    fallback = build_adaptor(meta(9999)).convert_request(req)  # a type outside the catalogue: OpenAI's format
    assert "stream_options" not in fallback


def test_openai_convert_response_usage_with_cached_and_reasoning() -> None:
    body = load_json("openai_chat_response.json")
    out, usage = build_adaptor(meta()).convert_response(body)
    assert out is body
    assert usage == TokenUsage(prompt_tokens=120, completion_tokens=300, cached_tokens=64, reasoning_tokens=256)
    assert usage.total_tokens == 420
    assert usage.to_openai() == body["usage"]


def test_usage_parsing_edge_cases() -> None:
    assert TokenUsage.from_openai(None) is None
    assert TokenUsage.from_openai({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}) is None
    assert TokenUsage.from_openai({"total_tokens": 5}) == TokenUsage(5, 0)
    deepseek = {"prompt_tokens": 10, "completion_tokens": 2, "prompt_cache_hit_tokens": 8}
    assert TokenUsage.from_openai(deepseek) == TokenUsage(10, 2, 8, 0)
    assert TokenUsage(3, 4).to_openai() == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


def test_openai_stream_hides_usage_chunk_when_not_asked() -> None:
    evs = events("openai_chat_stream.sse")
    state = StreamState(include_usage=False)
    out = run_stream(build_adaptor(meta(is_stream=True)), evs, state)
    assert out == [ev.data for ev in evs[:4]]  # forwarded verbatim, usage-only chunk hidden
    assert state.done and state.finish_reason == "stop" and state.events == 5
    assert state.usage == TokenUsage(19, 10, 3, 2)
    assert state.resolve_usage(prompt_tokens=99) == TokenUsage(19, 10, 3, 2)  # upstream numbers win
    assert state.counter.total() == count_text("Hello, wörld! 你好")


def test_openai_stream_forwards_usage_chunk_when_asked() -> None:
    evs = events("openai_chat_stream.sse")
    state = StreamState(include_usage=True)
    out = run_stream(build_adaptor(meta(is_stream=True)), evs, state)
    assert out == [ev.data for ev in evs[:5]]
    assert orjson.loads(out[-1])["usage"]["total_tokens"] == 29


def test_stream_cut_midway_counts_what_was_produced() -> None:
    evs = events("openai_chat_stream.sse")[:3]  # role, "Hello", ", wörld! 你好" then the connection drops
    state = StreamState()
    run_stream(build_adaptor(meta()), evs, state)
    assert not state.done and state.usage is None
    assert state.resolve_usage(prompt_tokens=19) == TokenUsage(19, count_text("Hello, wörld! 你好"))


def test_stream_tool_calls_without_usage_counted_locally() -> None:
    evs = events("openai_chat_stream_tools.sse")
    state = StreamState()
    out = run_stream(build_adaptor(meta()), evs, state)
    assert len(out) == 5 and state.done and state.finish_reason == "tool_calls"
    expected = count_text('get_weather{"city": "Paris"}get_time{}') + 2 * 7
    assert state.resolve_usage(prompt_tokens=50) == TokenUsage(50, expected)


def test_stream_malformed_event_raises_bad_response_body() -> None:
    state = StreamState()
    for data in (b"{not json", b"[1, 2]"):
        with pytest.raises(RelayError) as info:
            build_adaptor(meta()).convert_stream_event(SSEEvent(data), state)
        assert info.value.code == "bad_response_body" and not info.value.local


def test_stream_error_object_raises_upstream_error() -> None:
    data = b'{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}'
    with pytest.raises(RelayError) as info:
        build_adaptor(meta()).convert_stream_event(SSEEvent(data), StreamState())
    assert info.value.message == "overloaded" and info.value.code == "overloaded"


def test_completions_stream_text_is_counted() -> None:
    state = StreamState()
    ev = SSEEvent(b'{"choices":[{"index":0,"text":"Hello there","finish_reason":null}]}')
    assert run_stream(build_adaptor(meta(mode=RelayMode.COMPLETIONS)), [ev], state) == [ev.data]
    assert state.resolve_usage(3) == TokenUsage(3, 2)


def test_convert_error_openai_shape() -> None:
    err = build_adaptor(meta()).convert_error(401, (FIXTURES / "openai_error_401.json").read_bytes())
    assert err.status == 401 and err.type == "invalid_request_error" and err.code == "invalid_api_key"
    assert err.message.startswith("Incorrect API key provided") and err.param is None and not err.local


@pytest.mark.parametrize(
    ("body", "message", "type_", "code"),
    [
        (b"", "bad response status code 502", "upstream_error", "bad_response_status_code"),
        (b"<html>502 Bad Gateway</html>", "bad response status code 502", "upstream_error", "bad_response_status_code"),
        (b"upstream timed out", "bad response status code 502: upstream timed out", "upstream_error",
         "bad_response_status_code"),
        (b'{"error":"no capacity"}', "no capacity", "upstream_error", None),
        (b'{"message":"quota exceeded","code":1008}', "quota exceeded", "upstream_error", 1008),
        (b'{"detail":"Not Found"}', "Not Found", "upstream_error", None),
        (b'{"error":{"code":"x"}}', "bad response status code 502", "upstream_error", "x"),
        (b"[]", "bad response status code 502", "upstream_error", "bad_response_status_code"),
    ],
)  # fmt: skip
def test_convert_error_other_shapes(body, message, type_, code) -> None:
    err = build_adaptor(meta()).convert_error(502, body)
    assert (err.status, err.message, err.type, err.code) == (502, message, type_, code)


def test_openai_capabilities_and_pass_through_conversions() -> None:
    a = build_adaptor(meta(upstream_model="text-embedding-3-large"))
    for mode in RelayMode:
        assert a.supports(mode) is (mode is not RelayMode.RERANK)
    assert a.convert_embeddings_request({"model": "e", "input": "hi", "dimensions": 0}) == {
        "model": "text-embedding-3-large",
        "input": "hi",
        "dimensions": 0,
    }
    body, usage = a.convert_embeddings_response(load_json("openai_embeddings_response.json"))
    assert usage == TokenUsage(8, 0)
    assert a.convert_moderations_response({"results": []}) == ({"results": []}, None)
    assert a.convert_image_request({"model": "dall-e-3", "n": 1})["model"] == "text-embedding-3-large"
    assert a.convert_speech_request({"model": "tts-1", "input": "hi", "speed": 1.0})["speed"] == 1.0
    assert a.convert_transcription_fields({"model": "whisper-1", "language": "en"}) == {
        "model": "text-embedding-3-large",
        "language": "en",
    }
    assert build_adaptor(meta()).convert_transcription_fields({"model": "whisper-1"}) == {"model": "whisper-1"}


# --- Azure ------------------------------------------------------------------------------------


def test_azure_url_and_header() -> None:
    a = build_adaptor(meta(ChannelType.AZURE, base_url="https://res.openai.azure.com/", upstream_model="gpt-3.5-turbo"))
    assert a.request_url() == "https://res.openai.azure.com/openai/v1/chat/completions"  # the v1 API by default
    assert a.request_headers() == {"api-key": "sk-upstream"}
    b = build_adaptor(meta(ChannelType.AZURE, base_url="https://r.azure.com", other="2024-02-01",
                           requested_model="gpt-4.1"))
    assert b.request_url(RelayMode.EMBEDDINGS) == (
        "https://r.azure.com/openai/deployments/gpt-41/embeddings?api-version=2024-02-01"
    )
    assert b.request_url(RelayMode.IMAGES).split("?")[0].endswith("/images/generations")
    assert b.request_url(RelayMode.SPEECH).split("?")[0].endswith("/audio/speech")
    assert b.request_url(RelayMode.TRANSLATION).split("?")[0].endswith("/audio/translations")
    assert b.request_url(RelayMode.COMPLETIONS).split("?")[0].endswith("/completions")
    assert not b.supports(RelayMode.MODERATIONS) and not b.supports(RelayMode.RERANK)
    assert b.supports(RelayMode.CHAT) and b.supports(RelayMode.TRANSCRIPTION)


def test_azure_stream_options_where_the_api_version_takes_them() -> None:
    v1 = build_adaptor(meta(ChannelType.AZURE)).convert_request({"stream": True, "stream_options": {"x": 1}})
    assert v1["stream_options"] == {"x": 1, "include_usage": True}
    old = build_adaptor(meta(ChannelType.AZURE, other="2024-06-01")).convert_request(
        {"stream": True, "stream_options": {"x": 1}})
    assert "stream_options" not in old


# --- Ollama -----------------------------------------------------------------------------------


def test_ollama_chat_and_embeddings_urls() -> None:
    a = build_adaptor(meta(ChannelType.OLLAMA, key="", requested_model="llama3"))
    assert a.request_url() == "http://localhost:11434/v1/chat/completions"
    assert a.request_url(RelayMode.EMBEDDINGS) == "http://localhost:11434/api/embed"
    assert a.request_headers() == {}
    assert a.supports(RelayMode.EMBEDDINGS) and not a.supports(RelayMode.IMAGES)
    assert not a.supports(RelayMode.SPEECH)


def test_ollama_embeddings_conversion_both_ways() -> None:
    a = build_adaptor(meta(ChannelType.OLLAMA, requested_model="nomic", upstream_model="nomic-embed-text",
                           prompt_tokens=4))
    assert a.convert_embeddings_request({"model": "nomic", "input": "hello", "dimensions": 2}) == {
        "model": "nomic-embed-text", "input": "hello", "dimensions": 2}
    assert a.convert_embeddings_request({"model": "nomic", "input": ["a", "b"]})["input"] == ["a", "b"]
    upstream = {"model": "nomic-embed-text", "embeddings": [[0.5, 0.25], [1.0, -2.0]], "prompt_eval_count": 6}
    body, usage = a.convert_embeddings_response(upstream)
    assert body == {
        "object": "list",
        "data": [{"object": "embedding", "embedding": [0.5, 0.25], "index": 0},
                 {"object": "embedding", "embedding": [1.0, -2.0], "index": 1}],
        "model": "nomic",
        "usage": {"prompt_tokens": 6, "total_tokens": 6},
    }
    assert usage == TokenUsage(6, 0)
    # no count reported: the local count
    assert a.convert_embeddings_response({"embeddings": [[0.5]]})[1] == TokenUsage(4, 0)


@pytest.mark.parametrize("value", [[1, 2], None, 5, [], ["a", None]])
def test_ollama_embeddings_refuses_inputs_it_cannot_embed(value) -> None:
    with pytest.raises(RelayError) as info:
        build_adaptor(meta(ChannelType.OLLAMA)).convert_embeddings_request({"input": value})
    assert info.value.status == 400 and info.value.local


# --- custom and OpenAI-compatible -------------------------------------------------------------


def test_custom_full_url_with_model_placeholder() -> None:
    a = build_adaptor(meta(ChannelType.CUSTOM, base_url="https://gw.example/{model}/chat", upstream_model="m-1"))
    assert a.request_url() == "https://gw.example/m-1/chat"
    assert a.request_url(RelayMode.EMBEDDINGS) == "https://gw.example/m-1/chat"
    assert build_adaptor(meta(ChannelType.CUSTOM, base_url="https://x/v1/chat")).request_url() == "https://x/v1/chat"




def test_siliconflow_rerank() -> None:
    a = build_adaptor(meta(ChannelType.SILICONFLOW, upstream_model="BAAI/bge-reranker-v2-m3"))
    assert a.supports(RelayMode.RERANK)
    assert a.request_url(RelayMode.RERANK) == "https://api.siliconflow.cn/v1/rerank"
    req = {"model": "rerank", "query": "capital of France", "documents": ["Bananas", "Paris"], "top_n": 0}
    assert a.convert_rerank_request(req) == {**req, "model": "BAAI/bge-reranker-v2-m3"}
    body, usage = a.convert_rerank_response(load_json("siliconflow_rerank_response.json"))
    assert usage == TokenUsage(21, 0) and len(body["results"]) == 2
    _, jina_usage = a.convert_rerank_response({"results": [], "usage": {"prompt_tokens": 5, "total_tokens": 5}})
    assert jina_usage == TokenUsage(5, 0)
    assert a.convert_rerank_response({"results": []})[1] is None
