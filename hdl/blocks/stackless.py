"""Stack-less SIMT control of one warp (seed 000 Sec 3, 4.1, Fig 2/4a). Golden:
``golden.blocks.stackless`` (``StacklessBlock`` around the functional ``StacklessControl``).

Registers: every thread's PC and SP, the live and waiting masks, the active mask and the common
key SP:PC of the running split. The outcome of an instruction (per-lane next PCs, exits,
barrier arrivals, SP writes) and barrier releases give every thread its next PC and SP
(``pc'``, ``sp'``) and the runnable mask (live, not waiting). Then one of:

- **arbitration** after a control instruction, an exit, a barrier arrival or a release: the
  arbiter tree (``reconverge.hdl.blocks.arbiter``, the unified PC/memory tree of Fig 4b) takes the
  minimum SP:PC over every runnable thread;
- **local increment** after any other instruction (Sec 4.1): the common PC is incremented,
  no tree involved; if the instruction wrote SP (then the split's threads may now differ in
  SP) the tree takes the minimum over the split's threads only;

and every runnable thread whose SP':PC' equals the new common key joins the split: the
re-comparison that lets waiting threads reconverge when the running ones reach their PC
(Table 2, cycle 6). The tree is combinational here; its result is registered with the state,
so a split shows the cycle after the outcome that formed it.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal

from reconverge.golden.blocks import stackless as golden
from reconverge.golden.isa import ILEN_BYTES
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.blocks.ports import BlockComponent


class Stackless(BlockComponent):
    """Ports and parameters: see :class:`reconverge.golden.blocks.stackless.StacklessBlock`."""

    def __init__(self, warp_size: int = 32, pc_width: int = 32, sp_width: int = 32) -> None:
        super().__init__(lambda: golden.StacklessBlock(warp_size, pc_width, sp_width))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        model = self.model
        w, pcw, spw = model.warp_size, model.pc_width, model.sp_width
        pc = [Signal(pcw, name=f"pc{i}") for i in range(w)]
        sp = [Signal(spw, name=f"sp{i}") for i in range(w)]
        live, waiting = Signal(w, name="live_q"), Signal(w, name="waiting_q")
        active = Signal(w, name="active_q")
        common_pc, common_sp = Signal(pcw, name="common_pc"), Signal(spw, name="common_sp")

        # the outcome of this cycle
        ex = self.ex_valid
        lanes = ex.replicate(w)
        target, exited = self.ex_target & lanes, self.ex_exited & lanes
        barrier, sp_we = self.ex_barrier & lanes, self.sp_we & lanes
        release = self.bar_release  # "release" is a Verilog keyword
        next_live, next_waiting = Signal(w, name="next_live"), Signal(w, name="next_waiting")
        runnable = Signal(w, name="runnable")
        arbitrate, sp_written = Signal(name="arbitrate"), Signal(name="sp_written")
        m.d.comb += [
            next_live.eq(live & ~exited),
            next_waiting.eq((waiting | barrier) & ~release),
            runnable.eq(next_live & ~next_waiting),
            arbitrate.eq(release.any() | ex & (self.ex_control | exited.any() | barrier.any())),
            sp_written.eq(sp_we.any()),
        ]
        next_pc = [Signal(pcw, name=f"next_pc{i}") for i in range(w)]
        next_sp = [Signal(spw, name=f"next_sp{i}") for i in range(w)]
        for i in range(w):
            bump = (pc[i] + ILEN_BYTES)[:pcw]  # a released thread continues after the barrier
            m.d.comb += [
                next_pc[i].eq(Mux(target[i], self.ex_next_pc[i], Mux(release[i], bump, pc[i]))),
                next_sp[i].eq(Mux(sp_we[i], self.sp_wdata[i], sp[i])),
            ]

        # the new common SP:PC: the tree, or the local increment
        m.submodules.arbiter = tree = Arbiter(w, pcw + spw)
        m.d.comb += tree.valid.eq(Mux(arbitrate, runnable, active & runnable))
        for i in range(w):
            m.d.comb += tree.key[i].eq(Cat(next_pc[i], next_sp[i]))
        common = Signal(pcw + spw, name="next_common")
        increment = Cat((common_pc + ILEN_BYTES)[:pcw], common_sp)
        m.d.comb += common.eq(Mux(arbitrate | sp_written, tree.min_key, increment))
        joins = Signal(w, name="joins")  # every runnable thread at the common SP:PC
        m.d.comb += joins.eq(
            Cat(runnable[i] & (Cat(next_pc[i], next_sp[i]) == common) for i in range(w))
        )

        with m.If(self.start):
            m.d.sync += [live.eq(self.start_mask), waiting.eq(0), active.eq(self.start_mask)]
            m.d.sync += [common_pc.eq(self.start_pc), common_sp.eq(self.start_sp)]
            m.d.sync += [r.eq(self.start_pc) for r in pc]
            m.d.sync += [r.eq(self.start_sp) for r in sp]
        with m.Else():
            m.d.sync += [live.eq(next_live), waiting.eq(next_waiting)]
            m.d.sync += [r.eq(v) for r, v in zip(pc + sp, next_pc + next_sp, strict=True)]
            with m.If(ex | arbitrate):
                m.d.sync += [active.eq(joins), Cat(common_pc, common_sp).eq(common)]

        valid = active.any()
        m.d.comb += [
            self.valid.eq(valid),
            self.pc.eq(Mux(valid, common_pc, 0)),
            self.active.eq(active),
            self.live.eq(live),
            self.waiting.eq(waiting),
        ]
        m.d.comb += [self.thread_pc[i].eq(pc[i]) for i in range(w)]
        return m
