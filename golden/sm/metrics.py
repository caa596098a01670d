"""The metrics of a run (DESIGN.md, Metrics), defined once for the golden model, the RTL
testbenches and the CLI: the counters an SM accumulates, the ratios derived from them, and
their JSON form (the keys documented in README.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Counters:
    """Raw event counts of one warp (``warp``: its id in the launch) or of the whole SM."""

    warp: int = -1
    warp_instructions: int = 0  # warp instructions issued
    thread_instructions: int = 0  # sum of active threads over issued warp instructions
    issue_passes: int = (
        0  # cycles the lanes were busy issuing (W/L per instruction, fewer with hws)
    )
    hint_instructions: int = 0  # rhint warp instructions issued
    memory_transactions: int = 0  # global/local line transactions after coalescing
    shared_transactions: int = 0  # shared memory bank cycles (1 per access without conflicts)
    bank_conflicts: int = 0  # shared memory cycles beyond the first of each access
    spill_loads: int = 0  # dynamic spill loads (instructions the compiler marked as spills)
    spill_stores: int = 0
    split_cycles: int = 0  # sum over cycles of schedulable splits (for splits per warp)
    live_cycles: int = 0  # cycles the warp was resident
    #: sums over cycles of the threads in schedulable splits and of the live threads (for TLP)
    ready_thread_cycles: int = 0
    live_thread_cycles: int = 0
    icache_accesses: int = 0  # instruction fetches of a split (golden's instruction cache)
    icache_misses: int = 0  # of them, those that found their line absent
    l1d_accesses: int = 0  # line transactions of loads (golden's L1 data cache)
    l1d_misses: int = 0  # of them, those that found their line absent
    max_splits: int = 0
    max_occupancy: dict[str, int] = field(default_factory=dict)  # stack / st / rt
    #: warp instructions issued with k active threads, at index k (seed 001 Fig 1.1)
    active_histogram: list[int] = field(default_factory=list)

    def count_issue(self, active: int, passes: int, *, hint: bool, spill: str | None) -> None:
        """One warp instruction issued with ``active`` threads in ``passes`` passes; ``hint``:
        an ``rhint``; ``spill``: what the compiler marked it as ("load", "store"; None)."""
        self.warp_instructions += 1
        self.thread_instructions += active
        self.issue_passes += passes
        self.hint_instructions += hint
        self.count_active(active)
        if spill is not None:
            self.spill_loads += spill == "load"
            self.spill_stores += spill == "store"

    def count_active(self, active: int) -> None:
        if len(self.active_histogram) <= active:
            self.active_histogram.extend([0] * (active + 1 - len(self.active_histogram)))
        self.active_histogram[active] += 1

    def add_occupancy(self, occupancy: dict[str, int]) -> None:
        for key, value in occupancy.items():
            if value > self.max_occupancy.get(key, 0):
                self.max_occupancy[key] = value


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def mpki(misses: int, thread_instructions: int) -> float:
    """Misses per thousand thread instructions (seed 002 Sec 6.4's MPKI; GPGPU-Sim counts
    an instruction per active thread)."""
    return ratio(1000 * misses, thread_instructions)


def geomean(values: Sequence[float]) -> float:
    """Geometric mean (0 for no values): how speedups over a baseline are averaged."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


def amdahl(fractions: list[float], speedups: list[float]) -> float:
    """Seed 001 Eq 6.1: overall speedup when ``fractions`` of the work run ``speedups`` times
    faster and the rest unchanged."""
    rest = 1.0 - sum(fractions)
    return 1.0 / (rest + sum(f / s for f, s in zip(fractions, speedups, strict=True)))


