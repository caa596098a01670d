"""Dynamic warp formation in the golden model: DWF (Fung et al., as seed 001 Sec 3.6 describes
it) and en-DWF (seed 001 Sec 4.4, Fig 4.5, Appendix B), with or without hws (en-DWF&HWS).

Threads keep their own PC. Instead of a divergence unit per warp, the SM keeps a *warp pool*:
dynamic warps of W slots (Q = W/L quarters of L lanes), each at one PC. A thread's registers
live in the bank of its home lane, so a thread may only sit in a slot of that lane:

* DWF: only in its home slot (its index in its static warp); two threads with the same home
  slot never share a dynamic warp.
* en-DWF: in any quarter of its home SIMD lane (slot mod L == home mod L), so up to Q threads
  of one lane fit (Sec 4.4).

After every issue the threads of the dynamic warp go back to the pool at their next PC, as a
*male* warp (their current slots) that combines with the oldest *female* pool warp at that PC
it can join (DWF: no slot taken twice; en-DWF: Appendix B moves each conflicting male thread
to a slot of the same lane empty in both, and the combination fails only if a lane overflows),
or else becomes a new pool warp. With hws the male warp is squeezed first (Sec 4.4 step 1; not
without the squeeze, ``SMConfig.squeeze``) and issues in as many passes as it has non-empty
quarters. The scheduler uses the majority policy
(Sec 3.6): a ready pool warp at the PC most threads wait at.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from reconverge.golden.blocks.divergence import DivergenceUnit, Executed, Split, lanes_of
from reconverge.golden.blocks.squeezer import squeeze
from reconverge.golden.isa import ILEN_BYTES, MASK32
from reconverge.golden.policies import WarpFormation
from reconverge.golden.semantics import MemAccess, execute
from reconverge.golden.sm.core import (
    SM,
    Decoded,
    IssueRecord,
    ResidentBlock,
    ResidentWarp,
    lane_array,
)

T = TypeVar("T")


def combine(
    female: Sequence[T | None],
    male: Sequence[T | None],
    warp_size: int,
    simd_width: int,
    *,
    enhanced: bool,
) -> list[T | None] | None:
    """The slots of ``female`` and ``male`` combined, or None when they cannot be (DWF: a slot
    taken in both; en-DWF: a conflict with no slot of the same lane free in both, Appendix B).
    En-DWF scans lane by lane and quarter by quarter, moving each conflicting male thread to the
    first quarter whose slot of that lane is empty in both warps."""
    moved = list(male)
    if enhanced:
        quarters = warp_size // simd_width
        for lane in range(simd_width):
            for j in range(quarters):
                test = j * simd_width + lane
                if female[test] is None or moved[test] is None:
                    continue
                for k in range(quarters):
                    scan = k * simd_width + lane
                    if k != j and female[scan] is None and moved[scan] is None:
                        moved[scan], moved[test] = moved[test], None
                        break
    if any(f is not None and m is not None for f, m in zip(female, moved, strict=True)):
        return None
    return [f if f is not None else m for f, m in zip(female, moved, strict=True)]


def squeeze_slots(slots: Sequence[T | None], warp_size: int, simd_width: int) -> list[T | None]:
    """The slots after the lane-preserving squeeze of seed 001 Sec 4.1 (the squeezer block)."""
    mask = sum(1 << i for i, thread in enumerate(slots) if thread is not None)
    result = squeeze(mask, warp_size, simd_width)
    return [
        slots[result.src[i] * simd_width + i % simd_width] if result.mask >> i & 1 else None
        for i in range(warp_size)
    ]


class ThreadPCs(DivergenceUnit):
    """A static warp under DWF: only the PC of each of its threads; the pool schedules."""

    def __init__(self, warp_size: int, valid: int, entry: int) -> None:
        super().__init__(warp_size, valid, entry)
        self.pc = [entry] * warp_size

    def splits(self) -> list[Split]:
        return []

    def execute(self, ex: Executed) -> int:
        self._retire(ex)
        for pc, mask in ex.targets.items():
            for lane in lanes_of(mask):
                self.pc[lane] = pc
        return 1

    def release(self, lanes: int) -> int:
        self.waiting &= ~lanes
        for lane in lanes_of(lanes):
            self.pc[lane] = (self.pc[lane] + ILEN_BYTES) & MASK32
        return 1


Thread = tuple[ResidentWarp, int]  # static warp and home lane


class DynamicWarp:
    """A pool warp: its threads by slot, at one PC. Its active mask and its threads grouped by
    static warp are kept with its slots (the scheduler reads them every cycle)."""

    def __init__(self, ident: int, pc: int, slots: list[Thread | None], ready_at: int) -> None:
        self.ident = ident
        self.pc = pc
        self.ready_at = ready_at
        self.fill(slots)

    def fill(self, slots: list[Thread | None]) -> None:
        """Hold ``slots``: the mask and the groups follow."""
        self.slots = slots
        self.mask = 0
        self.groups: dict[ResidentWarp, int] = {}  # home-lane masks by static warp
        for i, thread in enumerate(slots):
            if thread is not None:
                self.mask |= 1 << i
                warp, lane = thread
                self.groups[warp] = self.groups.get(warp, 0) | 1 << lane
        self.size = self.mask.bit_count()


class DwfSM(SM):
    """The SM with dynamic warp formation instead of per-warp divergence units."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.enhanced = self.config.warp_formation is WarpFormation.EN_DWF
        self.pool: list[DynamicWarp] = []
        self.formed = 0
        #: the instruction each pool warp has fetched (rule 7): ident -> (PC, cycle it is there)
        self.pool_fetched: dict[int, tuple[int, int]] = {}

    def make_unit(self, valid: int, regs: np.ndarray) -> DivergenceUnit:
        return ThreadPCs(self.geometry.warp_size, valid, self.image.entry & MASK32)

    # -- the pool -------------------------------------------------------------------------------

    def _place(self, pc: int, slots: list[Thread | None], ready_at: int) -> None:
        """Return a male warp to the pool at ``pc``: combine it with the oldest female there
        that it fits, or make it a new pool warp."""
        w, lanes = self.geometry.warp_size, self.geometry.simd_width
        if self.config.squeezes:
            slots = squeeze_slots(slots, w, lanes)
        for female in self.pool:
            if female.pc != pc:
                continue
            merged = combine(female.slots, slots, w, lanes, enhanced=self.enhanced)
            if merged is not None:
                female.fill(merged)
                female.ready_at = max(female.ready_at, ready_at)
                return
        self.formed += 1
        self.pool.append(DynamicWarp(self.formed, pc, slots, ready_at))

    def _place_static(self, warp: ResidentWarp, lanes: int, ready_at: int) -> None:
        """Threads of one static warp, in their home slots, grouped by PC."""
        by_pc: dict[int, list[Thread | None]] = {}
        unit = warp.unit
        assert isinstance(unit, ThreadPCs)
        for lane in lanes_of(lanes):
            slots = by_pc.setdefault(unit.pc[lane], [None] * self.geometry.warp_size)
            slots[lane] = (warp, lane)
        for pc, slots in by_pc.items():
            self._place(pc, slots, ready_at)

    def _dispatch(self) -> None:
        before = set(map(id, self.resident))
        super()._dispatch()
        for warp in self.resident:
            if id(warp) not in before:
                self._place_static(warp, warp.unit.live, warp.settled)  # the cycle after dispatch

    # -- scheduling -----------------------------------------------------------------------------

    def _select(self) -> tuple[DynamicWarp, Decoded] | None:  # type: ignore[override]
        """Majority policy: the PCs with the most waiting threads first, oldest pool warp
        first at each PC; the first ready one."""
        counts: dict[int, int] = {}
        for dyn in self.pool:
            counts[dyn.pc] = counts.get(dyn.pc, 0) + dyn.size
        ready = [(-counts[dyn.pc], dyn.pc, age) for age, dyn in enumerate(self.pool)
                 if dyn.ready_at <= self.t]  # fmt: skip
        for _, _, age in sorted(ready):
            dyn = self.pool[age]
            op = self._ready_dynamic(dyn)
            if op is not None:
                return dyn, op
        return None

    def _ready_dynamic(self, dyn: DynamicWarp) -> Decoded | None:
        groups = dyn.groups
        warp, mask = next(iter(groups.items()))
        op = self._fetch(warp, Split(0, dyn.pc, mask))
        if self.icache is not None:  # rule 7: a pool warp fetches as a split does
            there = self.fetch_line(self.pool_fetched, dyn.ident, dyn.pc, [self.counters])
            if there > self.t:
                dyn.ready_at = there
                return None
        if any(w.scoreboard.dependency_mask(op.operands, m) for w, m in groups.items()):
            return None
        if any(w.scoreboard.full(op.destination, m) for w, m in groups.items()):
            return None
        if self.unit_free(op) > self.t:
            return None
        return op

    def _next_event(self) -> int | None:
        times = [d.ready_at for d in self.pool if d.ready_at > self.t]
        base = super()._next_event()
        return min([*times, *([] if base is None else [base])], default=None)

    # -- issue ----------------------------------------------------------------------------------

    def _issue(self, dyn: DynamicWarp, op: Decoded) -> None:  # type: ignore[override]
        t, pc, ins = self.t, dyn.pc, op.ins
        if self.counters.warp_instructions >= self.checkpoint:
            self._at_checkpoint(None)
        self.pool.remove(dyn)
        self.pool_fetched.pop(dyn.ident, None)
        passes = self.passes(dyn.mask)
        slot_of = {thread: i for i, thread in enumerate(dyn.slots) if thread is not None}
        next_slots: dict[int, list[Thread | None]] = {}
        accesses: list[tuple[MemAccess, np.ndarray]] = []
        blocks: dict[int, ResidentBlock] = {}
        for warp, mask in dyn.groups.items():
            lanes = lane_array(mask)
            out = execute(ins, pc, warp.regs, lanes, warp.mem, warp.ctx)
            ex = self._executed(warp, Split(0, pc, mask), op, out)
            warp.unit.execute(ex)
            for target, lane_mask in ex.targets.items():
                slots = next_slots.setdefault(target, [None] * self.geometry.warp_size)
                for lane in lanes_of(lane_mask):
                    slots[slot_of[warp, lane]] = (warp, lane)
            if out.access is not None:
                positions = np.array([slot_of[warp, int(lane)] for lane in lanes])
                accesses.append((out.access, positions))
            warp.count_issue(mask)
            warp.counters.warp_instructions += 1
            warp.counters.thread_instructions += len(lanes)
            if ex.barrier or ex.exited:
                blocks[warp.block.index] = warp.block
        last = t + passes - 1
        lat = self.config.latencies
        update = last + lat.outcome_delay(op.resolved)  # rule 1 (no stack-less under DWF)
        access, positions = self._combined(accesses)
        slot = next(iter(dyn.groups)).slot  # (no stack-less tree under DWF: any slot)
        done = self._complete(op, access, positions, t, passes, slot, [self.counters])
        for warp, mask in dyn.groups.items():
            warp.settled = update + 1  # the outcome's one clock (rule 1)
            self._reserve(warp, op, mask, done)
        outcome = op.control or bool(blocks)
        self.events.issue(op.profile, dyn.size, update=outcome, squeeze=self.config.squeezes)
        spill = self.image.spills.get(pc)
        self.counters.count_issue(dyn.size, passes, hint=op.hint, spill=spill)
        if self.keep_trace:
            self.trace.append(IssueRecord(t, dyn.ident, 0, pc, dyn.mask, passes))
        self.port_free = t + passes
        delay = lat.branch + (lat.squeeze if self.config.squeezes else 0)
        continuation = (pc + ILEN_BYTES) & MASK32
        for target, slots in next_slots.items():
            ready = t + passes if target == continuation and not op.control else update + delay
            self._place(target, slots, ready)
        for block in blocks.values():
            self._check_barrier(block)
        if blocks:  # some threads exited or wait: a warp may be done
            for warp in [w for w in self.resident if w.done]:
                self._retire(warp)

    @staticmethod
    def _combined(
        accesses: list[tuple[MemAccess, np.ndarray]],
    ) -> tuple[MemAccess | None, np.ndarray]:
        """One access over every static warp's lanes (coalesced as one warp instruction)."""
        if not accesses:
            return None, np.zeros(0, np.int64)
        first = accesses[0][0]
        addrs = np.concatenate([a.addrs for a, _ in accesses])
        positions = np.concatenate([p for _, p in accesses])
        return MemAccess(first.kind, addrs, first.size), positions

    # -- barriers -------------------------------------------------------------------------------

    def _release(self, warp: ResidentWarp, waiting: int, at: int) -> None:
        """The threads that waited at the completed barrier go back to the pool after it,
        ready as rule 4 has it (the release reaches the threads' PCs in cycle ``at``)."""
        clocks = warp.unit.release(waiting)
        warp.settled = at + clocks
        self._place_static(warp, waiting, warp.settled - 1 + self.config.latencies.branch)
