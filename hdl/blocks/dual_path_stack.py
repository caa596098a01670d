"""Dual-path stack, with or without paired-path comparison (seed 003 Fig 4/5; DPS as seed 002
Sec 7 and seed 003 Sec III describe it). Parameters and the meaning of every port:
``golden.blocks.stack_twins.DualPathStackParams``; behaviour: ``DualPathStack.update``,
``modify``, ``pop`` and ``release_paths``.

``stack_depth`` entries in flip-flops, each (RPC, call flag, current path, two paths?) and two
path slots (PC, mask, done, suspended, returned); ``sp`` entries in use. ``policy`` dps: both
paths of the top entry issue; ppc: the current path only, chosen by the paired-path
comparison, explicit with ``hints``, implicit without (no RPCs: the two PCs are compared
after every instruction, Fig 5 line 31). An update (or release) takes a clock, and one more
for each finished entry it pops (``DualPathStack.update``'s clocks):

1. *modify* (the clock of the outcome or release): exited lanes leave every mask; on the top
   entry the issuing path jumps (done when at the RPC), returns, or, for a call or divergent
   branch, is suspended at the RPC while one entry is pushed above it (the one or two target
   groups, or for ``more`` a chain entry: the rest of the path's threads suspended, and the
   group). A branch with the entry's own RPC whose groups fit replaces the path instead (the
   done and empty paths leave the entry). A continuation pushes the next chain entry above
   the top's suspended path. A release instead moves every running path whose threads waited
   past the ``bar``. When every thread has exited the warp leaves the stack at once.
2. *pop* (the clocks after, ``status.busy``, no split shown): while the top entry is
   *finished* — all its live paths done or returned, or (implicit, not a call entry) its
   running paths one, or two at equal PCs (Fig 4 lines 2-7) — each clock pops it, from the
   registers: the suspended path of the entry below resumes (at the return address after a
   call entry, returned when all popped paths returned, at the popped path's PC in implicit
   mode). Whether the next clock pops again (the entry now on top is finished) is registered
   with it, so the splits and the busy flag come from flip-flops.
3. *choose* (PPC, in every clock): on the entry on top after the clock, the runnable path
   with the smaller PC (Fig 4 lines 10-15); explicit mode keeps the current path while it can
   run.
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
        # the top entry is finished: the clock pops it (``status.busy``)
        self.settling = Signal(name="settling")

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

    def _resume(self, m: Module, name: str, e: EntryBits, above: EntryBits) -> EntryBits:
        """The entry below a popped one (``above``): its suspended path resumes (at the
        return address after a call entry, returned when the popped entry's live paths all
        returned, at the popped path's PC in implicit mode)."""
        live = [self._live(above, s) for s in range(2)]
        a = above.paths
        all_ret = self._all_returned(above)
        first_pc = Mux(live[0] & ~a[0].ret, a[0].pc, a[1].pc)
        parent0 = e.paths[0].susp
        parent1 = ~e.paths[0].susp & e.two & e.paths[1].susp
        paths = []
        for s, parent in enumerate((parent0, parent1)):
            p = e.paths[s]
            resumed = Mux(above.call, above.rpc, p.pc)
            if self.params.implicit:
                resumed = Mux(above.call | all_ret | ~(live[0] | live[1]), resumed, first_pc)
            pc = Mux(parent, resumed, p.pc)
            ret = p.ret | (parent & ~above.call & all_ret)
            # whether the resumed path is at the RPC, compared before the selection: both PCs
            # it can resume at come from registers
            at_rpc = Mux(
                above.call,
                self._at_rpc(e.rpc, e.call, above.rpc),
                self._at_rpc(e.rpc, e.call, p.pc),
            )
            done = Mux(parent, at_rpc & ~ret, p.done)
            paths.append(PathBits(pc, p.mask, done, p.susp & ~parent, ret))
        return self._named(m, name, replace(e, paths=(paths[0], paths[1])))

    def _choose(self, m: Module, name: str, e: EntryBits, waiting: Value) -> Value:
        """``_choose``: the current path of the top entry ``e`` after the clock."""
        if not self.params.paired:
            return Value.cast(0)
        run = [self._runnable(e, s, waiting) for s in range(2)]
        smaller = run[1] & (~run[0] | (e.paths[1].pc < e.paths[0].pc))
        keep = Value.cast(0) if self.params.implicit else Mux(e.cur, run[1], run[0])
        cur = Signal(name=name)
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
        settling = self.settling

        # outputs (from the registers)
        for s in range(2):
            valid = Signal(name=f"tos{s}_valid")
            offered = self._runnable(top, s, waiting) & (sp != 0) & ~settling
            if params.paired:
                offered = offered & (top.cur == s)
            m.d.comb += valid.eq(offered)
            path = top.paths[s]
            m.d.comb += split_outputs(self, s, valid, path.pc, path.mask, 2 * (sp - 1) + s)
        m.d.comb += status_outputs(self, live_threads, waiting, sp, in_call, overflow)
        m.d.comb += self.status.busy.eq(settling)

        # 1. modify (a clock with an outcome or a release)
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
            live.eq((sp != 0) & ~overflow & ~settling),
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
        # the entry on top after the modify: the pushed one, the modified top, or released
        mod_top = self._entry("top_modified")
        with m.If(releasing):
            self._assign(m, mod_top, self._released(top, Value.cast(1)))
        with m.Elif(pushing):
            self._assign(m, mod_top, pushed)
        with m.Else():
            self._assign(m, mod_top, top_new)
        sp_mod = Signal(range(d + 1), name="sp_modified")
        m.d.comb += sp_mod.eq(sp + (apply & pushing))
        # every thread exited: the warp leaves the stack at once (the bottom entry holds the
        # live threads: hdl/formal/dual_path_stack.py)
        emptied = Signal(name="emptied")
        m.d.comb += emptied.eq((live_threads & ~u_in.exited) == 0)
        mod_chosen = self._choose(m, "chosen_modified", mod_top, new_waiting)
        mod_pops = Signal(name="modified_top_finished")
        m.d.comb += mod_pops.eq(nested(sp_mod, d) & ~emptied & self._finished(mod_top, new_waiting))

        # 2. pop (a settling clock): the finished top entry leaves, the entry below resumes;
        # everything from registers
        below_sel = [sp == i + 2 for i in range(d - 1)]
        pop_pops = Signal(name="resumed_finished")
        if d > 1:
            below = self._named(m, "below", self._select(below_sel, regs[:-1]))
            resumed = self._resume(m, "resumed", below, top)
            pop_chosen = self._choose(m, "chosen_popped", resumed, waiting)
            if d > 2:  # the entry below the resumed one exists: sp > 2
                m.d.comb += pop_pops.eq((sp > 2) & self._finished(resumed, waiting))

        # 3. the registers
        with m.If(self.launch.valid):
            m.d.sync += [
                sp.eq(1),
                waiting.eq(0),
                live_threads.eq(self.launch.mask),
                overflow.eq(0),
                settling.eq(0),
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
        if d > 1:  # (a one-entry stack never pops)
            with m.Elif(settling):
                m.d.sync += [sp.eq(sp - 1), settling.eq(pop_pops)]
                popped_to = replace(resumed, cur=pop_chosen)
                self._assign(m, top, popped_to, "sync")
                for i, sel in enumerate(below_sel):
                    with m.If(sel):
                        self._assign(m, regs[i], popped_to, "sync")
                m.d.sync += in_call.eq(in_call_after([e.call for e in regs[:-1]], below_sel))
        with m.Elif(apply | releasing):
            m.d.sync += [
                sp.eq(Mux(emptied, 0, sp_mod)),
                waiting.eq(new_waiting),
                settling.eq(mod_pops),
            ]
            self._assign(m, top, replace(mod_top, cur=mod_chosen), "sync")
            mod_is_top = [sp_mod == i + 1 for i in range(d)]
            calls = in_call_after([e.call for e in modified], mod_is_top)
            m.d.sync += in_call.eq(calls & ~emptied)
            with m.If(apply):
                m.d.sync += live_threads.eq(live_threads & ~u_in.exited)
            for i in range(d):
                self._assign(
                    m,
                    regs[i],
                    replace(modified[i], cur=Mux(mod_is_top[i], mod_chosen, modified[i].cur)),
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