@dataclass
class Metrics:
    """Counters of the SM plus the timing figures and the geometry they are relative to."""

    counters: Counters
    cycles: int
    idle_cycles: int
    warp_size: int
    simd_width: int
    warps: list[Counters] = field(default_factory=list)  # per warp of the launch

    @property
    def simd_efficiency(self) -> float:
        """Active threads / W per issued warp instruction."""
        return float(self._common(self.counters)["simd_efficiency"])

    @property
    def lane_utilisation(self) -> float:
        """Active threads / (passes x L): what hws improves (seed 001)."""
        return float(self._common(self.counters)["lane_utilisation"])

    @property
    def splits_per_warp(self) -> float:
        """Average number of schedulable splits of a resident warp (seed 002 Fig 13)."""
        return ratio(
            sum(w.split_cycles for w in self.warps), sum(w.live_cycles for w in self.warps)
        )

    @property
    def tlp(self) -> float:
        """Thread-level parallelism (seed 002 Fig 4): the share of the live threads of the
        resident warps that are in a schedulable split, averaged over their resident cycles
        (under sps, the threads of the top stack entry)."""
        return ratio(
            sum(w.ready_thread_cycles for w in self.warps),
            sum(w.live_thread_cycles for w in self.warps),
        )

    @property
    def hws_estimate(self) -> float:
        """Seed 001 Sec 6.1: the speedup hws could give this run, Eq 6.1 with the fraction of
        warp instructions whose threads fit in q < W/L quarter-warps (threads distributed
        optimally, ceil(active / L) quarters), each q-quarter instruction Q/q times faster."""
        quarters = self.warp_size // self.simd_width
        counts = [0] * quarters
        for active, n in enumerate(self.counters.active_histogram):
            if active:
                counts[-(-active // self.simd_width) - 1] += n
        total = sum(counts)
        if not total:
            return 1.0
        fractions = [c / total for c in counts[:-1]]
        return amdahl(fractions, [quarters / q for q in range(1, quarters)])

    @property
    def ipc(self) -> float:
        """Thread instructions per cycle."""
        return ratio(self.counters.thread_instructions, self.cycles)

    def _common(self, c: Counters) -> dict[str, Any]:
        """The metrics defined alike for the SM and for one warp."""
        return {
            "warp_instructions": c.warp_instructions,
            "thread_instructions": c.thread_instructions,
            "simd_efficiency": ratio(c.thread_instructions, c.warp_instructions * self.warp_size),
            "lane_utilisation": ratio(c.thread_instructions, c.issue_passes * self.simd_width),
            "issue_passes": c.issue_passes,
            "max_occupancy": dict(sorted(c.max_occupancy.items())),
            "memory_transactions": c.memory_transactions,
            "shared_transactions": c.shared_transactions,
            "bank_conflicts": c.bank_conflicts,
            "hint_instructions": c.hint_instructions,
            "spill_loads": c.spill_loads,
            "spill_stores": c.spill_stores,
            "icache_accesses": c.icache_accesses,
            "icache_misses": c.icache_misses,
            "l1d_accesses": c.l1d_accesses,
            "l1d_misses": c.l1d_misses,
        }

    def warp_json(self, c: Counters) -> dict[str, Any]:
        """One warp's metrics: its resident cycles, splits and table usage too."""
        return {
            "warp": c.warp,
            "cycles": c.live_cycles,
            **self._common(c),
            "splits_per_warp": ratio(c.split_cycles, c.live_cycles),
            "max_splits": c.max_splits,
            "tlp": ratio(c.ready_thread_cycles, c.live_thread_cycles),
        }

    def to_json(self) -> dict[str, Any]:
        c = self.counters
        return {
            "cycles": self.cycles,
            "idle_cycles": self.idle_cycles,
            "ipc": self.ipc,
            **self._common(c),
            "splits_per_warp": self.splits_per_warp,
            "max_splits_per_warp": max((w.max_splits for w in self.warps), default=0),
            "tlp": self.tlp,
            "icache_mpki": mpki(c.icache_misses, c.thread_instructions),
            "l1d_mpki": mpki(c.l1d_misses, c.thread_instructions),
            "active_histogram": c.active_histogram,
            "hws_estimate": self.hws_estimate,
            "warps": [self.warp_json(w) for w in self.warps],
        }
