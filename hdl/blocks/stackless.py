"""Stack-less SIMT control of one warp (seed 000 Sec 3, 4.1, Fig 2/4a). Golden:
``golden.blocks.stackless`` (``StacklessBlock`` around the functional ``StacklessControl``;
parameters and ports: ``StacklessParams``).

Registers: every thread's PC and SP, the live and waiting masks, the active mask and the common
key SP:PC of the running split. The outcome of an instruction (per-lane next PCs, exits,
barrier arrivals, SP writes) and barrier releases give every thread its next PC and SP
(``pc'``, ``sp'``) and the runnable mask (live, not waiting), registered in the update's
clock. Then one of:

- **local increment** after an instruction that neither controls, exits, waits nor writes SP
  (Sec 4.1): the common PC is incremented, no tree involved, and every runnable thread whose
  SP':PC' equals the new common key joins the split, in the same clock: the re-comparison that
  lets waiting threads reconverge when the running ones reach their PC (Table 2, cycle 6). The
  split shows the cycle after the outcome (c = 1);
- **arbitration** after a control instruction, an exit, a barrier arrival or a release: in
  the next clock (``tree_q``) the arbiter tree (``reconverge.hdl.blocks.arbiter``, the unified
  PC/memory tree of Fig 4b) takes the minimum SP:PC over every runnable thread from the
  registers, and its mask (the runnable threads holding it) is the split (c = 2);
- **an SP write** otherwise: in the next clock the tree takes the minimum over the split's
  threads only (the common key), and in the clock after (``compare_q``) every runnable thread
  at that key joins, the local increment's comparison against the registered key (c = 3).

While the tree or the comparison runs, ``status.busy`` is 1 and no split shows (the SM issues
nothing of the warp and sends no outcome or release). The tree and the comparison start from
registers, never from the outcome's inputs.

**The unified tree** (seed 000 Sec 4.3, Fig 4a): in every cycle in which the control does not
use the tree (every cycle but an arbitration's second) the load/store unit does, through the
``coalesce`` ports: the tree's valid bits and keys are the lanes' memory requests and cache
lines, and its result is the lowest requested line and the lanes requesting it (served in this
pass; the others replay). In the cycle the control uses the tree, ``coalesce.granted`` is 0
and the LSU waits. The tree's keys are as wide as the wider of SP:PC and a line number.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, Value

from reconverge.golden.blocks.stackless import StacklessParams
from reconverge.golden.isa import ILEN_BYTES
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.blocks.common import named
from reconverge.hdl.blocks.ports import BlockComponent


class Stackless(BlockComponent):
    """Ports and parameters: :class:`reconverge.golden.blocks.stackless.StacklessParams`.

    The registers (read by the formal checks, hdl/formal/stackless.py): every thread's ``pc``
    and ``sp``, the ``live``, ``waiting`` and ``active`` masks, and the running split's common
    key ``common_pc``, ``common_sp``."""

    params: StacklessParams

    def __init__(self, params: StacklessParams) -> None:
        super().__init__(params)
        w, pcw, spw = params.warp_size, params.pc_width, params.sp_width
        self.pc = [Signal(pcw, name=f"pc{i}") for i in range(w)]
        self.sp = [Signal(spw, name=f"sp{i}") for i in range(w)]
        self.live, self.waiting = Signal(w, name="live_q"), Signal(w, name="waiting_q")
        self.active = Signal(w, name="active_q")
        self.common_pc = Signal(pcw, name="common_pc")
        self.common_sp = Signal(spw, name="common_sp")
        #: the update's second clock: the tree takes the minimum (over every runnable thread
        #: when ``tree_all``, else over the split's); the third: the comparison
        self.tree_q, self.tree_all = Signal(name="tree_q"), Signal(name="tree_all_q")
        self.compare_q = Signal(name="compare_q")

    def joining(self, runnable: Value, keys: list[Value], common: Value) -> Value:
        """The next split: every runnable thread at the common SP:PC (Table 2, cycle 6: the
        waiting threads join when the running ones reach their PC)."""
        return Cat(runnable[i] & (key == common) for i, key in enumerate(keys))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        params = self.params
        w, pcw, spw = params.warp_size, params.pc_width, params.sp_width
        outcome = self.outcome
        pc, sp, live, waiting = self.pc, self.sp, self.live, self.waiting
        active, common_pc, common_sp = self.active, self.common_pc, self.common_sp
        tree_q, tree_all, compare_q = self.tree_q, self.tree_all, self.compare_q

        # the outcome of this cycle
        ex = outcome.valid
        lanes = ex.replicate(w)
        target, exited = outcome.next_mask & lanes, outcome.exited & lanes
        barrier, sp_we = outcome.barrier & lanes, outcome.sp_we & lanes
        release = self.release.lanes
        next_live, next_waiting = Signal(w, name="next_live"), Signal(w, name="next_waiting")
        runnable = Signal(w, name="runnable")
        arbitrate, sp_written = Signal(name="arbitrate"), Signal(name="sp_written")
        m.d.comb += [
            next_live.eq(live & ~exited),
            next_waiting.eq((waiting | barrier) & ~release),
            runnable.eq(next_live & ~next_waiting),
            arbitrate.eq(release.any() | ex & (outcome.control | exited.any() | barrier.any())),
            sp_written.eq(sp_we.any()),
        ]
        next_pc = [Signal(pcw, name=f"next_pc{i}") for i in range(w)]
        next_sp = [Signal(spw, name=f"next_sp{i}") for i in range(w)]
        for i in range(w):
            bump = (pc[i] + ILEN_BYTES)[:pcw]  # a released thread continues after the barrier
            m.d.comb += [
                next_pc[i].eq(Mux(target[i], outcome.next_pc[i], Mux(release[i], bump, pc[i]))),
                next_sp[i].eq(Mux(sp_we[i], outcome.sp_wdata[i], sp[i])),
            ]

        # the tree, from the registers in an update's second clock, else the LSU's
        m.submodules.arbiter = tree = Arbiter(params.tree)
        held = live & ~waiting  # the runnable threads, registered
        m.d.comb += tree.valid.eq(
            Mux(tree_q, Mux(tree_all, held, active & held), self.coalesce.valid)
        )
        for i in range(w):
            m.d.comb += tree.key[i].eq(Mux(tree_q, Cat(pc[i], sp[i]), self.coalesce.key[i]))
        granted = named(m, "coalesce_granted", ~tree_q)
        m.d.comb += [
            self.coalesce.granted.eq(granted),
            self.coalesce.min_key.eq(Mux(granted, tree.min_key[: params.coalesce_width], 0)),
            self.coalesce.mask.eq(Mux(granted, tree.mask, 0)),
        ]

        # the comparison: with the incremented common key (a local increment), or in an SP
        # write's third clock with the key its tree found (then pc', sp' are the registers)
        key = Signal(pcw + spw, name="joining_key")
        increment = Cat((common_pc + ILEN_BYTES)[:pcw], common_sp)
        m.d.comb += key.eq(Mux(compare_q, Cat(common_pc, common_sp), increment))
        joins = Signal(w, name="joins")
        keys = [Cat(next_pc[i], next_sp[i]) for i in range(w)]
        m.d.comb += joins.eq(self.joining(runnable, keys, key))

        start = self.launch
        with m.If(start.valid):
            m.d.sync += [live.eq(start.mask), waiting.eq(0), active.eq(start.mask)]
            m.d.sync += [common_pc.eq(start.pc), common_sp.eq(start.sp)]
            m.d.sync += [r.eq(start.pc) for r in pc]
            m.d.sync += [r.eq(start.sp) for r in sp]
            m.d.sync += [tree_q.eq(0), compare_q.eq(0)]
        with m.Else():
            m.d.sync += [live.eq(next_live), waiting.eq(next_waiting)]
            m.d.sync += [r.eq(v) for r, v in zip(pc + sp, next_pc + next_sp, strict=True)]
            with m.If(arbitrate | sp_written):
                m.d.sync += [tree_q.eq(1), tree_all.eq(arbitrate)]
            with m.Elif(ex):
                m.d.sync += [active.eq(joins), Cat(common_pc, common_sp).eq(key)]
            with m.Elif(tree_q):
                m.d.sync += [tree_q.eq(0), Cat(common_pc, common_sp).eq(tree.min_key)]
                with m.If(tree_all):
                    m.d.sync += active.eq(tree.mask)
                with m.Else():
                    m.d.sync += compare_q.eq(1)
            with m.Elif(compare_q):
                m.d.sync += [compare_q.eq(0), active.eq(joins)]

        busy = named(m, "busy", tree_q | compare_q)
        valid = named(m, "split_valid", active.any() & ~busy)
        m.d.comb += [
            self.splits.valid.eq(valid),
            self.splits.pc[0].eq(Mux(valid, common_pc, 0)),
            self.splits.mask[0].eq(Mux(valid, active, 0)),
            self.status.busy.eq(busy),
            self.status.live.eq(live),
            self.status.waiting.eq(waiting),
        ]
        m.d.comb += [self.status.thread_pc[i].eq(pc[i]) for i in range(w)]
        return m
