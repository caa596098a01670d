"""SPS reconvergence stack (seed 002 Sec 2.2, Fig 3): ``stack_depth`` entries of (PC, active
mask, RPC, call flag), a stack pointer ``sp`` (= ``status.stack``), the top entry's split on
``splits``. The top entry is a copy in registers of its own; the entries below it are in
``stack_depth - 1`` registers (the highest entry is only ever the top one; the class says
which registers there are). Parameters and the
meaning of every port: ``golden.blocks.stack_twins.SpsStackParams``; behaviour:
``ReconvergenceStack.update``.

One update per clock, all in one combinational step from the registers:

1. decode (``stack_common.decode_update``): continuation, call, return, branch, jump;
2. exited lanes leave every entry's mask; the top entry's PC becomes the jump target, or for a
   call or branch the RPC — unless the branch has the RPC of the top entry (a loop exit), then
   the top entry is overwritten by the pushes (the entry below already waits there);
3. up to two pushes at ``base`` and ``base + 1``: the target groups other than the RPC, the
   higher PC first, so the lower one is on top; ``overflow`` when they do not fit, and then
   nothing else changes;
4. pop: an entry is *done* when its mask is empty, its PC is RETURN, it is the returning top
   entry, or (above the bottom, not a call entry) its PC equals its RPC; every done entry
   above the highest one that is not done goes, so one clock pops any number of entries, as
   the functional ``_reconverge`` loop does. Only the top and the pushed entries change, so
   the new top is the highest kept of four candidates (the second push, the first, the top,
   the highest kept entry below the top: a priority encoder over the registers, which runs
   beside the decode).

A barrier release (a cycle of its own) clears the waiting lanes and, when the top entry's
threads were among them, moves its PC past the ``bar`` and pops as above.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, Value

from reconverge.golden.blocks.stack_twins import SpsStackParams
from reconverge.hdl.blocks.common import first_set, highest_kept, one_hot
from reconverge.hdl.blocks.ports import BlockComponent
from reconverge.hdl.blocks.stack_common import (
    decode_update,
    in_call_after,
    nested,
    split_outputs,
    status_outputs,
)


class SpsStack(BlockComponent):
    """Ports and parameters: :class:`reconverge.golden.blocks.stack_twins.SpsStackParams`.

    The registers (read by the formal checks, hdl/formal/sps_stack.py): ``sp``; the entries
    ``pc``, ``mask``, ``rpc``, ``call`` (every one but the highest, which is only ever the top
    entry, held in the top copy: an entry is read only once it is below the top); the top
    entry, a copy of entry ``sp - 1`` in registers of its own (``top_pc``, ``top_mask``,
    ``top_rpc``, ``top_call``), loaded with the entry that is on top after each clock, so that
    the split the SM issues from starts at a register rather than behind a select over the
    entries; ``waiting``, ``live_threads``, ``overflow``, ``in_call``."""

    params: SpsStackParams

    def __init__(self, params: SpsStackParams) -> None:
        super().__init__(params)
        w, d, pcw, n = params.warp_size, params.stack_depth, params.pc_width, params.stack_depth - 1
        self.sp = Signal(range(d + 1), name="sp")
        self.pc = [Signal(pcw, name=f"e{i}_pc") for i in range(n)]
        self.mask = [Signal(w, name=f"e{i}_mask") for i in range(n)]
        self.rpc = [Signal(pcw, name=f"e{i}_rpc") for i in range(n)]
        self.call = [Signal(name=f"e{i}_call") for i in range(n)]
        self.waiting = Signal(w, name="waiting")
        self.live_threads = Signal(w, name="live_threads")
        self.overflow = Signal(name="overflow_flag")
        self.top_pc, self.top_mask = Signal(pcw, name="top_pc"), Signal(w, name="top_mask")
        self.top_rpc, self.top_call = Signal(pcw, name="top_rpc"), Signal(name="top_call")
        self.in_call = Signal(name="any_call")  # a call entry is on the stack

    def too_deep(self, base: Value, pushes: Value) -> Value:
        """Step 3's overflow: the pushes do not fit above ``base`` (seed 002 Sec 2.2)."""
        return base + pushes > self.params.stack_depth

    def elaborate(self, platform: object) -> Module:
        m = Module()
        params = self.params
        w, d, pcw = params.warp_size, params.stack_depth, params.pc_width
        never, ret_code = params.never, params.return_code
        outcome, lanes = self.outcome, self.release.lanes
        sp, pc, mask, rpc, call = self.sp, self.pc, self.mask, self.rpc, self.call
        waiting, live_threads, overflow = self.waiting, self.live_threads, self.overflow
        top_pc, top_mask, top_rpc = self.top_pc, self.top_mask, self.top_rpc
        top_call, in_call = self.top_call, self.in_call
        n = d - 1
        is_top = [Signal(name=f"e{i}_top") for i in range(n)]
        m.d.comb += [is_top[i].eq(sp == i + 1) for i in range(n)]

        # outputs (from the registers)
        split_valid = Signal(name="tos_valid")
        m.d.comb += split_valid.eq((sp != 0) & ~(top_mask & waiting).any())
        m.d.comb += split_outputs(self, 0, split_valid, top_pc, top_mask, sp - 1)
        m.d.comb += status_outputs(self, live_threads, waiting, sp, in_call, overflow)

        # 1. decode; pushes: the groups other than the RPC, the higher PC first
        u = decode_update(m, self, in_call)
        push_hi = Signal(name="push_hi")
        push_lo = Signal(name="push_lo")
        m.d.comb += [
            push_hi.eq(u.hi.present & (u.hi.pc != outcome.rpc)),
            push_lo.eq(u.lo.present & (u.lo.pc != outcome.rpc)),
        ]
        pushes = Signal(range(3), name="pushes")
        pushing = Signal(name="pushing")
        replace = Signal(name="replace_top")
        base = Signal(range(d + 1), name="push_base")
        m.d.comb += [
            pushes.eq(push_hi + push_lo),
            pushing.eq(u.cont | u.call | u.branch),
            replace.eq(u.branch & (outcome.rpc == top_rpc) & ~top_call & nested(sp, d)),
            base.eq(sp - replace),
        ]
        live = Signal(name="live")
        too_deep = Signal(name="too_deep")
        m.d.comb += [
            live.eq((sp != 0) & ~overflow),
            too_deep.eq(pushing & self.too_deep(base, pushes)),
        ]
        apply = Signal(name="apply_update")
        releasing = Signal(name="apply_release")
        top_released = Signal(name="top_released")
        m.d.comb += [
            apply.eq(outcome.valid & live & ~too_deep),
            releasing.eq(~outcome.valid & live & lanes.any()),
            top_released.eq((top_mask & lanes).any()),
        ]

        # 2-3. the entries after the update (or the release), before popping
        first_pc = Mux(push_hi, u.hi.pc, u.lo.pc)
        first_mask = Mux(push_hi, u.hi.mask, u.lo.mask)
        new_top_pc = Mux(u.jump, u.lo.pc, Mux((u.call | u.branch) & ~replace, outcome.rpc, top_pc))
        # a release moves only the top entry past the ``bar``: one adder, on the top copy
        released_pc = Signal(pcw, name="released_top_pc")
        m.d.comb += released_pc.eq(top_pc + 4)
        new_pc = [Signal(pcw, name=f"e{i}_pc_next") for i in range(n)]
        new_mask = [Signal(w, name=f"e{i}_mask_next") for i in range(n)]
        new_rpc = [Signal(pcw, name=f"e{i}_rpc_next") for i in range(n)]
        new_call = [Signal(name=f"e{i}_call_next") for i in range(n)]
        # where the pushes land: at ``base`` = sp - replace and the entry above, as one-hot
        # compares of the stack pointer (no subtraction or addition on the way to the entries)
        at_sp = [sp == i for i in range(n)]
        first = [pushing & (pushes != 0) & Mux(replace, is_top[i], at_sp[i]) for i in range(n)]
        second = [
            pushing & (pushes == 2) & Mux(replace, at_sp[i], at_sp[i - 1] if i else 0)
            for i in range(n)
        ]
        for i in range(n):
            pushed = first[i] | second[i]
            with m.If(releasing):
                m.d.comb += [
                    new_pc[i].eq(Mux(is_top[i] & top_released, released_pc, pc[i])),
                    new_mask[i].eq(mask[i]),
                ]
            with m.Elif(pushed):
                m.d.comb += [
                    new_pc[i].eq(Mux(first[i], first_pc, u.lo.pc)),
                    new_mask[i].eq(Mux(first[i], first_mask, u.lo.mask)),
                ]
            with m.Else():
                m.d.comb += [
                    new_pc[i].eq(Mux(is_top[i], new_top_pc, pc[i])),
                    new_mask[i].eq(mask[i] & ~outcome.exited),
                ]
            m.d.comb += [
                new_rpc[i].eq(Mux(pushed & ~releasing, outcome.rpc, rpc[i])),
                new_call[i].eq(Mux(pushed & ~releasing, outcome.call, call[i])),
            ]

        # 4. pop every done entry above the highest one that stays. An entry is done when its
        # mask is empty, its PC is RETURN, it is the returning top entry, or (above the bottom,
        # not a call entry) its PC equals its RPC. Only the top entry and the (at most two)
        # pushed ones change in a clock: every entry below the top keeps its PC and RPC, and
        # its mask loses the exits. So the entry on top afterwards is the highest kept of four
        # candidates: the second push, the first push, the top entry, and the highest kept
        # entry below the top, which is found from the registers and the exits alone, in
        # parallel with the update's decode. Compare before select: every PC the top entry
        # can get is compared with RETURN and its RPC from the ports and registers; the
        # update's kind only selects among those bits.
        def flags(name: str, value: Value, against: Value) -> tuple[Signal, Signal]:
            at_ret, at_rpc = Signal(name=f"{name}_ret"), Signal(name=f"{name}_at_rpc")
            m.d.comb += [at_ret.eq(value == ret_code), at_rpc.eq(value == against)]
            return at_ret, at_rpc

        # the entries below the top: kept unless empty after the exits or at their own RETURN
        # or RPC (a call entry, and the bottom one, have no RPC to reach); a release exits none
        under_top = [sp > i + 1 for i in range(n)]
        below_keep = []
        for i in range(n):
            own_ret, own_at_rpc = flags(f"e{i}", pc[i], rpc[i])
            own = own_ret | (own_at_rpc & ~call[i]) if i > 0 else own_ret
            k = Signal(name=f"e{i}_kept_below")
            m.d.comb += k.eq(under_top[i] & (mask[i] & ~outcome.exited).any() & ~own)
            below_keep.append(k)
        below = first_set(below_keep[::-1])[::-1]  # one-hot: the highest kept below the top
        below_depth = highest_kept(m, below_keep, len(sp), "below_depth")
        calls_below = Signal(name="calls_below")  # a call entry below the top (all stay)
        calls = [c & u for c, u in zip(call, under_top, strict=True)]
        m.d.comb += calls_below.eq(Cat(*calls).any())

        # the top entry after an update (its RPC stays): the jump's group, the RPC, or its own
        # PC; after a release, PC + 4. Done also when it returns or its threads all exited.
        top_jump = flags("top_jump", u.lo.pc, top_rpc)
        top_rpc_pc = flags("top_to_rpc", outcome.rpc, top_rpc)
        top_stays = flags("top_stays", top_pc, top_rpc)
        top_release = flags("top_release", released_pc, top_rpc)
        to_rpc = (u.call | u.branch) & ~replace
        top_ret = Mux(u.jump, top_jump[0], Mux(to_rpc, top_rpc_pc[0], top_stays[0]))
        top_at_rpc = Mux(u.jump, top_jump[1], Mux(to_rpc, top_rpc_pc[1], top_stays[1]))
        may_reach = ~top_call & nested(sp, d)  # the top entry has an RPC to reach
        top_mask_next = Signal(w, name="top_mask_next")
        m.d.comb += top_mask_next.eq(top_mask & ~outcome.exited)
        top_done_update = ~top_mask_next.any() | u.ret | top_ret | (top_at_rpc & may_reach)
        top_done_release = ~top_mask.any() | top_release[0] | (top_release[1] & may_reach)
        # the pushes: a pushed group is never at the update's RPC, so done only at RETURN
        lo_ret = Signal(name="lo_ret")
        first_ret = Signal(name="first_ret")
        m.d.comb += [
            lo_ret.eq(u.lo.pc == ret_code),
            first_ret.eq(Mux(push_hi, u.hi.pc == ret_code, lo_ret)),
        ]
        kept_second = Signal(name="kept_second_push")
        kept_first = Signal(name="kept_first_push")
        kept_top = Signal(name="kept_top")
        m.d.comb += [
            kept_second.eq(~releasing & pushing & (pushes == 2) & ~lo_ret),
            kept_first.eq(~releasing & pushing & (pushes != 0) & ~first_ret),
            kept_top.eq(Mux(releasing, ~top_done_release, ~(pushing & replace) & ~top_done_update)),
        ]
        # sp after the pops: above the kept push (at base, base + 1), at the top, or below it
        sp_up = [Signal(range(d + 3), name=f"sp_plus{k}") for k in (1, 2)]
        m.d.comb += [sp_up[0].eq(sp + 1), sp_up[1].eq(sp + 2)]
        popped_sp = Signal(range(d + 3), name="popped_sp")
        m.d.comb += popped_sp.eq(
            Mux(
                kept_second,
                Mux(replace, sp_up[0], sp_up[1]),
                Mux(kept_first, Mux(replace, sp, sp_up[0]), Mux(kept_top, sp, below_depth)),
            )
        )

        def next_top(pushed: Value, top: Value, entries: list[Signal]) -> Value:
            """The new top entry's field: a kept push's, the top's, or the entry below's."""
            under = one_hot(below, entries)
            return Mux(kept_second | kept_first, pushed, Mux(kept_top, top, under))

        # (a replaced top entry is never a call entry: the replacement needs its RPC)
        in_call_next = Mux(
            kept_second | kept_first,
            outcome.call | top_call | calls_below,
            Mux(kept_top, top_call | calls_below, in_call_after(call, below)),
        )
        top_pc_next = Mux(releasing, released_pc, new_top_pc)

        launch = self.launch.valid
        with m.If(launch):
            m.d.sync += [
                sp.eq(1),
                top_pc.eq(self.launch.pc),
                top_mask.eq(self.launch.mask),
                top_rpc.eq(never),
                top_call.eq(0),
                in_call.eq(0),
                waiting.eq(0),
                live_threads.eq(self.launch.mask),
                overflow.eq(0),
            ]
            if n:  # the bottom entry, read once a push is above it
                m.d.sync += [
                    pc[0].eq(self.launch.pc),
                    mask[0].eq(self.launch.mask),
                    rpc[0].eq(never),
                    call[0].eq(0),
                ]
        with m.Elif(apply | (releasing & top_released)):
            m.d.sync += [
                sp.eq(popped_sp),
                top_pc.eq(next_top(Mux(kept_second, u.lo.pc, first_pc), top_pc_next, pc)),
                top_mask.eq(
                    next_top(
                        Mux(kept_second, u.lo.mask, first_mask),
                        top_mask_next,
                        [x & ~outcome.exited for x in mask],
                    )
                ),
                top_rpc.eq(next_top(outcome.rpc, top_rpc, rpc)),
                top_call.eq(next_top(outcome.call, top_call, call)),
                in_call.eq(in_call_next),
            ]
            for i in range(n):
                m.d.sync += [
                    pc[i].eq(new_pc[i]),
                    mask[i].eq(new_mask[i]),
                    rpc[i].eq(new_rpc[i]),
                    call[i].eq(new_call[i]),
                ]
        with m.If(~launch & apply):
            m.d.sync += [
                waiting.eq(waiting | outcome.barrier),
                live_threads.eq(live_threads & ~outcome.exited),
            ]
        with m.If(~launch & releasing):
            m.d.sync += waiting.eq(waiting & ~lanes)
        with m.If(~launch & outcome.valid & live & too_deep):
            m.d.sync += overflow.eq(1)
        return m
