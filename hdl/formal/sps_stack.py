"""The SPS stack's properties (seed 002 Sec 2.2, Fig 3; ``hdl/blocks/sps_stack.py``), over free
``launch``, ``outcome`` and ``release`` inputs limited by the interface contract of both stacks
(:mod:`reconverge.hdl.formal.stacks`).

Rules (``entry k`` is ``e{k}`` below the top and the top copy at ``sp - 1``):

* ``depth_within_bound``: the stack never holds more than ``stack_depth`` entries (an update
  that needs more raises the overflow flag, Sec 2.2);
* ``top_is_its_entry``: the top copy equals entry ``sp - 1`` where that entry has registers
  (the hardware's copy, so that the split starts at a register);
* ``entries_nest``: the entry below each one is its parent, which holds its threads and
  waits at its RPC, or a sibling pushed by the same update (disjoint threads, the same RPC and
  kind); more exactly, the nearest entry below that is not a sibling is the parent (a branch
  of the top at its own RPC replaces the top by its targets, so a group of siblings can have
  more than two entries); any two entries' masks are disjoint or one holds the other, and the
  bottom entry holds them all (Fig 3: a divergence pushes disjoint paths above the entry that
  waits at their reconvergence PC);
* ``bottom_holds_the_live_threads``: with a warp on the stack the bottom entry's mask is the
  threads that have not exited, the top entry's is not empty, the waiting lanes are live; an
  empty stack has no live thread: no thread is lost while the overflow flag is down;
* ``overflow_changes_nothing_else``: the clock that raises the overflow flag leaves the
  entries, the stack pointer and the threads as they were: the update is refused, not
  partly applied, and the flag says so.

* ``entries_are_well_formed``: every entry's PC and RPC is an instruction's (aligned) or a
  code (NEVER, RETURN), and the top entry is not done (not at RETURN, nor above the bottom at
  its RPC unless it is a call entry): a done entry is popped in the clock that finishes it;
  the bottom entry is never a call entry, and ``in_call`` says whether one is on the stack; a
  call entry's RPC is an instruction's (its return address); only the top entry's threads
  wait; an entry below the top that waits at a code (NEVER, RETURN: no PC reaches it) and is
  not a call entry has all its threads in the entries above it (a call entry's threads arrive
  by returning).

The rules are asserted together (``check.JOINT``), each the others' strengthening, and proven
by k-induction: the induction closes at 3 cycles. (Without the parent clause of
``entries_nest`` and the code clause of ``entries_are_well_formed`` it started from states no
run reaches: the bottom entry waiting at RETURN with a live thread no entry above holds, a
sibling group whose parent holds only some of them.)

Covers: a divergence (three entries), an overflow, a reconvergence back to one entry after a
divergence, a barrier release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

from amaranth.hdl import Assert, Cat, Const, Cover, Module, Mux, Value

from reconverge.golden.blocks.stack_twins import SpsStackParams
from reconverge.hdl.blocks.sps_stack import SpsStack
from reconverge.hdl.formal.check import Harness
from reconverge.hdl.formal.stacks import (
    depth_within_bound,
    overflow_changes_nothing_else,
    stack_covers,
    stack_harnesses,
)


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the stack, its parameters, and the state of the cycle before."""

    dut: SpsStack
    params: SpsStackParams
    before: dict[str, Value]

    def field(self, k: int) -> dict[str, Value]:
        """Entry ``k``: its registers below the top, the top copy at ``sp - 1``."""
        dut = self.dut
        top = {"pc": dut.top_pc, "mask": dut.top_mask, "rpc": dut.top_rpc, "call": dut.top_call}
        if k >= len(dut.mask):
            return top
        own = {"pc": dut.pc[k], "mask": dut.mask[k], "rpc": dut.rpc[k], "call": dut.call[k]}
        return {name: Mux(dut.sp == k + 1, top[name], own[name]) for name in top}

    def mask_of(self, k: int) -> Value:
        return self.field(k)["mask"]

    def state(self) -> dict[str, Value]:
        """The registers an update changes."""
        dut = self.dut
        return {
            "sp": dut.sp,
            "top_pc": dut.top_pc,
            "top_mask": dut.top_mask,
            "top_rpc": dut.top_rpc,
            "live": dut.live_threads,
            "waiting": dut.waiting,
            **{f"e{k}_pc": v for k, v in enumerate(dut.pc)},
            **{f"e{k}_mask": v for k, v in enumerate(dut.mask)},
            **{f"e{k}_rpc": v for k, v in enumerate(dut.rpc)},
        }


def top_is_its_entry(m: Module, s: Seen) -> None:
    dut = s.dut
    for k in range(len(dut.mask)):
        copies = [(dut.top_pc, dut.pc[k]), (dut.top_mask, dut.mask[k]),
                  (dut.top_rpc, dut.rpc[k]), (dut.top_call, dut.call[k])]  # fmt: skip
        with m.If(dut.sp == k + 1):
            m.d.comb += [Assert(top == entry) for top, entry in copies]


