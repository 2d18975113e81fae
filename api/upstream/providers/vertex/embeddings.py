"""Vertex AI text embeddings: OpenAI's `/v1/embeddings` ⇄ `…/publishers/google/models/{model}:predict`
(cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api).

- Request: `{"instances": [{"content": text, "task_type": …}], "parameters": {"autoTruncate": true,
  "outputDimensionality": n}}`; OpenAI's `dimensions` becomes `outputDimensionality`, and a
  `task_type` in the request (RETRIEVAL_QUERY, RETRIEVAL_DOCUMENT, …) is passed on.
- Answer: `predictions[i].embeddings.values`, with `statistics.token_count` per input (their sum is
  billed: the upstream's own count).
- A request holds at most 250 inputs, and Gemini embedding models take one input per request
  (…/embeddings/get-text-embeddings, "API limits"; mem0ai/mem0#6189): a longer OpenAI input list is
  cut into batches of what the model takes, the first sent as the attempt's request and the others
  after it (`VertexGeminiAdaptor.complete`), their predictions joined in order.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from api.upstream.base import TokenUsage
from api.upstream.errors import RelayError

BATCH_LIMIT = 250  # inputs in one `:predict` request (text-embedding-005, text-multilingual-embedding-002)
MAX_INPUTS = 2048  # inputs in one OpenAI request (OpenAI's own limit)
MAX_ONE_BY_ONE = 250  # inputs of one request to a model that takes one per upstream request


def batch_size(model: str) -> int:
    """How many inputs one `:predict` request to `model` may carry."""
    return 1 if model.startswith("gemini-embedding") else BATCH_LIMIT


def instances_of(req: Mapping[str, Any], model: str) -> list[dict[str, Any]]:
    """The request's inputs as `:predict` instances (400 for what the API cannot take)."""
    texts = req.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise RelayError.local_error(400, "input must be a string or a list of strings", "invalid_input")
    limit = MAX_ONE_BY_ONE if batch_size(model) == 1 else MAX_INPUTS
    if len(texts) > limit:
        raise RelayError.local_error(400, f"{model} on Vertex AI takes at most {limit} inputs in one request",
                                     "invalid_input")
    task = req.get("task_type")
    extra = {"task_type": task} if isinstance(task, str) and task else {}
    return [{"content": text, **extra} for text in texts]


def parameters_of(req: Mapping[str, Any]) -> dict[str, Any]:
    dims = req.get("dimensions")
    extra = {"outputDimensionality": dims} if isinstance(dims, int) and not isinstance(dims, bool) else {}
    return {"autoTruncate": True, **extra}


def batches(instances: Sequence[dict[str, Any]], model: str) -> list[list[dict[str, Any]]]:
    size = batch_size(model)
    return [list(instances[i:i + size]) for i in range(0, len(instances), size)]


def join(answers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The answers of a request's batches, in order, as one answer."""
    predictions = [p for answer in answers for p in answer.get("predictions") or ()]
    return {"predictions": predictions}


def openai_answer(body: Mapping[str, Any], model: str, prompt_tokens: int) -> tuple[dict[str, Any], TokenUsage]:
    """`predictions` → OpenAI's list; the tokens Vertex counted, else the local count."""
    data: list[dict[str, Any]] = []
    counted = 0
    for index, prediction in enumerate(body.get("predictions") or ()):
        embedding = (prediction or {}).get("embeddings") if isinstance(prediction, Mapping) else None
        embedding = embedding if isinstance(embedding, Mapping) else {}
        statistics = embedding.get("statistics")
        tokens = statistics.get("token_count") if isinstance(statistics, Mapping) else None
        counted += int(tokens) if isinstance(tokens, int | float) else 0
        data.append({"object": "embedding", "index": index, "embedding": list(embedding.get("values") or ())})
    prompt = counted or prompt_tokens
    return ({"object": "list", "data": data, "model": model,
             "usage": {"prompt_tokens": prompt, "total_tokens": prompt}}, TokenUsage(prompt, 0))
