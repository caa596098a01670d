"""The divergence unit of one warp, on one signature for every policy (docs/sm-hardware.md,
"Target grouping"; golden: ``golden.sm.divergence``).

It wraps the policy's block — ``sps_stack`` (sps), ``dual_path_stack`` (dps, ppc with and
without hints), ``split_tables`` (mp, mp-orec), ``stackless`` — behind the ports the SM top
uses whatever the policy:

- ``launch``: a warp starts (threads ``mask`` at ``pc``, stack pointer ``sp``);
- ``outcome``: the instruction split ``sid`` issued at ``pc`` with ``mask``: every thread's next
  PC (``next_pc``), the threads that ``exited`` or reached a ``barrier``, whether it was a
  ``control`` instruction, a ``call`` or a ``ret``, its ``rpc``, and SP writes (``sp_we``,
  ``sp_wdata``, which only the stack-less control reads);
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

from reconverge.golden.blocks.split_tables import Op
from reconverge.golden.sm.config import Policy
from reconverge.golden.sm.params import PC_WIDTH, SP_WIDTH, SMParams
from reconverge.hdl.arbiter import Arbiter
from reconverge.hdl.dual_path_stack import DualPathStack
from reconverge.hdl.split_tables import SplitTables
from reconverge.hdl.sps_stack import SpsStack
from reconverge.hdl.stackless import Stackless


def divergence_signature(params: SMParams) -> wiring.Signature:
    """The ports every policy's unit has (seen from the unit)."""
    w, s, sid = params.geometry.warp_size, params.slots, params.sid_bits
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
    if params.policy is Policy.STACKLESS:
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
    lowest PC, the second lowest and the highest, each with its threads (arbiter trees)."""

    def __init__(self, m: Module, name: str, pending: Value, pcs: list[Value]) -> None:
        w = len(pcs)
        self.trees = {}
        for which in ("low", "second", "high"):
            tree = Arbiter(w, PC_WIDTH)
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
        self.low = (low.min_key, low.mask)
        self.second = (second.min_key, second.mask)
        self.high = (~high.min_key, high.mask)
        self.threads = pending
        #: at most two groups: the lowest and the highest take every thread
        self.at_most_two = Signal(name=f"{name}_at_most_two")
        m.d.comb += self.at_most_two.eq((low.mask | high.mask) == pending)
        #: the threads of the groups after the lowest two
        self.rest = Signal(w, name=f"{name}_rest")
        m.d.comb += self.rest.eq(pending & ~low.mask & ~second.mask)


class DivergenceUnit(wiring.Component):
    """One warp's divergence unit for ``params.policy`` (module docstring)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        super().__init__(divergence_signature(params))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        policy = self.params.policy
        if policy is Policy.STACKLESS:
            self._stackless(m)
        elif policy in (Policy.MP, Policy.MP_OREC):
            self._tables(m)
        else:
            self._stack(m)
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
        return pend, active, _Groups(m, "groups", threads, current)

    def _threads(self, m: Module) -> tuple[Signal, Signal]:
        """Live and barrier-waiting threads, as golden's ``DivergenceUnit`` keeps them: a
        launch sets the live ones, exits remove them, barrier arrivals wait until released."""
        w, o = self.params.geometry.warp_size, self.outcome
        live, waiting = Signal(w, name="live_threads"), Signal(w, name="waiting_threads")
        with m.If(self.launch.valid):
            m.d.sync += [live.eq(self.launch.mask), waiting.eq(0)]
        with m.Elif(o.valid):
            m.d.sync += [live.eq(live & ~o.exited), waiting.eq(waiting | o.barrier)]
        with m.Else():
            m.d.sync += waiting.eq(waiting & ~self.release.lanes)
        return live, waiting

    # -- the stack-less control --------------------------------------------------------------
    def _stackless(self, m: Module) -> None:
        p, w = self.params, self.params.geometry.warp_size
        m.submodules.block = block = Stackless(w, PC_WIDTH, SP_WIDTH)
        o = self.outcome
        going, next_pcs = self._targets(m)
        m.d.comb += [
            block.start.eq(self.launch.valid),
            block.start_mask.eq(self.launch.mask),
            block.start_pc.eq(self.launch.pc),
            block.start_sp.eq(self.launch.sp),
            block.ex_valid.eq(o.valid),
            block.ex_control.eq(o.control),
            block.ex_target.eq(going),
            block.ex_exited.eq(o.exited),
            block.ex_barrier.eq(o.barrier),
            block.sp_we.eq(o.sp_we),
            block.bar_release.eq(self.release.lanes),
        ]
        for t in range(w):
            m.d.comb += [block.ex_next_pc[t].eq(next_pcs[t]), block.sp_wdata[t].eq(o.sp_wdata[t])]
        m.d.comb += [
            self.splits.valid.eq(block.valid),
            self.splits.sid[0].eq(0),
            self.splits.pc[0].eq(block.pc),
            self.splits.mask[0].eq(block.active),
            self.busy.eq(0),
            self.overflow.eq(0),
            self.live.eq(block.live),
            self.waiting.eq(block.waiting),
        ]
        del p

    # -- the SPS and dual-path stacks ----------------------------------------------------------
    def _stack(self, m: Module) -> None:
        p, w = self.params, self.params.geometry.warp_size
        g = p.geometry
        dual = p.policy in (Policy.DPS, Policy.PPC)
        if dual:
            mode = 0 if p.policy is Policy.DPS else (1 if p.config.hints else 2)
            block = DualPathStack(w, g.stack_depth, PC_WIDTH, mode)
        else:
            block = SpsStack(w, g.stack_depth, PC_WIDTH)
        m.submodules.block = block
        o = self.outcome
        pend, active, groups = self._sequence(m)
        first = o.valid
        # a return inside a call, or at most two groups: one update; else the highest group
        single = Signal(name="single_update")
        m.d.comb += single.eq(groups.at_most_two | (first & o.ret & block.in_call))
        update = Signal(name="update")
        m.d.comb += update.eq(first | active)
        info = {  # the outcome's fields for the later updates of the same instruction
            "rpc": Signal(PC_WIDTH, name="seq_rpc"),
            "call": Signal(name="seq_call"),
            "path": Signal(name="seq_path"),
        }
        rpc = Mux(o.call, (o.pc + 4)[:PC_WIDTH], o.rpc)
        with m.If(first):
            m.d.sync += [info["rpc"].eq(rpc), info["call"].eq(o.call), info["path"].eq(o.sid[0])]
        now_rpc = Mux(first, rpc, info["rpc"])
        now_call = Mux(first, o.call, info["call"])
        low_pc, low_mask = groups.low
        second_pc, second_mask = groups.second
        high_pc, high_mask = groups.high
        m.d.comb += [
            block.launch.eq(self.launch.valid),
            block.valid.eq(update),
            block.exited.eq(Mux(first, o.exited, 0)),
            block.barrier.eq(Mux(first, o.barrier, 0)),
            block.rpc.eq(now_rpc),
            block.call.eq(now_call),
            block.ret.eq(first & o.ret),
            block.more.eq(update & ~single),
            block.cont.eq(active),
            block.bar_release.eq(self.release.lanes),
        ]
        with m.If(self.launch.valid):
            m.d.comb += [
                block.target_pc[0].eq(self.launch.pc),
                block.target_mask[0].eq(self.launch.mask),
            ]
        with m.Elif(single):
            m.d.comb += [
                block.target_pc[0].eq(low_pc),
                block.target_mask[0].eq(low_mask),
                block.target_pc[1].eq(second_pc),
                block.target_mask[1].eq(second_mask),
            ]
        with m.Else():
            m.d.comb += [block.target_pc[0].eq(high_pc), block.target_mask[0].eq(high_mask)]
        if dual:
            m.d.comb += block.path.eq(Mux(first, o.sid[0], info["path"]))
        with m.If(update & ~single):
            m.d.sync += [pend.eq(groups.threads & ~high_mask), active.eq(1)]
        with m.Elif(update):
            m.d.sync += active.eq(0)
        with m.If(self.launch.valid):
            m.d.sync += active.eq(0)
        # outputs: the splits with their sids (SPS: depth - 1; dual: 2 x (depth - 1) + path)
        level = Signal(p.sid_bits, name="level")
        m.d.comb += level.eq(block.depth - 1)
        for s in range(p.slots):
            valid = block.split_valid[s] if dual else block.split_valid
            pc = block.split_pc[s] if dual else block.split_pc
            mask = block.split_mask[s] if dual else block.split_mask
            sid = (level << 1) | s if dual else level
            m.d.comb += [
                self.splits.valid[s].eq(valid & ~active),
                self.splits.sid[s].eq(sid),
                self.splits.pc[s].eq(pc),
                self.splits.mask[s].eq(mask),
            ]
        live, waiting = self._threads(m)
        self._status(m, active, block.overflow, live, waiting)

    def _status(self, m: Module, busy: Value, overflow: Value, live: Value, waiting: Value) -> None:
        m.d.comb += [
            self.busy.eq(busy),
            self.overflow.eq(overflow),
            self.live.eq(live),
            self.waiting.eq(waiting),
        ]

    # -- the split and reconvergence tables ----------------------------------------------------
    def _tables(self, m: Module) -> None:
        p, w = self.params, self.params.geometry.warp_size
        g = p.geometry
        block = SplitTables(
            w, g.split_table, g.reconv_table, PC_WIDTH, int(p.policy is Policy.MP_OREC)
        )
        m.submodules.block = block
        o = self.outcome
        pend, more, groups = self._sequence(m)
        first = o.valid
        low_pc, low_mask = groups.low
        second_pc, second_mask = groups.second
        op = Signal(Op, name="op")
        with m.If(self.launch.valid):
            m.d.comb += op.eq(Op.LAUNCH)
        with m.Elif(first):
            m.d.comb += op.eq(Op.EXECUTE)
        with m.Elif(self.release.lanes != 0):
            m.d.comb += op.eq(Op.RELEASE)
        with m.Elif(more & ~block.busy):
            m.d.comb += op.eq(Op.MORE)
        m.d.comb += [
            block.op.eq(op),
            block.sid.eq(o.sid),
            block.pc.eq(Mux(self.launch.valid, self.launch.pc, o.pc)),
            block.lanes.eq(Mux(self.launch.valid, self.launch.mask, self.release.lanes)),
            block.target_pc[0].eq(low_pc),
            block.target_mask[0].eq(low_mask),
            block.target_pc[1].eq(second_pc),
            block.target_mask[1].eq(second_mask),
            block.exited.eq(Mux(first, o.exited, 0)),
            block.barrier.eq(Mux(first, o.barrier, 0)),
            block.control.eq(o.control),
            block.call.eq(o.call),
            block.ret.eq(o.ret),
            block.rpc.eq(o.rpc),
        ]
        # further targets follow in MORE cycles when the update was a divergence (a call, or
        # not a return), once the tables settled
        stepped = (op == Op.EXECUTE) | (op == Op.MORE)
        continues = Mux(first, o.call | ~o.ret, 1)
        with m.If(self.launch.valid):
            m.d.sync += more.eq(0)
        with m.Elif(stepped):
            m.d.sync += [pend.eq(groups.rest), more.eq(continues & (groups.rest != 0))]
        for s in range(p.slots):
            m.d.comb += [
                self.splits.valid[s].eq(block.st_issue[s] & ~block.busy & ~more),
                self.splits.sid[s].eq(s),
                self.splits.pc[s].eq(block.st_pc[s]),
                self.splits.mask[s].eq(block.st_mask[s]),
            ]
        self._status(m, block.busy | more, block.overflow, block.live, block.waiting)
