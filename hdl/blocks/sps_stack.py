"""SPS reconvergence stack (seed 002 Sec 2.2, Fig 3): ``stack_depth`` entries of (PC, active
mask, RPC, call flag) in flip-flops, a stack pointer ``sp`` (= ``status.stack``), the top
entry's split on ``splits``. Parameters and the meaning of every port:
``golden.blocks.stack_twins.SpsStackParams``; behaviour: ``ReconvergenceStack.update``.

One update per clock, all in one combinational step from the registers:

1. decode (``stack_common.decode_update``): continuation, call, return, branch, jump;
2. exited lanes leave every entry's mask; the top entry's PC becomes the jump target, or for a
   call or branch the RPC — unless the branch has the RPC of the top entry (a loop exit), then
   the top entry is overwritten by the pushes (the entry below already waits there);
3. up to two pushes at ``base`` and ``base + 1``: the target groups other than the RPC, the
   higher PC first, so the lower one is on top; ``overflow`` when they do not fit, and then
   nothing else changes;
4. pop: every entry is *done* when its mask is empty, its PC is RETURN, it is the returning
   top entry, or (above the bottom, not a call entry) its PC equals its RPC; the new ``sp`` is
   one above the highest entry that is not done (a priority encoder, so one clock pops any
   number of entries, as the functional ``_reconverge`` loop does).

A barrier release (a cycle of its own) clears the waiting lanes and, when the top entry's
threads were among them, moves its PC past the ``bar`` and pops as above.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, Value

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
    """Ports and parameters: :class:`reconverge.golden.blocks.stack_twins.SpsStackParams`."""

    params: SpsStackParams

    def elaborate(self, platform: object) -> Module:
        m = Module()
        params = self.params
        w, d, pcw = params.warp_size, params.stack_depth, params.pc_width
        never, ret_code = params.never, params.return_code
        outcome, lanes = self.outcome, self.release.lanes
        sp = Signal(range(d + 1), name="sp")
        pc = [Signal(pcw, name=f"e{i}_pc") for i in range(d)]
        mask = [Signal(w, name=f"e{i}_mask") for i in range(d)]
        rpc = [Signal(pcw, name=f"e{i}_rpc") for i in range(d)]
        call = [Signal(name=f"e{i}_call") for i in range(d)]
        waiting = Signal(w, name="waiting")
        live_threads = Signal(w, name="live_threads")
        overflow = Signal(name="overflow_flag")

        # the top entry: a copy of entry sp - 1 in registers of its own, loaded with the entry
        # that is on top after each clock, so that the split the SM issues from starts at a
        # register rather than behind a select over the entries
        is_top = [Signal(name=f"e{i}_top") for i in range(d)]
        m.d.comb += [is_top[i].eq(sp == i + 1) for i in range(d)]
        top_pc, top_mask = Signal(pcw, name="top_pc"), Signal(w, name="top_mask")
        top_rpc, top_call = Signal(pcw, name="top_rpc"), Signal(name="top_call")
        in_call = Signal(name="any_call")  # a call entry is on the stack (loaded as top is)

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
            too_deep.eq(pushing & (base + pushes > d)),
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
        new_pc = [Signal(pcw, name=f"e{i}_pc_next") for i in range(d)]
        new_mask = [Signal(w, name=f"e{i}_mask_next") for i in range(d)]
        new_rpc = [Signal(pcw, name=f"e{i}_rpc_next") for i in range(d)]
        new_call = [Signal(name=f"e{i}_call_next") for i in range(d)]
        # where the pushes land: at ``base`` = sp - replace and the entry above, as one-hot
        # compares of the stack pointer (no subtraction or addition on the way to the entries)
        at_sp = [sp == i for i in range(d)]
        below_sp = [sp > i for i in range(d)]
        first = [pushing & (pushes != 0) & Mux(replace, is_top[i], at_sp[i]) for i in range(d)]
        second = [
            pushing & (pushes == 2) & Mux(replace, at_sp[i], at_sp[i - 1] if i else 0)
            for i in range(d)
        ]
        for i in range(d):
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
        # not a call entry) its PC equals its RPC. Compare before select: every PC an entry can
        # get is compared with RETURN and with the RPC it gets, in parallel and from the ports
        # and registers; the update's case only selects among those bits.
        def flags(name: str, value: Value, against: Value) -> tuple[Signal, Signal]:
            at_ret, at_rpc = Signal(name=f"{name}_ret"), Signal(name=f"{name}_at_rpc")
            m.d.comb += [at_ret.eq(value == ret_code), at_rpc.eq(value == against)]
            return at_ret, at_rpc

        # the top entry's PC after an update (its RPC stays): the jump's group, the RPC, or its
        # own; after a release, PC + 4
        top_jump = flags("top_jump", u.lo.pc, top_rpc)
        top_rpc_pc = flags("top_to_rpc", outcome.rpc, top_rpc)
        top_stays = flags("top_stays", top_pc, top_rpc)
        top_release = flags("top_release", released_pc, top_rpc)
        to_rpc = (u.call | u.branch) & ~replace
        top_ret = Mux(u.jump, top_jump[0], Mux(to_rpc, top_rpc_pc[0], top_stays[0]))
        top_at_rpc = Mux(u.jump, top_jump[1], Mux(to_rpc, top_rpc_pc[1], top_stays[1]))
        # a pushed group never has the update's RPC (the pushes leave that group out)
        lo_ret = Signal(name="lo_ret")
        first_ret = Signal(name="first_ret")
        m.d.comb += [
            lo_ret.eq(u.lo.pc == ret_code),
            first_ret.eq(Mux(push_hi, u.hi.pc == ret_code, lo_ret)),
        ]
        keep = []
        for i in range(d):
            own_ret, own_at_rpc = flags(f"e{i}", pc[i], rpc[i])
            if i > 0:  # the bottom entry has no RPC to reach
                own_at_rpc = own_at_rpc & ~call[i]
                top_at_rpc_i = top_at_rpc & ~call[i]
                release_at_rpc = top_release[1] & ~call[i]
            else:
                own_at_rpc = top_at_rpc_i = release_at_rpc = Value.cast(0)
            own = own_ret | own_at_rpc
            done = Signal(name=f"e{i}_done")
            with m.If(releasing):
                m.d.comb += done.eq(
                    ~mask[i].any()
                    | Mux(is_top[i] & top_released, top_release[0] | release_at_rpc, own)
                )
            with m.Elif(first[i]):
                m.d.comb += done.eq(first_ret)
            with m.Elif(second[i]):
                m.d.comb += done.eq(lo_ret)
            with m.Else():
                m.d.comb += done.eq(
                    ~(mask[i] & ~outcome.exited).any()
                    | (apply & u.ret & is_top[i])
                    | Mux(is_top[i], top_ret | top_at_rpc_i, own)
                )
            # in the stack after the pushes: below ``base`` or pushed (with pushes), else below sp
            in_stack = Mux(
                apply & pushing,
                first[i] | second[i] | (below_sp[i] & ~(replace & is_top[i])),
                below_sp[i],
            )
            k = Signal(name=f"e{i}_keep")
            m.d.comb += k.eq(in_stack & ~done)
            keep.append(k)
        popped_sp = highest_kept(m, keep, len(sp))

        # the entry on top after the pops (one-hot: the highest kept entry)
        new_top = first_set(keep[::-1])[::-1]

        launch = self.launch.valid
        with m.If(launch):
            m.d.sync += [
                sp.eq(1),
                pc[0].eq(self.launch.pc),
                mask[0].eq(self.launch.mask),
                rpc[0].eq(never),
                call[0].eq(0),
                top_pc.eq(self.launch.pc),
                top_mask.eq(self.launch.mask),
                top_rpc.eq(never),
                top_call.eq(0),
                in_call.eq(0),
                waiting.eq(0),
                live_threads.eq(self.launch.mask),
                overflow.eq(0),
            ]
        with m.Elif(apply | (releasing & top_released)):
            m.d.sync += [
                sp.eq(popped_sp),
                top_pc.eq(one_hot(new_top, new_pc)),
                top_mask.eq(one_hot(new_top, new_mask)),
                top_rpc.eq(one_hot(new_top, new_rpc)),
                top_call.eq(one_hot(new_top, new_call)),
                in_call.eq(in_call_after(new_call, keep)),
            ]
            for i in range(d):
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
