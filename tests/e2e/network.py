"""What a page's first load fetched before it was usable, and what that costs on a slow network.

The DevTools protocol's Network events (through Playwright's CDP session) give each request's
initiator and the bytes it took on the wire (`encodedDataLength`: headers and encoded body); the
page's own performance timeline says which of them had finished when the page became usable (the
same clock as the `performance.now()` a readiness check answers). From those: how many requests the
page needed, how many round trips deep their chain was (the document, then what it links, then
what those scripts ask for…) and how many bytes — the figures a slow network turns into seconds,
and which a busy machine cannot change. `network_seconds` is that network's share of the time: one
latency per round trip of the chain plus every byte at its download rate (Chrome's throttling adds
the latency to each request and shares the throughput between them).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Chrome DevTools' "Fast 3G" preset (front_end/core/sdk/NetworkManager.ts): 562.5 ms of latency per
# request, 1.44 Mbit/s down, 675 kbit/s up.
FAST_3G = {"offline": False, "latency": 562.5, "downloadThroughput": 180_000, "uploadThroughput": 84_375}

# The page's timeline: each finished fetch (the document, then resources) with its end, and the first paint.
TIMELINE = """() => ({
  fetched: performance.getEntries().filter(e => e.entryType === 'navigation' || e.entryType === 'resource')
    .map(e => ({url: e.name, end: e.responseEnd})),
  firstPaint: (performance.getEntriesByName('first-paint')[0] || {startTime: null}).startTime,
})"""


@dataclass(slots=True)
class Request:
    url: str
    kind: str  # the protocol's resource type: Document, Script, Stylesheet, Fetch, Image…
    parent: str | None  # the URL of the document or script that asked for it (None: the navigation, or unknown)
    order: int  # its place among the requests sent
    wire: int | None = None  # bytes received for it, once finished


@dataclass(slots=True)
class Needed:
    """The requests that had finished when the page became usable."""

    requests: list[Request]
    depth: int  # round trips in the longest chain among them
    before_paint: int  # how many of them had finished at the first paint

    @property
    def wire(self) -> int:
        return sum(r.wire or 0 for r in self.requests)

    def network_seconds(self, profile: dict[str, Any]) -> float:
        return self.depth * profile["latency"] / 1000 + self.wire / profile["downloadThroughput"]

    def describe(self) -> str:
        kinds = ", ".join(f"{r.kind} {r.url.rsplit('/', 1)[-1].split('?')[0] or '/'} {(r.wire or 0) / 1024:.1f} KB"
                          for r in self.requests)
        return (f"{len(self.requests)} requests ({kinds}), {self.depth} round trips deep, "
                f"{self.wire / 1024:.1f} KB on the wire, {self.before_paint} finished before the first paint")


@dataclass(slots=True)
class Wire:
    """Every request the page sends from `attach` on."""

    by_id: dict[str, Request] = field(default_factory=dict)

    async def attach(self, cdp: Any, profile: dict[str, Any]) -> None:
        cdp.on("Network.requestWillBeSent", lambda event: self._sent(event))  # Playwright marks bound methods
        cdp.on("Network.loadingFinished", lambda event: self._finished(event))
        await cdp.send("Network.enable")
        await cdp.send("Network.emulateNetworkConditions", profile)

    def _sent(self, event: dict[str, Any]) -> None:
        initiator = event.get("initiator") or {}
        parent = initiator.get("url")
        if initiator.get("type") == "script":
            frames = (initiator.get("stack") or {}).get("callFrames") or []
            parent = next((f["url"] for f in frames if f.get("url")), None)
        self.by_id[event["requestId"]] = Request(event["request"]["url"], event.get("type") or "", parent,
                                                 len(self.by_id))

    def _finished(self, event: dict[str, Any]) -> None:
        request = self.by_id.get(event["requestId"])
        if request is not None:
            request.wire = int(event["encodedDataLength"])

    def needed(self, timeline: dict[str, Any], ready_ms: float,
               critical: Callable[[Request], bool] | None = None) -> Needed | None:
        """The requests finished by `ready_ms` (the page's clock), once the protocol has reported
        each one's size (None until then: ask again). Their depth is that of the `critical` ones when
        given — the requests readiness waits for (its data), whose chain does not depend on how fast
        the browser worked — else the deepest of them."""
        ends: dict[str, list[float]] = {}
        for fetched in timeline["fetched"]:
            ends.setdefault(fetched["url"], []).append(fetched["end"])
        requests: list[Request] = []
        for request in sorted(self.by_id.values(), key=lambda r: r.order):
            finished = ends.get(request.url)
            if finished and finished[0] <= ready_ms:
                requests.append(request)
                finished.pop(0)  # the same URL fetched twice counts once per fetch
        if not requests or any(r.wire is None for r in requests):
            return None
        paint = timeline["firstPaint"]
        before_paint = sum(1 for e in timeline["fetched"] if paint is not None and e["end"] <= paint)
        chain = [r for r in requests if critical is None or critical(r)]
        if not chain:
            return None
        return Needed(requests, max(self.depth(r) for r in chain), before_paint)

    def depth(self, request: Request) -> int:
        """Round trips before this request's answer: 1 for the document; its initiator's plus one
        otherwise. An initiator the protocol does not name (an image the page's script put in the
        DOM) counts as the deepest request sent before it: the most it can have waited for, so the
        chain is never shorter than the browser's."""
        by_url: dict[str, Request] = {}
        for other in sorted(self.by_id.values(), key=lambda r: r.order):
            by_url.setdefault(other.url, other)
        seen: dict[int, int] = {}

        def of(r: Request) -> int:
            if r.order in seen:
                return seen[r.order]
            seen[r.order] = 1  # a cycle (it never is one) stops here
            if r.kind == "Document" and r.parent is None:
                found = 1
            elif r.parent is not None and r.parent in by_url and by_url[r.parent].order < r.order:
                found = of(by_url[r.parent]) + 1
            else:
                earlier = [o for o in self.by_id.values() if o.order < r.order]
                found = 1 + max((of(o) for o in earlier), default=0)
            seen[r.order] = found
            return found

        return of(request)
