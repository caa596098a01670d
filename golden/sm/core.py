"""The cycle-level SM (docs/architecture.md): the golden model the HDL is held to.

One SM runs the blocks of a launch, as many at a time as its warp slots hold. Every cycle the
single issue port, when free, issues one warp instruction of one ready warp split, chosen by the
warp scheduler (loose round robin or greedy-then-oldest across warps; round robin across the
splits of a warp, seed 002 Sec 5). The instruction occupies the lanes for its issue passes (W/L,
or the squeezed quarter-warps with hws, seed 001 Sec 4.2/4.3). A split is ready when

* its divergence unit exposes it (top of the stack, a split-table entry, the min(SP:PC) group),
* the branch latency has passed since a branch, jump or reconvergence redirected it,
* the scoreboard has no write pending to any of its operands for its threads,
* for a memory instruction, the load/store unit is free.

Instructions execute functionally at issue (:func:`~reconverge.golden.semantics.execute`), so
results never depend on timing; the scoreboard holds dependent instructions until the writeback
time (issue + passes - 1 + latency; for memory, after the coalesced transactions).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
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
from reconverge.golden.blocks.dual_path_stack import DualPathStack
from reconverge.golden.blocks.reconvergence_stack import ReconvergenceStack
from reconverge.golden.blocks.scoreboard import Scoreboard, make_scoreboard
from reconverge.golden.blocks.split_tables import SplitTables
from reconverge.golden.blocks.squeezer import squeeze
from reconverge.golden.blocks.stackless import StacklessControl
from reconverge.golden.faults import (
    DeadlockFault,
    SimtFault,
    StepLimitFault,
    TableOverflowFault,
    barrier_fault,
    format_threads,
    instruction_text,
)
from reconverge.golden.functional import LaunchConfig, RunResult, decode_word, initial_registers
from reconverge.golden.image import Image
from reconverge.golden.isa import ILEN_BYTES, MASK32, REG_A0, REG_A7, Instr
from reconverge.golden.memory import GlobalMemory, LocalMemory, SharedMemory, WarpMemory
from reconverge.golden.semantics import MemAccess, Outcome, WarpContext, execute
from reconverge.golden.sm.config import (
    Policy,
    Scheduler,
    ScoreboardKind,
    SMConfig,
    WarpFormation,
)
from reconverge.golden.sm.lsu import access_cost
from reconverge.golden.sm.metrics import Counters, Metrics
from reconverge.golden.sm.program import Program, is_control

#: Called after each issue with the record and the issuing warp's divergence unit.
Observer = Callable[["IssueRecord", DivergenceUnit], None]


@lru_cache(maxsize=1 << 16)
def squeezed_passes(mask: int, warp_size: int, simd_width: int) -> int:
    return squeeze(mask, warp_size, simd_width).passes


REG_RA, REG_T0 = 1, 5  # the registers a RISC-V return jumps through

_MUL = frozenset({"mul", "mulh", "mulhsu", "mulhu"})
_DIV = frozenset({"div", "divu", "rem", "remu"})


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


class _Warp:
    """A resident warp: its registers, memories, divergence unit, scoreboard and timing."""

    def __init__(self, sm: SM, block: _Block, index: int, threads: int, age: int) -> None:
        geometry = sm.launch.geometry
        width = geometry.warp_size
        self.block = block
        self.index = index
        self.gid = block.index * block.warps_total + index
        self.age = age
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
        self.instructions = np.zeros(width, np.int64)
        self.counters = Counters(warp=self.gid)
        self.splits: list[Split] = self.unit.splits()
        self.counters.add_occupancy(self.unit.occupancy())
        self.counters.max_splits = len(self.splits)

    @property
    def done(self) -> bool:
        return self.unit.done

    def thread(self, lane: int) -> int:
        return self.first_thread + lane


class _Block:
    def __init__(self, sm: SM, index: int, warps_total: int) -> None:
        self.index = index
        self.warps_total = warps_total
        self.shared = SharedMemory(sm.launch.memmap)
        self.warps: list[_Warp] = []


class SM:
    """One run of ``image`` over the launch ``launch`` on an SM configured by ``config``."""

    def __init__(
        self,
        image: Image,
        launch: LaunchConfig,
        config: SMConfig,
        *,
        trace: bool = False,
        observer: Observer | None = None,
    ) -> None:
        self.image = image
        self.launch = launch
        self.config = config
        self.geometry = launch.geometry
        self.program = Program(image)
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
        self.warp_counters: list[Counters] = []
        self.resident: list[_Warp] = []
        self.blocks: list[_Block] = []
        self.next_block = 0
        self.age = 0
        self.t = 0
        self.port_free = 0
        self.lsu_free = 0
        self.idle = 0
        self.end = 0
        self.last_warp: _Warp | None = None
        self.writebacks: list[tuple[int, int, _Warp, int, int]] = []
        self.seq = 0

    # -- construction -----------------------------------------------------------------------

    def make_unit(self, valid: int, regs: np.ndarray) -> DivergenceUnit:
        g, policy, entry = self.geometry, self.config.policy, self.image.entry & MASK32
        if policy is Policy.SPS:
            return ReconvergenceStack(g.warp_size, valid, entry, g.stack_depth)
        if policy is Policy.STACKLESS:
            return StacklessControl(g.warp_size, valid, entry, regs)
        if policy in (Policy.DPS, Policy.PPC):
            paired = policy is Policy.PPC
            return DualPathStack(
                g.warp_size,
                valid,
                entry,
                g.stack_depth,
                paired=paired,
                implicit=paired and not self.config.hints,
            )
        return SplitTables(
            g.warp_size,
            valid,
            entry,
            g.split_table,
            g.reconv_table,
            orec=policy is Policy.MP_OREC,
        )

    # -- the cycle loop -----------------------------------------------------------------------

    def run(self) -> SMResult:
        fault: SimtFault | None = None
        try:
            self._loop()
        except SimtFault as exc:
            fault = exc
        for warp in self.resident:
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
        )

    def _loop(self) -> None:
        while True:
            self._writeback(self.t)
            self._dispatch()
            if not self.resident:
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
        self.end = max(self.end, self.port_free)

    def _advance(self, t: int) -> None:
        """Move time to ``t``, accounting each resident warp's schedulable splits."""
        if t > self.config.max_cycles:
            raise self._watchdog()
        span = t - self.t
        for warp in self.resident:
            warp.counters.live_cycles += span
            warp.counters.split_cycles += span * len(warp.splits)
        self.t = t

    def _writeback(self, t: int) -> None:
        while self.writebacks and self.writebacks[0][0] <= t:
            _, _, warp, reg, mask = heapq.heappop(self.writebacks)
            warp.scoreboard.release(reg, mask)

    def _dispatch(self) -> None:
        """Start blocks, in order, while their warps fit in the free warp slots."""
        width = self.geometry.warp_size
        while (
            self.next_block < self.launch.grid
            and len(self.resident) + self.warps_per_block <= self.geometry.warps
        ):
            block = _Block(self, self.next_block, self.warps_per_block)
            self.next_block += 1
            for index in range(self.warps_per_block):
                threads = min(width, self.launch.block - index * width)
                warp = _Warp(self, block, index, threads, self.age)
                self.age += 1
                for split in warp.splits:
                    warp.ready_at[split.sid] = self.t
                block.warps.append(warp)
                self.resident.append(warp)
            self.blocks.append(block)

    # -- scheduling ---------------------------------------------------------------------------

    def _warp_order(self) -> list[_Warp]:
        warps = self.resident
        if self.config.scheduler is Scheduler.GTO:
            order = sorted(warps, key=lambda w: w.age)
            if self.last_warp in warps:
                order.remove(self.last_warp)  # type: ignore[arg-type]
                order.insert(0, self.last_warp)  # type: ignore[arg-type]
            return order
        if self.last_warp not in warps:
            return sorted(warps, key=lambda w: w.age)
        start = warps.index(self.last_warp) + 1  # type: ignore[arg-type]
        return warps[start:] + warps[:start]

    def _select(self) -> tuple[_Warp, Split, Instr] | None:
        for warp in self._warp_order():
            splits = warp.splits
            if not splits:
                continue
            start = next((i for i, s in enumerate(splits) if s.sid > warp.last_sid), 0)
            for split in splits[start:] + splits[:start]:
                ins = self._ready(warp, split)
                if ins is not None:
                    return warp, split, ins
        return None

    def _ready(self, warp: _Warp, split: Split) -> Instr | None:
        if warp.ready_at.get(split.sid, 0) > self.t:
            return None
        ins = self._fetch(warp, split)
        if warp.scoreboard.dependency_mask(operands(ins), split.mask):
            return None
        if warp.scoreboard.full(destination(ins), split.mask):
            return None  # no free scoreboard entry for its destination (seed 002 Fig 8)
        spec = ins.spec
        if (spec.is_load or spec.is_store or spec.is_amo) and self.lsu_free > self.t:
            return None
        return ins

    def _fetch(self, warp: _Warp, split: Split) -> Instr:
        try:
            return decode_word(self.memory.fetch(split.pc))
        except SimtFault as fault:
            lane = lanes_of(split.mask)[0]
            raise fault.locate(
                block=warp.block.index, thread=warp.thread(lane), pc=split.pc
            ) from None

    def _next_event(self) -> int | None:
        """The earliest future time at which a split could become ready."""
        times = [t for t in (self.lsu_free,) if t > self.t]
        if self.writebacks:
            times.append(self.writebacks[0][0])
        for warp in self.resident:
            for split in warp.splits:
                ready = warp.ready_at.get(split.sid, 0)
                if ready > self.t:
                    times.append(ready)
        return min(times, default=None)

    # -- issue ----------------------------------------------------------------------------------

    def passes(self, mask: int) -> int:
        """Issue passes of a warp instruction with active ``mask``: W/L, or with hws the
        quarter-warps left after the lane-preserving squeeze (seed 001 Sec 4.2/4.3)."""
        if self.config.hws:
            return squeezed_passes(mask, self.geometry.warp_size, self.geometry.simd_width)
        return self.geometry.passes

    def _issue(self, warp: _Warp, split: Split, ins: Instr) -> None:
        t, pc = self.t, split.pc
        if self.counters.warp_instructions >= self.launch.step_limit:
            raise StepLimitFault(
                f"no completion within {self.launch.step_limit} warp instructions",
                block=warp.block.index,
            )
        lanes = np.array(lanes_of(split.mask))
        passes = self.passes(split.mask)
        out = execute(ins, pc, warp.regs, lanes, warp.mem, warp.ctx)
        control = is_control(ins)
        ex = self._executed(warp, split, ins, out, control)
        before = {(s.sid, s.pc) for s in warp.splits}
        try:
            warp.unit.execute(ex)
        except TableOverflow as exc:
            raise TableOverflowFault(
                str(exc),
                block=warp.block.index,
                thread=warp.thread(int(lanes[0])),
                pc=pc,
                instr=instruction_text(ins.encode(), pc),
            ) from None
        counters = [self.counters, warp.counters]
        latency = self._latency(ins, out.access, lanes, t + passes - 1, counters)
        self._reserve(warp, ins, split.mask, t + passes - 1 + latency)
        self._count(warp, split, ins, lanes, passes)
        self.port_free = t + passes
        self.last_warp = warp
        warp.last_sid = split.sid
        warp.splits = warp.unit.splits()
        self._time_splits(warp, split, ex, before, passes)
        warp.counters.add_occupancy(warp.unit.occupancy())
        warp.counters.max_splits = max(warp.counters.max_splits, len(warp.splits))
        if ex.barrier or ex.exited:
            self._check_barrier(warp.block)
        if warp.done:
            self._retire(warp)

    def _executed(
        self, warp: _Warp, split: Split, ins: Instr, out: Outcome, control: bool
    ) -> Executed:
        exited = 0
        if out.exit_codes is not None:
            exited = split.mask
            warp.exit_codes[out.lanes] = out.exit_codes
            warp.exited[out.lanes] = True
        barrier = split.mask if out.barrier else 0
        if barrier:
            for lane in out.lanes.tolist():
                warp.bar_pc[lane] = split.pc
        targets: dict[int, int] = {}
        if not exited and not barrier:
            for lane, nxt in zip(out.lanes.tolist(), out.next_pc.tolist(), strict=True):
                targets[nxt] = targets.get(nxt, 0) | 1 << lane
        rpc = self.program.rpc(split.pc) if control and self.config.explicit else None
        call = ins.spec.is_jump and ins.rd != 0
        ret = ins.name == "jalr" and ins.rd == 0 and ins.rs1 in (REG_RA, REG_T0)
        return Executed(
            sid=split.sid,
            pc=split.pc,
            mask=split.mask,
            targets=targets,
            exited=exited,
            barrier=barrier,
            control=control,
            rpc=rpc,
            call=call,
            ret=ret,
        )

    def _latency(
        self, ins: Instr, access: MemAccess | None, lanes: np.ndarray, last_pass: int,
        counters: list[Counters],
    ) -> int:  # fmt: skip
        """Cycles from the last pass to the writeback of ``ins``; a memory access also occupies
        the load/store unit and is counted in ``counters``."""
        lat = self.config.latencies
        if access is None:
            if ins.name in _MUL:
                return lat.mul
            if ins.name in _DIV:
                return lat.div
            return lat.alu
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
        self.lsu_free = self.t + max(cost.cycles, 1)
        memory = lat.global_ if cost.transactions else lat.shared
        done = self.t + max(cost.cycles, 1) - 1 + memory
        self.end = max(self.end, done)
        return done - last_pass

    def _reserve(self, warp: _Warp, ins: Instr, mask: int, done: int) -> None:
        """Reserve the destination of ``ins`` for the threads of ``mask`` until ``done``."""
        if destination(ins):
            warp.scoreboard.reserve(ins.rd, mask)
            self.seq += 1
            heapq.heappush(self.writebacks, (done, self.seq, warp, ins.rd, mask))
            self.end = max(self.end, done)

    def _count(self, warp: _Warp, split: Split, ins: Instr, lanes: np.ndarray, passes: int) -> None:
        active = len(lanes)
        warp.instructions[lanes] += 1
        for counters in (self.counters, warp.counters):
            counters.warp_instructions += 1
            counters.thread_instructions += active
            counters.issue_passes += passes
            counters.hint_instructions += ins.name == "rhint"
            counters.count_active(active)
            spill = self.image.spills.get(split.pc)
            counters.spill_loads += spill == "load"
            counters.spill_stores += spill == "store"
        self.counters.add_occupancy(warp.unit.occupancy())
        if self.keep_trace:
            record = IssueRecord(self.t, warp.gid, split.sid, split.pc, split.mask, passes)
            self.trace.append(record)
            if self.observer is not None:
                self.observer(record, warp.unit)

    def _time_splits(
        self, warp: _Warp, issued: Split, ex: Executed, before: set[tuple[int, int]], passes: int
    ) -> None:
        """Charge the branch latency to every split the instruction redirected or exposed."""
        delay = self.config.latencies.branch
        if self.config.policy is Policy.STACKLESS:
            delay += self.config.latencies.arbiter
        if self.config.hws:
            delay += self.config.latencies.squeeze  # a new active mask goes through the squeezer
        continuation = (issued.pc + ILEN_BYTES) & MASK32
        continued = False
        for split in warp.splits:
            if split.sid == issued.sid and split.pc == continuation and not ex.control:
                warp.ready_at[split.sid] = self.t + passes
                continued = True
            elif (split.sid, split.pc) not in before:
                warp.ready_at[split.sid] = self.t + passes - 1 + delay
        if not continued:
            warp.last_sid = -1  # the splits changed: round robin restarts at the first

    # -- barriers, retirement, faults -----------------------------------------------------------

    def _check_barrier(self, block: _Block) -> None:
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
        for warp in block.warps:
            waiting = warp.unit.waiting
            warp.bar_pc.clear()
            self._release(warp, waiting)

    def _release(self, warp: _Warp, waiting: int) -> None:
        """The threads of ``warp`` that waited at the completed barrier continue after it."""
        before = {(s.sid, s.pc) for s in warp.splits}
        warp.unit.release(waiting)
        warp.splits = warp.unit.splits()
        for split in warp.splits:
            if (split.sid, split.pc) not in before:
                warp.ready_at[split.sid] = self.t + 1

    def _retire(self, warp: _Warp) -> None:
        self.resident.remove(warp)
        self._record(warp)
        self.warp_counters.append(warp.counters)
        if self.last_warp is warp:
            self.last_warp = None

    def _record(self, warp: _Warp) -> None:
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

    def _watchdog(self) -> StepLimitFault:
        running = "; ".join(
            f"warp {w.gid} at {', '.join(f'{s.pc:#010x}' for s in w.splits) or 'no split'}"
            for w in self.resident
        )
        return StepLimitFault(
            f"watchdog: no completion within {self.config.max_cycles} cycles; still running: "
            f"{running}"
        )


def run_sm(
    image: Image,
    launch: LaunchConfig,
    config: SMConfig | None = None,
    *,
    trace: bool = False,
    observer: Observer | None = None,
) -> SMResult:
    """Run ``image`` on the cycle-level SM. Like the functional model it never raises for a
    fault of the program: the result carries it. ``observer`` is called after every issue
    (before the next) with the issue record and the warp's divergence unit. With dynamic warp
    formation (``config.warp_formation``) the SM is :class:`~reconverge.golden.sm.dwf.DwfSM`."""
    config = config or SMConfig()
    if config.warp_formation is WarpFormation.STATIC:
        return SM(image, launch, config, trace=trace, observer=observer).run()
    from reconverge.golden.sm.dwf import DwfSM  # it builds on this module

    return DwfSM(image, launch, config, trace=trace, observer=observer).run()
