"""Barriers (docs/sm-hardware.md, "Timing rules", rule 4; golden: ``golden.sm.core``,
``_check_barrier`` and ``golden.faults.barrier_fault``).

A resident block is known by the shared-memory window it holds (``window``, one per block);
its members are the active warp slots with that window. In every cycle, for each block:

1. *complete*: no member has a live thread that does not wait (``live & ~waiting``), some
   member has a waiting thread, every member is quiet (its unit settled, no update on its
   way), and the SM is running;
2. *bad*: a complete barrier whose block lost threads (a member's thread that exited, or a
   warp of it that retired: ``window_exited``) or whose waiting warps wait at different
   ``bar`` instructions (a warp's ``bar_mixed``, or its ``bar_pc`` other than the first
   waiting member's): golden's barrier fault;
3. *release*: a complete barrier that is not bad releases every member with waiting threads.

``release`` has one bit per warp slot; ``fault`` is any block's bad barrier.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.params import PC_WIDTH, SMParams
from reconverge.hdl.blocks.common import any_of, named


def warp_layout(params: SMParams) -> data.StructLayout:
    """What the barrier logic sees of one warp slot."""
    w = params.geometry.warp_size
    return data.StructLayout(
        {
            "active": 1,  # the slot holds a warp
            "window": params.warp_bits,  # its block's shared-memory window
            "threads": w,  # the warp's threads at launch
            "live": w,  # its unit's threads that have not exited
            "waiting": w,  # its unit's threads waiting at a barrier
            "quiet": 1,  # its unit settled, no update on its way
            "bar_pc": PC_WIDTH,  # the bar its threads wait at
            "bar_mixed": 1,  # its threads wait at different bars
        }
    )


class Barriers(wiring.Component):
    """The barrier releases and faults of every resident block (module docstring)."""

    def __init__(self, params: SMParams) -> None:
        n = params.geometry.warps
        self.warps = n
        super().__init__(
            {
                "warp": In(data.ArrayLayout(warp_layout(params), n)),
                "window_exited": In(n),  # per window: a warp of its block retired
                "running": In(1),
                "release": Out(n),
                "fault": Out(1),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        n = self.warps
        warps = [self.warp[w] for w in range(n)]
        waits = [named(m, f"w{w}_waits", warps[w].waiting != 0) for w in range(n)]
        faults = []
        release: list[Value] = [Const(0)] * n
        for b in range(n):  # the block whose shared-memory window is b
            members = [
                named(m, f"b{b}_has{w}", u.active & (u.window == b)) for w, u in enumerate(warps)
            ]
            waiting = [members[w] & waits[w] for w in range(n)]
            # the bar the block's first waiting warp waits at
            first_pc: Value = Const(0, PC_WIDTH)
            for w in reversed(range(n)):
                first_pc = Mux(waiting[w], warps[w].bar_pc, first_pc)
            first_pc = named(m, f"b{b}_bar_pc", first_pc)
            running = [members[w] & ((u.live & ~u.waiting) != 0) for w, u in enumerate(warps)]
            lost = [self.window_exited[b]] + [
                members[w] & ((u.threads & ~u.live) != 0) for w, u in enumerate(warps)
            ]
            differ = [
                waiting[w] & (u.bar_mixed | (u.bar_pc != first_pc)) for w, u in enumerate(warps)
            ]
            quiet = Cat(~members[w] | u.quiet for w, u in enumerate(warps))
            complete = named(
                m, f"b{b}_barrier", ~any_of(running) & any_of(waiting) & quiet.all() & self.running
            )
            bad = named(m, f"b{b}_barrier_bad", complete & (any_of(lost) | any_of(differ)))
            faults.append(bad)
            release = [r | (complete & ~bad & waiting[w]) for w, r in enumerate(release)]
        m.d.comb += [self.release.eq(Cat(*release)), self.fault.eq(any_of(faults))]
        return m
