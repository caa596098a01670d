"""The divergence unit of one warp, on one signature for every policy (docs/sm-hardware.md,
"Target grouping"; golden: ``golden.sm.divergence``).

It wraps the policy's block — ``sps_stack`` (sps), ``dual_path_stack`` (dps, ppc with and
without hints), ``split_tables`` (mp, mp-orec), ``stackless`` — behind the ports the SM top
uses whatever the policy:

- ``launch``: a warp starts (threads ``mask`` at ``pc``, stack pointer ``sp``);
- ``outcome``: the instruction split ``sid`` issued at ``pc`` with ``mask``: every thread's
  next PC (``next_pc``; ``uniform``: every thread goes to ``pc`` + 4 and ``next_pc`` is
  not read, as the issue stage says of an instruction it decides alone, which then needs no
  grouping: the grouping trees see only resolved next PCs), the threads that
  ``exited`` or reached a ``barrier``, whether it was a ``control`` instruction, a ``call`` or
  a ``ret``, its ``rpc``, and SP writes (``sp_we``, ``sp_wdata``, which only the stack-less
  control reads);
- ``release``: the block's barrier completed for these waiting ``lanes``;
- out ``splits`` (``valid``, ``sid``, ``pc``, ``mask`` per split slot), ``busy`` (the unit is still
  applying an update and exposes nothing), ``overflow``, ``live``, ``waiting``.

The stack and table blocks take at most two target groups per clock, so the unit groups the
per-thread next PCs with arbiter trees (seed 000 Fig 4b: the minimum PC and the threads at it):
one update when the threads go to at most two PCs; an indirect jump to k > 2 PCs becomes the
sequence golden defines — for the stacks ``golden.blocks.stack_update.stack_updates`` (the
highest PCs first, one per clock, then the lowest two), for the split tables
``SplitTables.execute`` (ascending pairs, ``more`` cycles after the table settled). A return
inside a call is always one update of the two lowest groups.

With ``stackless`` the ``coalesce`` group reaches the stack-less control's arbiter tree, which
the load/store unit shares (seed 000 Sec 4.3).
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.params import PC_WIDTH, SP_WIDTH, SMParams
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.registry import lookup


def divergence_signature(params: SMParams) -> wiring.Signature:
    """The ports every policy's unit has (seen from the unit)."""
    w, s, sid = params.geometry.warp_size, sm_unit(params).slots, sm_unit(params).sid_bits
    members = {
        "launch": In(
            wiring.Signature(
                {"valid": Out(1), "mask": Out(w), "pc": Out(PC_WIDTH), "sp": Out(SP_WIDTH)}
            )
        ),
        "outcome": In(
            wiring.Signature(
                {
                    "valid": Out(1),
                    "sid": Out(sid),
                    "pc": Out(PC_WIDTH),
                    "mask": Out(w),
                    "control": Out(1),
                    "call": Out(1),
                    "ret": Out(1),
                    "rpc": Out(PC_WIDTH),
                    "exited": Out(w),
                    "barrier": Out(w),
                    "next_pc": Out(data.ArrayLayout(PC_WIDTH, w)),
                    "uniform": Out(1),
                    "sp_we": Out(w),
                    "sp_wdata": Out(data.ArrayLayout(SP_WIDTH, w)),
                }
            )
        ),
        "release": In(wiring.Signature({"lanes": Out(w)})),
        "splits": Out(
            wiring.Signature(
                {
                    "valid": Out(s),
                    "sid": Out(data.ArrayLayout(sid, s)),
                    "pc": Out(data.ArrayLayout(PC_WIDTH, s)),
                    "mask": Out(data.ArrayLayout(w, s)),
                }
            )
        ),
        "busy": Out(1),
        "overflow": Out(1),
        "live": Out(w),
        "waiting": Out(w),
    }
    if sm_unit(params).name == "stackless":
        members["coalesce"] = In(
            wiring.Signature(
                {
                    "valid": Out(w),
                    "key": Out(data.ArrayLayout(params.line_key_bits, w)),
                    "granted": In(1),
                    "min_key": In(params.line_key_bits),
                    "mask": In(w),
                }
            )
        )
    return wiring.Signature(members)


