"""A fake Gemini API: `POST /{version}/models/{model}:generateContent`, `:streamGenerateContent`
(`alt=sse`: `data: {…}\\r\\n\\r\\n` frames, no end marker), `:batchEmbedContents`; the key in
`x-goog-api-key`; Google's error bodies (400 INVALID_ARGUMENT with the API's own messages). Also
serves Vertex AI's paths (`/v1/projects/{p}/locations/{r}/publishers/google/models/{model}:…`, Bearer).

Strict where Gemini is (each rule cites where the refusal is documented or reported):
- the request, its parts, generationConfig, thinkingConfig, tools and Schema objects take only the
  fields the API defines (protobuf JSON: 'Invalid JSON payload received. Unknown name "x" at …':
  ai.google.dev/api/generate-content; Portkey-AI/gateway#1473 for Schema keys such as
  exclusiveMinimum); type names in upper or lower case (the REST reference spells OBJECT, the
  examples and real clients `object`: Portkey-AI/gateway#1473 is refused only for exclusiveMinimum);
- thinking: thinkingLevel on a model before Gemini 3, both fields at once, a level the model does not
  take, a budget outside the model's range (ai.google.dev/gemini-api/docs/thinking);
- maxOutputTokens above the model's limit (ai.google.dev/gemini-api/docs/models);
- Gemini 3 thought signatures: the first functionCall part of each step of the current turn must carry
  one the API issued, or the documented placeholder (ai.google.dev/gemini-api/docs/thought-signatures);
- function responses answer every call of the step before them; a built-in tool (googleSearch) beside
  function declarations: refused before Gemini 3, and on Gemini 3 without
  `toolConfig.includeServerSideToolInvocations` ("supported for Gemini 3 models only":
  ai.google.dev/gemini-api/docs/tool-combination; the messages as reported below); that switch on
  Vertex AI's paths ("not supported in Vertex AI": googleapis java-genai `ToolConfig`); in that mode,
  a model turn this fake answered with the search's own parts must come back with them, whole and
  in its content ("Turn 2: Manually build history to circulate both tool and function context":
  ai.google.dev/gemini-api/docs/tool-combination; the parts' signatures returned "exactly as
  received": ai.google.dev/gemini-api/docs/thought-signatures). Google does not document that
  refusal's message: this one says it is the fake's.
Answers: the `script` hook (tests/upstream/providers/agent_script.py) or the fixed reply/thought/call, with a
thoughtSignature on every functionCall part (and on the last part when a Gemini 3 model thinks),
groundingMetadata when googleSearch is declared, the search's own `toolCall` and `toolResponse` parts
first in the tool-combination mode (their shape: google-genai's `types.ToolCall`/`ToolResponse`,
tool type GOOGLE_SEARCH_WEB), and usageMetadata.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import TestServer

from api.upstream.reasoning import GEMINI_SKIP_SIGNATURE
from tests.upstream.providers.agent_script import AgentView, Script, Turn

REPLY = "Hello from Gemini, streamed in parts."
REQUEST_FIELDS = {"contents", "tools", "toolConfig", "safetySettings", "systemInstruction", "generationConfig",
                  "cachedContent", "labels"}
PART_DATA = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
             "codeExecutionResult", "toolCall", "toolResponse"}
PART_FIELDS = PART_DATA | {"thought", "thoughtSignature", "videoMetadata", "mediaResolution"}
GENERATION_FIELDS = {"stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema", "responseModalities",
                     "candidateCount", "maxOutputTokens", "temperature", "topP", "topK", "seed", "presencePenalty",
                     "frequencyPenalty", "responseLogprobs", "logprobs", "enableEnhancedCivicAnswers", "speechConfig",
                     "thinkingConfig", "imageConfig", "mediaResolution"}
THINKING_FIELDS = {"includeThoughts", "thinkingBudget", "thinkingLevel"}
TOOL_FIELDS = {"functionDeclarations", "googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext",
               "fileSearch", "googleMaps", "computerUse"}
DECLARATION_FIELDS = {"name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema",
                      "behavior"}
TOOL_CONFIG_FIELDS = {"functionCallingConfig", "retrievalConfig", "includeServerSideToolInvocations"}
SCHEMA_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems",
                 "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
                 "example", "anyOf", "propertyOrdering", "default", "minimum", "maximum"}
TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
# (prefix, lowest, highest, 0 allowed): the thinking guide's budget table for 2.5.
BUDGETS = (("gemini-2.5-flash-lite", 512, 24576, True), ("gemini-2.5-flash", 1, 24576, True),
           ("gemini-2.5-pro", 128, 32768, False))
THOUGHT_DOCS = "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
COMBINATION_DOCS = "Please refer to https://ai.google.dev/gemini-api/docs/tool-combination for more details."


# Values that are data, not messages: their keys are the caller's (property names, arguments).
OPAQUE = {"args", "response", "example", "default", "enum", "labels", "parametersJsonSchema", "responseJsonSchema"}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def canonical(value: Any, key: str = "") -> Any:
    """The body with field names as lowerCamelCase: protobuf JSON parsers take a field's original
    snake_case name too (protobuf.dev/programming-guides/json: "accept both"), as the google-genai SDK
    sends some (`include_thoughts`)."""
    if key in OPAQUE:
        return value
    if isinstance(value, list):
        return [canonical(v, key) for v in value]
    if not isinstance(value, dict):
        return value
    if key == "properties":
        return {name: canonical(v) for name, v in value.items()}
    return {camel(k): canonical(v, camel(k)) for k, v in value.items()}


def is_gemini_3(model: str) -> bool:
    return model.startswith(("gemini-3", "gemini-flash-latest", "gemini-pro-latest"))


def levels(model: str) -> set[str]:
    if model.startswith("gemini-3-pro"):
        return {"LOW", "HIGH"}
    if model.startswith(("gemini-3.1-pro", "gemini-3.7-flash", "gemini-3.8-flash")) and "lite" not in model:
        return {"LOW", "MEDIUM", "HIGH"}
    return {"MINIMAL", "LOW", "MEDIUM", "HIGH"}


def output_cap(model: str) -> int:
    return 8192 if model.startswith(("gemini-1.", "gemini-2.0")) else 65536


def unknown(name: str, where: str) -> str:
    at = f" at '{where}'" if where else ""
    return f'Invalid JSON payload received. Unknown name "{name}"{at}: Cannot find field.'


def schema_problem(schema: Any, path: str) -> str | None:
    """Gemini's Schema object, as the API parses it (protobuf JSON, then its own checks)."""
    if not isinstance(schema, dict):
        return f"Invalid value at '{path}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Schema)"
    for key in schema:
        if key not in SCHEMA_FIELDS:
            return unknown(key, path)
    kind = schema.get("type")
    if isinstance(kind, list):  # aoci-spec/aoci-code#61
        return (f"Invalid JSON payload received. Unknown name \"type\" at '{path}': Proto field is not repeating, "
                "cannot start list.")
    if kind is not None and (not isinstance(kind, str) or kind.upper() not in TYPES or kind not in (
            kind.upper(), kind.lower())):
        return f"Invalid value at '{path}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), {kind}"
    for index, value in enumerate(schema.get("enum") or ()):
        if not isinstance(value, str):
            return f"Invalid value at '{path}.enum[{index}]' (TYPE_STRING), {value}"
    if isinstance(kind, str) and kind.upper() == "ARRAY" and "items" not in schema:  # t8y2/dbx#6233
        return f"* GenerateContentRequest.{path}.items: missing field.\n"
    for index, value in enumerate((schema.get("properties") or {}).values()):
        problem = schema_problem(value, f"{path}.properties[{index}].value")
        if problem:
            return problem
    if "items" in schema:
        problem = schema_problem(schema["items"], f"{path}.items")
        if problem:
            return problem
    for index, branch in enumerate(schema.get("anyOf") or ()):
        problem = schema_problem(branch, f"{path}.any_of[{index}]")
        if problem:
            return problem
    return None


