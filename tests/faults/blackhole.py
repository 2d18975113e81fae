"""A TCP proxy of the test's own that can turn into a network blackhole: the database behind it
accepts connections and never answers (no reset, no refusal), as on a cut network or a hung
failover.

While open, it forwards both ways. `swallow()` freezes every connection it carries and every one it
accepts afterwards: what either side sends is read and dropped, nothing is closed (the server keeps
its sessions, and their transactions, as if the client had gone silent). `open()` forwards new
connections again; the frozen ones stay frozen, like connections to a server that failed over.
It runs on a thread and event loop of its own, so a test that blocks its own loop cannot stall it.
"""
from __future__ import annotations

import asyncio
import contextlib
import threading
from urllib.parse import urlsplit, urlunsplit


class _Pipe:
    __slots__ = ("frozen", "writers")

    def __init__(self) -> None:
        self.frozen = False
        self.writers: list[asyncio.StreamWriter] = []


class Blackhole:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.swallowing = False
        self._pipes: list[_Pipe] = []
        self._tasks: set[asyncio.Task] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="blackhole", daemon=True)
        self._server: asyncio.Server | None = None

    @classmethod
    def before(cls, url: str) -> Blackhole:
        """A started proxy in front of the server of this database URL."""
        parts = urlsplit(url)
        proxy = cls(parts.hostname or "127.0.0.1", parts.port or 5432)
        proxy.start()
        return proxy

    def url(self, url: str) -> str:
        """The same database URL, through the proxy."""
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))

    def start(self) -> None:
        self._thread.start()
        self._server = self._call(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]

    def swallow(self) -> None:
        """From now on nothing goes through, on any connection, old or new."""
        def freeze() -> None:
            self.swallowing = True
            for pipe in self._pipes:
                pipe.frozen = True

        self._loop.call_soon_threadsafe(freeze)
        self._call(asyncio.sleep(0))  # applied before returning

    def open(self) -> None:
        """New connections go through again (frozen ones stay frozen)."""
        self._loop.call_soon_threadsafe(setattr, self, "swallowing", False)
        self._call(asyncio.sleep(0))

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for pipe in self._pipes:
                for writer in pipe.writers:
                    writer.close()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            self._call(close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def _call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        pipe = _Pipe()
        pipe.writers.append(writer)
        self._pipes.append(pipe)
        if self.swallowing:
            pipe.frozen = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump(reader, None, pipe)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pipe.writers.append(up_writer)
        with contextlib.suppress(asyncio.CancelledError):  # stop()
            await asyncio.gather(self._pump(reader, up_writer, pipe), self._pump(up_reader, writer, pipe))

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None, pipe: _Pipe) -> None:
        try:
            while data := await reader.read(65536):
                if pipe.frozen or writer is None:
                    continue  # swallowed
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        if not pipe.frozen and writer is not None:
            writer.close()  # one side closed: so does the other (a frozen pipe never tells)
