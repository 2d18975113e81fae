-- wrk script of the bench: POST a chat completion, verify each answer, print one JSON line at the end.
-- Env: BENCH_BODY (request JSON), BENCH_TOKEN (sent as Bearer, optional), BENCH_EXPECT (content
-- chunks expected per answer: the mock's chunk count for streams, 16 occurrences in a whole body too),
-- BENCH_DONE (what ends a stream: "data: [DONE]", or "event: message_stop" for Anthropic's format),
-- BENCH_HEADERS (further headers, one "Name: value" a line, optional).
local marker = "bench "
local expect = tonumber(os.getenv("BENCH_EXPECT") or "16")
local is_stream = os.getenv("BENCH_STREAM") == "1"
local done_marker = os.getenv("BENCH_DONE") or "data: [DONE]"
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("BENCH_TOKEN") or ""
if token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
for line in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(line, "^%s*([^:]+):%s*(.-)%s*$")
  if name then
    wrk.headers[name] = value
  end
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
  chunks = 0
end

function response(status, headers, body)
  if status ~= 200 then
    return -- counted by wrk as a non-2xx answer
  end
  local n, i = 0, 1
  while true do
    local s = string.find(body, marker, i, true)
    if not s then break end
    n = n + 1
    i = s + 1
  end
  chunks = chunks + n
  if n ~= expect or (is_stream and not string.find(body, done_marker, 1, true)) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local b, c = 0, 0
  for _, t in ipairs(threads) do
    b = b + t:get("bad")
    c = c + t:get("chunks")
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,' ..
    '"timeout":%d},"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},"bad":%d,"chunks":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean, b, c))
end