@dataclass
class FakeGemini:
    key: str = "AIza-upstream"
    reply: str = REPLY
    thought: str = ""
    call: dict[str, Any] | None = None  # {"name", "args"}: answer with a function call
    script: Script | None = None  # when set, decides each answer (text, tool call, thinking)
    usage: dict[str, int] | None = field(default_factory=lambda: {
        "promptTokenCount": 17, "candidatesTokenCount": 8, "totalTokenCount": 25})
    fail_status: int | None = None
    fail_body: dict[str, Any] | None = None
    cut_after: int | None = None  # stream: close after this many text chunks, before the last one
    bearers: set[str] | None = None  # Vertex: the access tokens accepted instead of the key
    issued: set[str] = field(default_factory=set)  # the thought signatures this fake handed out
    signed_calls: set[bytes] = field(default_factory=set)  # the function calls it signed (canonical JSON)
    # an answer's own signature → the server-side parts it came with (tool combination)
    circulated: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    def app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/{version}/models/{target}", self.handle)
        app.router.add_post("/v1/projects/{project}/locations/{region}/publishers/google/models/{target}",
                            self.handle)
        return app

    @staticmethod
    def error(status: int, code: str, message: str, reason: str = "") -> web.Response:
        details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}] if reason else []
        return web.json_response({"error": {"code": status, "message": message, "status": code,
                                            "details": details}}, status=status)

    # -- validation ------------------------------------------------------------------------------

    def problem(self, body: dict[str, Any], model: str) -> str | None:
        for key in body:
            if key not in REQUEST_FIELDS:
                return unknown(key, "")
        for check in (self.contents_problem, self.config_problem, self.tools_problem, self.signature_problem,
                      self.circulation_problem):
            problem = check(body, model)
            if problem:
                return problem
        return None

    def contents_problem(self, body: dict[str, Any], model: str) -> str | None:
        contents = body.get("contents") or []
        for i, content in enumerate([*contents, *([body["systemInstruction"]] if "systemInstruction" in body
                                                  else [])]):
            role = content.get("role", "user" if i == len(contents) else None)
            if role not in ("user", "model"):
                return f"Please use a valid role: user, model. (got {role})"
            for j, part in enumerate(content.get("parts") or ()):
                extra = next((k for k in part if k not in PART_FIELDS), None)
                if extra:
                    return unknown(extra, f"contents[{i}].parts[{j}]")
                kinds = sorted(PART_DATA & set(part))
                if not kinds:
                    return (f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required oneof field 'data' "
                            "must have one initialized field\n")
                if len(kinds) > 1:
                    return f"Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '{kinds[1]}'"
                response = part.get("functionResponse")
                if response is not None and not isinstance(response.get("response"), dict):
                    return f"Invalid value at 'contents[{i}].parts[{j}].function_response.response' (Struct)"
        for i, content in enumerate(contents[:-1]):
            calls = sum("functionCall" in p for p in content["parts"])
            answers = sum("functionResponse" in p for p in contents[i + 1]["parts"])
            if calls and contents[i + 1]["role"] == "user" and answers and answers != calls:
                return ("Please ensure that the number of function response parts is equal to the number of "
                        "function call parts of the function call turn.")
        return None

    def config_problem(self, body: dict[str, Any], model: str) -> str | None:
        config = body.get("generationConfig") or {}
        for key in config:
            if key not in GENERATION_FIELDS:
                return unknown(key, "generation_config")
        limit = config.get("maxOutputTokens")
        if isinstance(limit, int) and not 1 <= limit <= output_cap(model):
            return (f"Unable to submit request because it has a maxOutputTokens value of {limit} but the supported "
                    f"range is from 1 (inclusive) to {output_cap(model) + 1} (exclusive). Update the value and try "
                    "again.")
        if "responseSchema" in config:
            problem = schema_problem(config["responseSchema"], "generation_config.response_schema")
            if problem:
                return problem
        thinking = config.get("thinkingConfig") or {}
        for key in thinking:
            if key not in THINKING_FIELDS:
                return unknown(key, "generation_config.thinking_config")
        level, budget = thinking.get("thinkingLevel"), thinking.get("thinkingBudget")
        if level is not None and budget is not None:  # sterlp/eclipse-peon-ai#115
            return "You can only set only one of thinking budget and thinking level."
        if level is not None and not is_gemini_3(model):  # RooCodeInc/Roo-Code#10700
            return "Thinking level is not supported for this model."
        if level is not None and str(level).upper() not in levels(model):  # jenslys/opencode-gemini-auth#14
            return (f"Unable to submit request because thinking_level {str(level).upper()} is not supported by this "
                    "model.")
        for prefix, low, high, off in BUDGETS:
            if budget is not None and model.startswith(prefix):
                if not (budget == -1 or (budget == 0 and off) or low <= budget <= high):
                    return f"The thinking budget ({budget}) is invalid."  # RooCodeInc/Roo-Code#4399
                break
        return None

    def tools_problem(self, body: dict[str, Any], model: str) -> str | None:
        kinds: set[str] = set()
        for i, tool in enumerate(body.get("tools") or ()):
            for key in tool:
                if key not in TOOL_FIELDS:
                    return unknown(key, f"tools[{i}]")
                kinds.add(key)
            for j, declaration in enumerate(tool.get("functionDeclarations") or ()):
                extra = next((k for k in declaration if k not in DECLARATION_FIELDS), None)
                if extra:
                    return unknown(extra, f"tools[{i}].function_declarations[{j}]")
                if "parameters" in declaration:
                    problem = schema_problem(declaration["parameters"],
                                             f"tools[{i}].function_declarations[{j}].parameters")
                    if problem:
                        return problem
        tool_config = body.get("toolConfig") or {}
        for key in tool_config:
            if key not in TOOL_CONFIG_FIELDS:
                return unknown(key, "tool_config")
        if "functionDeclarations" in kinds and len(kinds) > 1:  # built-in tools beside functions
            if not is_gemini_3(model):  # withceleste/celeste-python#197
                return "Tool use with function calling is unsupported by the model."
            if not tool_config.get("includeServerSideToolInvocations"):  # cloudwego/eino-ext#761
                return ("Please enable tool_config.include_server_side_tool_invocations to use Built-in tools "
                        "with Function calling.")
        return None

    def signature_problem(self, body: dict[str, Any], model: str) -> str | None:
        """Gemini 3: signatures it did not issue are refused anywhere; the current turn's steps must
        carry one on their first function call ("Function call is missing a thought_signature…",
        position = the content's 1-based index: niki914/zafiro#100, google-gemini/gemini-cli#26682)."""
        if not is_gemini_3(model):
            return None
        contents = body.get("contents") or []
        for content in contents:
            for part in content.get("parts") or ():
                signature = part.get("thoughtSignature")
                if signature is not None and signature not in self.issued | {GEMINI_SKIP_SIGNATURE}:
                    return "Corrupted thought signature."
                # Stricter than Google (which takes it): the placeholder is for a call the model did not
                # make, and degrades its reasoning (thought-signatures, FAQ "skip_thought_signature_validator");
                # a gateway that relayed the call itself had the real signature to send back.
                if signature == GEMINI_SKIP_SIGNATURE and "functionCall" in part and \
                        self.call_key(part["functionCall"]) in self.signed_calls:
                    return ("fake: the placeholder thought signature on a function call this API signed "
                            f"(`{part['functionCall'].get('name')}`): send back the signature it issued. "
                            f"{THOUGHT_DOCS}")
        start = next((i for i in range(len(contents) - 1, -1, -1) if contents[i].get("role") == "user" and any(
            "functionResponse" not in p for p in contents[i].get("parts") or ())), 0)
        for index in range(start, len(contents)):
            content = contents[index]
            first = next((p for p in content.get("parts") or () if "functionCall" in p), None)
            if content.get("role") == "model" and first is not None and not first.get("thoughtSignature"):
                return ("Function call is missing a thought_signature in functionCall parts. This is required for "
                        "tools to work correctly, and missing thought_signature may lead to degraded model "
                        f"performance. Additional data, function call `default_api:{first['functionCall']['name']}` "
                        f", position {index + 1}. {THOUGHT_DOCS}")
        return None

    def circulation_problem(self, body: dict[str, Any], model: str) -> str | None:
        """Tool combination: each model turn signed by an answer that had server-side parts carries
        them (the signature tells which answer a turn is)."""
        if not (body.get("toolConfig") or {}).get("includeServerSideToolInvocations"):
            return None
        for index, content in enumerate(body.get("contents") or ()):
            parts = content.get("parts") or []
            for signature in {p.get("thoughtSignature") for p in parts} & set(self.circulated):
                missing = [p for p in self.circulated[signature] if p not in parts]
                if content.get("role") == "model" and missing:
                    kinds = ", ".join(sorted({k for p in missing for k in p if k in ("toolCall", "toolResponse")}))
                    return (f"fake: the model turn at position {index + 1} lacks the server-side {kinds} parts this "
                            "API returned with it: in the tool-combination mode the previous turn's toolCall and "
                            "toolResponse parts go back as they came, with their thought signatures. "
                            + COMBINATION_DOCS)
        return None

    # -- answers ---------------------------------------------------------------------------------

    def sign(self, call: dict[str, Any] | None = None) -> str:
        signature = base64.b64encode(f"fake-gemini-thought-{len(self.issued)}".encode()).decode()
        self.issued.add(signature)
        if call is not None:
            self.signed_calls.add(self.call_key(call))
        return signature

    @staticmethod
    def call_key(call: dict[str, Any]) -> bytes:
        return orjson.dumps({"name": call.get("name"), "args": call.get("args") or {}}, option=orjson.OPT_SORT_KEYS)

    @staticmethod
    def view(body: dict[str, Any]) -> AgentView:
        view = AgentView()
        for tool in body.get("tools") or ():
            for declaration in tool.get("functionDeclarations") or ():
                view.tools[declaration["name"]] = (declaration.get("parameters")
                                                   or declaration.get("parametersJsonSchema") or {})
        for content in body.get("contents") or ():
            if content["role"] == "model":
                view.turns += 1
                continue
            for part in content["parts"]:
                if "functionResponse" in part:
                    response = part["functionResponse"]["response"]
                    output = response.get("output") if set(response) == {"output"} else response
                    view.tool_results.append(output if isinstance(output, str) else orjson.dumps(output).decode())
                elif "text" in part:
                    view.user_texts.append(part["text"])
        return view

    def turn(self, body: dict[str, Any]) -> Turn:
        if self.script is not None:
            return self.script(self.view(body))
        tool = {"id": "", "name": self.call["name"], "input": self.call.get("args") or {}} if self.call else None
        return Turn(text=self.reply, tool=tool, thinking=self.thought)

    def parts(self, turn: Turn, model: str) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if turn.thinking:
            parts.append({"text": turn.thinking, "thought": True})
        if turn.text:
            parts.append({"text": turn.text})
        if turn.tool:
            call = {"functionCall": {"name": turn.tool["name"], "args": turn.tool.get("input") or {}}}
            parts.append({**call, "thoughtSignature": self.sign(call["functionCall"])} if is_gemini_3(model) else call)
        elif is_gemini_3(model) and turn.thinking and parts:
            parts[-1]["thoughtSignature"] = self.sign()
        return parts

    def server_side(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The search's run as the tool-combination mode shows it (a signature of its own on the call)."""
        if not (body.get("toolConfig") or {}).get("includeServerSideToolInvocations") or \
                not any("googleSearch" in t for t in body.get("tools") or ()):
            return []
        signature = base64.b64encode(f"fake-gemini-search-{len(self.issued)}".encode()).decode()
        self.issued.add(signature)
        search = {"id": "srv-1", "toolType": "GOOGLE_SEARCH_WEB"}
        return [{"toolCall": {**search, "args": {"queries": ["hello"]}}, "thoughtSignature": signature},
                {"toolResponse": {**search, "response": {"results": [{"url": "https://example.org/hello"}]}}}]

    def answer(self, parts: list[dict[str, Any]], finish: str | None, usage: bool,
               grounding: dict[str, Any] | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        if grounding:
            candidate["groundingMetadata"] = grounding
        data: dict[str, Any] = {"candidates": [candidate], "modelVersion": "fake", "responseId": "resp-1"}
        if usage and self.usage is not None:
            data["usageMetadata"] = self.usage
        return data

    @staticmethod
    def grounding(body: dict[str, Any], text: str) -> dict[str, Any] | None:
        if not any("googleSearch" in t for t in body.get("tools") or ()):
            return None
        first = text.split(" ")[0]
        return {"webSearchQueries": ["hello"], "groundingChunks": [{"web": {"uri": "https://example.org/hello",
                                                                           "title": "example.org"}}],
                "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": len(first.encode()), "text": first},
                                       "groundingChunkIndices": [0]}],
                "searchEntryPoint": {"renderedContent": "<div></div>"}}

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model, _, action = request.match_info["target"].partition(":")
        self.seen.append({"path": request.path, "query": dict(request.query), "model": model, "action": action,
                          "headers": dict(request.headers), "body": body})
        if self.bearers is not None:
            if request.headers.get("Authorization") not in {f"Bearer {t}" for t in self.bearers}:
                return self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        elif request.headers.get("x-goog-api-key") != self.key or "key" in request.query:
            return self.error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                              "API_KEY_INVALID")
        if self.fail_status:
            return web.json_response(self.fail_body or {}, status=self.fail_status)
        if action == "batchEmbedContents":
            return web.json_response({"embeddings": [{"values": [0.1 * i, 0.2]} for i, _ in
                                                     enumerate(body["requests"])]})
        problem = self.problem(canonical(body), model)
        if not problem and request.path.startswith("/v1/projects/") and \
                "includeServerSideToolInvocations" in (canonical(body).get("toolConfig") or {}):
            problem = unknown("include_server_side_tool_invocations", "tool_config")  # "not supported in Vertex AI"
        if problem:
            return self.error(400, "INVALID_ARGUMENT", problem)
        turn = self.turn(canonical(body))
        own = self.parts(turn, model)
        server = self.server_side(canonical(body))  # signed after the answer's own parts
        for part in own if server else ():
            if part.get("thoughtSignature"):
                self.circulated[part["thoughtSignature"]] = server
        parts = [*server, *own]
        grounding = self.grounding(canonical(body), turn.text)
        if action == "generateContent":
            return web.json_response(self.answer(parts, "STOP", True, grounding))
        if action != "streamGenerateContent" or request.query.get("alt") != "sse":
            return self.error(404, "NOT_FOUND", f"unknown action {action}")
        return await self.stream(request, parts, grounding)

    async def stream(self, request: web.Request, parts: list[dict[str, Any]],
                     grounding: dict[str, Any] | None) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        frames: list[dict[str, Any]] = []
        last: list[dict[str, Any]] = []
        for part in parts:
            if "text" in part and not part.get("thought"):
                words = part["text"].split(" ")
                frames += [self.answer([{"text": w + (" " if i < len(words) - 1 else "")}], None, False)
                           for i, w in enumerate(words)]
                if part.get("thoughtSignature"):  # Gemini 3 sends it on an empty last text part
                    last.append({"text": "", "thoughtSignature": part["thoughtSignature"]})
            else:
                frames.append(self.answer([part], None, False))
        if last or not frames:
            frames.append(self.answer(last, "STOP", True, grounding))  # the last chunk: finish reason and usage
        else:  # as Gemini usually does: the last content chunk carries the finish reason and the usage
            frames[-1] = self.answer(frames[-1]["candidates"][0]["content"]["parts"], "STOP", True, grounding)
        for n, frame in enumerate(frames):
            if self.cut_after is not None and n >= self.cut_after and request.transport is not None:
                request.transport.close()
                return resp
            await resp.write(b"data: " + orjson.dumps(frame) + b"\r\n\r\n")
        return resp