class _Groups:
    """The target groups of a set of threads (``pending``) with their next PCs (``pcs``): the
    lowest PC, the second lowest and the highest, each with its threads (arbiter trees); when
    ``uniform``, every thread goes to ``target``: one group, the trees bypassed."""

    def __init__(
        self, m: Module, name: str, pending: Value, pcs: list[Value], uniform: Value,
        target: Value,
    ) -> None:  # fmt: skip
        w = len(pcs)
        self.trees = {}
        for which in ("low", "second", "high"):
            tree = Arbiter(ArbiterParams(w, PC_WIDTH))
            m.submodules[f"{name}_{which}"] = tree
            self.trees[which] = tree
        low, second, high = self.trees["low"], self.trees["second"], self.trees["high"]
        for t in range(w):
            m.d.comb += [
                low.key[t].eq(pcs[t]),
                second.key[t].eq(pcs[t]),
                high.key[t].eq(~pcs[t]),
            ]
        m.d.comb += [
            low.valid.eq(pending),
            second.valid.eq(pending & ~low.mask),
            high.valid.eq(pending),
        ]
        one = Mux(uniform, pending, 0)
        self.low = (Mux(uniform, target, low.min_key), Mux(uniform, pending, low.mask))
        self.second = (second.min_key, Mux(uniform, 0, second.mask))
        self.high = (Mux(uniform, target, ~high.min_key), Mux(uniform, pending, high.mask))
        self.threads = pending
        #: at most two groups: the lowest and the highest take every thread
        self.at_most_two = Signal(name=f"{name}_at_most_two")
        m.d.comb += self.at_most_two.eq(uniform | ((low.mask | high.mask) == pending))
        #: the threads of the groups after the lowest two
        self.rest = Signal(w, name=f"{name}_rest")
        m.d.comb += self.rest.eq(pending & ~low.mask & ~second.mask & ~one)


