
"""The attacks on request bodies against a real API process (`python -m api`), all at once, while
another process asks /healthz: anonymous and keyed gzip bombs, large token counts, multipart forms
of many parts and of long part headers. The event loop keeps answering (no work on it makes the
probes wait: measured in the loop's own CPU time, not in how late they were answered); the bodies
are refused."""
from __future__ import annotations

import asyncio
import io
import statistics
import sys
from asyncio.subprocess import PIPE
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit

import aiohttp
import orjson

from api.bodies import MIB
from tests.api.test_body_limits import bomb, gzipped
from tests.relay.fakes import headers_for, make_key, rich_user

T = TypeVar("T")

PROBE_EVERY = 0.01  # seconds
# /healthz asked every PROBE_EVERY seconds on one connection by a process of its own (the test's
# process is busy sending the attack), from when it says "probing" until its stdin is written to and
# 50 answers were timed; then it prints, for each probe that fell due, how long the API process's
# event loop was busy before answering it: the CPU time its main thread (the loop's) spent between
# the probe falling due and its answer. A stall delays every probe that fell due during it; a machine
# busy with other jobs makes the answers later but not the loop's own work longer (the CPU time of a
# request's window is spread over it evenly to give each probe due in it its share from its due on).
PROBE = """
import http.client, json, select, sys, time
host, port, every, pid = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
def loop_cpu():
    with open(f"/proc/{pid}/task/{pid}/schedstat") as stat:
        return int(stat.read().split()[0]) / 1e9
conn = http.client.HTTPConnection(host, port, timeout=30)
conn.request("GET", "/healthz")
conn.getresponse().read()
print("probing", flush=True)
busy, due, attack_over = [], time.perf_counter(), False
while not attack_over or len(busy) < 50:
    attack_over = attack_over or bool(select.select([sys.stdin], [], [], max(0.0, due - time.perf_counter()))[0])
    sent, cpu = time.perf_counter(), loop_cpu()
    conn.request("GET", "/healthz")
    answer = conn.getresponse()
    answer.read()
    assert answer.status == 200, answer.status
    done, spent = time.perf_counter(), loop_cpu() - cpu
    while due <= done:
        busy.append(spent * (done - max(due, sent)) / max(done - sent, 1e-9))
        due += every
print(json.dumps(busy))
"""


