"""Prometheus metrics of one API process, hand-rolled (text exposition format 0.0.4).

Labels are bounded: `model` is only set once a model resolved to a channel (a refused request
carries model="-"), so a client cannot grow the label set with made-up names.
"""
from __future__ import annotations

import bisect
from collections import defaultdict

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

Labels = tuple[tuple[str, str], ...]


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Histogram:
    __slots__ = ("buckets", "count", "sum")

    def __init__(self) -> None:
        self.buckets = [0] * len(LATENCY_BUCKETS)
        self.count = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        index = bisect.bisect_left(LATENCY_BUCKETS, value)
        if index < len(self.buckets):
            self.buckets[index] += 1
        self.count += 1
        self.sum += value


class Metrics:
    def __init__(self) -> None:
        self.requests: dict[Labels, int] = defaultdict(int)
        self.errors: dict[Labels, int] = defaultdict(int)
        self.retries: dict[Labels, int] = defaultdict(int)
        self.streams: dict[Labels, int] = defaultdict(int)
        self.duration: dict[Labels, Histogram] = defaultdict(Histogram)
        self.first_response: dict[Labels, Histogram] = defaultdict(Histogram)
        self.active_streams = 0
        self.affinity: dict[Labels, int] = defaultdict(int)
        self.prompt_tokens: dict[Labels, int] = defaultdict(int)
        self.cached_tokens: dict[Labels, int] = defaultdict(int)
        self.fallbacks: dict[Labels, int] = defaultdict(int)
        self.mcp_calls: dict[Labels, int] = defaultdict(int)
        self.budget_refusals: dict[Labels, int] = defaultdict(int)

    def request_done(self, route: str, model: str, channel: int, status: int, seconds: float, stream: bool,
                     first_response: float | None) -> None:
        base = (("route", route), ("model", model), ("channel", str(channel)))
        self.requests[(*base, ("code", str(status)))] += 1
        self.duration[base].observe(seconds)
        if stream:
            self.streams[base] += 1
        if first_response is not None:
            self.first_response[base].observe(first_response)

    def error(self, route: str, model: str, channel: int, kind: str) -> None:
        self.errors[(("route", route), ("model", model), ("channel", str(channel)), ("type", kind))] += 1

    def mcp_call(self, server: str, status: str) -> None:
        """One MCP tool call on /mcp (`server` is a registered server's name: bounded by the registry)."""
        self.mcp_calls[(("server", server), ("status", status))] += 1

    def retry(self, route: str, model: str) -> None:
        self.retries[(("route", route), ("model", model))] += 1

    def fallback(self, from_model: str, to_model: str, reason: str) -> None:
        """A request passed from one model of its chain to the next (api/relay/fallbacks.py)."""
        self.fallbacks[(("from", from_model), ("to", to_model), ("reason", reason))] += 1

    def budget_refused(self, window: str, owner: str, measure: str) -> None:
        """A request refused by a limit over time (api/relay/admission.py): its window, owner kind, measure."""
        self.budget_refusals[(("window", window), ("owner", owner), ("measure", measure))] += 1

    def pinned(self, outcome: str, source: str) -> None:
        """A session's request: its pin held (hit), was made (new) or moved (api/relay/affinity.py)."""
        self.affinity[(("outcome", outcome), ("source", source))] += 1

    def input_tokens(self, channel: int, prompt: int, cached: int) -> None:
        labels = (("channel", str(channel)),)
        self.prompt_tokens[labels] += prompt
        if cached:
            self.cached_tokens[labels] += cached

    def render(self, gauges: dict[str, tuple[str, list[tuple[Labels, float]]]] | None = None,
               upstream_calls: dict[Labels, int] | None = None,
               upstream_seconds: dict[Labels, Histogram] | None = None) -> str:
        out: list[str] = []

        def counter(name: str, help_text: str, values: dict[Labels, int]) -> None:
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} counter")
            for labels, value in sorted(values.items()):
                out.append(f"{name}{_labels(labels)} {value}")

        def histogram(name: str, help_text: str, values: dict[Labels, Histogram]) -> None:
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} histogram")
            for labels, h in sorted(values.items(), key=lambda kv: kv[0]):
                cumulative = 0
                for bound, count in zip(LATENCY_BUCKETS, h.buckets, strict=True):
                    cumulative += count
                    out.append(f"{name}_bucket{_labels((*labels, ('le', repr(bound))))} {cumulative}")
                out.append(f"{name}_bucket{_labels((*labels, ('le', '+Inf')))} {h.count}")
                out.append(f"{name}_sum{_labels(labels)} {h.sum:.6f}")
                out.append(f"{name}_count{_labels(labels)} {h.count}")

        counter("gateway_relay_requests_total", "Relayed requests by route, model, channel and status code.",
                self.requests)
        counter("gateway_relay_errors_total", "Failed upstream attempts and refusals by type.", self.errors)
        counter("gateway_relay_retries_total", "Attempts retried on another channel.", self.retries)
        counter("gateway_relay_streams_total", "Streamed answers.", self.streams)
        counter("gateway_affinity_total", "Requests of a session by whether its channel and key pin held (hit), "
                "was made (new) or moved, and where the session was found.", self.affinity)
        counter("gateway_fallback_total", "Requests passed to the next model of their chain, by reason.",
                self.fallbacks)
        counter("gateway_mcp_calls_total", "MCP tool calls through /mcp by server and status (ok, refused, "
                "tool_error, timeout, unreachable, too_large, cancelled…).", self.mcp_calls)
        counter("gateway_budget_refusals_total", "Requests refused by a limit over time, by window, owner (key, "
                "user, group) and measure.", self.budget_refusals)
        counter("gateway_prompt_tokens_total", "Input tokens billed, by channel.", self.prompt_tokens)
        counter("gateway_cached_prompt_tokens_total", "Input tokens read from the provider's prompt cache, by channel.",
                self.cached_tokens)
        histogram("gateway_relay_request_duration_seconds", "Time from request to the end of the answer.",
                  self.duration)
        histogram("gateway_relay_first_response_seconds", "Time to the first upstream byte of a stream.",
                  self.first_response)
        counter("gateway_upstream_calls_total", "Calls to providers by caller (relay, test, query, task), channel "
                "type and outcome (status class or failure).", upstream_calls or {})
        histogram("gateway_upstream_seconds", "Time from sending a call to a provider to its answer's headers.",
                  upstream_seconds or {})
        out.append("# HELP gateway_relay_active_streams Streams being relayed now.")
        out.append("# TYPE gateway_relay_active_streams gauge")
        out.append(f"gateway_relay_active_streams {self.active_streams}")
        for name, (help_text, samples) in (gauges or {}).items():
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} gauge")
            for labels, value in samples:
                out.append(f"{name}{_labels(labels)} {value:g}")
        return "\n".join(out) + "\n"
