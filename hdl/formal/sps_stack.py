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
  kind); any two entries' masks are disjoint or one holds the other, and the bottom entry
  holds them all (Fig 3: a divergence pushes disjoint paths above the entry that waits at
  their reconvergence PC);
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
  wait.

The rules are asserted together (``check.JOINT``) and checked by bmc: each is the others'
strengthening, but k-induction does not close yet. Its last counterexample starts from a state
no run reaches: the bottom entry waits at RETURN with a live thread that no entry above holds,
so the thread is popped with it once the entries above have gone. The missing invariant is that
the threads of an entry waiting at a code (NEVER, RETURN: no PC reaches it) are all in the
entries above it, except those of a path that returned from a call.

Covers: a divergence (three entries), an overflow, a reconvergence back to one entry after a
divergence, a barrier release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from amaranth.hdl import Assert, Cat, Cover, Module, Mux, Value

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
