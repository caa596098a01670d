"""The streaming multiprocessor: every stage of ``hdl/sm/`` wired into one component
(docs/sm-hardware.md; golden: ``golden.sm.core.SM``).

Per cycle, in the order the signals flow:

1. **Candidates.** Every split slot of every resident warp is a candidate when its divergence
   unit exposes the split and has settled, its ready timer has run out, its instruction buffer
   holds the split's PC, the scoreboard has no pending write to its operands for its threads and
   a free entry for its destination, and (memory instructions) the LSU is idle. An instruction
   that faults at issue (illegal, outside the instruction store, CSR write, ``ebreak``) is a
   candidate whatever the scoreboard says, so it faults where golden's scheduler reaches it.
2. **Issue.** When the port is free the scheduler picks one candidate (GTO or LRR, round robin
   within the warp); passes 1 .. p-1 follow from a registered copy. Each pass goes on to the
   decode stage (the register file's read address), the read stage (its words) and the
   execute stage (L lanes compute and write results;
   the divider and the LSU write later). In the last issue pass the destination enters its
   write-back delay line and an outcome the issue stage decides alone goes to the warp's
   divergence unit; a branch, jump or exit goes there behind the execute stage, whose last
   pass also starts the LSU, traces the instruction and reports its faults, and the unit's
   resolve stage, which groups the threads' next PCs.
3. **Settling.** When a warp's unit has settled after an update (cycle V), every split it shows
   gets its ready time: the continuing split at once, a split not exposed before the update
   ``delay - 1`` cycles later (docs/sm-hardware.md, timing rules 1-2), the others keep theirs.
4. **Barriers.** A block whose live threads all wait at one barrier is released (rule 4); threads
   that exited (in warps that have left too), or waiting at different barriers, are a barrier
   fault. A block is known by its shared-memory window.
5. **Dispatch.** Slots whose warp retired and whose write-backs drained are free; blocks enter
   free slots in order (rule 5), each taking the lowest window no resident block holds.

A fault stops the SM with its code and location on the status port. The core runs under a clock
enable: while the LSU waits for the memory (a request not accepted, a response not yet there)
nothing moves, and the stall counter counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from amaranth.hdl import Array, Cat, Const, EnableInserter, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks import (
    MaskedScoreboardParams,
    ScoreboardParams,
    SqueezerParams,
)
from reconverge.golden.blocks.divergence import NEVER
from reconverge.golden.blocks.scoreboard import OPERANDS
from reconverge.golden.blocks.units import BUFFER_ENTRIES, sm_lookups, sm_unit
from reconverge.golden.config import ScoreboardKind
from reconverge.golden.faults import FaultCode
from reconverge.golden.geometry import bits_for
from reconverge.golden.isa import REG_SP, SYSCALL_EXIT, Csr
from reconverge.golden.params import (
    AGE_BITS,
    COUNTER,
    PC_WIDTH,
    PENDING_BITS,
    TIMER_BITS,
    SMParams,
)
from reconverge.golden.policies import Policy
from reconverge.golden.sm.lsu import MemOp, shares_tree
from reconverge.hdl.blocks.common import any_of, encode, first_set
from reconverge.hdl.blocks.scoreboard import MaskedScoreboard, Scoreboard
from reconverge.hdl.blocks.squeezer import Squeezer
from reconverge.hdl.sm.barrier import Barriers
from reconverge.hdl.sm.decode import PREDECODED, Decoder, Unit
from reconverge.hdl.sm.divergence import DivergenceUnit
from reconverge.hdl.sm.fetch import Fetch, load_signature
from reconverge.hdl.sm.lanes import ALU_CONTROLS, Divider, Lane, Multiplier, address, alu_controls
from reconverge.hdl.sm.lsu import LSU
from reconverge.hdl.sm.ports import (
    exit_signature,
    launch_signature,
    memory_signature,
    status_signature,
    trace_signature,
)
from reconverge.hdl.sm.regfile import RegisterFile
from reconverge.hdl.sm.scheduler import Scheduler
from reconverge.hdl.sm.writeback import (
    ISSUE_LINES,
    MEMORY_LINES,
    LatencyClass,
    WritebackLines,
)


def _named(m: Module, name: str, value: Value | int, width: int | None = None) -> Signal:
    """``value`` as a named combinational signal (waveforms, and one expression tree)."""
    value = Value.cast(value)
    sig = Signal(width if width is not None else len(value), name=name)
    m.d.comb += sig.eq(value)
    return sig


def _faulty(entry: data.View) -> Value:
    """An instruction-buffer entry's instruction faults at issue (outside the store, or its
    predecode bits say so)."""
    return ~entry.tag.inside | entry.pre.faulty


def _lowest(bits: Value) -> Value:
    """The index of the lowest set bit of ``bits`` (0 when none is)."""
    return encode(first_set([bits[i] for i in range(len(bits))]))


class SM(wiring.Component):
    """The SM of ``params`` (ports: docs/sm-hardware.md, ``hdl.sm.ports``); ``program``: the
    instruction store's entries from reset (a board top), else it is filled through ``load``;
    ``divergence_unit`` makes each warp slot's unit (a broken one, in the formal tests)."""

    def __init__(
        self,
        params: SMParams,
        program: Sequence[tuple[int, int]] = (),
        divergence_unit: Callable[[SMParams], DivergenceUnit] = DivergenceUnit,
    ) -> None:
        self.params = params
        self.program = tuple(program)
        self.divergence_unit = divergence_unit
        super().__init__(
            {
                "load": In(load_signature(params)),
                "launch": Out(launch_signature()),
                "mem": Out(memory_signature(params)),
                "trace": Out(trace_signature(params)),
                "exit": Out(exit_signature(params)),
                "status": Out(status_signature()),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        core = Module()
        stall = Signal()
        self.core = _Core(self, core, m, stall)
        self.core.build()
        m.submodules.core = EnableInserter(~stall)(core)
        return m


class _Core:
    """The logic of :class:`SM`, built into ``m`` (everything under the clock enable) and
    ``outer`` (the load/store unit, which freezes itself with its stall)."""

    def __init__(self, sm: SM, m: Module, outer: Module, stall: Signal) -> None:
        self.sm, self.m, self.outer, self.stall = sm, m, outer, stall
        p = self.p = sm.params
        g = self.g = p.geometry
        self.W, self.L, self.Q = g.warp_size, g.simd_width, g.passes
        unit = self.unit = sm_unit(p)
        self.N, self.S = g.warps, unit.slots
        lat = p.config.latencies
        self.delay = lat.branch
        if p.policy is Policy.STACKLESS:
            self.delay += lat.arbiter
        if p.config.hws:
            self.delay += lat.squeeze

    # ------------------------------------------------------------------------------------------
    def build(self) -> None:
        m, sm = self.m, self.sm
        self._state()
        self._stages()
        self._unit_status()
        self._candidates()
        self._issue()
        self._pipeline()
        self._passes()
        self._outcome()
        self._settle()
        self._barriers()
        self._dispatch()
        self._fetch_addresses()
        self._writebacks()
        self._progress()
        m.d.comb += self.stall.eq(self.lsu.stall)
        m.d.comb += [
            self.fetch.load.valid.eq(sm.load.valid & ~self.running),
            self.fetch.load.addr.eq(sm.load.addr),
            self.fetch.load.word.eq(sm.load.word),
            self.fetch.load.rpc.eq(sm.load.rpc),
        ]

    # -- state ---------------------------------------------------------------------------------
    def _state(self) -> None:
        W, N, S, p = self.W, self.N, self.S, self.p
        self.running = Signal(name="running")
        self.done = Signal(name="done")
        self.faulted = Signal(name="faulted")
        self.cycle = Signal(COUNTER, name="cycle")
        # per warp slot
        self.active = Signal(N, name="active")
        self.block_of = [Signal(32, name=f"w{w}_block") for w in range(N)]
        self.warp_of = [Signal(8, name=f"w{w}_warp") for w in range(N)]
        # the shared-memory window of the warp's block, which also names the block among the
        # resident ones (its barrier): no two resident blocks have the same window
        self.window = [Signal(p.warp_bits, name=f"w{w}_window") for w in range(N)]
        # per window: a thread of the block that holds it has exited (its warp may be gone)
        self.window_exited = Signal(N, name="window_exited")
        self.threads = [Signal(W, name=f"w{w}_threads") for w in range(N)]
        self.age = [Signal(AGE_BITS, name=f"w{w}_age") for w in range(N)]
        self.pending = [Signal(PENDING_BITS, name=f"w{w}_pending") for w in range(N)]
        # per warp slot: its pending count is 0 once this cycle's releases are taken off, known
        # from the cycle before (the dispatch decides from a register)
        self.drained = Signal(N, name="drained", init=(1 << N) - 1)
        self.last_sid = [Signal(self.unit.sid_bits, name=f"w{w}_last_sid") for w in range(N)]
        self.last_sid_valid = Signal(N, name="last_sid_valid")
        self.last_warp = Signal(p.warp_bits, name="last_warp")
        self.last_warp_valid = Signal(name="last_warp_valid")  # ... and has not retired
        self.issued_any = Signal(name="issued_any")  # some warp has issued
        self.timer = [[Signal(TIMER_BITS, name=f"w{w}_s{s}_timer") for s in range(S)]
                      for w in range(N)]  # fmt: skip
        # the update a warp's unit is settling from: set the cycle after the update (u or the
        # release cycle), cleared when the unit shows its settled splits (V)
        self.updating = Signal(N, name="updating")
        self.upd_issue = Signal(N, name="upd_issue")  # ... from an issue (not a release)
        sid_bits = self.unit.sid_bits
        self.snap = [[Signal(data.StructLayout({"valid": 1, "sid": sid_bits, "pc": PC_WIDTH}),
                             name=f"w{w}_s{s}_before") for s in range(S)]
                     for w in range(N)]  # fmt: skip
        # the warp's last issued instruction, from issue until its unit settled (``after``:
        # the PC after it, the fetch stage's PC + 4, so the settling compare needs no adder)
        self.iss = [Signal(data.StructLayout({"valid": 1, "slot": bits_for(S), "sid": sid_bits,
                                              "after": PC_WIDTH, "control": 1}),
                           name=f"w{w}_issued")
                    for w in range(N)]  # fmt: skip
        self.bar_pc = [Signal(PC_WIDTH, name=f"w{w}_bar_pc") for w in range(N)]
        self.bar_mixed = Signal(N, name="bar_mixed")
        # a warp's instruction whose outcome the lanes compute is on its way to the unit (from
        # its issue until the update); a memory instruction is on its way to the LSU (from its
        # issue until the LSU starts); an instruction that faults at issue is on its way to the
        # execute stage, which reports it (nothing issues after it)
        self.pending_update = Signal(N, name="pending_update")
        self.mem_pending = Signal(name="mem_pending")
        self.halting = Signal(name="halting")
        # dispatch
        self.next_block = Signal(32, name="next_block")
        self.blocks_left = Signal(32, name="blocks_left")  # the grid less next_block
        self.next_age = Signal(AGE_BITS, name="next_age")

    # -- the stages ----------------------------------------------------------------------------
    def _stages(self) -> None:
        m, p, N = self.m, self.p, self.N
        m.submodules.fetch = self.fetch = Fetch(p, self.sm.program)
        self.units = []
        for w in range(N):
            unit = self.sm.divergence_unit(p)
            m.submodules[f"unit{w}"] = unit
            self.units.append(unit)
        m.submodules.scheduler = self.scheduler = Scheduler(p)
        m.submodules.decode = self.decode = Decoder()
        m.submodules.regfile = self.regfile = RegisterFile(p)
        m.d.comb += [
            self.regfile.init.gp.eq(self.sm.launch.gp),
            self.regfile.init.args.eq(self.sm.launch.args),
        ]
        self.lanes = []
        self.multipliers = []  # each lane's, a stage ahead of it (the read stage)
        for j in range(self.L):
            lane = Lane()
            m.submodules[f"lane{j}"] = lane
            self.lanes.append(lane)
            m.submodules[f"multiplier{j}"] = multiplier = Multiplier()
            self.multipliers.append(multiplier)
        self.dividers = []  # one per thread position (rule 6)
        self.divider_idle = Signal(name="divider_idle")
        for t in range(self.W):
            divider = Divider(p.config.latencies.div_steps, p.warp_bits + 5)
            m.submodules[f"divider{t}"] = divider
            self.dividers.append(divider)
        self.outer.submodules.lsu = self.lsu = LSU(p)
        m.submodules.writeback = self.wb = WritebackLines(p)
        lookups, writebacks = sm_lookups(p), len(LatencyClass)
        if p.config.scoreboard_kind is ScoreboardKind.MASKED:
            self.scoreboard = MaskedScoreboard(
                MaskedScoreboardParams.of(self.g, lookups, writebacks)
            )
        else:
            self.scoreboard = Scoreboard(ScoreboardParams.of(self.g, lookups, writebacks))
        m.submodules.scoreboard = self.scoreboard
        if p.config.hws:
            m.submodules.squeezer = self.squeezer = Squeezer(SqueezerParams.of(self.g))

    def _unit_status(self) -> None:
        """Per warp: its unit settled from an update this cycle (V); it is quiet (settled, not
        busy); its warp retired (no live thread)."""
        m = self.m
        self.settled, self.quiet, self.retired = [], [], []
        for w in range(self.N):
            unit = self.units[w]
            settled = _named(m, f"w{w}_settled", self.updating[w] & ~unit.busy)
            quiet = _named(
                m, f"w{w}_quiet",
                ~unit.busy & ~self.pending_update[w] & (~self.updating[w] | settled),
            )  # fmt: skip
            retired = _named(m, f"w{w}_retired", self.active[w] & quiet & (unit.live == 0))
            self.settled.append(settled)
            self.quiet.append(quiet)
            self.retired.append(retired)
        # a settled update is done with (before the issue logic, whose settings win); the
        # signals are made outside the conditional (a comb assignment inside it would be too)
        last_sid_valid = [self._last_sid_valid_now(w) for w in range(self.N)]
        for w in range(self.N):
            with m.If(self.settled[w]):
                m.d.sync += [
                    self.updating.bit_select(w, 1).eq(0),
                    self.iss[w].valid.eq(0),
                    self.last_sid_valid.bit_select(w, 1).eq(last_sid_valid[w]),
                ]
        # golden forgets the last warp when it retires
        gone = Array(self.retired)[self.last_warp]
        self.last_warp_now = _named(m, "last_warp_valid_now", self.last_warp_valid & ~gone)
        with m.If(gone):  # before the issue logic, whose setting wins
            m.d.sync += self.last_warp_valid.eq(0)

    # -- 1. candidates -------------------------------------------------------------------------
    def _candidates(self) -> None:
        m, N, S = self.m, self.N, self.S
        sb, fetch = self.scoreboard, self.fetch
        self.exposed = [[None] * S for _ in range(N)]
        ready_bits = []
        lsu_idle = _named(m, "lsu_idle", ~self.lsu.busy & ~self.mem_pending)
        for w in range(N):
            unit = self.units[w]
            quiet = self.active[w] & self.quiet[w]
            for s in range(S):
                i = w * S + s
                exposed = _named(m, f"w{w}_s{s}_exposed", quiet & unit.splits.valid[s])
                self.exposed[w][s] = exposed
                # each entry of the slot's buffer is checked on its own lookup port, from its
                # registers, while the compare with the split's PC says which one holds it
                # (the buffer is asked for the split's PC whenever the split can issue)
                entries = ((fetch.a[i], fetch.hit_a[i]), (fetch.b[i], fetch.hit_b[i]))
                found = []
                for e, (entry, hit) in enumerate(entries):
                    k = BUFFER_ENTRIES * i + e
                    pre = entry.pre
                    m.d.comb += [
                        sb.lookup.warp[k].eq(w),
                        sb.lookup.operands[OPERANDS * k].eq(pre.sb_rs1),
                        sb.lookup.operands[OPERANDS * k + 1].eq(pre.sb_rs2),
                        sb.lookup.operands[OPERANDS * k + 2].eq(pre.sb_rd),
                        sb.lookup.mask[k].eq(unit.splits.mask[s]),
                    ]
                    hazard = sb.lookup.hazard[k] | sb.lookup.full[k]
                    clear = ~hazard & (~pre.memory | lsu_idle) \
                        & (~pre.division | self.divider_idle)  # fmt: skip
                    # an instruction that faults at issue is a candidate whatever the checks
                    may = _named(m, f"w{w}_s{s}_{'ab'[e]}_may", _faulty(entry) | clear)
                    found.append(hit & may)
                timed = self._timer_now(w, s) == 0
                ready = _named(m, f"w{w}_s{s}_ready", exposed & timed & any_of(found))
                ready_bits.append(ready)
                m.d.comb += self.scheduler.sid[i].eq(unit.splits.sid[s])
        sched = self.scheduler
        self.port_free = Signal(name="port_free")
        may_issue = self.port_free & self.running & ~self.faulted & ~self.halting
        m.d.comb += [
            sched.ready.eq(Mux(may_issue, Cat(*ready_bits), 0)),
            sched.last_warp.eq(self.last_warp),
            sched.issued.eq(self.issued_any),
            sched.greedy.eq(self.last_warp_now),
        ]
        for w in range(N):
            m.d.comb += [
                sched.age[w].eq(self.age[w]),
                sched.last_sid[w].eq(self.last_sid[w]),
                sched.last_sid_valid[w].eq(self._last_sid_valid_now(w)),
            ]

    def _timer_now(self, w: int, s: int) -> Value:
        """The ready timer of split slot s of warp w in this cycle: set when the warp's unit
        settles (timing rule 2), else the register."""
        attr = f"_timer_now_{w}_{s}"
        if not hasattr(self, attr):
            m = self.m
            unit = self.units[w]
            split = (unit.splits.valid[s], unit.splits.sid[s], unit.splits.pc[s])
            seen = any_of([
                b.valid & (b.sid == split[1]) & (b.pc == split[2]) for b in self.snap[w]
            ])  # fmt: skip
            iss = self.iss[w]
            cont = _named(
                m,
                f"w{w}_s{s}_continues",
                self.upd_issue[w] & iss.valid & ~iss.control & split[0]
                & (split[1] == iss.sid) & (split[2] == iss.after),
            )  # fmt: skip
            fresh = Mux(cont, 0, Mux(seen, self.timer[w][s], self._delay_for(w) - 1))
            now = _named(
                m, f"w{w}_s{s}_timer_now", Mux(self.settled[w], fresh, self.timer[w][s]),
                TIMER_BITS,
            )  # fmt: skip
            setattr(self, attr, (now, cont))
        return getattr(self, attr)[0]

    def _delay_for(self, w: int) -> Value:
        """Cycles from the update to the ready time of a new split: the branch delay after an
        issue (rule 2), ``branch`` after a barrier release (rule 4)."""
        release = self.p.config.latencies.branch
        return Mux(self.upd_issue[w], self.delay, release)

    def _continued(self, w: int) -> Value:
        """Some split of warp w continues after its settled update (rule 2)."""
        for s in range(self.S):
            self._timer_now(w, s)
        return any_of([getattr(self, f"_timer_now_{w}_{s}")[1] for s in range(self.S)])

    def _last_sid_valid_now(self, w: int) -> Value:
        """Golden: the warp's last sid is forgotten when its splits changed (no split continued)."""
        settled_issue = self.settled[w] & self.upd_issue[w]
        return Mux(settled_issue, self._continued(w), self.last_sid_valid[w])

    # -- 2. issue --------------------------------------------------------------------------------
    def _issue(self) -> None:
        m, p, N, S, W = self.m, self.p, self.N, self.S, self.W
        sched = self.scheduler
        self.issue = _named(m, "issue", sched.valid)
        sel = sched.grant
        buf = Signal(self.fetch.buffer.shape().elem_shape, name="sel_buffer")
        sid = Signal(self.unit.sid_bits, name="sel_sid")
        mask = Signal(W, name="sel_mask")
        pc = Signal(PC_WIDTH, name="sel_pc")  # the split's (its buffer holds it)
        # PC + 4 (a decided outcome's target), registered with the instruction so that the
        # units' update paths start at a register: the fetch stage's PC + 4 of each buffer (its
        # prefetch address, from the asked-for PC), the selection picks one (no adder behind
        # the scheduler)
        after = Signal(PC_WIDTH, name="sel_after")
        fetch = self.fetch
        for w in range(N):
            for s in range(S):
                i = w * S + s
                with m.If(sel[i]):
                    unit = self.units[w]
                    m.d.comb += [
                        buf.eq(fetch.buffer[i]),
                        sid.eq(unit.splits.sid[s]),
                        mask.eq(unit.splits.mask[s]),
                        pc.eq(unit.splits.pc[s]),
                        after.eq(fetch.after[i]),
                    ]
        faulty = _named(m, "sel_faulty", _faulty(buf))
        # the issue stage sees the instruction through its predecode bits only (the word is
        # decoded in the read stage): the lanes compute its outcome (next PCs, exit codes;
        # stack-less: sp, which orders the threads), so it reaches the unit behind the execute
        # stage (rule 1)
        resolved = buf.pre.resolved
        if p.policy is Policy.STACKLESS:
            resolved = resolved | (buf.pre.sb_rd == REG_SP)
        self.sel = {"warp": sched.warp, "slot": sched.slot, "sid": sid, "pc": pc,
                    "mask": mask, "word": buf.word, "pre": buf.pre,
                    "in_range": buf.tag.inside, "faulty": faulty, "after": after,
                    "resolved": _named(m, "sel_resolved", resolved)}  # fmt: skip

        # passes of the selected split (hws: the squeezer's non-empty quarters in sorted order)
        Q, L = self.Q, self.L
        qbits = bits_for(Q)
        self.pass_quarter = Signal(data.ArrayLayout(qbits, Q), name="sel_pass_quarter")
        self.sel_lanes = Signal(W, name="sel_lane_mask")  # slot q*L+j active (squeezed)
        self.sel_src = Signal(data.ArrayLayout(qbits, W), name="sel_src")
        passes = Signal(range(Q + 1), name="sel_passes")
        if p.config.hws:
            sq = self.squeezer
            m.d.comb += [sq.warp.valid.eq(1), sq.warp.mask.eq(mask), passes.eq(sq.squeezed.passes)]
            m.d.comb += [self.sel_lanes.eq(sq.squeezed.mask), self.sel_src.eq(sq.squeezed.src)]
            # the k-th non-empty quarter in sorted order
            for k in range(Q):
                count = Const(0, range(Q + 1))
                for i in range(Q):
                    quarter = sq.squeezed.order[i]
                    here = sq.squeezed.quarter_mask.bit_select(quarter, 1)
                    with m.If(here & (count == k)):
                        m.d.comb += self.pass_quarter[k].eq(quarter)
                    count = count + here
        else:
            m.d.comb += [passes.eq(Q), self.sel_lanes.eq(mask)]
            for k in range(Q):
                m.d.comb += self.pass_quarter[k].eq(k)
            for t in range(W):
                m.d.comb += self.sel_src[t].eq(t // L)
        self.sel["passes"] = passes

        # the instruction in flight (registered at issue)
        self.busy_passes = Signal(range(Q + 1), name="busy_passes")  # passes left after this
        m.d.comb += self.port_free.eq(self.busy_passes == 0)
        cur = self.cur = {
            "warp": Signal(p.warp_bits, name="cur_warp"),
            "slot": Signal(bits_for(S), name="cur_slot"),
            "sid": Signal(self.unit.sid_bits, name="cur_sid"),
            "pc": Signal(PC_WIDTH, name="cur_pc"),
            "mask": Signal(W, name="cur_mask"),
            "word": Signal(32, name="cur_word"),
            "pre": Signal(PREDECODED, name="cur_pre"),
            "passes": Signal(range(Q + 1), name="cur_passes"),
            "cycle": Signal(COUNTER, name="cur_cycle"),
            "after": Signal(PC_WIDTH, name="cur_after"),
            "in_range": Signal(name="cur_in_range"),
            "faulty": Signal(name="cur_faulty"),
            "resolved": Signal(name="cur_resolved"),
        }
        self.sel["cycle"] = self.cycle
        cur_quarter = Signal.like(self.pass_quarter, name="cur_pass_quarter")
        cur_lanes = Signal(W, name="cur_lane_mask")
        cur_src = Signal.like(self.sel_src, name="cur_src")
        pass_index = self.pass_index = Signal(range(Q), name="pass_index")
        with m.If(self.issue):
            m.d.sync += [cur[k].eq(self.sel[k]) for k in cur]
            m.d.sync += [cur_quarter.eq(self.pass_quarter), cur_lanes.eq(self.sel_lanes),
                         cur_src.eq(self.sel_src)]  # fmt: skip
        # this cycle's instruction and pass: the selection in its issue cycle, else the copy
        self.now = {
            k: _named(m, f"now_{k}", Mux(self.issue, self.sel[k], cur[k]), len(Value.cast(cur[k])))
            for k in cur
            if k != "pre"
        }
        self.now["pre"] = Signal(PREDECODED, name="now_pre")
        m.d.comb += self.now["pre"].eq(Mux(self.issue, self.sel["pre"], cur["pre"]))
        # (a Signal with the array layout: a Mux of two views would be a plain Value, whose
        # Array would index bits rather than quarters)
        self.now_quarters = Signal.like(self.pass_quarter, name="now_pass_quarter")
        m.d.comb += self.now_quarters.eq(Mux(self.issue, self.pass_quarter, cur_quarter))
        self.now_lanes = _named(m, "now_lane_mask", Mux(self.issue, self.sel_lanes, cur_lanes))
        self.now_src = Signal.like(self.sel_src, name="now_src")
        m.d.comb += self.now_src.eq(Mux(self.issue, self.sel_src, cur_src))
        self.now_pass = _named(m, "now_pass", Mux(self.issue, 0, pass_index), len(pass_index))
        self.executing = _named(m, "executing", self.issue | (self.busy_passes != 0))

        # after its issue cycle, ``busy_passes`` counts an instruction's passes left with this
        # cycle's, and nothing issues while it is not 0: so whether this cycle's pass is the
        # last, or the one before, comes from the register, and at issue from the
        # selection's passes (a constant without hws), compared before the issue selects
        def left(k: int) -> Value:
            return Mux(self.issue, passes == k, self.busy_passes == k)

        self.last_pass = _named(m, "last_pass", left(1))
        # per warp slot (one-hot): the next cycle is the last pass of its instruction in
        # flight, one the issue stage decides alone (registered, so that what its unit takes
        # from the registered copy does not depend on this cycle's issue)
        self.final_decided = Signal(N, name="final_decided")
        decided = left(2) & ~self.now["faulty"] & ~self.now["resolved"]
        with m.If(self.executing):
            with m.If(self.last_pass):
                m.d.sync += [self.busy_passes.eq(0), pass_index.eq(0), self.final_decided.eq(0)]
            with m.Else():
                m.d.sync += [
                    self.busy_passes.eq(Mux(self.issue, passes, self.busy_passes) - 1),
                    pass_index.eq(Mux(self.issue, 1, pass_index + 1)),
                    self.final_decided.eq(Mux(decided, 1 << self.now["warp"], 0)[:N]),
                ]

        # at issue: trace, scoreboard reservation, bookkeeping of the issuing warp
        sel_w = self.sel["warp"]
        pre = self.sel["pre"]
        dest = pre.sb_rd
        fault_at_issue = _named(m, "fault_at_issue", self.issue & self.sel["faulty"])
        self.fault_at_issue = fault_at_issue
        good_issue = _named(m, "good_issue", self.issue & ~self.sel["faulty"])
        sb = self.scoreboard
        m.d.comb += [
            sb.issue.valid.eq(good_issue & (dest != 0)),
            sb.issue.warp.eq(sel_w),
            sb.issue.rd.eq(dest),
            sb.issue.mask.eq(mask),
        ]
        self.issue_dest = dest
        with m.If(fault_at_issue):
            m.d.sync += self.halting.eq(1)
        with m.If(good_issue & self.sel["resolved"]):
            m.d.sync += self.pending_update.bit_select(sel_w, 1).eq(1)
        with m.If(good_issue & pre.memory):
            m.d.sync += self.mem_pending.eq(1)
        with m.If(good_issue):
            m.d.sync += [
                self.last_warp.eq(sel_w),
                self.last_warp_valid.eq(1),
                self.issued_any.eq(1),
            ]
            for w in range(N):
                with m.If(sel_w == w):
                    iss = self.iss[w]
                    m.d.sync += [
                        iss.valid.eq(1),
                        iss.slot.eq(self.sel["slot"]),
                        iss.sid.eq(sid),
                        iss.after.eq(after),
                        iss.control.eq(pre.control),
                        self.last_sid[w].eq(sid),
                    ]

    # -- the read and execute stages ---------------------------------------------------------
    def _pipeline(self) -> None:
        """Behind the issue stage (docs/sm-hardware.md, "The pipeline"): each cycle the issue
        stage's pass (the selection in its issue cycle, else the registered copy) moves to the
        decode stage, which decodes the word and gives the register file the read address
        from registers, a cycle later to the read stage, where the register file's words come
        for the thread positions its lanes run, and a cycle after that to the execute stage
        (:meth:`_passes`), with the operands registered."""
        m, L = self.m, self.L
        now = self.now
        quarter = _named(m, "issue_pass_quarter", Array(self.now_quarters)[self.now_pass])
        fields = ("warp", "sid", "pc", "mask", "word", "pre", "passes", "cycle",
                  "in_range", "faulty", "resolved")  # fmt: skip
        issued = {k: now[k] for k in fields}
        issued.update(
            valid=self.executing, first=self.now_pass == 0, last=self.last_pass,
            quarter=quarter, lanes=self.now_lanes, src=self.now_src,
        )  # fmt: skip
        dc = self.dc = self._stage_register("dc", issued)
        rf = self.regfile
        # the register file takes the read address in the decode stage (the predecoded source
        # registers) and gives the words in the read stage; the word is decoded beside it, and
        # the instruction store's RPC memory is read the same way (hdl/sm/fetch.py)
        m.d.comb += [
            rf.read.warp.eq(dc["warp"]),
            rf.read.rs1.eq(dc["pre"].sb_rs1),
            rf.read.rs2.eq(dc["pre"].sb_rs2),
            self.decode.word.eq(dc["word"]),
            self.fetch.rpc_index.eq(dc["pc"][2 : 2 + self.p.imem_bits]),
        ]
        execute = [k for k in fields if k not in ("word", "pre")]
        decoded = {k: dc[k] for k in ("valid", "first", "last", "quarter", "lanes", "src",
                                      *execute)}  # fmt: skip
        decoded["instr"] = self.decode.instr
        rd = self.rd = self._stage_register("rd", decoded)
        read = {k: rd[k] for k in ("valid", "first", "last", "instr", *execute)}
        read["rpc"] = self.fetch.rpc
        # what the lanes' adder and shifter do, decoded here so the execute stage's carry
        # chains start at a register
        controls = Signal(ALU_CONTROLS, name="rd_alu")
        m.d.comb += controls.eq(alu_controls(rd["instr"]))
        read["alu"] = controls
        for j in range(L):
            # the thread position lane j runs in this pass (hws: the squeezed slot's source):
            # position src * L + j, so lane j reads only the banks of positions j, j + L, ...
            slot = _named(m, f"rd_lane{j}_slot", rd["quarter"] * L + j, bits_for(self.W))
            src = _named(m, f"rd_lane{j}_quarter", Array(rd["src"])[slot])
            pos = _named(m, f"rd_lane{j}_position", src * L + j, bits_for(self.W))
            read[f"position{j}"] = pos
            read[f"active{j}"] = rd["lanes"].bit_select(slot, 1)
            for operand, words in (("a", rf.read.rs1_data), ("b", rf.read.rs2_data)):
                banks = [words[q * L + j] for q in range(self.Q)]
                read[f"{operand}{j}"] = _named(m, f"rd_lane{j}_{operand}", Array(banks)[src], 32)
            # the address / jalr sum, here so that the execute stage starts at a register
            read[f"addr{j}"] = _named(
                m, f"rd_lane{j}_addr", address(read[f"a{j}"], rd["instr"].imm), 32
            )
            # the multiply's partial products: the DSP multipliers in this stage, their sum
            # in the execute stage
            multiplier = self.multipliers[j]
            m.d.comb += [
                multiplier.instr.eq(rd["instr"]),
                multiplier.a.eq(read[f"a{j}"]),
                multiplier.b.eq(read[f"b{j}"]),
            ]
            read[f"partials{j}"] = multiplier.partials
        self.x = self._stage_register("x", read)

    def _stage_register(self, stage: str, values: dict[str, Value]) -> dict[str, Value]:
        """``values`` registered, as signals named ``{stage}_{key}``."""
        out: dict[str, Value] = {}
        for key, value in values.items():
            if isinstance(value, Signal | data.View):
                reg = Signal.like(value, name=f"{stage}_{key}")
            else:
                reg = Signal(Value.cast(value).shape(), name=f"{stage}_{key}")
            self.m.d.sync += reg.eq(value)
            out[key] = reg
        return out

    def _passes(self) -> None:
        """The execute stage: the lanes of the pass compute; results go to the register file,
        divisions to the dividers, addresses to the LSU."""
        m, W, L = self.m, self.W, self.L
        x = self.x
        instr = x["instr"]
        rf = self.regfile
        good = _named(m, "pass_good", x["valid"] & ~x["faulty"] & ~self.faulted)
        csr = self._csr_values()
        # per lane j: the thread position it runs in this pass and whether it is active
        self.position = []
        self.lane_active = []
        self.lane_a = []
        self.next_pc_buf = [Signal(PC_WIDTH, name=f"next_pc{t}") for t in range(W)]
        self.a_buf = [Signal(32, name=f"a{t}") for t in range(W)]  # rs1 (ecall: a0)
        self.result_buf = [Signal(32, name=f"result{t}") for t in range(W)]
        self.bad_target = Signal(W, name="bad_target")
        self.bad_syscall = Signal(W, name="bad_syscall")
        self.pass_positions = Signal(W, name="pass_positions")  # positions run this pass
        positions = []
        lane_write = Signal(W, name="lane_write")
        div_unit = instr.unit == Unit.DIV
        writes_now = instr.writes_rd & ~instr.is_load & ~instr.is_amo & ~div_unit
        for j in range(L):
            pos = x[f"position{j}"]
            active = _named(m, f"lane{j}_active", good & x[f"active{j}"])
            self.position.append(pos)
            self.lane_active.append(active)
            lane = self.lanes[j]
            a, b = x[f"a{j}"], x[f"b{j}"]
            self.lane_a.append(a)
            m.d.comb += [
                lane.instr.eq(instr),
                lane.pc.eq(x["pc"]),
                lane.a.eq(a),
                lane.b.eq(b),
                lane.addr.eq(x[f"addr{j}"]),
                lane.alu.eq(x["alu"]),
                lane.partials.eq(x[f"partials{j}"]),
                lane.csr_value.eq(Array(csr)[pos]),
            ]
            one_hot = Signal(W, name=f"lane{j}_onehot")
            m.d.comb += one_hot.eq(Mux(active, Const(1, W) << pos, 0))
            positions.append(one_hot)
            # lane j runs only positions j, j + L, ... (pos = src * L + j): their data inputs
            # take its values in every cycle, the enables say which one it runs
            for t in range(j, W, L):
                m.d.comb += [
                    rf.write_lane.data[t].eq(lane.result),
                    self.lsu.capture.addr[t].eq(x[f"addr{j}"]),
                    self.lsu.capture.data[t].eq(lane.store_data),
                    self.dividers[t].req.a.eq(a),
                    self.dividers[t].req.b.eq(b),
                ]
                with m.If(active & (pos == t)):
                    m.d.sync += [
                        self.next_pc_buf[t].eq(lane.next_pc),
                        self.a_buf[t].eq(a),
                        self.result_buf[t].eq(lane.result),
                    ]
                    m.d.comb += [
                        self.bad_target[t].eq(lane.bad_target & instr.is_control),
                        self.bad_syscall[t].eq(instr.is_ecall & (b != SYSCALL_EXIT)),
                        self.dividers[t].req.valid.eq(div_unit & instr.writes_rd),
                    ]
        m.d.comb += self.pass_positions.eq(_or(positions, W))
        m.d.comb += [
            lane_write.eq(Mux(writes_now, self.pass_positions, 0)),
            rf.write_lane.en.eq(lane_write),
            rf.write_lane.warp.eq(x["warp"]),
            rf.write_lane.rd.eq(instr.rd),
        ]
        # the dividers, one per thread position: the results that come out in a cycle are
        # one instruction's (rule 6 keeps divisions apart), so they share its warp and rd
        for t, div in enumerate(self.dividers):
            m.d.comb += [
                div.req.op.eq(instr.op),
                div.req.tag.eq(Cat(instr.rd, x["warp"])),
                rf.write_div.en[t].eq(div.resp.valid),
                rf.write_div.data[t].eq(div.resp.result),
            ]
            with m.If(div.resp.valid):
                m.d.comb += [
                    rf.write_div.rd.eq(div.resp.tag[:5]),
                    rf.write_div.warp.eq(div.resp.tag[5:]),
                ]
        self._divider_interlock(self.now["pre"].division)
        # LSU capture and start
        lsu = self.lsu
        memory = instr.is_load | instr.is_store | instr.is_amo
        m.d.comb += [
            lsu.capture.valid.eq(good & memory),
            lsu.capture.mask.eq(self.pass_positions),
        ]
        # the LSU's results reach the register file a clock later, from registers (the
        # shared banks' block RAM output and the byte extraction in a clock of their own):
        # written by L + 2, before a dependent instruction, issued at the release (L +
        # ``shared`` or L + ``global_``, both >= 2), gives its read address
        written = self._stage_register(
            "lsu_wb", {k: getattr(lsu.wb, k) for k in ("en", "warp", "rd", "data")}
        )
        m.d.comb += [getattr(rf.write_lsu, k).eq(v) for k, v in written.items()]
        self.memory_instr = memory

    def _divider_interlock(self, division: Value) -> None:
        """Rule 6: after the last pass of a division the next one waits ``div_interval``
        cycles; the dividers (``div_cycles`` <= the interval) are idle by then."""
        m = self.m
        interval = self.p.config.latencies.div_interval
        wait = Signal(range(interval), name="divider_wait")
        with m.If(self.last_pass & division):
            m.d.sync += wait.eq(interval - 1)
        with m.Elif(wait != 0):
            m.d.sync += wait.eq(wait - 1)
        m.d.comb += self.divider_idle.eq(wait == 0)
        self.divider_wait = wait

    def _csr_values(self) -> list[Value]:
        """Every thread position's value of the CSR the current instruction reads."""
        m, x, W = self.m, self.x, self.W
        warp = x["warp"]
        block = Array(self.block_of)[warp]
        in_block = Array(self.warp_of)[warp]
        launch = self.sm.launch
        csr = x["instr"].csr
        values = []
        for t in range(W):
            table = {
                Csr.TID: in_block * W + t,
                Csr.NTID: launch.block,
                Csr.CTAID: block,
                Csr.NCTAID: launch.grid,
                Csr.LANEID: t,
                Csr.WARPID: in_block,
                Csr.WARPSIZE: W,
            }
            value = Signal(32, name=f"csr{t}")
            with m.Switch(csr):
                for code, v in table.items():
                    with m.Case(int(code)):
                        m.d.comb += value.eq(v)
            values.append(value)
        return values

    # -- the outcome: at the issue stage's last pass, or behind the execute stage ------------
    def _outcome(self) -> None:
        m, p, W = self.m, self.p, self.W
        x, instr = self.x, self.x["instr"]
        last = _named(m, "outcome", x["valid"] & x["last"] & ~x["faulty"] & ~self.faulted)
        self.outcome_valid = last
        # the per-thread values of this pass are combinational, the others registered
        a = [Mux(self.pass_positions[t], self._lane_value(t, "a"), self.a_buf[t]) for t in range(W)]
        # faults found in the passes (lowest thread): bad target, bad syscall
        self.bad_target_all = Signal(W, name="bad_target_all")
        self.bad_syscall_all = Signal(W, name="bad_syscall_all")
        seen_target = Signal(W, name="seen_bad_target")
        seen_syscall = Signal(W, name="seen_bad_syscall")
        m.d.comb += [
            self.bad_target_all.eq(seen_target | self.bad_target),
            self.bad_syscall_all.eq(seen_syscall | self.bad_syscall),
        ]
        with m.If(x["valid"] & ~x["last"]):
            m.d.sync += [seen_target.eq(self.bad_target_all), seen_syscall.eq(self.bad_syscall_all)]
        with m.Else():
            m.d.sync += [seen_target.eq(0), seen_syscall.eq(0)]
        pass_fault = _named(
            m, "pass_fault", last & ((self.bad_target_all | self.bad_syscall_all) != 0)
        )
        self.pass_fault = pass_fault
        lsu_fault = _named(m, "lsu_fault", last & self.memory_instr & self.lsu.fault.valid)
        self.lsu_fault_now = lsu_fault
        # an LSU fault (found in this cycle, from the addresses) stops the SM before a resolved
        # outcome reaches the unit, so the resolve stage does not wait for it
        go = _named(m, "outcome_go", last & ~pass_fault & ~lsu_fault)
        self._resolved_outcome(last & ~pass_fault & x["resolved"])
        self._unit_updates()
        # the LSU starts in the last pass (and remembers whose instruction it serves)
        lsu = self.lsu
        self.lsu_warp = Signal(p.warp_bits, name="lsu_warp")
        with m.If(lsu.start.valid):
            m.d.sync += [self.lsu_warp.eq(x["warp"]), self.mem_pending.eq(0)]
        m.d.comb += [
            # (a pass fault is a control instruction's or an ``ecall``'s, never a memory
            # instruction's: the start does not wait for it)
            lsu.start.valid.eq(last & self.memory_instr),
            lsu.start.op.eq(
                Mux(instr.is_load, MemOp.LOAD, Mux(instr.is_store, MemOp.STORE, MemOp.AMO))
            ),
            lsu.start.size.eq(instr.mem_size),
            lsu.start.signed.eq(instr.mem_signed),
            lsu.start.amo.eq(instr.amo),
            lsu.start.warp.eq(x["warp"]),
            lsu.start.block.eq(Array(self.window)[x["warp"]]),
            lsu.start.rd.eq(Mux(instr.writes_rd, instr.rd, 0)),
            lsu.start.mask.eq(x["mask"]),
        ]
        # the destination of a non-memory instruction enters its write-back line at the issue
        # stage's last pass (an instruction that faults later stops the SM)
        now, issued = self.now, self.now["pre"]
        cls = Mux(issued.multiply, LatencyClass.MUL,
                  Mux(issued.division, LatencyClass.DIV, LatencyClass.ALU))  # fmt: skip
        writes = issued.sb_rd != 0
        enters = self.last_pass & ~now["faulty"] & ~self.faulted & ~issued.memory & writes
        self.line_from_issue = (enters, cls)
        # the trace: an instruction that did not fault, reported in its last execute pass
        tr = self.sm.trace
        m.d.comb += [
            tr.valid.eq(go & ~self.stall),  # once, not in every cycle a stall holds it
            tr.cycle.eq(x["cycle"]),
            tr.slot.eq(x["warp"]),
            tr.block.eq(Array(self.block_of)[x["warp"]]),
            tr.warp.eq(Array(self.warp_of)[x["warp"]]),
            tr.sid.eq(x["sid"]),
            tr.pc.eq(x["pc"]),
            tr.mask.eq(x["mask"]),
            tr.passes.eq(x["passes"]),
        ]
        # exits (and the window of the exiting threads' block, for its barriers)
        ex = self.sm.exit
        exiting = go & instr.is_ecall
        self.exit_windows = _named(
            m, "exit_windows", Mux(exiting, 1 << Array(self.window)[x["warp"]], 0), self.N
        )
        m.d.comb += [
            ex.valid.eq(exiting & ~self.stall),
            ex.block.eq(Array(self.block_of)[x["warp"]]),
            ex.warp.eq(Array(self.warp_of)[x["warp"]]),
            ex.mask.eq(x["mask"]),
        ]
        for t in range(W):
            m.d.comb += ex.codes[t].eq(a[t])

    def _resolved_outcome(self, valid: Value) -> None:
        """The outcome of an instruction the lanes resolve (branch, jump, ``ecall``, stack-less
        sp write), registered after its last execute pass (``res``): in the next cycle its
        warp's unit groups its threads' next PCs (the execute stage's per-position registers)
        in its resolve stage, and the cycle after it takes the outcome (``late``, ``res``
        registered again), ``resolve`` cycles after the issue stage's last pass (rule 1)."""
        x = self.x
        instr = x["instr"]
        mask = x["mask"]
        fields = {
            "valid": valid,
            # the warp slot it is for, one-hot (each unit's update valid is then one register)
            "for_warp": Mux(valid, 1 << x["warp"], 0)[: self.N],
            "sid": x["sid"],
            "pc": x["pc"],
            "after": (x["pc"] + 4)[:PC_WIDTH],  # a call's RPC: no adder in the unit's update
            "mask": mask,
            "control": instr.is_control,
            "call": instr.is_call,
            "ret": instr.is_ret,
            "exited": Mux(instr.is_ecall, mask, 0),
            "sp_we": Mux(instr.writes_rd & (instr.rd == REG_SP), mask, 0),
        }
        if self.p.config.explicit:  # (else the unit takes no RPC: NEVER)
            fields["rpc"] = Mux(instr.is_control, x["rpc"], Const(NEVER, PC_WIDTH))
        self.res = self._stage_register("res", fields)
        self.late = self._stage_register("late", self.res)

    def _unit_updates(self) -> None:
        """Each warp's unit takes an outcome: the resolved one of :meth:`_resolved_outcome`
        (its threads and next PCs in the resolve stage, the rest the cycle after), or that of
        an instruction the issue stage decides alone (every thread to PC + 4, a ``bar``'s
        threads wait at its PC) in its last pass. A warp has one instruction in flight to its
        unit at a time (rule 1), so the two never meet at one unit."""
        m, W, N = self.m, self.W, self.N
        res, resolved = self.res, self.late
        single_pass = self.p.config.hws or self.Q == 1
        if single_pass:
            now = self.now
            plain = _named(
                m, "plain_update",
                self.last_pass & ~now["faulty"] & ~now["resolved"] & ~self.faulted,
            )  # fmt: skip
        else:
            # every instruction takes two passes or more, so its last pass is never its issue
            # cycle: the outcome comes from the registered copy alone, which keeps the
            # scheduler's selection out of the units' update paths
            now = self.cur
        pre = now["pre"]
        going = _named(m, "resolved_threads", res["mask"] & ~res["exited"])
        self.upd_pc = [Signal(PC_WIDTH, name=f"w{w}_update_pc") for w in range(N)]
        self.upd_lane = [Signal(range(W), name=f"w{w}_update_lane") for w in range(N)]
        for w in range(N):
            unit = self.units[w]
            r, o = unit.resolve, unit.outcome
            m.d.comb += [r.valid.eq(res["for_warp"][w]), r.threads.eq(going)]
            for t in range(W):
                m.d.comb += r.next_pc[t].eq(self.next_pc_buf[t])
                if self.unit.name == "stackless":
                    m.d.comb += r.sp_wdata[t].eq(self.result_buf[t])
            late = _named(m, f"w{w}_resolved_update", resolved["for_warp"][w])
            if single_pass:
                early = _named(m, f"w{w}_plain_update", plain & (now["warp"] == w))
                decided = early
            else:
                early = _named(m, f"w{w}_plain_update", self.final_decided[w] & ~self.faulted)
                # the kind of outcome (which values the unit takes) from the register alone:
                # a fault only withholds the update's valid
                decided = self.final_decided[w]
            here = late | early
            mask = Mux(late, resolved["mask"], now["mask"])
            pc = Mux(late, resolved["pc"], now["pc"])
            after = Mux(late, resolved["after"], now["after"])
            rpc = Mux(late, resolved["rpc"], NEVER) if "rpc" in resolved else NEVER
            m.d.comb += [
                o.valid.eq(here),
                o.sid.eq(Mux(late, resolved["sid"], now["sid"])),
                o.pc.eq(pc),
                o.after.eq(after),
                o.mask.eq(mask),
                o.control.eq(late & resolved["control"]),
                o.call.eq(late & resolved["call"]),
                o.ret.eq(late & resolved["ret"]),
                o.rpc.eq(rpc),
                o.exited.eq(Mux(late, resolved["exited"], 0)),
                o.barrier.eq(Mux(early & pre.bar, now["mask"], 0)),
                o.sp_we.eq(Mux(late, resolved["sp_we"], 0)),
                o.uniform.eq(decided),
            ]
            with m.If(here):
                # who the update is for, should the unit overflow on it (golden's fault names
                # the instruction and the split's lowest thread)
                m.d.sync += [self.upd_pc[w].eq(pc), self.upd_lane[w].eq(_lowest(mask))]
                # the splits before the update, for the ready times (rule 2)
                for s in range(self.S):
                    m.d.sync += [
                        self.snap[w][s].valid.eq(unit.splits.valid[s]),
                        self.snap[w][s].sid.eq(unit.splits.sid[s]),
                        self.snap[w][s].pc.eq(unit.splits.pc[s]),
                    ]
                m.d.sync += [
                    self.updating.bit_select(w, 1).eq(1),
                    self.upd_issue.bit_select(w, 1).eq(1),
                ]
            with m.If(late):
                m.d.sync += self.pending_update.bit_select(w, 1).eq(0)
            # barrier bookkeeping: the PC the warp's threads wait at
            with m.If(early & pre.bar):
                with m.If(unit.waiting == 0):
                    m.d.sync += [self.bar_pc[w].eq(now["pc"]), self.bar_mixed[w].eq(0)]
                with m.Elif(self.bar_pc[w] != now["pc"]):
                    m.d.sync += self.bar_mixed[w].eq(1)

    def _lane_value(self, t: int, what: str) -> Value:
        """Thread position t's value of this pass (``next_pc``, ``a`` or ``result``)."""
        value = Const(0, 32)
        for j in range(self.L):
            source = self.lane_a[j] if what == "a" else getattr(self.lanes[j], what)
            value = Mux(self.lane_active[j] & (self.position[j] == t), source, value)
        return value

    # -- 3. settling: ready times, last sids, the before snapshot --------------------------------
    def _settle(self) -> None:
        m, N, S = self.m, self.N, self.S
        for w in range(N):
            for s in range(S):
                now = self._timer_now(w, s)
                m.d.sync += self.timer[w][s].eq(Mux(now == 0, 0, now - 1))
        # the issuing warp's last sid is valid until its unit decides
        with m.If(self.issue & ~self.fault_at_issue):
            m.d.sync += self.last_sid_valid.bit_select(self.sel["warp"], 1).eq(1)

    def _fetch_addresses(self) -> None:
        """The PC each instruction buffer is asked for (the fetch stage prefetches the next two
        while the buffer holds it): a slot's PC; the PCs before the update while the unit is
        busy; the entry (slot 0) while its warp is dispatched, and while the slot is idle."""
        m, N, S = self.m, self.N, self.S
        for w in range(N):
            unit = self.units[w]
            for s in range(S):
                unsettled = self.updating[w] & ~self.settled[w]
                m.d.comb += self.fetch.pc[w * S + s].eq(
                    Mux(unsettled, self.snap[w][s].pc, unit.splits.pc[s])
                )
            m.d.comb += self.fetch.dispatch.bit_select(w * S, 1).eq(self.launching[w])
            for s in range(S):
                m.d.comb += self.fetch.idle.bit_select(w * S + s, 1).eq(~self.active[w])
        m.d.comb += self.fetch.entry.eq(self.sm.launch.entry)

    # -- 4. barriers -------------------------------------------------------------------------------
    def _barriers(self) -> None:
        m, N = self.m, self.N
        m.submodules.barriers = barriers = Barriers(self.p)
        for w in range(N):
            unit, warp = self.units[w], barriers.warp[w]
            m.d.comb += [
                warp.active.eq(self.active[w]),
                warp.window.eq(self.window[w]),
                warp.threads.eq(self.threads[w]),
                warp.live.eq(unit.live),
                warp.waiting.eq(unit.waiting),
                warp.quiet.eq(self.quiet[w]),
                warp.bar_pc.eq(self.bar_pc[w]),
                warp.bar_mixed.eq(self.bar_mixed[w]),
            ]
        m.d.comb += [
            barriers.window_exited.eq(self.window_exited),
            barriers.running.eq(self.running),
        ]
        self.release = [barriers.release[w] for w in range(N)]
        self.barrier_fault = barriers.fault
        for w in range(N):
            unit = self.units[w]
            m.d.comb += unit.release.lanes.eq(Mux(self.release[w], unit.waiting, 0))
            with m.If(self.release[w]):
                m.d.sync += [self.updating.bit_select(w, 1).eq(1),
                             self.upd_issue.bit_select(w, 1).eq(0)]  # fmt: skip
                for s in range(self.S):
                    m.d.sync += [
                        self.snap[w][s].valid.eq(unit.splits.valid[s]),
                        self.snap[w][s].sid.eq(unit.splits.sid[s]),
                        self.snap[w][s].pc.eq(unit.splits.pc[s]),
                    ]

    # -- 5. dispatch -------------------------------------------------------------------------------
    def _dispatch(self) -> None:
        m, p, N, W = self.m, self.p, self.N, self.W
        launch = self.sm.launch
        shift = bits_for(W) if W > 1 else 0
        per_block_now = _named(m, "warps_per_block_now", (launch.block + W - 1) >> shift, 32)
        last_threads_now = launch.block - ((per_block_now - 1) << shift)
        # both registered at start (the launch is taken then), the warps per block saturated
        # at N + 1 (a block that needs more never fits, as before), so that the dispatch
        # decision compares and multiplies a few bits, not 32
        per_block = Signal(range(N + 2), name="warps_per_block")
        last_threads = Signal(range(W + 1), name="last_warp_threads")
        self.starting = _named(m, "starting", launch.start & ~self.running & ~self.done)
        with m.If(self.starting):
            m.d.sync += [
                per_block.eq(Mux(per_block_now > N, N + 1, per_block_now)),
                last_threads.eq(last_threads_now),
            ]
        free = [
            _named(m, f"w{w}_free", ~self.active[w] | (self.retired[w] & self.drained[w]))
            for w in range(N)
        ]
        self.free = free
        # how many blocks enter now: k fit in the free slots and are left in the grid
        count = _named(m, "free_slots", sum(free), bits_for(N + 1))
        left = self.blocks_left
        fits = [
            (k * per_block <= count) & (left >= k) for k in range(1, N + 1)
        ]  # fmt: skip
        dispatching = self.running & ~self.faulted
        blocks = _named(m, "dispatch_blocks", Mux(dispatching, sum(fits), 0), bits_for(N + 1))
        # the windows of the blocks that stay resident; the n-th new block takes the n-th
        # window none of them has (with N slots there are always enough: a resident block
        # holds a slot that a new block cannot have)
        staying = [self.active[w] & ~free[w] for w in range(N)]
        in_use = _named(m, "windows_in_use", Cat(
            any_of([staying[w] & (self.window[w] == k) for w in range(N)]) for k in range(N)
        ))  # fmt: skip
        unused_rank = []
        rank_k = Const(0, bits_for(N + 1))
        for k in range(N):
            unused_rank.append(_named(m, f"window{k}_rank", rank_k, bits_for(N + 1)))
            rank_k = rank_k + ~in_use[k]
        taken = [~in_use[k] & (unused_rank[k] < blocks) for k in range(N)]
        m.d.sync += self.window_exited.eq((self.window_exited | self.exit_windows) & ~Cat(*taken))
        self.launching = []
        rank = Const(0, bits_for(N + 1))
        for w in range(N):
            r = _named(m, f"w{w}_rank", rank, bits_for(N + 1))
            rank = rank + free[w]
            # which new block and warp of it this slot takes
            nth = _named(m, f"w{w}_nth_block", sum(
                (k * per_block <= r) for k in range(1, N)), bits_for(N + 1))  # fmt: skip
            in_block = _named(m, f"w{w}_new_warp", r - nth * per_block, 8)
            takes = _named(m, f"w{w}_launch", free[w] & (nth < blocks))
            self.launching.append(takes)
            threads = Mux(in_block == per_block - 1, last_threads, W)
            missing = _named(m, f"w{w}_missing", (W - threads)[: bits_for(W + 1)])
            mask = _named(m, f"w{w}_new_threads", Const((1 << W) - 1, W) >> missing, W)
            unit = self.units[w]
            m.d.comb += [
                unit.launch.valid.eq(takes),
                unit.launch.mask.eq(mask),
                unit.launch.pc.eq(launch.entry),
                unit.launch.sp.eq(p.memmap.initial_sp),
            ]
            window = Signal(p.warp_bits, name=f"w{w}_new_window")
            for k in range(N):
                with m.If(~in_use[k] & (unused_rank[k] == nth)):
                    m.d.comb += window.eq(k)
            with m.If(takes):
                m.d.sync += [
                    self.active.bit_select(w, 1).eq(1),
                    self.block_of[w].eq(self.next_block + nth),
                    self.warp_of[w].eq(in_block),
                    self.window[w].eq(window),
                    self.threads[w].eq(mask),
                    self.age[w].eq(self.next_age + r),
                    self.updating.bit_select(w, 1).eq(0),
                    self.last_sid_valid.bit_select(w, 1).eq(0),
                    self.iss[w].valid.eq(0),
                    self.bar_mixed.bit_select(w, 1).eq(0),
                ]
                m.d.sync += [t.eq(0) for t in self.timer[w]]
            with m.Elif(free[w] & self.active[w]):
                m.d.sync += self.active.bit_select(w, 1).eq(0)
        self.dispatched_any = _named(m, "dispatching", blocks != 0)
        with m.If(blocks != 0):
            m.d.sync += [
                self.next_block.eq(self.next_block + blocks),
                self.blocks_left.eq(self.blocks_left - blocks),
                self.next_age.eq(self.next_age + blocks * per_block),
            ]
        rf = self.regfile
        # the register file forgets the slots that are launched (at most one per cycle is
        # needed by the port; every launched slot is cleared through its own bit), and so
        # does the LSU's reservation table
        m.d.comb += [
            rf.launch.slots.eq(Cat(*self.launching)),
            self.lsu.clear.eq(Cat(*self.launching)),
        ]

    def _releases_by_warp(self, entries: Sequence[Value]) -> list[Value]:
        """Per warp slot, the number of its write-backs among ``entries`` (one per line)."""
        out = []
        for w in range(self.N):
            hits = [r.valid & (r.warp == w) & (r.rd != 0) for r in entries]
            out.append(sum(hits))
        return out

    def _next_releases(self) -> tuple[list[Value], list[Value]]:
        """Per warp slot, what is known now of the next cycle's write-backs: the number the
        lines of latency 2 or more hold in their second-to-last stage, and the number of lines
        of latency 1 (of the issue's, of the memory's) its entries go into in this cycle."""
        latencies = self.p.config.latencies

        def entries(lines: Sequence[LatencyClass], short: bool) -> list[Value]:
            return [self.wb.next_release[c] for c in lines
                    if (c.latency(latencies) == 1) == short]  # fmt: skip

        def hit(lines: Sequence[LatencyClass]) -> list[Value]:
            short = entries(lines, True)
            return [n != 0 for n in self._releases_by_warp(short)] if short else [Const(0)] * self.N

        known = entries(list(LatencyClass), False)
        later = self._releases_by_warp(known) if known else [Const(0)] * self.N
        return later, [a + b for a, b in zip(hit(ISSUE_LINES), hit(MEMORY_LINES), strict=True)]

    def _drained_next(self, w: int, issued: Value, released: Value, through: Value) -> Value:
        """Whether warp slot ``w``'s pending count, less the write-backs released then, is 0 in
        the next cycle. What the registers know (the count, less ``released``: this cycle's
        releases and the next cycle's from lines of latency 2 or more) is compared with 0, 1
        and 2 here; this cycle's issue and the ``through`` entries going into a line of latency
        1 only pick the comparison."""
        left = _named(self.m, f"w{w}_left_after_next", self.pending[w] - released, PENDING_BITS)
        is_left = [left == k for k in range(3)]
        return Mux(issued, Array([Const(0), *is_left[:2]])[through], Array(is_left)[through])

    # -- write-back lines, pending counts, the scoreboard's releases -----------------------------
    def _writebacks(self) -> None:
        m, N = self.m, self.N
        wb, sb, lsu = self.wb, self.scoreboard, self.lsu
        valid, cls = self.line_from_issue
        now = self.now
        m.d.comb += [
            wb.memory.valid.eq(lsu.release.valid),
            wb.memory.warp.eq(lsu.release.warp),
            wb.memory.rd.eq(lsu.release.rd),
            wb.memory.mask.eq(lsu.release.mask),
            wb.memory_line.eq(Mux(lsu.release.global_, LatencyClass.GLOBAL, LatencyClass.SHARED)),
            wb.issue.valid.eq(valid),
            wb.issue.warp.eq(now["warp"]),
            wb.issue.rd.eq(now["pre"].sb_rd),
            wb.issue.mask.eq(now["mask"]),
            wb.issue_line.eq(cls),
        ]
        # the scoreboard's write-back ports take the next cycle's releases (they act at its
        # clock edge, so its lookups start at its registers)
        for k, r in enumerate(wb.next_release):
            m.d.comb += [
                sb.writeback.valid[k].eq(r.valid & (r.rd != 0)),
                sb.writeback.warp[k].eq(r.warp),
                sb.writeback.rd[k].eq(r.rd),
                sb.writeback.mask[k].eq(r.mask),
            ]
        releases = self._releases_by_warp(wb.release)
        later, through = self._next_releases()
        for w in range(N):
            issued = self.issue & ~self.fault_at_issue & (self.sel["warp"] == w) \
                & (self.issue_dest != 0)  # fmt: skip
            # both counts from registers, this cycle's issue only picks one (the issue
            # decision is the latest signal of the cycle)
            kept = _named(m, f"w{w}_pending_kept", self.pending[w] - releases[w], PENDING_BITS)
            more = _named(m, f"w{w}_pending_more", kept + 1, PENDING_BITS)
            m.d.sync += [
                self.pending[w].eq(Mux(issued, more, kept)),
                self.drained.bit_select(w, 1).eq(
                    self._drained_next(w, issued, releases[w] + later[w], through[w])
                ),
            ]

    # -- progress: start, faults, completion, counters ---------------------------------------------
    def _progress(self) -> None:
        m, sm = self.m, self.sm
        st = sm.status
        busy_lines = self.wb.pending
        occupied = any_of([self.active[w] & ~self.free[w] for w in range(self.N)])
        stages = (self.dc, self.rd, self.x, self.res, self.late)
        self.in_pipeline = _named(m, "in_pipeline", any_of([stage["valid"] for stage in stages]))
        # (no instruction can be in its passes then: an issuing warp has live threads, so
        # its slot is occupied until after its last pass; this cycle's issue is not needed)
        idle_sm = _named(
            m,
            "quiescent",
            (self.blocks_left == 0) & ~occupied & ~busy_lines & ~self.lsu.busy & ~self.in_pipeline,
        )
        started = Signal(name="started")  # the cycle after start: cycle 0
        with m.If(self.starting):
            m.d.sync += [
                self.running.eq(1),
                started.eq(0),
                self.cycle.eq(0),
                self.blocks_left.eq(sm.launch.grid),
            ]
        with m.Elif(self.running):
            m.d.sync += started.eq(1)
            with m.If(started & ~idle_sm):
                m.d.sync += self.cycle.eq(self.cycle + 1)
        # faults, first one wins
        fault = Signal(name="fault_now")
        self._faults(fault)
        with m.If(self.running & fault & ~self.faulted):
            m.d.sync += [self.faulted.eq(1), self.running.eq(0)]
        with m.Elif(self.running & started & idle_sm):
            m.d.sync += [self.done.eq(1), self.running.eq(0)]
        # counters
        idle = Signal(COUNTER, name="idle_cycles")
        with m.If(self.running & started & ~idle_sm & self.port_free & ~self.issue):
            m.d.sync += idle.eq(idle + 1)
        m.d.comb += [
            st.running.eq(self.running),
            st.done.eq(self.done),
            st.fault.eq(self.faulted),
            st.cycles.eq(self.cycle),
            st.idle_cycles.eq(idle),
            st.transactions.eq(self.lsu.counters.transactions),
            st.shared_cycles.eq(self.lsu.counters.shared_cycles),
            st.bank_conflicts.eq(self.lsu.counters.bank_conflicts),
            st.stalls.eq(self.lsu.counters.stalls),
        ]
        # the memory port
        mem, lsu = sm.mem, self.lsu
        for name in ("req_valid", "req_addr", "req_op", "req_amo", "req_be", "req_wdata"):
            m.d.comb += getattr(mem, name).eq(getattr(lsu.mem, name))
        for name in ("req_ready", "resp_valid", "resp_rdata"):
            m.d.comb += getattr(lsu.mem, name).eq(getattr(mem, name))
        self._tree()

    def _faults(self, fault: Signal) -> None:
        """The faults of this cycle, in the order golden finds them, and the status outputs
        that name the first one. Every running cycle until the SM faults registers the code,
        which of the two places it names (the execute stage's instruction, or an overflowing
        unit's last update) and both places: the PC, block and thread of each (their load
        enable from registers). The fault sources are the cycle's latest signals (a branch's
        condition decides a misaligned target), so they end at the code and the one select
        bit; the outputs choose between the registered places."""
        m, x, W, N, st = self.m, self.x, self.W, self.N, self.sm.status
        instr, warp = x["instr"], x["warp"]
        sources = []
        # an instruction that faulted at issue, reported by the execute stage, where it is in
        # issue order with the faults of the instructions before it
        issue_code = Mux(
            ~x["in_range"], FaultCode.FETCH,
            Mux(~instr.legal, FaultCode.ILLEGAL,
                Mux(instr.is_ebreak, FaultCode.BREAKPOINT, FaultCode.ILLEGAL)),
        )  # fmt: skip
        issue_fault = _named(m, "issue_fault", x["valid"] & x["first"] & x["faulty"])
        sources.append((issue_fault, issue_code, _lowest(x["mask"])))
        sources.append((self.outcome_valid & (self.bad_target_all != 0), FaultCode.MISALIGNED_JUMP,
                        _lowest(self.bad_target_all)))  # fmt: skip
        sources.append((self.outcome_valid & (self.bad_syscall_all != 0), FaultCode.SYSCALL,
                        _lowest(self.bad_syscall_all)))  # fmt: skip
        sources.append((self.lsu_fault_now, self.lsu.fault.code, self.lsu.fault.position))
        before_overflow = any_of([valid for valid, _, _ in sources])
        sources.append((self.barrier_fault, FaultCode.BARRIER, Const(0, 32)))
        sources.append((self._deadlock(), self._deadlock_code(), Const(0, 32)))
        code = Signal(range(len(FaultCode)), name="fault_code_now")
        position = Signal(range(W), name="fault_position_now")
        for valid, c, t in reversed(sources):
            with m.If(valid):
                m.d.comb += [fault.eq(1), code.eq(c), position.eq(t)]
        # a unit's overflow flag rises after the update it could not hold: the fault names
        # that update's instruction and lowest thread (the lowest warp slot first)
        overflow = Cat(*(unit.overflow for unit in self.units))
        by_unit = _named(m, "fault_by_unit_now", overflow.any() & ~before_overflow)
        with m.If(by_unit):
            m.d.comb += [fault.eq(1), code.eq(FaultCode.TABLE_OVERFLOW)]
        unit = _lowest(overflow) if N > 1 else Const(0)
        places = {
            "code": code,
            "by_unit": by_unit,
            "position": position,
            "pc": x["pc"],
            "block": Array(self.block_of)[warp],
            "first_thread": Array(self.warp_of)[warp] * W,
            "unit_pc": Array(self.upd_pc)[unit],
            "unit_block": Array(self.block_of)[unit],
            "unit_thread": Array(self.warp_of)[unit] * W + Array(self.upd_lane)[unit],
        }
        q = {name: Signal.like(Value.cast(v), name=f"fault_{name}") for name, v in places.items()}
        with m.If(self.running & ~self.faulted):
            m.d.sync += [q[name].eq(v) for name, v in places.items()]
        m.d.comb += [
            st.fault_code.eq(q["code"]),
            st.fault_pc.eq(Mux(q["by_unit"], q["unit_pc"], q["pc"])),
            st.fault_block.eq(Mux(q["by_unit"], q["unit_block"], q["block"])),
            st.fault_thread.eq(
                Mux(q["by_unit"], q["unit_thread"], q["first_thread"] + q["position"])
            ),
        ]

    def _deadlock(self) -> Value:
        """Nothing can ever change again although warps are resident (golden: no next event)."""
        m, N, S = self.m, self.N, self.S
        pending_timer = any_of([
            self.exposed[w][s] & (self._timer_now(w, s) != 0) for w in range(N) for s in range(S)
        ])  # fmt: skip
        moving = (
            self.executing | self.in_pipeline | self.lsu.busy | self.wb.pending
            | (self.updating != 0) | (self.pending_update != 0) | self.mem_pending
            | (self.divider_wait != 0)
            | any_of([u.busy for u in self.units]) | any_of(self.release) | self.dispatched_any
            | pending_timer
        )  # fmt: skip
        return _named(m, "deadlock", self.running & (self.active != 0) & ~moving & ~self.issue)

    def _deadlock_code(self) -> Value:
        waiting = any_of([self.active[w] & (self.units[w].waiting != 0) for w in range(self.N)])
        return Mux(waiting, FaultCode.BARRIER, FaultCode.DEADLOCK)

    def _tree(self) -> None:
        """Under stack-less the LSU coalesces on the stack-less control's arbiter tree of the
        warp it serves, from the cycle after its instruction starts (seed 000 Sec 4.3; the
        LSU leaves the tree alone in the start cycle, so the warp is the registered
        ``lsu_warp``); the other policies' LSU orders its lines itself."""
        m, lsu = self.m, self.lsu
        if not shares_tree(self.p.policy):
            return
        serving = self.lsu_warp
        for w, unit in enumerate(self.units):
            here = serving == w
            m.d.comb += unit.coalesce.valid.eq(Mux(here, lsu.tree.valid, 0))
            for t in range(self.W):
                m.d.comb += unit.coalesce.key[t].eq(lsu.tree.key[t])
            with m.If(here):
                m.d.comb += [
                    lsu.tree.granted.eq(unit.coalesce.granted),
                    lsu.tree.min_key.eq(unit.coalesce.min_key),
                    lsu.tree.mask.eq(unit.coalesce.mask),
                ]


def _or(values: list[Value], width: int) -> Value:
    out = Const(0, width)
    for v in values:
        out = out | v
    return out
