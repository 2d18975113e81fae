"""Whose fault an upstream error is. A status is about the channel only when it cannot be about the
request: a 404 or 403 whose text names something the request referred to (an item, a previous
response, a file, cached content, a model asked of an endpoint it is not for) is the client's. Such
an error never counts toward the channel's error rate, never disables it and is not retried on
another channel (every channel would answer the same). A 404 saying the model itself does not exist
stays the channel's: the channel lists a model its upstream does not serve.

The patterns are the providers' own messages, each cited where it is reported.
"""
from __future__ import annotations

import re

# What an upstream answers when the request named something that is not there or not the caller's.
# 401, 402, 407, 408, 429 and 5xx are never about what the request named.
REQUEST_STATUSES = frozenset({400, 403, 404, 409, 410, 422})

_NAMED_BY_THE_REQUEST = re.compile("|".join((
    # OpenAI, a model asked of an endpoint it is not for (404, param "model"): "This is a chat model and not
    # supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?" (sashabaranov/go-openai#126),
    # "This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use
    # v1/completions?" (Chanzhaoyu/chatgpt-web#1428).
    r"\bnot supported in the v1/[\w/.-]+ endpoint",
    # "This model is only supported in v1/responses and not in v1/chat/completions." (404, n8n-io/n8n#18352).
    r"\bonly supported in v1/[\w/.-]+ and not in v1/",
    # OpenAI Responses, an input item (item_reference, reasoning) it does not keep (404, param "input"): "Item with
    # id 'rs_…' not found. Items are not persisted when `store` is set to false." (can1357/oh-my-pi#41).
    r"\bItem with id '[^']*' not found",
    # previous_response_id unknown (code previous_response_not_found): "Previous response with id 'resp_…' not
    # found." (maximhq/bifrost#2441).
    r"\bPrevious response with id '[^']*' not found",
    # OpenAI objects named by id (404): "No such File object: file-…", "No such vector store: …", "No such upload".
    r"^No such (?!model)[A-Za-z]",
    # Assistants (404): "No thread found with id 'thread_…'.", "No assistant found with id …".
    r"^No \w+ found with id\b",
    # Gemini, a fileUri that is not this project's (403 PERMISSION_DENIED): "You do not have permission to access
    # the File abc123 or it may not exist." (googleapis/python-genai#1218,
    # google-gemini/deprecated-generative-ai-python#692).
    r"\bpermission to access the File\b",
    # Gemini, cached content that is not this project's (403 PERMISSION_DENIED / 404 NOT_FOUND):
    # "CachedContent not found (or permission denied)".
    r"\bCachedContent not found\b",
    # Gemini resource names a request carries (`files/…`, `cachedContents/…`) in NOT_FOUND / PERMISSION_DENIED.
    r"\b(?:files|cachedContents)/[\w-]+",
    # A file id of the request quoted back: OpenAI's `file-6F2ksmvXxt4VdoqmHRw6kL`, Anthropic's
    # `file_011CNha8iCJcU1wXNR6q4V8w` (their Files APIs).
    r"\bfile[-_](?=[A-Za-z]*\d)[A-Za-z0-9]{10,}",
)))
REQUEST_CODES = frozenset({"previous_response_not_found"})

# The model itself is missing: the channel's (checked first). OpenAI: "The model `gpt-x` does not exist or you
# do not have access to it." (code model_not_found); Anthropic: not_found_error "model: claude-…"
# (mattermost/mattermost-plugin-agents#257); Gemini: "models/gemini-x is not found for API version v1beta, or is
# not supported for generateContent."
_MODEL_MISSING = re.compile(r"^model:|\bmodels?\b[^.]*?\b(?:does not exist|is not found|not found)|\bno such model\b",
                            re.IGNORECASE)
# Anthropic's not_found_error names what the request referred to (a file, a batch, a skill) unless it is the
# model (above) or the route itself ("Not Found": a wrong base URL, the channel's: danielmiessler/Fabric#1140).
_BARE_NOT_FOUND = re.compile(r"^\s*not found\.?\s*$", re.IGNORECASE)


def names_the_request(status: int, err_type: str | None, code: str | int | None, message: str | None) -> bool:
    """Whether an upstream error is about something the request named, not about the channel."""
    if status not in REQUEST_STATUSES:
        return False
    text = message or ""
    if _MODEL_MISSING.search(text):
        return False
    if code in REQUEST_CODES or _NAMED_BY_THE_REQUEST.search(text):
        return True
    return err_type == "not_found_error" and bool(text) and not _BARE_NOT_FOUND.match(text)