class DivergenceUnit(wiring.Component):
    """One warp's divergence unit for ``params.policy`` (module docstring)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        super().__init__(divergence_signature(params))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        unit = sm_unit(self.params)
        block = lookup(unit.name).build(unit)
        m.submodules.block = block
        glue = {"stackless": self._stackless, "split_tables": self._tables}
        glue.get(unit.name, self._stack)(m, block)
        return m

    # -- the threads an outcome sends somewhere, and the sequence state ------------------------
    def _targets(self, m: Module) -> tuple[Value, list[Value]]:
        o = self.outcome
        going = Signal(self.params.geometry.warp_size, name="going")
        m.d.comb += going.eq(o.mask & ~o.exited & ~o.barrier)
        return going, [o.next_pc[t] for t in range(self.params.geometry.warp_size)]

    def _sequence(self, m: Module) -> tuple[Signal, Signal, _Groups]:
        """The registers of an update spread over several clocks — the threads still to send
        (``pend``, with their PCs) and whether such an update is under way (``active``) — and
        the groups of this clock's threads: the outcome's in its cycle, the pending ones after."""
        w = self.params.geometry.warp_size
        going, next_pcs = self._targets(m)
        pend = Signal(w, name="seq_pending")
        pcs = [Signal(PC_WIDTH, name=f"seq_pc{t}") for t in range(w)]
        active = Signal(name="seq_active")
        first = self.outcome.valid
        threads = Signal(w, name="seq_threads")
        m.d.comb += threads.eq(Mux(first, going, pend))
        current = [Signal(PC_WIDTH, name=f"seq_now_pc{t}") for t in range(w)]
        for t in range(w):
            m.d.comb += current[t].eq(Mux(first, next_pcs[t], pcs[t]))
        with m.If(first):
            m.d.sync += [pc.eq(v) for pc, v in zip(pcs, next_pcs, strict=True)]
        uniform = first & self.outcome.uniform  # (a sequence is never uniform)
        target = (self.outcome.pc + 4)[:PC_WIDTH]
        return pend, active, _Groups(m, "groups", threads, current, uniform, target)

    # -- the stack-less control --------------------------------------------------------------
    def _stackless(self, m: Module, block: wiring.Component) -> None:
        w = self.params.geometry.warp_size
        o = self.outcome
        going, next_pcs = self._targets(m)
        m.d.comb += [
            block.launch.valid.eq(self.launch.valid),
            block.launch.mask.eq(self.launch.mask),
            block.launch.pc.eq(self.launch.pc),
            block.launch.sp.eq(self.launch.sp),
            block.outcome.valid.eq(o.valid),
            block.outcome.control.eq(o.control),
            block.outcome.next_mask.eq(going),
            block.outcome.exited.eq(o.exited),
            block.outcome.barrier.eq(o.barrier),
            block.outcome.sp_we.eq(o.sp_we),
            block.release.lanes.eq(self.release.lanes),
        ]
        for t in range(w):
            m.d.comb += [
                block.outcome.next_pc[t].eq(next_pcs[t]),
                block.outcome.sp_wdata[t].eq(o.sp_wdata[t]),
            ]
        wiring.connect(m, wiring.flipped(self.coalesce), block.coalesce)
        self._splits(m, block, block.splits.valid)
        self._status(m, block.status.busy, block.status.overflow, block.status.live,
                     block.status.waiting)  # fmt: skip

    def _splits(self, m: Module, block: wiring.Component, valid: Value) -> None:
        """The block's splits, those of ``valid`` exposed."""
        for s in range(sm_unit(self.params).slots):
            m.d.comb += [
                self.splits.valid[s].eq(valid[s]),
                self.splits.sid[s].eq(block.splits.sid[s]),
                self.splits.pc[s].eq(block.splits.pc[s]),
                self.splits.mask[s].eq(block.splits.mask[s]),
            ]

    # -- the SPS and dual-path stacks ----------------------------------------------------------
    def _stack(self, m: Module, block: wiring.Component) -> None:
        o, bo = self.outcome, block.outcome
        pend, active, groups = self._sequence(m)
        first = o.valid
        # a return inside a call, or at most two groups: one update; else the highest group
        single = Signal(name="single_update")
        m.d.comb += single.eq(groups.at_most_two | (first & o.ret & block.status.in_call))
        update = Signal(name="update")
        m.d.comb += update.eq(first | active)
        later = {  # the outcome's fields for the later updates of the same instruction
            "rpc": Signal(PC_WIDTH, name="seq_rpc"),
            "call": Signal(name="seq_call"),
            "slot": Signal.like(bo.slot, name="seq_slot"),
        }
        rpc = Mux(o.call, (o.pc + 4)[:PC_WIDTH], o.rpc)
        slot = o.sid[: len(bo.slot)]  # dual-path: the path (sid = 2 x level + path)
        with m.If(first):
            m.d.sync += [later["rpc"].eq(rpc), later["call"].eq(o.call), later["slot"].eq(slot)]
        low_pc, low_mask = groups.low
        second_pc, second_mask = groups.second
        high_pc, high_mask = groups.high
        m.d.comb += [
            block.launch.valid.eq(self.launch.valid),
            block.launch.mask.eq(self.launch.mask),
            block.launch.pc.eq(self.launch.pc),
            bo.valid.eq(update),
            bo.slot.eq(Mux(first, slot, later["slot"])),
            bo.exited.eq(Mux(first, o.exited, 0)),
            bo.barrier.eq(Mux(first, o.barrier, 0)),
            bo.rpc.eq(Mux(first, rpc, later["rpc"])),
            bo.call.eq(Mux(first, o.call, later["call"])),
            bo.ret.eq(first & o.ret),
            bo.control.eq(first & o.control),
            bo.more.eq(update & ~single),
            bo.cont.eq(active),
            block.release.lanes.eq(self.release.lanes),
        ]
        with m.If(single):
            m.d.comb += [
                bo.target_pc[0].eq(low_pc),
                bo.target_mask[0].eq(low_mask),
                bo.target_pc[1].eq(second_pc),
                bo.target_mask[1].eq(second_mask),
            ]
        with m.Else():
            m.d.comb += [bo.target_pc[0].eq(high_pc), bo.target_mask[0].eq(high_mask)]
        with m.If(update & ~single):
            m.d.sync += [pend.eq(groups.threads & ~high_mask), active.eq(1)]
        with m.Elif(update | self.launch.valid):
            m.d.sync += active.eq(0)
        self._splits(m, block, Mux(active, 0, block.splits.valid))
        self._status(m, active, block.status.overflow, block.status.live, block.status.waiting)

    def _status(self, m: Module, busy: Value, overflow: Value, live: Value, waiting: Value) -> None:
        m.d.comb += [
            self.busy.eq(busy),
            self.overflow.eq(overflow),
            self.live.eq(live),
            self.waiting.eq(waiting),
        ]

    # -- the split and reconvergence tables ----------------------------------------------------
    def _tables(self, m: Module, block: wiring.Component) -> None:
        o, bo, busy = self.outcome, block.outcome, block.status.busy
        pend, more, groups = self._sequence(m)
        first = o.valid
        low_pc, low_mask = groups.low
        second_pc, second_mask = groups.second
        # further targets follow in MORE cycles (outcome with cont) once the tables settled,
        # when the update was a divergence (the tables say so: a return from a tracked call is
        # none, a return without one is an indirect jump)
        more_now = Signal(name="more_now")
        m.d.comb += more_now.eq(more & block.status.continues)
        step = Signal(name="more_step")
        m.d.comb += step.eq(~first & more_now & ~busy)
        m.d.comb += [
            block.launch.valid.eq(self.launch.valid),
            block.launch.mask.eq(self.launch.mask),
            block.launch.pc.eq(self.launch.pc),
            bo.valid.eq(first | step),
            bo.cont.eq(step),
            bo.slot.eq(o.sid),
            bo.target_pc[0].eq(low_pc),
            bo.target_mask[0].eq(low_mask),
            bo.target_pc[1].eq(second_pc),
            bo.target_mask[1].eq(second_mask),
            bo.exited.eq(Mux(first, o.exited, 0)),
            bo.barrier.eq(Mux(first, o.barrier, 0)),
            bo.control.eq(o.control),
            bo.call.eq(first & o.call),
            bo.ret.eq(first & o.ret),
            bo.rpc.eq(Mux(o.call, (o.pc + 4)[:PC_WIDTH], o.rpc)),
            block.release.lanes.eq(self.release.lanes),
        ]
        with m.If(self.launch.valid):
            m.d.sync += more.eq(0)
        with m.Elif(first | step):
            m.d.sync += [pend.eq(groups.rest), more.eq(groups.rest != 0)]
        with m.Elif(~more_now):
            m.d.sync += more.eq(0)
        self._splits(m, block, Mux(busy | more_now, 0, block.splits.valid))
        self._status(m, busy | more_now, block.status.overflow, block.status.live,
                     block.status.waiting)  # fmt: skip
