"""The dual-path stack's properties (seed 003 Sec III, Fig 4/5; seed 002 Sec 7;
``hdl/blocks/dual_path_stack.py``) in each of its modes (dps, ppc with and without hints), over
free ``launch``, ``outcome`` and ``release`` inputs limited by the interface contract of both
stacks (:mod:`reconverge.hdl.formal.stacks`: an outcome comes from the path ``outcome.slot``
while that path may issue).

An entry holds two paths (the second only when ``two``); entry ``k`` is ``e{k}`` below the top
and the top copy at ``sp - 1``. Rules:

* ``depth_within_bound``: the stack never holds more than ``stack_depth`` entries (an update
  that needs more raises the overflow flag);
* ``top_is_its_entry``: the top copy equals entry ``sp - 1`` (the hardware's copy);
* ``paths_are_disjoint`` (seed 003 Sec III): the two paths of an entry hold disjoint threads:
  a divergence splits the threads of the entry's path between its two paths;
* ``entries_nest`` (Fig 4: a path diverges by suspending itself at its reconvergence PC and
  pushing an entry with the paths it splits into): every entry below the top has exactly one
  suspended path, waiting at the RPC of the entry above, and the threads of the entry above
  are within it (all of them when it waits at a code, NEVER or RETURN, and the entry above is
  not a call entry: no PC reaches a code, so no path has arrived there); the top entry has no
  suspended path;
* ``bottom_holds_the_live_threads``: with a warp on the stack the bottom entry's two paths
  together are the threads that have not exited, and the waiting threads are live; an empty
  stack has no live thread: no thread is lost while the overflow flag is down;
* ``overflow_changes_nothing_else``: the clock that raises the overflow flag leaves the
  entries, the stack pointer and the threads as they were;
* ``entries_are_well_formed``: the registers behind the stack: the bottom entry waits at NEVER
  and is not a call entry; an RPC is a real PC or (not for a call entry, whose RPC is its
  return address) a code; a path is at most one of suspended, done and returned, returns only
  at or above a call entry, is at an aligned PC unless suspended or returned at a code, waits at a
  ``bar`` only at a real PC; with RPCs (dps, explicit ppc) a path is done exactly when it is
  at its entry's RPC; the waiting threads are in running paths; ``in_call`` says whether a call
  entry is on the stack.

The rules are asserted together (``check.JOINT``), each the others' strengthening, and proven
by k-induction in every mode: the induction closes at 3 cycles.

Covers: a divergence (two entries, two paths on top), an overflow, a reconvergence back to one
entry after a divergence, a barrier release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

from amaranth.hdl import Assert, Cat, Cover, Module, Mux, Value

from reconverge.golden.blocks.stack_twins import DualPathStackParams
from reconverge.hdl.blocks.dual_path_stack import DualPathStack, EntryBits, PathBits
from reconverge.hdl.formal.check import Harness, real_pc
from reconverge.hdl.formal.stacks import (
    depth_within_bound,
    overflow_changes_nothing_else,
    stack_covers,
    stack_harnesses,
)

FIELDS = ("pc", "mask", "done", "susp", "ret")


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the stack, its parameters, and the state of the cycle before."""

    dut: DualPathStack
    params: DualPathStackParams
    before: dict[str, Value]

    def entry(self, k: int) -> EntryBits:
        """Entry ``k``: its registers, the top copy where it is on top."""
        dut = self.dut
        own, top = dut.regs[k], dut.top
        on_top = dut.sp == k + 1

        def pick(a: Value, b: Value) -> Value:
            return Mux(on_top, a, b)

        paths = tuple(
            PathBits(*(pick(getattr(t, f), getattr(o, f)) for f in FIELDS))
            for t, o in zip(top.paths, own.paths, strict=True)
        )
        return EntryBits(
            pick(top.rpc, own.rpc), pick(top.call, own.call), pick(top.cur, own.cur),
            pick(top.two, own.two), (paths[0], paths[1]),
        )  # fmt: skip

    @staticmethod
    def masks(e: EntryBits) -> tuple[Value, Value]:
        """The threads of the entry's two paths (the second's only when it has two)."""
        return e.paths[0].mask, Mux(e.two, e.paths[1].mask, 0)

    def state(self) -> dict[str, Value]:
        """The registers an update changes."""
        dut = self.dut
        out = {"sp": dut.sp, "live": dut.live_threads, "waiting": dut.waiting}
        for k, e in enumerate([*dut.regs, dut.top]):
            out |= {f"e{k}_rpc": e.rpc, f"e{k}_two": e.two}
            for s, p in enumerate(e.paths):
                out |= {f"e{k}_p{s}_{f}": getattr(p, f) for f in FIELDS}
        return out


def top_is_its_entry(m: Module, s: Seen) -> None:
    dut = s.dut
    for k, own in enumerate(dut.regs):
        with m.If(dut.sp == k + 1):
            m.d.comb += [
                Assert(dut.top.rpc == own.rpc),
                Assert(dut.top.call == own.call),
                Assert(dut.top.two == own.two),
                Assert(dut.top.cur == own.cur),
            ]
            for t, o in zip(dut.top.paths, own.paths, strict=True):
                m.d.comb += [Assert(getattr(t, f) == getattr(o, f)) for f in FIELDS]