def peak_rss(pid: int) -> int:
    """The process's peak resident memory so far, in bytes (VmHWM)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


async def probed(base: str, pid: int, attack: Callable[[aiohttp.ClientSession], Awaitable[T]]) -> tuple[list[float], T]:
    """(how long the loop of the API process `pid` was busy before each /healthz answer, PROBE's
    figures while `attack` ran, in CPU seconds; what `attack` returned)."""
    url = urlsplit(base)
    prober = await asyncio.create_subprocess_exec(sys.executable, "-c", PROBE, str(url.hostname), str(url.port),
                                                  str(PROBE_EVERY), str(pid), stdin=PIPE, stdout=PIPE)
    assert await prober.stdout.readline() == b"probing\n"  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as http_client:
            result = await attack(http_client)
    finally:
        out, _ = await prober.communicate(b"over")
    assert prober.returncode == 0
    return orjson.loads(out), result


def summary(busy: list[float]) -> tuple[float, str]:
    p99 = statistics.quantiles(busy, n=100)[98]
    return p99, (f"{len(busy)} probes, the loop busy before their answer: p50 {statistics.median(busy) * 1000:.1f}"
                 f" ms, p99 {p99 * 1000:.1f} ms, max {max(busy) * 1000:.1f} ms of CPU")


async def post(http_client: aiohttp.ClientSession, url: str, data: bytes, headers: dict[str, str]) -> int:
    async with http_client.post(url, data=io.BytesIO(data), headers=headers) as resp:
        await resp.read()
        return resp.status


async def test_the_attacks_do_not_stall_a_real_api_process(client, api_process) -> None:
    """Ten anonymous gzip bombs at the console's login and ten at the relay, and large token counts,
    all at once: /healthz keeps answering (the loop busy under 0.25 s of CPU before 99% of the
    probes, about 0.06 s measured: a count done on the event loop is 0.35 s or more of its CPU), the
    bodies are refused, memory stays flat."""
    proc, base = await api_process()
    token = await make_key(await rich_user())
    pid = proc.proc.pid
    before = peak_rss(pid)
    count_body = orjson.dumps({"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "word " * 2_200_000}]})  # 11 MB of text: ~0.35 s of counting each
    count_headers = {"x-api-key": f"sk-{token.key}", "anthropic-version": "2023-06-01",
                     "Content-Type": "application/json"}
    statuses: list[int]
    busy, statuses = await probed(base, pid, lambda http_client: asyncio.gather(
        *[post(http_client, base + "/api/user/login", bomb(), gzipped()) for _ in range(10)],
        *[post(http_client, base + "/v1/chat/completions", bomb(), gzipped()) for _ in range(10)],
        *[post(http_client, base + "/v1/messages/count_tokens", count_body, count_headers) for _ in range(8)]))
    grown = peak_rss(pid) - before
    p99, figures = summary(busy)
    print(f"/healthz during the attack: {figures}; peak RSS grew {grown / MIB:.0f} MiB; "
          f"count answers {sorted(statuses[20:])}")
    assert statuses[:10] == [413] * 10 and statuses[10:20] == [401] * 10
    assert set(statuses[20:]) <= {200, 429} and 200 in statuses[20:]
    assert p99 < 0.25, figures
    assert grown < 400 * MIB


def many_parts(name: str, count: int) -> tuple[bytes, dict[str, str]]:
    """A form of `count` one-byte fields (20,000: 1.2 MiB)."""
    return (f'--gw\r\nContent-Disposition: form-data; name="{name}"\r\n\r\nx\r\n'.encode() * count + b"--gw--\r\n",
            {"Content-Type": "multipart/form-data; boundary=gw"})


def long_headers(lines: int, length: int) -> tuple[bytes, dict[str, str]]:
    """A form whose parts have many long header lines (aiohttp alone takes 128 lines of 8 KiB a part)."""
    head = b"".join(b"X-Filler-%d: " % i + b"a" * length + b"\r\n" for i in range(lines))
    one = b'--gw\r\nContent-Disposition: form-data; name="prompt"\r\n' + head + b"\r\nx\r\n"
    return one * 2 + b"--gw--\r\n", {"Content-Type": "multipart/form-data; boundary=gw"}


async def test_forms_and_keyed_bombs_do_not_stall_a_real_api_process(client, api_process) -> None:
    """With a key: forms of 20,000 one-byte fields on each multipart route, forms of long part
    headers, and ten gzip bombs at the relay's JSON routes (64 KB inflating to 63 MB each), all at
    once: refused, and /healthz keeps answering (the loop busy under 0.5 s of CPU before 99% of the
    probes, about 0.1 s measured, while the forms alone, parsed on the loop, stalled it 30 s and more)."""
    proc, base = await api_process()
    token = await make_key(await rich_user())
    key = headers_for(token)
    forms = [("/v1/images/edits", *many_parts("prompt", 20_000)), ("/v1/audio/transcriptions",
             *many_parts("model", 20_000)), ("/v1/audio/translations", *many_parts("model", 20_000)),
             ("/v1/videos", *many_parts("prompt", 20_000)), ("/v1/images/edits", *long_headers(100, 8000)),
             ("/v1/audio/transcriptions", *long_headers(100, 8000))]
    jsons = ["/v1/chat/completions", "/v1/embeddings", "/v1/responses", "/v1/messages"]

    def attack(http_client: aiohttp.ClientSession) -> Awaitable[list[int]]:
        return asyncio.gather(
            *[post(http_client, base + path, data, {**key, **headers}) for path, data, headers in forms * 2],
            *[post(http_client, base + jsons[i % len(jsons)], bomb(), gzipped(key)) for i in range(10)])

    async with aiohttp.ClientSession() as http_client:  # the key cached, each route's first request made
        for path in jsons + [path for path, _, _ in forms]:
            await post(http_client, base + path, b"{}", {**key, "Content-Type": "application/json"})
    statuses: list[int]
    busy, statuses = await probed(base, proc.proc.pid, attack)
    p99, figures = summary(busy)
    print(f"/healthz during the keyed attack: {figures}; answers {sorted(statuses)}")
    assert statuses[:2 * len(forms)] == [400] * 2 * len(forms)
    assert statuses[2 * len(forms):] == [413] * 10
    assert p99 < 0.5, figures
    assert proc.proc.poll() is None
