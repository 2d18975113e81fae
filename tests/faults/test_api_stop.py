# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""SIGTERM to a real API process (`python -m api`): it ends by itself, within its grace
(SHUTDOWN_TIMEOUT), whatever is open — an idle keep-alive connection, a stream, requests whose body
is still arriving (console and relay), a database that stopped answering — and says what it waited
for. Asserted by what the process did, not by how long it took (a loaded machine can take seconds to
run a stop): an idle connection is not waited for; a stream is ended at the grace, with its error
event and [DONE]; requests the relay does not watch get the rest of the grace, are then cancelled and
end (aiohttp's own wait finds nothing left); the pool's goodbye to a silent database is cut rather
than waited for (Tortoise's own wait was 10 s)."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import time

import aiohttp
import pytest

from api.upstream.catalogue import ChannelType
from models import Channel
from tests.faults.blackhole import Blackhole
from tests.faults.ledger import accounts, chat
from tests.relay.fakes import headers_for, upstreams  # noqa: F401

GRACE = 1  # SHUTDOWN_TIMEOUT of the process
UNENDED = "did not end once cancelled"  # logged when what was cancelled still ran after FINAL_WAIT


def body_still_arriving(port: int, path: str, headers: dict[str, str]) -> socket.socket:
    """A request whose headers came and whose body (1,000 bytes announced) is 9 bytes in."""
    sock = socket.create_connection(("127.0.0.1", port))
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: gateway\r\n{lines}Content-Type: application/json\r\n"
                 "Content-Length: 1000\r\n\r\n{\"model\":".encode())
    return sock


async def stop(api) -> tuple[int, float]:
    started = time.monotonic()
    os.kill(api.proc.pid, signal.SIGTERM)
    code = await asyncio.wait_for(asyncio.to_thread(api.proc.wait), 60)
    return code, time.monotonic() - started


@pytest.mark.parametrize("case", ["idle keep-alive", "stream", "bodies still arriving"])
async def test_sigterm_ends_the_process_within_its_grace(case, client, settings, api_process, upstreams) -> None:
    fake = await upstreams(hang_after=4)
    await Channel.create(name="fake", key="sk-upstream", base_url=fake.url, models="gpt-4",
                         type=int(ChannelType.OPENAI))
    token = (await accounts(1)).tokens[0]
    api, url = await api_process(SHUTDOWN_TIMEOUT=str(GRACE))
    port = int(url.rsplit(":", 1)[1])
    sockets: list[socket.socket] = []
    async with aiohttp.ClientSession() as http:
        try:
            async with http.get(f"{url}/api/status") as resp:  # its connection stays open, idle
                assert resp.status == 200
            stream = None
            if case == "stream":
                stream = await http.post(f"{url}/v1/chat/completions", json=chat(True), headers=headers_for(token))
                assert stream.status == 200
                await stream.content.readline()
            if case == "bodies still arriving":
                sockets = [body_still_arriving(port, "/v1/chat/completions", headers_for(token)),
                           body_still_arriving(port, "/api/user/login", {})]
                # Accepted before this connection (one backlog, in order) and read by the loop
                # before it answers this one.
                async with http.get(f"{url}/healthz", headers={"Connection": "close"}) as resp:
                    assert resp.status == 200
            code, took = await stop(api)
            tail = await stream.content.read() if stream is not None else b""
        finally:
            for sock in sockets:
                sock.close()
    output = api.output()
    print(f"\nSIGTERM with {case}: exit {code} after {took:.2f} s (SHUTDOWN_TIMEOUT={GRACE})")
    print("\n".join(line for line in output.splitlines() if "stopping" in line))
    assert code == 0, output
    assert "stopping: no new connections" in output and UNENDED not in output, output
    if case == "idle keep-alive":  # nothing running: nothing waited for, nothing cancelled
        assert "waiting up to" not in output and "are cancelled" not in output, output
    if case == "stream":
        assert f"1 relay requests still running after {GRACE} s were ended" in output, output
        assert b"shutting down" in tail and tail.rstrip().endswith(b"[DONE]"), tail
    if case == "bodies still arriving":  # the rest of the grace (one clock from the stop), then cancelled
        assert "2 requests" in output and "(its body still arriving)" in output, output
        if "waiting up to " in output:  # absent when closing the listeners took the whole grace (a loaded machine)
            waited = float(output.split("waiting up to ", 1)[1].split(" s ", 1)[0])
            assert 0 <= waited <= GRACE, output  # what was left of it (shown to 0.1 s)
        assert f"2 requests still running after the {GRACE} s grace are cancelled: POST" in output, output


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_sigterm_with_the_database_blackholed(settings, postgres_database, api_process) -> None:
    """The pool's goodbye to a database that no longer answers is not waited for (it was 10 s)."""
    hole = Blackhole.before(postgres_database)
    try:
        api, url = await api_process(SHUTDOWN_TIMEOUT=str(GRACE), DATABASE_URL=hole.url(settings.database_url))
        async with aiohttp.ClientSession() as http, http.post(f"{url}/api/user/login",
                                                              json={"username": "root", "password": "x"}) as resp:
            assert resp.status == 200  # the pool has its connections
        hole.swallow()
        code, took = await stop(api)
    finally:
        hole.stop()
    print(f"\nSIGTERM with the database blackholed: exit {code} after {took:.2f} s (SHUTDOWN_TIMEOUT={GRACE})")
    output = api.output()
    assert code == 0, output
    assert "the database did not answer the close of its connections within" in output, output
    assert "Tortoise-ORM shutdown" in output, output
