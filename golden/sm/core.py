"""The cycle-level SM (docs/architecture.md): the golden model the HDL is held to, cycle by
cycle (docs/sm-hardware.md, "Timing rules the hardware fixes").

One SM runs the blocks of a launch, as many at a time as its warp slots hold. Every cycle the
single issue port, when free, issues one warp instruction of one ready warp split, chosen by the
warp scheduler (:mod:`reconverge.golden.sm.scheduler`: greedy-then-oldest or loose round robin
across warps, round robin across the splits of a warp, seed 002 Sec 5). The instruction
occupies the lanes for its issue passes p (W/L, or the squeezed quarter-warps with hws, seed 001
Sec 4.2/4.3). Issued at t, its outcome reaches the warp's divergence unit in cycle
u = t + p - 1, or ``resolve`` cycles later when the lanes compute it (a branch, jump or exit),
and the unit takes c clocks: the warp's splits show, and may issue, from V = u + c (rule 1); a
redirected split waits for the branch latency (rule 2). A memory instruction's LSU cycles
follow its passes through the pipeline (rule 3); a completed barrier is released from V
(rule 4); a block enters free warp slots (rule 5).

Instructions execute functionally at issue (:func:`~reconverge.golden.semantics.execute`), so
results never depend on timing; the scoreboard holds dependent instructions until the writeback
time (u + latency; for memory, the last LSU cycle + latency).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from reconverge.golden.blocks.divergence import (
    DivergenceUnit,
    Executed,
    Split,
    TableOverflow,
    lanes_of,
)
from reconverge.golden.blocks.scoreboard import Scoreboard, make_scoreboard
from reconverge.golden.blocks.squeezer import quarter_mask, squeeze
from reconverge.golden.blocks.stackless import StacklessControl
from reconverge.golden.blocks.units import make_unit
from reconverge.golden.config import ScoreboardKind, SMConfig
from reconverge.golden.faults import (
    DeadlockFault,
    FaultCode,
    SimtFault,
    StepLimitFault,
    TableOverflowFault,
    barrier_fault,
    format_threads,
    instruction_text,
)
from reconverge.golden.functional import LaunchConfig, RunResult, decode_word, initial_registers
from reconverge.golden.image import Image
from reconverge.golden.isa import ILEN_BYTES, MASK32, REG_A0, REG_A7, REG_SP, Instr
from reconverge.golden.memory import GlobalMemory, LocalMemory, SharedMemory, WarpMemory
from reconverge.golden.policies import Policy
from reconverge.golden.progress import EVERY, Callback, launch_bytes
from reconverge.golden.semantics import MemAccess, Outcome, WarpContext, execute
from reconverge.golden.sm.cache import CacheModel
from reconverge.golden.sm.events import Events, Profile, profile
from reconverge.golden.sm.lsu import (
    UNCACHED,
    AccessCost,
    access_cost,
    shares_tree,
    transaction_lines,
)
from reconverge.golden.sm.metrics import Counters, Metrics
from reconverge.golden.sm.program import Program, is_control
from reconverge.golden.sm.scheduler import select

#: Called after each issue with the record and the issuing warp's divergence unit.
Observer = Callable[["IssueRecord", DivergenceUnit], None]


@lru_cache(maxsize=1 << 16)
def lane_array(mask: int) -> np.ndarray:
    """The lanes of ``mask`` as increasing indices (a read-only array, shared)."""
    lanes = np.array(lanes_of(mask), dtype=np.intp)
    lanes.flags.writeable = False
    return lanes


@lru_cache(maxsize=1 << 16)
def squeezed_passes(mask: int, warp_size: int, simd_width: int) -> int:
    return squeeze(mask, warp_size, simd_width).passes


REG_RA, REG_T0 = 1, 5
#: The registers a return jumps through (the RISC-V calling convention's ra and t0).
RETURN_REGS = (REG_RA, REG_T0)


def operands(ins: Instr) -> tuple[int, ...]:
    """The registers an instruction reads or writes (the scoreboard checks all of them);
    ``ecall`` reads a7 and a0 (the exit system call and its code)."""
    if ins.name == "ecall":
        return (REG_A0, REG_A7)
    spec = ins.spec
    return (
        ins.rs1 if spec.reads_rs1 else 0,
        ins.rs2 if spec.reads_rs2 else 0,
        ins.rd if spec.writes_rd else 0,
    )


def destination(ins: Instr) -> int:
    """The register ``ins`` writes (0 for none), which the scoreboard reserves."""
    return ins.rd if ins.spec.writes_rd else 0


def is_memory(ins: Instr) -> bool:
    """A load, store or AMO: it needs the LSU (timing rule 3)."""
    spec = ins.spec
    return spec.is_load or spec.is_store or spec.is_amo


def is_call(ins: Instr) -> bool:
    """A jump that links a register: the divergence units track calls (seed 000 Listing 1)."""
    return ins.spec.is_jump and ins.rd != 0


def is_return(ins: Instr) -> bool:
    """``jalr x0`` through ra or t0: a return."""
    return ins.name == "jalr" and ins.rd == 0 and ins.rs1 in RETURN_REGS


@dataclass(frozen=True, slots=True)
class Decoded:
    """An instruction word as the SM's timing uses it, decoded once per word
    (:func:`decoded`), so stores into code are honoured."""

    ins: Instr
    operands: tuple[int, ...]  # the scoreboard checks them
    destination: int  # reserved in the scoreboard (0: none)
    memory: bool  # goes to the LSU
    control: bool  # a branch or jump
    call: bool
    ret: bool
    hint: bool  # rhint
    resolved: bool  # the lanes compute its outcome: a branch, a jump, ecall (rule 1)
    profile: Profile  # its per-thread energy events and operation class


@lru_cache(maxsize=1 << 16)
def decoded(word: int) -> Decoded:
    """The instruction ``word`` (an :class:`IllegalInstructionFault` if it is none)."""
    ins = decode_word(word)
    return Decoded(
        ins,
        operands(ins),
        destination(ins),
        is_memory(ins),
        is_control(ins),
        is_call(ins),
        is_return(ins),
        ins.name == "rhint",
        is_control(ins) or ins.name == "ecall",
        profile(ins),
    )


def lsu_last_cycle(start: int, cycles: int, skipped: set[int]) -> int:
    """The last of ``cycles`` LSU cycles that run one per cycle from ``start``, passing over
    the ``skipped`` cycles (stack-less: the serving warp's control used the shared arbiter tree
    the cycle before, seed 000 Sec 4.3; docs/sm-hardware.md rule 3)."""
    cycle = start - 1
    for _ in range(cycles):
        cycle += 1
        while cycle in skipped:
            cycle += 1
    return cycle


@dataclass
class _LsuOp:
    """The memory instruction the LSU serves: its warp slot, LSU cycles from ``start``, the
    cycles its warp's stack-less control took the arbiter tree, the latency after the last LSU
    cycle, and its write-back (heap sequence number, 0 for none)."""

    slot: int
    start: int
    cycles: int
    latency: int
    skipped: set[int] = field(default_factory=set)
    writeback: int = 0

    @property
    def last(self) -> int:
        return lsu_last_cycle(self.start, self.cycles, self.skipped)

    @property
    def done(self) -> int:
        return self.last + self.latency


@dataclass(frozen=True, slots=True)
class IssueRecord:
    """One issued warp instruction (the issue trace, agreement level 3)."""

    cycle: int
    warp: int  # warp id in the launch: block * warps per block + warp in block
    split: int
    pc: int
    mask: int
    passes: int

    def to_json(self) -> dict[str, int]:
        return {
            "cycle": self.cycle,
            "warp": self.warp,
            "split": self.split,
            "pc": self.pc,
            "mask": self.mask,
            "passes": self.passes,
        }


@dataclass
class SMResult(RunResult):
    """A functional result plus the metrics and (when asked for) the issue trace."""

    metrics: Metrics | None = None
    trace: list[IssueRecord] = field(default_factory=list)
    events: Events | None = None  # what the energy model prices


class ResidentWarp:
    """A resident warp: its registers, memories, divergence unit, scoreboard and timing."""

    def __init__(
        self, sm: SM, block: ResidentBlock, index: int, threads: int, age: int, slot: int
    ) -> None:
        geometry = sm.launch.geometry
        width = geometry.warp_size
        self.block = block
        self.index = index
        self.gid = block.index * block.warps_total + index
        self.age = age
        self.slot = slot
        self.settled = 0  # V of the last update: none of the warp's splits issues before
        self.writes_done = 0  # the latest write-back release of its instructions
        self.first_thread = index * width
        self.threads = threads
        self.ctx = WarpContext.of_warp(
            grid=sm.launch.grid,
            block=block.index,
            block_size=sm.launch.block,
            warp=index,
            warp_size=width,
        )
        local = LocalMemory(width, sm.launch.memmap)
        self.mem = WarpMemory(
            sm.memory, block.shared, local, block=block.index, first_thread=self.first_thread
        )
        self.regs = initial_registers(width, sm.image, sm.launch)
        valid = (1 << threads) - 1
        self.unit = sm.make_unit(valid, self.regs)
        self.scoreboard: Scoreboard = make_scoreboard(
            sm.config.scoreboard_kind is ScoreboardKind.MASKED,
            width,
            entries=geometry.scoreboard_entries,
        )
        self.ready_at: dict[int, int] = {}
        self.last_sid = -1
        self.bar_pc: dict[int, int] = {}  # lane -> pc of the bar it waits at
        self.exit_codes = np.zeros(width, np.int32)
        self.exited = np.zeros(width, bool)
        self.issued: dict[int, int] = {}  # active mask -> warp instructions issued with it
        #: the instruction each split has fetched (rule 7): sid -> (its PC, the cycle it is there)
        self.fetched: dict[int, tuple[int, int]] = {}
        self.counters = Counters(warp=self.gid)
        self.splits: list[Split] = []
        self.ready_threads = self.live_threads = 0
        self.expose()
        self.counters.add_occupancy(self.unit.occupancy())
        self.counters.max_splits = len(self.splits)
        self.counted = 0  # its resident cycles and splits are counted up to this cycle

    @property
    def done(self) -> bool:
        return self.unit.done

    @property
    def free_at(self) -> int | None:
        """Timing rule 5: the cycle from which the warp's slot is free (no live thread, every
        write-back done), None while it has live threads."""
        return max(self.settled, self.writes_done) if self.done else None

    def thread(self, lane: int) -> int:
        return self.first_thread + lane

    def count_issue(self, mask: int) -> None:
        """One instruction issued for the threads of ``mask`` (:attr:`instructions`)."""
        self.issued[mask] = self.issued.get(mask, 0) + 1

    @property
    def instructions(self) -> np.ndarray:
        """Instructions executed per lane."""
        out = np.zeros(len(self.exited), np.int64)
        for mask, issued in self.issued.items():
            out[lane_array(mask)] += issued
        return out

    def expose(self) -> None:
        """Take the unit's schedulable splits, and count their threads and the live ones (call
        :meth:`count_cycles` first)."""
        self.splits = self.unit.splits()
        self.ready_threads = sum(s.mask.bit_count() for s in self.splits)
        self.live_threads = self.unit.live.bit_count()

    def count_cycles(self, t: int) -> None:
        """Count the cycles up to ``t`` as resident with the current splits (call it before
        the splits change and when the warp leaves)."""
        span = t - self.counted
        counters = self.counters
        counters.live_cycles += span
        counters.split_cycles += span * len(self.splits)
        counters.ready_thread_cycles += span * self.ready_threads
        counters.live_thread_cycles += span * self.live_threads
        self.counted = t


class ResidentBlock:
    """A resident thread block: its shared memory and its warps."""

    def __init__(self, sm: SM, index: int, warps_total: int) -> None:
        self.index = index
        self.warps_total = warps_total
        self.shared = SharedMemory(sm.launch.memmap)
        self.warps: list[ResidentWarp] = []


class SM:
    """One run of ``image`` over the launch ``launch`` on an SM configured by ``config``
    (``program``: the image's decoded program, when the caller has made it already)."""

    def __init__(
        self,
        image: Image,
        launch: LaunchConfig,
        config: SMConfig,
        *,
        trace: bool = False,
        observer: Observer | None = None,
        progress: Callback | None = None,
        program: Program | None = None,
    ) -> None:
        self.image = image
        self.launch = launch
        self.config = config
        self.progress = progress
        # the next warp instruction count at which to report progress or stop at the limit
        self.checkpoint = min(launch.step_limit, EVERY) if progress else launch.step_limit
        self.geometry = launch.geometry
        self.program = program or Program(image)
        self.memory = GlobalMemory(launch.memmap)
        self.memory.load_image(image)
        self.keep_trace = trace or observer is not None
        self.observer = observer
        self.trace: list[IssueRecord] = []
        width = self.geometry.warp_size
        self.warps_per_block = -(-launch.block // width)
        if self.warps_per_block > self.geometry.warps:
            raise ValueError(
                f"a block of {launch.block} threads needs {self.warps_per_block} warps of "
                f"{width}, more than the {self.geometry.warps} warp slots of the SM"
            )
        shape = (launch.grid, launch.block)
        self.exit_codes = np.zeros(shape, np.int32)
        self.thread_instructions = np.zeros(shape, np.int64)
        self.exited = np.zeros(shape, bool)
        self.counters = Counters()
        self.events = Events()
        self.warp_counters: list[Counters] = []
        self.resident: list[ResidentWarp] = []
        self.slots: list[ResidentWarp | None] = [None] * self.geometry.warps
        self.blocks: list[ResidentBlock] = []
        self.next_block = 0
        self.last_dispatch = -1  # the initial dispatch is in cycle -1 (rule 5)
        self.age = 0
        self.t = 0
        self.port_free = 0
        self.lsu_free = 0
        self.div_free = 0  # rule 6: the first cycle in which a division may issue
        self.lsu: _LsuOp | None = None
        self.idle = 0
        self.end = 0
        self.last_warp: ResidentWarp | None = None
        self.last_slot = -1
        self.writebacks: list[tuple[int, int, ResidentWarp, int, int]] = []
        self.seq = 0
        self.stop: int | None = None  # the cycle the hardware finds the fault in (_stopped)
        # golden's caches (rules 7 and 8; None: every fetch hits, every access pays global_)
        miss = config.latencies.global_
        self.icache = None if config.icache is None else CacheModel(config.icache, miss)
        self.l1d = None if config.l1d is None else CacheModel(config.l1d, miss)

    # -- construction -----------------------------------------------------------------------

    def make_unit(self, valid: int, regs: np.ndarray) -> DivergenceUnit:
        """A warp's divergence unit: the policy variant's (``golden.blocks.units``)."""
        entry = self.image.entry & MASK32
        pipelined = self.config.latencies.pipelined
        return make_unit(
            self.config.variant, self.geometry, valid, entry, regs, pipelined=pipelined
        )

    # -- the cycle loop -----------------------------------------------------------------------

    def run(self) -> SMResult:
        fault: SimtFault | None = None
        try:
            self._loop()
        except SimtFault as exc:
            fault = exc
        # a run that stops (a fault, the step limit) still took the cycles of what it issued;
        # one stopped by an instruction's fault ends with the cycle the hardware finds it in
        last_issue_done = max(self.t, self.port_free)
        self.end = max(self.end, self.port_free) if self.stop is None else self.stop + 1
        if fault is None:  # the port is idle until the last exit settles, the last write lands
            self.idle += self.end - last_issue_done
        for warp in self.resident:
            warp.count_cycles(self.t)
            self._record(warp)
        metrics = Metrics(
            self.counters,
            cycles=self.end,
            idle_cycles=self.idle,
            warp_size=self.geometry.warp_size,
            simd_width=self.geometry.simd_width,
            warps=sorted(
                self.warp_counters + [w.counters for w in self.resident], key=lambda c: c.warp
            ),
        )
        return SMResult(
            self.exit_codes,
            self.thread_instructions,
            self.counters.warp_instructions,
            self.exited,
            self.memory,
            fault,
            metrics=metrics,
            trace=self.trace,
            events=self.events,
        )

    def _loop(self) -> None:
        while True:
            self._writeback(self.t)
            self._dispatch()
            if not self.resident and self.next_block >= self.launch.grid:
                break
            if self.t >= self.port_free:
                choice = self._select()
                if choice is not None:
                    self._issue(*choice)
                    self._advance(self.port_free)
                    continue
                nxt = self._next_event()
                if nxt is None:
                    raise self._deadlock()
                self.idle += nxt - self.t
                self._advance(nxt)
            else:
                self._advance(self.port_free)

    def _advance(self, t: int) -> None:
        """Move time to ``t`` (the warps count their cycles when their splits change)."""
        if t > self.config.max_cycles:
            raise self._watchdog()
        self.t = t

    def _writeback(self, t: int) -> None:
        while self.writebacks and self.writebacks[0][0] <= t:
            _, _, warp, reg, mask = heapq.heappop(self.writebacks)
            warp.scoreboard.release(reg, mask)

    def _slot_free_at(self, slot: int) -> int | None:
        """The cycle from which warp slot ``slot`` is free (-1: never used), None if taken."""
        warp = self.slots[slot]
        return -1 if warp is None else warp.free_at

    def _dispatch_cycle(self) -> int | None:
        """Rule 5: the first cycle in which the next block's ceil(B/W) slots are free (blocks
        enter in order), None while too many slots are taken."""
        if len(self.slots) - len(self.resident) < self.warps_per_block:
            return None  # a resident warp holds its slot (it retires when done)
        times = sorted(t for t in map(self._slot_free_at, range(len(self.slots))) if t is not None)
        if len(times) < self.warps_per_block:
            return None
        return max(times[self.warps_per_block - 1], self.last_dispatch)

    def _dispatch(self) -> None:
        """Start the blocks whose dispatch cycle has come, in order (rule 5): each in the
        lowest free slots, its warps in order, ready from the cycle after the dispatch. The
        model may notice a dispatch cycle late (it jumps over cycles in which the issue port is
        busy): the warps still get the dispatch cycle's timing."""
        width = self.geometry.warp_size
        while self.next_block < self.launch.grid:
            at = self._dispatch_cycle()
            if at is None or at > self.t:
                return
            slots = [
                slot
                for slot in range(len(self.slots))
                if (free := self._slot_free_at(slot)) is not None and free <= at
            ][: self.warps_per_block]
            block = ResidentBlock(self, self.next_block, self.warps_per_block)
            self.next_block += 1
            self.last_dispatch = at
            for index, slot in enumerate(slots):
                threads = min(width, self.launch.block - index * width)
                warp = ResidentWarp(self, block, index, threads, self.age, slot)
                self.age += 1
                warp.settled = warp.counted = at + 1  # resident from the cycle after
                for split in warp.splits:
                    warp.ready_at[split.sid] = at + 1
                block.warps.append(warp)
                self.slots[slot] = warp
                self.resident.append(warp)
            self.blocks.append(block)

    # -- scheduling ---------------------------------------------------------------------------

    def _select(self) -> tuple[ResidentWarp, Split, Decoded] | None:
        """The scheduler's choice (:func:`~reconverge.golden.sm.scheduler.select`) with the
        instruction of the chosen split."""
        fetched: list[Decoded] = []

        def probe(warp: ResidentWarp, split: Split) -> tuple[bool, bool]:
            try:
                op = self._fetch(warp, split)
            except SimtFault as fault:
                raise self._stopped(fault, self.t, 1) from None
            if self.icache is not None:  # rule 7: not ready until its instruction is there
                there = self.fetch_line(
                    warp.fetched, split.sid, split.pc, (self.counters, warp.counters)
                )
                if there > self.t:
                    warp.ready_at[split.sid] = there
                    return True, 0
            fetched.append(op)
            # a pending write for its threads, or no free entry for its destination (Fig 8)
            hazard = bool(warp.scoreboard.dependency_mask(op.operands, split.mask)) or (
                warp.scoreboard.full(op.destination, split.mask)
            )
            return hazard, self.unit_free(op)

        choice = select(
            self.resident,
            self.config.scheduler,
            last_slot=self.last_slot,
            greedy=self.last_warp is not None,
            t=self.t,
            splits=lambda w: w.splits,
            ready_at=lambda w, s: w.ready_at.get(s.sid, 0),
            probe=probe,
        )
        return None if choice is None else (*choice, fetched[-1])

    def fetch_line(
        self, fetched: dict[int, tuple[int, int]], key: int, pc: int,
        counters: Sequence[Counters],
    ) -> int:  # fmt: skip
        """Rule 7: the cycle the instruction at ``pc`` of the split ``key`` is in its buffer
        (``fetched``): fetched through the instruction cache now, unless the split holds it
        (the access is counted in ``counters``)."""
        held = fetched.get(key)
        if held is None or held[0] != pc:
            assert self.icache is not None
            there, missed = self.icache.read(self.icache.cache.line(pc), self.t)
            for c in counters:
                c.icache_accesses += 1
                c.icache_misses += missed
            held = fetched[key] = (pc, there)
        return held[1]

    def unit_free(self, op: Decoded) -> int:
        """The first cycle in which the unit ``op`` alone may use is idle: the LSU for a
        memory instruction (rule 3), the divider for a division (rule 6), else 0."""
        if op.memory:
            return self.lsu_free
        return self.div_free if op.profile.op == "div" else 0

    def _fetch(self, warp: ResidentWarp, split: Split) -> Decoded:
        try:
            return decoded(self.memory.fetch(split.pc))
        except SimtFault as fault:
            lane = lanes_of(split.mask)[0]
            raise fault.locate(
                block=warp.block.index, thread=warp.thread(lane), pc=split.pc
            ) from None

    def _next_event(self) -> int | None:
        """The earliest future time at which a split could become ready or a block enter."""
        times = [t for t in (self.lsu_free, self.div_free) if t > self.t]
        if self.writebacks:
            times.append(self.writebacks[0][0])
        for warp in self.resident:
            for split in warp.splits:
                ready = max(warp.ready_at.get(split.sid, 0), warp.settled)
                if ready > self.t:
                    times.append(ready)
        if self.next_block < self.launch.grid:
            at = self._dispatch_cycle()
            if at is not None and at > self.t:
                times.append(at)
        return min(times, default=None)

    # -- issue ----------------------------------------------------------------------------------

    def passes(self, mask: int) -> int:
        """Issue passes of a warp instruction with active ``mask``: W/L, or with hws the
        quarter-warps left after the lane-preserving squeeze (seed 001 Sec 4.2/4.3), or
        without the squeeze the quarter-warps that hold an active thread (its warp scaling
        alone, Sec 6.2)."""
        g = self.geometry
        if self.config.squeezes:
            return squeezed_passes(mask, g.warp_size, g.simd_width)
        if self.config.hws:
            return quarter_mask(mask, g.warp_size, g.simd_width).bit_count()
        return g.passes

    def _issue(self, warp: ResidentWarp, split: Split, op: Decoded) -> None:
        t, pc, ins = self.t, split.pc, op.ins
        if self.counters.warp_instructions >= self.checkpoint:
            self._at_checkpoint(warp.block.index)
        lanes = lane_array(split.mask)
        passes = self.passes(split.mask)
        # u: the outcome reaches the divergence unit (rule 1); under stack-less a write to sp
        # is an outcome the lanes compute too (the control orders threads by SP:PC)
        stackless = self.config.policy is Policy.STACKLESS
        resolved = op.resolved or (stackless and op.destination == REG_SP)
        update = t + passes - 1 + self.config.latencies.outcome_delay(resolved)
        try:
            out = execute(ins, pc, warp.regs, lanes, warp.mem, warp.ctx)
        except SimtFault as fault:
            raise self._stopped(fault, t, passes) from None
        ex = self._executed(warp, split, op, out)
        before = {(s.sid, s.pc) for s in warp.splits}
        try:
            clocks = warp.unit.execute(ex)
        except TableOverflow as exc:
            self.stop = update + 1  # the unit's flag rises the clock after the update
            raise TableOverflowFault(
                str(exc),
                block=warp.block.index,
                thread=warp.thread(int(lanes[0])),
                pc=pc,
                instr=instruction_text(ins.encode(), pc),
            ) from None
        warp.settled = update + clocks
        outcome = op.control or bool(ex.exited or ex.barrier)
        self.events.issue(op.profile, len(lanes), update=outcome, squeeze=self.config.squeezes)
        if stackless and (outcome or op.destination == REG_SP):
            self._arbitrates(warp, update)  # the control uses the arbiter tree after u
            self.events.arbitrations += 1
        counters = (self.counters, warp.counters)
        done = self._complete(op, out.access, lanes, t, passes, warp.slot, counters)
        self._reserve(warp, op, split.mask, done)
        self._count(warp, split, op, lanes, passes)
        self.port_free = t + passes
        self.last_warp = warp
        self.last_slot = warp.slot
        warp.last_sid = split.sid
        warp.fetched.pop(split.sid, None)  # the split's next instruction is fetched anew
        warp.count_cycles(t)
        warp.expose()
        self._time_splits(warp, split, ex, before)
        warp.counters.max_splits = max(warp.counters.max_splits, len(warp.splits))
        if ex.barrier or ex.exited:
            self._check_barrier(warp.block)
        if warp.done:
            self._retire(warp)

    def _stopped(self, fault: SimtFault, t: int, passes: int) -> SimtFault:
        """``fault`` of the instruction issued at ``t`` in ``passes`` passes, with the cycle
        the hardware reports it in: the execute stage of its first pass for a fault at issue
        (docs/sm-hardware.md, "Faults in issue order"), else of its last pass."""
        code = FaultCode.of(fault)
        last = t if code is not None and code.at_issue else t + passes - 1
        self.stop = last + self.config.latencies.execute
        return fault

    def _executed(self, warp: ResidentWarp, split: Split, op: Decoded, out: Outcome) -> Executed:
        exited = 0
        if out.exit_codes is not None:
            exited = split.mask
            warp.exit_codes[out.lanes] = out.exit_codes
            warp.exited[out.lanes] = True
        barrier = split.mask if out.barrier else 0
        if barrier:
            for lane in out.lanes.tolist():
                warp.bar_pc[lane] = split.pc
        targets = {} if exited or barrier else out.targets(split.mask)
        rpc = self.program.rpc(split.pc) if op.control and self.config.explicit else None
        return Executed(
            sid=split.sid,
            pc=split.pc,
            mask=split.mask,
            targets=targets,
            exited=exited,
            barrier=barrier,
            control=op.control,
            rpc=rpc,
            call=op.call,
            ret=op.ret,
            sp_written=op.destination == REG_SP,
        )

    def _complete(
        self, op: Decoded, access: MemAccess | None, lanes: np.ndarray, t: int, passes: int,
        slot: int, counters: Sequence[Counters],
    ) -> int:  # fmt: skip
        """The write-back time of ``op`` issued at ``t`` in ``passes`` passes from warp slot
        ``slot``: the last pass + its latency or, for a memory access, the LSU's last cycle +
        the memory latency (rule 3). A memory access occupies the LSU (:attr:`lsu`) and is
        counted in ``counters``."""
        lat = self.config.latencies
        last_pass = t + passes - 1
        if access is None:
            kind = op.profile.op
            if kind == "mul":
                return last_pass + lat.mul
            if kind == "div":
                self.div_free = last_pass + lat.div_interval
                return last_pass + lat.div
            return last_pass + lat.alu
        cost = access_cost(
            access,
            lanes,
            self.launch.memmap,
            warp_size=self.geometry.warp_size,
            line_bytes=self.config.line_bytes,
            banks=self.config.shared_banks,
        )
        for c in counters:
            c.memory_transactions += cost.transactions
            c.shared_transactions += cost.shared_cycles
            c.bank_conflicts += cost.bank_conflicts
        memory = lat.global_ if cost.transactions else lat.shared
        # the addresses reach the LSU in the execute stage of the last pass; the shared tree
        # takes them from the LSU's address buffer the cycle after (rule 3)
        tree_wait = int(shares_tree(self.config.policy) and lat.pipelined)
        start, cycles = last_pass + lat.execute + 1 + tree_wait, max(cost.cycles, 1)
        if self.l1d is not None and cost.transactions and access.kind not in UNCACHED:
            memory = self._through_l1d(access, lanes, slot, start, cost, counters)
        self.lsu = _LsuOp(slot, start, cycles, memory)
        self.lsu_free = self.lsu.last + 1
        self.end = max(self.end, self.lsu.done)
        return self.lsu.done

    def _through_l1d(
        self, access: MemAccess, lanes: np.ndarray, slot: int, start: int, cost: AccessCost,
        counters: Sequence[Counters],
    ) -> int:  # fmt: skip
        """Rule 8: a load's or store's line transactions (``cost``) through the L1 data cache,
        the k-th in LSU cycle ``start`` + k; the latency from the last LSU cycle until the
        destination is released: a load's last data (and the shared data, after shared bank
        cycles), a store's write-through to memory (``global_``)."""
        assert self.l1d is not None
        lat = self.config.latencies
        lines = transaction_lines(
            access, lanes, self.launch.memmap, warp_size=self.geometry.warp_size,
            line_bytes=self.config.line_bytes, slot=slot,
        )  # fmt: skip
        if access.kind == "store":
            for line, local in lines.items():
                self.l1d.write(line, keep=local)
            return lat.global_
        last = start + cost.cycles - 1
        ready = last + lat.shared if cost.shared_cycles else 0  # shared bank cycles follow
        misses = 0
        for k, line in enumerate(lines):
            there, missed = self.l1d.read(line, start + k)
            ready = max(ready, there)
            misses += missed
        for c in counters:
            c.l1d_accesses += len(lines)
            c.l1d_misses += misses
        return ready - last

    def _arbitrates(self, warp: ResidentWarp, update: int) -> None:
        """Rule 3 / seed 000 Sec 4.3 (stack-less): the control of ``warp`` takes the arbiter
        tree for the update in cycle ``update``, in the update's tree clock (the cycle after
        it on the hardware). The tree finds the LSU's next line a cycle ahead (from the cycle
        the instruction starts, before its first LSU cycle): if it would find one for that
        slot's memory instruction then, the next cycle has no LSU cycle, and the remaining LSU
        cycles and the write-back move one cycle later."""
        assert isinstance(warp.unit, StacklessControl)
        cycle = update + warp.unit.tree_clock
        op = self.lsu
        if op is None or op.slot != warp.slot or not op.start - 1 <= cycle < op.last:
            return
        op.skipped.add(cycle + 1)
        self.lsu_free = op.last + 1
        self.end = max(self.end, op.done)
        if op.writeback:
            entry = next(e for e in self.writebacks if e[1] == op.writeback)
            self.writebacks.remove(entry)
            heapq.heapify(self.writebacks)
            self._push_writeback(op.done, op.writeback, entry[2], entry[3], entry[4])

    def _reserve(self, warp: ResidentWarp, op: Decoded, mask: int, done: int) -> None:
        """Reserve the destination of ``op`` for the threads of ``mask`` until ``done``."""
        if op.destination:
            warp.scoreboard.reserve(op.destination, mask)
            self.seq += 1
            self._push_writeback(done, self.seq, warp, op.destination, mask)
            if op.memory:
                assert self.lsu is not None
                self.lsu.writeback = self.seq

    def _push_writeback(self, done: int, seq: int, warp: ResidentWarp, reg: int, mask: int) -> None:
        heapq.heappush(self.writebacks, (done, seq, warp, reg, mask))
        warp.writes_done = max(warp.writes_done, done)
        self.end = max(self.end, done)

    def _count(
        self, warp: ResidentWarp, split: Split, op: Decoded, lanes: np.ndarray, passes: int
    ) -> None:
        active = len(lanes)
        warp.count_issue(split.mask)
        spill = self.image.spills.get(split.pc)
        occupancy = warp.unit.occupancy()
        for counters in (self.counters, warp.counters):
            counters.add_occupancy(occupancy)
            counters.count_issue(active, passes, hint=op.hint, spill=spill)
        if self.keep_trace:
            record = IssueRecord(self.t, warp.gid, split.sid, split.pc, split.mask, passes)
            self.trace.append(record)
            if self.observer is not None:
                self.observer(record, warp.unit)

    def _time_splits(
        self, warp: ResidentWarp, issued: Split, ex: Executed, before: set[tuple[int, int]]
    ) -> None:
        """Rule 2: the split that continues is ready when the update has settled (V); every
        split the update redirected or exposed pays the branch latency from V - 1 (+ the
        stack-less arbitration, + the hws squeezer)."""
        delay = self.config.latencies.branch
        if self.config.policy is Policy.STACKLESS:
            delay += self.config.latencies.arbiter
        if self.config.squeezes:
            delay += self.config.latencies.squeeze  # a new active mask goes through the squeezer
        continuation = (issued.pc + ILEN_BYTES) & MASK32
        continued = False
        for split in warp.splits:
            if split.sid == issued.sid and split.pc == continuation and not ex.control:
                warp.ready_at[split.sid] = warp.settled
                continued = True
            elif (split.sid, split.pc) not in before:
                warp.ready_at[split.sid] = warp.settled - 1 + delay
        if not continued:
            warp.last_sid = -1  # the splits changed: round robin restarts at the first

    # -- barriers, retirement, faults -----------------------------------------------------------

    def _check_barrier(self, block: ResidentBlock) -> None:
        """Release the block's barrier once every live thread of the block waits at it."""
        if any(w.unit.live & ~w.unit.waiting for w in block.warps):
            return
        waiters: dict[int, list[int]] = {}
        exited: list[int] = []
        for warp in block.warps:
            for lane, pc in warp.bar_pc.items():
                waiters.setdefault(pc, []).append(warp.thread(lane))
            exited += [warp.thread(int(lane)) for lane in np.flatnonzero(warp.exited)]
        if not waiters:
            return
        fault = barrier_fault(block.index, waiters, exited, self.launch.block)
        if fault is not None:
            raise fault
        at = max(w.settled for w in block.warps)  # every update of the block has settled
        for warp in block.warps:
            waiting = warp.unit.waiting
            warp.bar_pc.clear()
            if waiting:
                self._release(warp, waiting, at)

    def _release(self, warp: ResidentWarp, waiting: int, at: int) -> None:
        """Rule 4: the threads of ``warp`` that waited at the completed barrier continue after
        it; the release reaches the unit in cycle ``at`` and takes c_r clocks; the released
        splits pay the branch latency from ``at`` + c_r - 1."""
        before = {(s.sid, s.pc) for s in warp.splits}
        clocks = warp.unit.release(waiting)
        warp.settled = at + clocks
        if self.config.policy is Policy.STACKLESS:
            self._arbitrates(warp, at)
        warp.count_cycles(self.t)
        warp.expose()
        for split in warp.splits:
            if (split.sid, split.pc) not in before:
                warp.ready_at[split.sid] = warp.settled - 1 + self.config.latencies.branch

    def _retire(self, warp: ResidentWarp) -> None:
        # the run lasts until the update that retired the warp has settled (behind the
        # pipeline, an exit reaches the unit after the ecall's last pass)
        self.end = max(self.end, warp.settled)
        warp.count_cycles(self.t)
        self.resident.remove(warp)
        self._record(warp)
        self.warp_counters.append(warp.counters)
        if self.last_warp is warp:
            self.last_warp = None

    def _record(self, warp: ResidentWarp) -> None:
        b, first, n = warp.block.index, warp.first_thread, warp.threads
        self.exit_codes[b, first : first + n] = warp.exit_codes[:n]
        self.thread_instructions[b, first : first + n] = warp.instructions[:n]
        self.exited[b, first : first + n] = warp.exited[:n]

    def _deadlock(self) -> SimtFault:
        """No split can ever issue again: explain it (a barrier some threads cannot reach)."""
        for block in {id(w.block): w.block for w in self.resident}.values():
            waiters: dict[int, list[int]] = {}
            held: list[int] = []
            exited: list[int] = []
            for warp in block.warps:
                for lane, pc in warp.bar_pc.items():
                    waiters.setdefault(pc, []).append(warp.thread(lane))
                held += [
                    warp.thread(lane) for lane in lanes_of(warp.unit.live & ~warp.unit.waiting)
                ]
                exited += [warp.thread(int(lane)) for lane in np.flatnonzero(warp.exited)]
            if waiters:
                fault = barrier_fault(
                    block.index, waiters, exited, self.launch.block, held, self.config.policy.value
                )
                if fault is not None:
                    return fault
        running = "; ".join(
            f"warp {w.gid} ({format_threads(w.thread(l) for l in lanes_of(w.unit.live))})"
            for w in self.resident
        )
        return DeadlockFault(
            f"no warp split can issue any more under {self.config.policy.value}: {running}"
        )

    def _at_checkpoint(self, block: int | None) -> None:
        """Stop at the step limit, or report progress (every ``EVERY`` warp instructions)."""
        done = self.counters.warp_instructions
        if done >= self.launch.step_limit:
            raise StepLimitFault(
                f"no completion within {self.launch.step_limit} warp instructions", block=block
            )
        assert self.progress is not None
        self.progress(done, self.next_block - len({w.block.index for w in self.resident}))
        self.checkpoint = min(self.launch.step_limit, done + EVERY)

    def _watchdog(self) -> StepLimitFault:
        running = "; ".join(
            f"warp {w.gid} at {', '.join(f'{s.pc:#010x}' for s in w.splits) or 'no split'}"
            for w in self.resident
        )
        return StepLimitFault(
            f"watchdog: no completion within {self.config.max_cycles} cycles; still running: "
            f"{running}"
        )


def memory_needed(launch: LaunchConfig) -> int:
    """The memory a cycle-level run of ``launch`` needs besides global memory: its warp slots
    hold whole warps of resident blocks (``golden.progress.launch_bytes``)."""
    g, memmap = launch.geometry, launch.memmap
    return launch_bytes(
        launch.grid, launch.block, g.warps * g.warp_size, memmap.local_size, memmap.shared_size,
        g.warps,
    )  # fmt: skip
