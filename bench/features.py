"""py-spy's stacks of a gateway process, attributed to the parts of a request (pure functions).

Each sample goes to the innermost frame of the gateway's own code that names a part (FEATURES, first
pattern that matches the frame wins); a sample with no such frame goes to where it ran outside the
relay (aiohttp's server, the Redis client, the event loop). So the shares are exclusive and add up to
the whole process: a share times the process's CPU per request is what that part costs a request.
Samples that end in a socket write or read are counted apart (`I/O syscalls`): on a loaded machine
py-spy also sees there the time a runnable thread waits for a CPU.
"""
from __future__ import annotations

import re
from collections import Counter

OWN = ("api/", "workers/", "models/")

# (part, pattern over "function (file)" of one of the gateway's own frames). Order matters: the first
# part whose pattern matches a frame takes it; the innermost frame with a part takes the sample.
FEATURES: tuple[tuple[str, str], ...] = (
    ("key lookup", r"^(key_caller|caller_of|parse_key|KeyAuth\.\w+|realtime_protocol_key) |relay/auth\.py"),
    ("masking", r"upstream/masking\.py|^Job\.mask"),
    ("metrics", r"upstream/metrics\.py|^Metrics\.|^UpstreamStats\.|^_label "),
    ("failure log", r"relay/failure_log\.py|services/error_logs\.py"),
    ("settlement enqueue (billing.apply)", r"settlement_sender\.py|services/jobs\.py|workers/broker\.py"),
    ("in-flight sync", r"^Load\.(sync|run) |^parse_counts "),
    ("least-busy choice (in-flight, TTFB average)", r"relay/load\.py"),
    ("affinity: session finding", r"^(find_session|session_of|prefix_digest) |relay/affinity\.py.*session"),
    ("affinity: the pin", r"^(keep_pin|write_pin|Pin\.\w+|Pins\.\w+) "),
    ("multi-key state", r"channels/keys\.py|^ChannelInfo\.with_key "),
    ("capability fit", r"capability_lookup\.py|capabilit"),
    ("channel choice (index)", r"^(first_channel|pick) |channels/index\.py"),
    ("prompt count", r"upstream/tokenizer\.py|^count_"),
    ("admission Lua (pre-charge)", r"^QuotaService\.pre_charge "),
    ("reservation, facts, worst case", r"^(new_facts|worst_case|limits_of|progress|encode_reservation|"
                                       r"new_settlement_id) |^ReservationKeeper\.|relay/billing\.py.*pre"),
    ("settlement (Lua, record)", r"relay/settling\.py|^QuotaService\.settle |^encode_settlement |records\.py|"
                                 r"^final "),
    ("checks (body, model, group, words, price)", r"relay/validate\.py|^(check_model_allowed|check_sensitive|"
                                                  r"usable_group|price_of|check_served|requested_model) |"
                                                  r"billing/pricing\.py"),
    ("request body read", r"^(read_input|read_body) \(api/(relay/handler|bodies)"),
    ("adaptor, request conversion", r"^(new_adaptor|upstream_body|upstream_form) |upstream/(registry|providers|"
                                    r"base|payloads|endpoints)|relay/inbound/"),
    ("upstream call", r"upstream/(call|client)\.py"),
    ("answer conversion", r"relay/answers\.py|^answer \(api/relay/handler|relay/streaming\.py|upstream/sse\.py|"
                          r"upstream/decoders\.py"),
    ("billing.apply (worker)", r"services/billing/(settlement|apply)|workers/actors/billing"),
    ("relay pipeline (the rest)", r"api/relay/"),
    ("middlewares", r"api/middlewares\.py|api/web/|api/bodies\.py"),
)
_COMPILED = tuple((name, re.compile(pattern)) for name, pattern in FEATURES)
IO_LEAVES = ("StreamWriter._writelines", "StreamWriter.writelines", "_HiredisParser.read_from_socket",
             "socket.sendall", "socket.recv_into")
LOOP_LEAVES = ("run_app", "run_forever", "run_until_complete")  # the loop itself runs, no Python frame above
ELSEWHERE = (("aiohttp server (parse, dispatch, write)", "aiohttp/web_"), ("aiohttp client", "aiohttp/"),
             ("Redis client", "redis/"), ("database (Tortoise, asyncpg)", "tortoise/"), ("database (Tortoise, asyncpg)",
                                                                                       "asyncpg/"),
             ("dramatiq", "dramatiq/"))


def frame_of(raw: str) -> tuple[str, str]:
    """("function", "file relative to site-packages or the repo") of a py-spy frame "function (file:line)"."""
    name, _, where = raw.rpartition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    return name, path.split("site-packages/")[-1]


def part_of(frames: list[tuple[str, str]]) -> str:
    for name, path in reversed(frames):
        if not path.startswith(OWN):
            continue
        text = f"{name} ({path})"
        for part, pattern in _COMPILED:
            if pattern.search(text):
                return part
    if frames and frames[-1][0] in LOOP_LEAVES:
        return "event loop (uvloop's C code)"
    for part, prefix in ELSEWHERE:
        if any(path.startswith(prefix) for _, path in frames):
            return part
    return "other (event loop, libraries)"


def attribute(raw: str) -> tuple[int, Counter[str]]:
    """(samples, samples by part) of py-spy's raw (collapsed) output."""
    parts: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [frame_of(f) for f in stack.split(";")]
        total += n
        parts["I/O syscalls" if frames[-1][0] in IO_LEAVES else part_of(frames)] += n
    return total, parts


def cost_table(columns: dict[str, tuple[str, float]], order: list[str] | None = None) -> str:
    """Markdown: one row per part, one column per profile (title → (raw stacks, CPU ms per request of the
    profiled processes)), each cell the part's CPU µs per request and its share."""
    attributed = {title: (attribute(raw), ms) for title, (raw, ms) in columns.items()}
    seen: Counter[str] = Counter()
    for (total, parts), _ in attributed.values():
        for part, n in parts.items():
            seen[part] += n / max(total, 1)
    names = order or [name for name, _ in FEATURES]
    rows = [p for p in names if p in seen] + sorted(p for p in seen if p not in names)
    out = ["| part of the request | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for part in rows:
        cells = []
        for (total, parts), ms in attributed.values():
            share = parts.get(part, 0) / max(total, 1)
            cells.append(f"{share * ms * 1000:.0f} µs ({share:.1%})" if share else "–")
        out.append(f"| {part} | " + " | ".join(cells) + " |")
    out.append("| **whole process** | " + " | ".join(f"**{ms * 1000:.0f} µs** ({total:,} samples)"
                                                  for (total, _), ms in attributed.values()) + " |")
    return "\n".join(out)
