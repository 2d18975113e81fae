"""CPU time and RSS of a whole process tree, read from /proc.

CPU is user+sys (`utime + stime` of /proc/<pid>/stat) summed over every process of the tree: the roots
the bench started and all their descendants (Dramatiq's children, uvicorn's workers), plus any extra
pids a system names (its database backends). A process that exits keeps the last value seen, so a
tree's CPU never goes backwards. RSS is sampled every `interval` seconds by one thread; `peaks()`
gives the largest RSS each process reached since the last `reset_peaks()`.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024


def _stat(pid: int) -> tuple[int, float, float] | None:
    """(ppid, user seconds, system seconds) of a live process, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rindex(b")") + 2:].split()  # the comm field may contain spaces and parentheses
    return int(rest[1]), int(rest[11]) / TICK, int(rest[12]) / TICK


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except OSError:
        return 0


def _parents() -> dict[int, int]:
    """pid → ppid of every process on the machine."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None:
                parents[int(entry)] = st[0]
    return parents


@dataclass
class Tree:
    """One system under test: named root processes, their descendants and optional extra pids."""

    name: str
    roots: dict[int, str] = field(default_factory=dict)  # pid → label ("api", "worker", "redis", …)
    extra: Callable[[], dict[int, str]] | None = None  # e.g. the PostgreSQL backends of our database
    _last_cpu: dict[int, tuple[float, float]] = field(default_factory=dict)  # pid → (user, system)
    _peak: dict[int, int] = field(default_factory=dict)
    _labels: dict[int, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, pid: int, label: str) -> None:
        self.roots[pid] = label

    def members(self, parents: dict[int, int] | None = None) -> dict[int, str]:
        """pid → label of every live process of the tree (descendants labelled `<root>+child`)."""
        parents = _parents() if parents is None else parents
        children: dict[int, list[int]] = {}
        for pid, ppid in parents.items():
            children.setdefault(ppid, []).append(pid)
        found: dict[int, str] = {}
        for root, label in self.roots.items():
            if root not in parents:
                continue
            stack = [(root, label)]
            while stack:
                pid, lab = stack.pop()
                found[pid] = lab
                stack.extend((c, label + "+child") for c in children.get(pid, ()))
        if self.extra is not None:
            for pid, lab in self.extra().items():
                if pid in parents:
                    found.setdefault(pid, lab)
        return found

    def sample(self, parents: dict[int, int] | None = None) -> None:
        members = self.members(parents)
        with self._lock:
            for pid, label in members.items():
                st = _stat(pid)
                if st is None:
                    continue
                self._last_cpu[pid] = (st[1], st[2])
                self._labels[pid] = label
                rss = _rss(pid)
                if rss > self._peak.get(pid, 0):
                    self._peak[pid] = rss

    def cpu_seconds(self, labels: Iterable[str] | None = None) -> float:
        """Total CPU of the tree so far (dead processes count with their last value)."""
        self.sample()
        wanted = set(labels) if labels is not None else None
        with self._lock:
            return sum(u + s for pid, (u, s) in self._last_cpu.items()
                       if wanted is None or self._labels.get(pid, "").split("+")[0] in wanted)

    def cpu_by_label(self) -> dict[str, tuple[float, float]]:
        """label → (user, system) CPU seconds so far, summed over the processes with that label."""
        self.sample()
        out: dict[str, tuple[float, float]] = {}
        with self._lock:
            for pid, (u, s) in self._last_cpu.items():
                label = self._labels.get(pid, "?")
                ou, os_ = out.get(label, (0.0, 0.0))
                out[label] = (ou + u, os_ + s)
        return out

    def rss_now(self) -> dict[str, list[int]]:
        """label → RSS in bytes of each live process with that label."""
        out: dict[str, list[int]] = {}
        for pid, label in self.members().items():
            out.setdefault(label, []).append(_rss(pid))
        return out

    def reset_peaks(self) -> None:
        with self._lock:
            self._peak.clear()
        self.sample()

    def peaks(self) -> dict[str, list[int]]:
        """label → peak RSS of each process with that label since the last reset."""
        out: dict[str, list[int]] = {}
        with self._lock:
            for pid, rss in self._peak.items():
                out.setdefault(self._labels.get(pid, "?"), []).append(rss)
        return out


class Sampler:
    """One background thread sampling every registered tree."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.trees: list[Tree] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)

    def add(self, tree: Tree) -> Tree:
        self.trees.append(tree)
        return tree

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            parents = _parents()
            for tree in list(self.trees):
                tree.sample(parents)
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - started)))