def paths_are_disjoint(m: Module, s: Seen) -> None:
    for k in range(s.params.stack_depth):
        a, b = s.masks(s.entry(k))
        with m.If(s.dut.sp > k):
            m.d.comb += Assert((a & b) == 0)


def entries_nest(m: Module, s: Seen) -> None:
    codes = (s.params.never, s.params.return_code)
    for j in range(1, s.params.stack_depth):
        below, here = s.entry(j - 1), s.entry(j)
        p0, p1 = below.paths
        suspended = Mux(p0.susp, p0.mask, Mux(below.two & p1.susp, p1.mask, 0))
        waits_at = Mux(p0.susp, p0.pc, p1.pc)
        a, b = s.masks(here)
        with m.If(s.dut.sp > j):
            m.d.comb += Assert(p0.susp ^ (below.two & p1.susp))
            m.d.comb += Assert(here.rpc == waits_at)
            m.d.comb += Assert(((a | b) & ~suspended) == 0)
            # no PC reaches a code: the threads suspended at one are all in the entry above
            with m.If(((waits_at == codes[0]) | (waits_at == codes[1])) & ~here.call):
                m.d.comb += Assert((a | b) == suspended)
    top = s.dut.top
    with m.If(s.dut.sp != 0):
        m.d.comb += Assert(~top.paths[0].susp & ~(top.two & top.paths[1].susp))


def entries_are_well_formed(m: Module, s: Seen) -> None:
    dut, params = s.dut, s.params
    codes = (params.never, params.return_code)
    bottom = s.entry(0)
    with m.If(dut.sp != 0):
        m.d.comb += Assert((bottom.rpc == codes[0]) & ~bottom.call)
    running, calls = [], []
    for k in range(params.stack_depth):
        e, used = s.entry(k), dut.sp > k
        calls.append(used & e.call)
        reachable = ~e.call & (e.rpc != codes[0]) & (e.rpc != codes[1])  # a path can arrive
        real = real_pc(e.rpc, params.pc_width)
        with m.If(used):
            m.d.comb += Assert(real | (~e.call & ((e.rpc == codes[0]) | (e.rpc == codes[1]))))
        for slot, p in enumerate(e.paths):
            present = used & (1 if slot == 0 else e.two) & p.mask.any()
            runs = ~(p.susp | p.done | p.ret)
            running.append(Mux(present & runs, p.mask, 0))
            with m.If(present):
                m.d.comb += Assert(~(p.susp & (p.done | p.ret)) & ~(p.done & p.ret))
                m.d.comb += Assert(~p.ret | Cat(*calls).any())
                code = (p.pc == codes[0]) | (p.pc == codes[1])
                m.d.comb += Assert((p.pc[:2] == 0) | ((p.susp | p.ret) & code))
                with m.If(runs & (p.mask & dut.waiting).any()):
                    m.d.comb += Assert(real_pc(p.pc, params.pc_width))
                if not params.implicit:
                    arrived = reachable & (p.pc == e.rpc)
                    m.d.comb += Assert(p.done == (arrived & ~p.susp & ~p.ret))
    m.d.comb += Assert((dut.waiting & ~reduce(Value.__or__, running)) == 0)
    m.d.comb += Assert(dut.in_call == Cat(*calls).any())


def bottom_holds_the_live_threads(m: Module, s: Seen) -> None:
    dut = s.dut
    a, b = s.masks(s.entry(0))
    with m.If((dut.sp != 0) & ~dut.overflow):
        m.d.comb += Assert((a | b) == dut.live_threads)
        m.d.comb += Assert((dut.waiting & ~dut.live_threads) == 0)
    with m.If(dut.sp == 0):
        m.d.comb += Assert(dut.live_threads == 0)


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "depth_within_bound": (depth_within_bound, "seed 003 Sec III"),
    "top_is_its_entry": (top_is_its_entry, "hdl/blocks/dual_path_stack.py"),
    "paths_are_disjoint": (paths_are_disjoint, "seed 003 Sec III"),
    "entries_nest": (entries_nest, "seed 003 Fig 4"),
    "bottom_holds_the_live_threads": (bottom_holds_the_live_threads, "seed 003 Sec III"),
    "overflow_changes_nothing_else": (overflow_changes_nothing_else, "seed 003 Sec III"),
    "entries_are_well_formed": (entries_are_well_formed, "hdl/blocks/dual_path_stack.py"),
}


def covers(m: Module, s: Seen) -> None:
    a, b = s.masks(s.dut.top)
    m.d.comb += Cover((s.dut.sp == 2) & (a != 0) & (b != 0))
    stack_covers(m, s)


def harnesses(
    params: DualPathStackParams,
    make: Callable[[DualPathStackParams], DualPathStack] = DualPathStack,
) -> dict[str, Callable[[], Harness]]:
    """Per property, and for the covers, what builds its formal top; ``make`` builds the block
    (a broken variant, in the tests)."""
    return stack_harnesses(params, make, Seen, PROPERTIES, covers)
