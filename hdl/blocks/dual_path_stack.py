"""Dual-path stack, with or without paired-path comparison (seed 003 Fig 4/5; DPS as seed 002
Sec 7 and seed 003 Sec III describe it). Parameters and the meaning of every port:
``golden.blocks.stack_twins.DualPathStackParams``; behaviour: ``DualPathStack.update``,
``release`` and ``_settle``.

``stack_depth`` entries in flip-flops, each (RPC, call flag, current path, two paths?) and two
path slots (PC, mask, done, suspended, returned); ``sp`` entries in use. ``policy`` dps: both
paths of the top entry issue; ppc: the current path only, chosen by the paired-path
comparison, explicit with ``hints``, implicit without (no RPCs: the two PCs are compared
after every instruction, Fig 5 line 31). One update per clock, in one combinational step:

1. *modify*: exited lanes leave every mask; on the top entry the issuing path jumps (done
   when at the RPC), returns, or, for a call or divergent branch, is suspended at the RPC
   while one entry is pushed above it (the one or two target groups, or for ``more`` a chain
   entry: the rest of the path's threads suspended, and the group). A branch with the
   entry's own RPC whose groups fit replaces the path instead (the done and empty paths
   leave the entry). A continuation pushes the next chain entry above the top's suspended
   path. A release instead moves every running path whose threads waited past the ``bar``.
2. *settle*: a ripple from the top entry down: an entry is *finished* when all its live
   paths are done or returned, or (implicit, not a call entry) its running paths are one, or
   two at equal PCs (Fig 4 lines 2-7); a finished entry is popped and its effect reaches the
   suspended path of the entry below (it resumes: at the return address after a call entry,
   returned when all popped paths returned, at the popped path's PC in implicit mode), which
   may finish that entry in turn. Each position computes this from the one above, so one
   clock pops any number of entries, as the functional loop does. With RPCs (dps, explicit
   ppc) the ripple is one bit an entry: whether the entry finishes once resumed is found
   for both answers to "did the popped entry's paths all return" beside it.
3. *choose* (PPC): on the new top entry, the runnable path with the smaller PC (Fig 4 lines
   10-15); explicit mode keeps the current path while it can run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from amaranth.hdl import Module, Mux, Signal, Value

from reconverge.golden.blocks.stack_twins import DualPathStackParams
from reconverge.hdl.blocks.common import one_hot
from reconverge.hdl.blocks.ports import BlockComponent
from reconverge.hdl.blocks.stack_common import (
    Decoded,
    decode_update,
    in_call_after,
    nested,
    split_outputs,
    status_outputs,
)


@dataclass
class PathBits:
    pc: Value
    mask: Value
    done: Value
    susp: Value
    ret: Value


@dataclass
class EntryBits:
    rpc: Value
    call: Value
    cur: Value
    two: Value
    paths: tuple[PathBits, PathBits]


def mux_path(sel: Value, a: PathBits, b: PathBits) -> PathBits:
    """``sel ? a : b``, field by field."""
    return PathBits(*(Mux(sel, getattr(a, f), getattr(b, f)) for f in PathBits.__annotations__))


def fresh(pc: Value, mask: Value, done: Value | int = 0, susp: int = 0) -> PathBits:
    """A path just pushed: not returned."""
    return PathBits(pc, mask, Value.cast(done), Value.cast(susp), Value.cast(0))


class DualPathStack(BlockComponent):
    """Ports and parameters: :class:`reconverge.golden.blocks.stack_twins.DualPathStackParams`."""

    params: DualPathStackParams

    def __init__(self, params: DualPathStackParams) -> None:
        super().__init__(params)
        d, w = params.stack_depth, params.warp_size
        self.sp = Signal(range(d + 1), name="sp")
        self.regs = [self._entry(f"e{i}") for i in range(d)]
        self.waiting = Signal(w, name="waiting")
        self.live_threads = Signal(w, name="live_threads")
        self.overflow = Signal(name="overflow_flag")
        # a copy of the top entry in registers of its own, loaded with the entry on top after
        # each clock: the splits and the next update start at a register, not behind a select
        self.top = self._entry("top")
        self.in_call = Signal(name="any_call")  # a call entry is on the stack (loaded as top)

    # -- signal bundles ---------------------------------------------------------------------

    def _path(self, name: str) -> PathBits:
        w, pcw = self.params.warp_size, self.params.pc_width
        return PathBits(
            Signal(pcw, name=f"{name}_pc"),
            Signal(w, name=f"{name}_mask"),
            Signal(name=f"{name}_done"),
            Signal(name=f"{name}_susp"),
            Signal(name=f"{name}_ret"),
        )

    def _entry(self, name: str) -> EntryBits:
        return EntryBits(
            Signal(self.params.pc_width, name=f"{name}_rpc"),
            Signal(name=f"{name}_call"),
            Signal(name=f"{name}_cur"),
            Signal(name=f"{name}_two"),
            (self._path(f"{name}_p0"), self._path(f"{name}_p1")),
        )

    @staticmethod
    def _assign(m: Module, dst: EntryBits, src: EntryBits, domain: str = "comb") -> None:
        stmts = [
            dst.rpc.eq(src.rpc),
            dst.call.eq(src.call),
            dst.cur.eq(src.cur),
            dst.two.eq(src.two),
        ]
        for d, s in zip(dst.paths, src.paths, strict=True):
            stmts += [
                d.pc.eq(s.pc),
                d.mask.eq(s.mask),
                d.done.eq(s.done),
                d.susp.eq(s.susp),
                d.ret.eq(s.ret),
            ]
        m.d[domain] += stmts

    def _named(self, m: Module, name: str, src: EntryBits) -> EntryBits:
        out = self._entry(name)
        self._assign(m, out, src)
        return out

    # -- the paired-path rules --------------------------------------------------------------

    def _at_rpc(self, rpc: Value, call: Value, pc: Value) -> Value:
        """``DualEntry.at_rpc``: a real RPC reached (never in implicit mode or a call entry)."""
        if self.params.implicit:
            return Value.cast(0)
        return ~call & (pc == rpc) & (rpc != self.params.never) & (rpc != self.params.return_code)

    @staticmethod
    def _live(e: EntryBits, s: int) -> Value:
        present = 1 if s == 0 else e.two
        return present & e.paths[s].mask.any()

    def _runnable(self, e: EntryBits, s: int, waiting: Value) -> Value:
        p = e.paths[s]
        waits = p.done | p.susp | p.ret
        return self._live(e, s) & ~waits & ~(p.mask & waiting).any()

    def _finished(self, e: EntryBits, waiting: Value) -> Value:
        """``DualEntry.finished``."""
        live = [self._live(e, s) for s in range(2)]
        p = e.paths
        settled = (~live[0] | p[0].ret | p[0].done) & (~live[1] | p[1].ret | p[1].done)
        if not self.params.implicit:
            return settled
        run = [live[s] & ~p[s].ret for s in range(2)]
        blocked = Value.cast(0)
        for s in range(2):
            blocked = blocked | (run[s] & (p[s].susp | (p[s].mask & waiting).any()))
        one = (run[0] ^ run[1]) & ~(live[0] & live[1])
        met = run[0] & run[1] & (p[0].pc == p[1].pc)
        return settled | (~e.call & ~blocked & (one | met))

    def _all_returned(self, e: EntryBits) -> Value:
        """Every live path of ``e`` has returned (and one is live)."""
        live = [self._live(e, s) for s in range(2)]
        p = e.paths
        return (live[0] | live[1]) & (~live[0] | p[0].ret) & (~live[1] | p[1].ret)

    def _finished_if(
        self, m: Module, i: int, e: EntryBits, above: EntryBits, all_ret: Value, waiting: Value
    ) -> tuple[Value, Value]:
        """Entry ``i`` (``e``) resumed by the pop of ``above``: whether it is finished and
        whether its live paths all returned, each found for both values of ``all_ret`` (the
        popped entry's live paths all returned) and selected by it."""
        finished, returned = [], []
        for r in range(2):
            res = self._resume(m, f"e{i}_if{r}", e, Value.cast(1), above, Value.cast(r))
            done = Signal(name=f"e{i}_finished_if_{r}")
            ret = Signal(name=f"e{i}_all_returned_if_{r}")
            m.d.comb += [
                done.eq(self._finished(res, waiting) if i > 0 else 0),
                ret.eq(self._all_returned(res)),
            ]
            finished.append(done)
            returned.append(ret)
        return Mux(all_ret, finished[1], finished[0]), Mux(all_ret, returned[1], returned[0])

    def _resume(
        self, m: Module, name: str, e: EntryBits, popped: Value, above: EntryBits, all_ret: Value
    ) -> EntryBits:
        """The entry below a popped one (``above``, whose live paths all returned when
        ``all_ret``): its suspended path resumes."""
        live = [self._live(above, s) for s in range(2)]
        a = above.paths
        first_pc = Mux(live[0] & ~a[0].ret, a[0].pc, a[1].pc)
        parent0 = e.paths[0].susp
        parent1 = ~e.paths[0].susp & e.two & e.paths[1].susp
        paths = []
        for s, parent in enumerate((parent0, parent1)):
            p = e.paths[s]
            hit = popped & parent
            resumed = Mux(above.call, above.rpc, p.pc)
            if self.params.implicit:
                resumed = Mux(above.call | all_ret | ~(live[0] | live[1]), resumed, first_pc)
            pc = Mux(hit, resumed, p.pc)
            ret = p.ret | (hit & ~above.call & all_ret)
            # whether the resumed path is at the RPC, compared before the selection: both PCs
            # it can resume at come from the modified entries, not from the ripple
            at_rpc = Mux(
                above.call,
                self._at_rpc(e.rpc, e.call, above.rpc),
                self._at_rpc(e.rpc, e.call, p.pc),
            )
            done = Mux(hit, at_rpc & ~ret, p.done)
            paths.append(PathBits(pc, p.mask, done, p.susp & ~hit, ret))
        return self._named(m, name, replace(e, paths=(paths[0], paths[1])))

    def _choose(self, m: Module, e: EntryBits, waiting: Value) -> Value:
        """``_choose``: the current path of the top entry after the update."""
        if not self.params.paired:
            return Value.cast(0)
        run = [self._runnable(e, s, waiting) for s in range(2)]
        smaller = run[1] & (~run[0] | (e.paths[1].pc < e.paths[0].pc))
        keep = Value.cast(0) if self.params.implicit else Mux(e.cur, run[1], run[0])
        cur = Signal(name="chosen")
        m.d.comb += cur.eq(Mux((run[0] | run[1]) & ~keep, smaller, e.cur))
        return cur

    # -- the datapath -----------------------------------------------------------------------

    def elaborate(self, platform: object) -> Module:
        m = Module()
        params = self.params
        d, w = params.stack_depth, params.warp_size
        u_in, lanes = self.outcome, self.release.lanes
        sp, regs, waiting, live_threads = self.sp, self.regs, self.waiting, self.live_threads
        overflow, top, in_call = self.overflow, self.top, self.in_call

        is_top = [Signal(name=f"e{i}_top") for i in range(d)]
        m.d.comb += [is_top[i].eq(sp == i + 1) for i in range(d)]

        # outputs (from the registers)
        for s in range(2):
            valid = Signal(name=f"tos{s}_valid")
            offered = self._runnable(top, s, waiting) & (sp != 0)
            if params.paired:
                offered = offered & (top.cur == s)
            m.d.comb += valid.eq(offered)
            path = top.paths[s]
            m.d.comb += split_outputs(self, s, valid, path.pc, path.mask, 2 * (sp - 1) + s)
        m.d.comb += status_outputs(self, live_threads, waiting, sp, in_call, overflow)

        # 1. modify
        u = decode_update(m, self, in_call)
        rpc = Signal.like(u_in.rpc, name="rpc_used")
        m.d.comb += rpc.eq(Mux(u_in.call, u_in.rpc, params.never) if params.implicit else u_in.rpc)
        replaced = self._replacement(m, u, top, rpc, sp)
        pushing = Signal(name="pushing")
        m.d.comb += pushing.eq((u.cont | u.call | u.branch) & ~replaced)
        live = Signal(name="live")
        apply = Signal(name="apply_update")
        releasing = Signal(name="apply_release")
        m.d.comb += [
            live.eq((sp != 0) & ~overflow),
            apply.eq(u_in.valid & live & ~self.too_deep(sp, pushing)),
            releasing.eq(~u_in.valid & live & lanes.any()),
        ]
        new_waiting = Signal(w, name="waiting_next")
        m.d.comb += new_waiting.eq(
            Mux(apply, waiting | u_in.barrier, Mux(releasing, waiting & ~lanes, waiting))
        )
        top_new = self._modify_top(m, u, top, rpc, replaced)
        pushed = self._pushed(m, u, top, rpc)
        modified = []
        for i, e in enumerate(regs):
            released = self._released(e, sp > i)
            kept = self._named(m, f"e{i}_x", self._without(e, u_in.exited))
            out = self._entry(f"e{i}_mod")
            with m.If(releasing):
                self._assign(m, out, released)
            with m.Elif(pushing & (sp == i)):
                self._assign(m, out, pushed)
            with m.Elif(is_top[i]):
                self._assign(m, out, top_new)
            with m.Else():
                self._assign(m, out, kept)
            modified.append(out)
        sp_mod = Signal(range(d + 2), name="sp_modified")
        m.d.comb += sp_mod.eq(sp + (apply & pushing))

        # 2. settle: the ripple of pops from the top down, one bit an entry. With RPCs (dps,
        # explicit ppc) whether an entry below a popped one finishes depends on the entry
        # above only through whether all of that entry's live paths returned, so both
        # outcomes are found beside the ripple (finished_if_*) and the ripple only selects;
        # the resumed entries follow it. Implicit ppc compares the resumed PCs, which come
        # down the ripple: its entries finish from the resumed entry.
        popped_above: Value = Value.cast(0)
        all_ret_above: Value = Value.cast(0)
        above: EntryBits | None = None
        settled: list[EntryBits] = [None] * d  # type: ignore[list-item]
        stop = [Signal(name=f"e{i}_stop") for i in range(d)]
        for i in reversed(range(d)):
            e = modified[i]
            on_top = Signal(name=f"e{i}_on_top")  # the top entry after the modify step
            popped = Signal(name=f"e{i}_popped")
            all_ret = Signal(name=f"e{i}_all_returned")  # its settled paths'
            m.d.comb += on_top.eq(sp_mod == i + 1)
            if above is None:  # the highest entry: nothing above it pops
                ends = on_top & self._finished(e, new_waiting) if i > 0 else 0
                m.d.comb += [popped.eq(ends), all_ret.eq(self._all_returned(e))]
            else:
                if params.implicit:  # (all_ret unused: the resume finds it from above)
                    returned = self._all_returned(above)
                    res = self._resume(m, f"e{i}_res", e, popped_above, above, returned)
                    reached = on_top | popped_above
                    ends = reached & self._finished(res, new_waiting) if i > 0 else 0
                    m.d.comb += popped.eq(ends)
                else:
                    res = self._resume(m, f"e{i}_res", e, popped_above, above, all_ret_above)
                    ends_top = on_top & self._finished(e, new_waiting) if i > 0 else 0
                    ends_below, all_ret_below = self._finished_if(
                        m, i, e, above, all_ret_above, new_waiting
                    )
                    m.d.comb += [
                        popped.eq(ends_top | popped_above & ends_below),
                        all_ret.eq(Mux(popped_above, all_ret_below, self._all_returned(e))),
                    ]
                e = res
            settled[i] = e
            m.d.comb += stop[i].eq((on_top | popped_above) & ~popped)
            popped_above, all_ret_above, above = popped, all_ret, e
        bottom_empty = ~(self._live(settled[0], 0) | self._live(settled[0], 1))
        new_sp = Signal(range(d + 1), name="sp_settled")
        m.d.comb += new_sp.eq(Mux(bottom_empty, 0, one_hot(stop, [i + 1 for i in range(d)])))
        final_top = self._named(m, "final_top", self._select(stop, settled))
        chosen = self._choose(m, final_top, new_waiting)

        # 3. the registers
        with m.If(self.launch.valid):
            m.d.sync += [
                sp.eq(1),
                waiting.eq(0),
                live_threads.eq(self.launch.mask),
                overflow.eq(0),
            ]
            first = self._entry("launched")
            m.d.comb += [
                first.rpc.eq(params.never),
                first.paths[0].pc.eq(self.launch.pc),
                first.paths[0].mask.eq(self.launch.mask),
            ]
            self._assign(m, regs[0], first, "sync")
            self._assign(m, top, first, "sync")
            m.d.sync += in_call.eq(0)
        with m.Elif(apply | releasing):
            m.d.sync += [sp.eq(new_sp), waiting.eq(new_waiting)]
            self._assign(m, top, replace(final_top, cur=chosen), "sync")
            remaining = [stop[i] & ~bottom_empty for i in range(d)]
            m.d.sync += in_call.eq(in_call_after([e.call for e in settled], remaining))
            with m.If(apply):
                m.d.sync += live_threads.eq(live_threads & ~u_in.exited)
            for i in range(d):
                self._assign(
                    m,
                    regs[i],
                    replace(settled[i], cur=Mux(stop[i], chosen, settled[i].cur)),
                    "sync",
                )
        with m.Elif(u_in.valid & live):
            m.d.sync += overflow.eq(1)
        return m

    # -- pieces of the modify step ----------------------------------------------------------

    def too_deep(self, sp: Value, pushing: Value) -> Value:
        """Whether an update that pushes (``pushing``) onto ``sp`` entries needs an entry the
        stack has not: it overflows, and changes nothing but the flag."""
        return pushing & (sp == self.params.stack_depth)

    @staticmethod
    def _select(sel: list[Signal], entries: list[EntryBits]) -> EntryBits:
        def field(get):  # type: ignore[no-untyped-def]
            return one_hot(sel, [get(e) for e in entries])

        paths = tuple(
            PathBits(
                field(lambda e, s=s: e.paths[s].pc),
                field(lambda e, s=s: e.paths[s].mask),
                field(lambda e, s=s: e.paths[s].done),
                field(lambda e, s=s: e.paths[s].susp),
                field(lambda e, s=s: e.paths[s].ret),
            )
            for s in range(2)
        )
        return EntryBits(
            field(lambda e: e.rpc),
            field(lambda e: e.call),
            field(lambda e: e.cur),
            field(lambda e: e.two),
            (paths[0], paths[1]),
        )

    @staticmethod
    def _without(e: EntryBits, lanes: Value) -> EntryBits:
        paths = tuple(replace(p, mask=p.mask & ~lanes) for p in e.paths)
        return replace(e, paths=(paths[0], paths[1]))

    def _released(self, e: EntryBits, used: Value) -> EntryBits:
        """``release``: a running path whose threads waited moves past the ``bar``."""
        paths = []
        for p in e.paths:
            go = used & (p.mask & self.release.lanes).any() & ~(p.done | p.susp | p.ret)
            after = p.pc + 4
            # (at the RPC compared from the registers: the release's lanes only select)
            done = Mux(go, self._at_rpc(e.rpc, e.call, after), p.done)
            paths.append(replace(p, pc=Mux(go, after, p.pc), done=done))
        return replace(e, paths=(paths[0], paths[1]))

    def _replacement(self, m: Module, u: Decoded, top: EntryBits, rpc: Value, sp: Value) -> Signal:
        """``_replacement``: a two-way branch with the entry's RPC whose groups fit."""
        replaced = Signal(name="replace_path")
        if self.params.implicit:
            return replaced  # no RPCs: never
        o_present = Mux(self.outcome.slot, 1, top.two)
        o = mux_path(self.outcome.slot, top.paths[0], top.paths[1])
        kept = o_present & o.mask.any() & ~o.done
        groups = (u.lo.present & (u.lo.pc != rpc)) + (u.hi.present & (u.hi.pc != rpc))
        m.d.comb += replaced.eq(
            u.branch
            & ~self.outcome.more
            & self._at_rpc(top.rpc, top.call, rpc)
            & nested(sp, self.params.stack_depth)
            & (groups + kept <= 2)
        )
        return replaced

    def _modify_top(
        self, m: Module, u: Decoded, top: EntryBits, rpc: Value, replaced: Value
    ) -> EntryBits:
        """The top entry after the update (exits applied)."""
        e = self._without(top, self.outcome.exited)
        # the groups other than the RPC, ascending (for a replacement)
        lo_is_rpc = u.lo.pc == rpc
        g0_pc = Mux(lo_is_rpc, u.hi.pc, u.lo.pc)
        g0_mask = Mux(lo_is_rpc, u.hi.mask, u.lo.mask)
        g1 = u.hi.present & ~lo_is_rpc & (u.hi.pc != rpc)
        path = self.outcome.slot
        other_kept = (
            Mux(path, 1, e.two)
            & Mux(path, e.paths[0].mask, e.paths[1].mask).any()
            & ~Mux(path, e.paths[0].done, e.paths[1].done)
        )
        paths = []
        for s in range(2):
            p = e.paths[s]
            mine = path == s
            pc, mask, done, susp, ret = p.pc, p.mask, p.done, p.susp, p.ret
            # jump, return, push
            pc = Mux(mine & u.jump, u.lo.pc, Mux(mine & (u.call | u.branch) & ~replaced, rpc, pc))
            done = Mux(mine & u.jump, self._at_rpc(top.rpc, top.call, u.lo.pc), done)
            susp = susp | (mine & (u.call | u.branch) & ~replaced)
            ret = ret | (mine & u.ret)
            paths.append(PathBits(pc, mask, done, susp, ret))
        # replacement: the path takes the lowest group; unless the other path stays, the path
        # moves to slot 0 and a second group becomes slot 1
        moved0 = replace(mux_path(path, e.paths[1], e.paths[0]), pc=g0_pc, mask=g0_mask)
        new1 = fresh(u.hi.pc, u.hi.mask)
        kept0 = replace(
            e.paths[0], pc=Mux(path, e.paths[0].pc, g0_pc), mask=Mux(path, e.paths[0].mask, g0_mask)
        )
        kept1 = replace(
            e.paths[1], pc=Mux(path, g0_pc, e.paths[1].pc), mask=Mux(path, g0_mask, e.paths[1].mask)
        )
        rep = [mux_path(other_kept, kept0, moved0), mux_path(other_kept, kept1, new1)]
        final = [mux_path(replaced, rep[s], paths[s]) for s in range(2)]
        two = Mux(replaced, other_kept | g1, e.two)
        return self._named(m, "top_mod", replace(e, two=two, paths=(final[0], final[1])))

    def _pushed(self, m: Module, u: Decoded, top: EntryBits, rpc: Value) -> EntryBits:
        """The entry a call, divergent branch or continuation pushes."""
        o = self.outcome
        parent_mask = Mux(u.cont | ~o.slot, top.paths[0].mask, top.paths[1].mask) & ~o.exited
        at = self._at_rpc(rpc, o.call, u.lo.pc)
        at_hi = self._at_rpc(rpc, o.call, u.hi.pc)
        lo = fresh(u.lo.pc, u.lo.mask, at)
        hi = fresh(u.hi.pc, u.hi.mask, at_hi)
        rest = fresh(rpc, parent_mask & ~u.lo.mask, susp=1)  # a chain entry's suspended path
        p0, p1 = mux_path(o.more, rest, lo), mux_path(o.more, lo, hi)
        return self._named(
            m, "push", EntryBits(rpc, o.call, Value.cast(0), o.more | u.hi.present, (p0, p1))
        )
