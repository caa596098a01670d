"""The golden SM's caches: the instruction cache and the L1 data cache of the GTX 480-like
evaluation machine (seed 002 Sec 5 and 6.4; docs/architecture.md, "Timing", rules 7 and 8).
The hardware SM has none.

A :class:`CacheModel` is a set-associative cache with least-recently-used replacement. Each
line it holds carries the cycle its data arrives (its fill), so an access to a line whose miss
is still in flight waits for that fill instead of missing again (it merges into the miss's
MSHR, as GPGPU-Sim's "hit reserved"). A miss allocates its line at once, evicting the least
recently used line of its set (one still in flight too: its requesters keep their fill), and
sends its request to memory when one of the ``mshrs`` miss status holding registers is free,
else when the earliest miss in flight returns; the line arrives ``miss_latency`` cycles after
the request leaves. Stores never allocate (:meth:`CacheModel.write`). The model only times:
what a load reads always comes from memory, which the SM updates at issue.

Accesses must come in cycle order (the SM's fetches and load/store unit cycles do).
"""

from __future__ import annotations

import heapq

from reconverge.golden.config import Cache


class CacheModel:
    """One cache of ``cache``'s geometry whose misses take ``miss_latency`` cycles."""

    def __init__(self, cache: Cache, miss_latency: int) -> None:
        self.cache = cache
        self.miss_latency = miss_latency
        #: per set, its lines (line number -> fill cycle), least recently used first
        self.sets: list[dict[int, int]] = [{} for _ in range(cache.sets)]
        self.inflight: list[int] = []  # a heap of the fill cycles of the misses in flight

    def read(self, line: int, cycle: int) -> tuple[int, bool]:
        """An access to ``line`` in ``cycle``: the cycle its data is there (``hit`` cycles
        later on a hit, not before the line's fill) and whether it missed."""
        ways = self.sets[line % len(self.sets)]
        fill = ways.pop(line, None)
        if fill is not None:
            ways[line] = fill  # now the most recently used
            return max(cycle + self.cache.hit, fill), False
        fill = self._request(cycle) + self.miss_latency
        if len(ways) >= self.cache.ways:
            del ways[next(iter(ways))]
        ways[line] = fill
        return fill, True

    def write(self, line: int, *, keep: bool) -> None:
        """A store to ``line``: written through to memory, never allocated (GPGPU-Sim's
        Fermi L1: no write allocation). A line it hits is evicted (global memory:
        write-evict) or, with ``keep`` (local memory: write-back), made the most recently
        used."""
        ways = self.sets[line % len(self.sets)]
        fill = ways.pop(line, None)
        if fill is not None and keep:
            ways[line] = fill

    def _request(self, cycle: int) -> int:
        """The cycle a miss in ``cycle`` leaves for memory: at once while an MSHR is free,
        else when the earliest miss in flight returns (its MSHR is then this miss's)."""
        inflight = self.inflight
        while inflight and inflight[0] <= cycle:
            heapq.heappop(inflight)
        sent = heapq.heappop(inflight) if len(inflight) >= self.cache.mshrs else cycle
        heapq.heappush(inflight, sent + self.miss_latency)
        return sent