def entries_nest(m: Module, s: Seen) -> None:
    d = s.params.stack_depth
    # the entry below each one: its parent, which waits at the entry's RPC, or a sibling that
    # the same update pushed (the same RPC and kind)
    for j in range(1, d):
        below, here = s.field(j - 1), s.field(j)
        a, b = below["mask"], here["mask"]
        child = ((b & ~a) == 0) & (below["pc"] == here["rpc"])
        sibling = ((a & b) == 0) & (below["rpc"] == here["rpc"]) & (below["call"] == here["call"])
        with m.If(s.dut.sp > j):
            m.d.comb += Assert(child | sibling if j > 1 else child)  # the bottom has no sibling
    # more exactly: the nearest entry below that is not a sibling is the parent (a branch of
    # the top at its own RPC replaces it, so a group of siblings can grow past two)
    for j in range(1, d):
        here = s.field(j)
        siblings = Const(1)
        for i in range(j - 1, -1, -1):
            below = s.field(i)
            sibling = (((below["mask"] & here["mask"]) == 0) & (below["rpc"] == here["rpc"])
                       & (below["call"] == here["call"]))  # fmt: skip
            child = ((here["mask"] & ~below["mask"]) == 0) & (below["pc"] == here["rpc"])
            with m.If((s.dut.sp > j) & siblings & ~sibling):
                m.d.comb += Assert(child)
            siblings = siblings & sibling
    for i in range(d):
        for j in range(i + 1, d):
            a, b = s.mask_of(i), s.mask_of(j)
            with m.If(s.dut.sp > j):
                m.d.comb += Assert(((a & b) == 0) | ((b & ~a) == 0))
                if i == 0:
                    m.d.comb += Assert((b & ~a) == 0)


def bottom_holds_the_live_threads(m: Module, s: Seen) -> None:
    dut = s.dut
    with m.If((dut.sp != 0) & ~dut.overflow):
        m.d.comb += Assert(s.mask_of(0) == dut.live_threads)
        m.d.comb += Assert(dut.top_mask != 0)
        m.d.comb += Assert((dut.waiting & ~dut.live_threads) == 0)
    with m.If(dut.sp == 0):
        m.d.comb += Assert(dut.live_threads == 0)


def entries_are_well_formed(m: Module, s: Seen) -> None:
    dut, params = s.dut, s.params
    codes = (params.never, params.return_code)

    def pc_or_code(pc: Value) -> Value:
        return (pc[:2] == 0) | (pc == codes[0]) | (pc == codes[1])

    entries = [(dut.pc[k], dut.rpc[k]) for k in range(len(dut.pc))] + [(dut.top_pc, dut.top_rpc)]
    for k, (pc, rpc) in enumerate(entries):
        with m.If(dut.sp > k if k < len(dut.pc) else dut.sp != 0):
            m.d.comb += Assert(pc_or_code(pc) & pc_or_code(rpc))
    with m.If(dut.sp != 0):
        m.d.comb += Assert(dut.top_pc != params.return_code)
    with m.If((dut.sp != 0) & (dut.waiting & dut.top_mask).any()):
        m.d.comb += Assert(dut.top_pc[:2] == 0)  # its threads wait at the ``bar`` they ran
    with m.If((dut.sp > 1) & ~dut.top_call):
        m.d.comb += Assert(dut.top_pc != dut.top_rpc)
    # the bottom entry is the warp's own, never a call entry; ``in_call``: a call entry is on
    # the stack
    n = len(dut.call)
    calls = [Mux(dut.sp == k + 1, dut.top_call, dut.call[k]) & (dut.sp > k) for k in range(n)]
    calls.append(dut.top_call & (dut.sp == n + 1))
    with m.If(dut.sp != 0):
        m.d.comb += Assert(~calls[0] & (dut.in_call == Cat(*calls).any()))
        # a call entry's RPC is its return address; only the top entry's threads wait
        for k, (_, rpc) in enumerate(entries):
            with m.If(calls[k] if k < n else dut.top_call):
                m.d.comb += Assert(rpc[:2] == 0)
        m.d.comb += Assert((dut.waiting & ~dut.top_mask) == 0)
    # an entry below the top waiting at a code (no PC reaches it) has all its threads in the
    # entries above it, unless it is a call entry (its threads arrive by returning)
    d = params.stack_depth
    for k in range(d - 1):
        e = s.field(k)
        at_code = (e["pc"] == codes[0]) | (e["pc"] == codes[1])
        above = reduce(Value.__or__, (Mux(dut.sp > j, s.mask_of(j), 0) for j in range(k + 1, d)))
        with m.If((dut.sp > k + 1) & ~dut.overflow & at_code & ~e["call"]):
            m.d.comb += Assert((s.mask_of(k) & ~above) == 0)


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "depth_within_bound": (depth_within_bound, "seed 002 Sec 2.2"),
    "top_is_its_entry": (top_is_its_entry, "hdl/blocks/sps_stack.py"),
    "entries_nest": (entries_nest, "seed 002 Sec 2.2, Fig 3"),
    "bottom_holds_the_live_threads": (bottom_holds_the_live_threads, "seed 002 Sec 2.2"),
    "overflow_changes_nothing_else": (overflow_changes_nothing_else, "seed 002 Sec 2.2"),
    "entries_are_well_formed": (entries_are_well_formed, "seed 002 Sec 2.2"),
}


def covers(m: Module, s: Seen) -> None:
    m.d.comb += Cover(s.dut.sp == 3)
    stack_covers(m, s)


def harnesses(
    params: SpsStackParams, make: Callable[[SpsStackParams], SpsStack] = SpsStack
) -> dict[str, Callable[[], Harness]]:
    """Per property, and for the covers, what builds its formal top; ``make`` builds the block
    (a broken variant, in the tests)."""
    return stack_harnesses(params, make, Seen, PROPERTIES, covers)
