"""The warp scheduler: which ready split issues (docs/architecture.md, "Timing"; seed 002
Sec 5; golden: ``golden.sm.scheduler``).

Across warps, greedy-then-oldest (the warp that issued last keeps issuing while it is resident,
else the oldest warp by dispatch order) or loose round robin (the warp slots in order, starting
after the slot that issued last); within the chosen warp, its splits in round robin: the first
ready split whose sid is above the sid that issued last, else the first ready split.

Every candidate (warp slot w, split slot s) gets a key, and one arbiter tree
(``reconverge.hdl.arbiter``, seed 000 Fig 4b) takes the minimum over the ready candidates::

    GTO:  warp_class = not (greedy and w == last)    order = age[w]
    LRR:  warp_class = issued and w <= last          order = w
    slot_class = last_sid_valid[w] and sid[w][s] <= last_sid[w]
    key        = {warp_class, order, slot_class, s}  (most significant first)

The orders are unique, so the minimum names one warp: the first in the scheduler's warp order
that has a ready split, and in it the first ready split in round-robin order (split slots are
in sid order). Combinational.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.config import Scheduler as SchedulerKind
from reconverge.golden.geometry import bits_for
from reconverge.golden.params import AGE_BITS, SMParams
from reconverge.hdl.blocks.arbiter import Arbiter


class Scheduler(wiring.Component):
    """Ports: in ``ready`` (one bit per candidate, index w x slots + s), ``sid`` [candidates],
    ``age`` [warps], ``last_sid`` [warps] with ``last_sid_valid`` (bit per warp),
    ``last_warp`` (the slot that issued last), ``issued`` (some warp has issued),
    ``greedy`` (the warp in ``last_warp`` is the one that issued: it has not retired); out
    ``valid``, ``warp``, ``slot``, ``grant`` (one-hot over the candidates)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        self.warps = params.geometry.warps
        self.slots = sm_unit(params).slots
        n = self.warps * self.slots
        super().__init__(
            {
                "ready": In(n),
                "sid": In(data.ArrayLayout(sm_unit(params).sid_bits, n)),
                "age": In(data.ArrayLayout(AGE_BITS, self.warps)),
                "last_sid": In(data.ArrayLayout(sm_unit(params).sid_bits, self.warps)),
                "last_sid_valid": In(self.warps),
                "last_warp": In(params.warp_bits),
                "issued": In(1),
                "greedy": In(1),
                "valid": Out(1),
                "warp": Out(params.warp_bits),
                "slot": Out(bits_for(self.slots)),
                "grant": Out(n),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        p = self.params
        slot_bits = bits_for(self.slots)
        gto = p.config.scheduler is SchedulerKind.GTO
        order_bits = AGE_BITS if gto else p.warp_bits
        key_width = 1 + order_bits + 1 + slot_bits
        m.submodules.tree = tree = Arbiter(ArbiterParams(self.warps * self.slots, key_width))
        for w in range(self.warps):
            warp_class = Signal(name=f"w{w}_class")
            if gto:
                m.d.comb += warp_class.eq(~(self.greedy & (self.last_warp == w)))
                order = self.age[w]
            else:
                m.d.comb += warp_class.eq(self.issued & (w <= self.last_warp))
                order = Const(w, order_bits)
            for s in range(self.slots):
                i = w * self.slots + s
                slot_class = Signal(name=f"w{w}_s{s}_class")
                m.d.comb += [
                    slot_class.eq(self.last_sid_valid[w] & (self.sid[i] <= self.last_sid[w])),
                    tree.valid[i].eq(self.ready[i]),
                    tree.key[i].eq(Cat(Const(s, slot_bits), slot_class, order, warp_class)),
                ]
        warp = Signal(p.warp_bits)
        slot = Signal(slot_bits)
        for w in range(self.warps):
            for s in range(self.slots):
                with m.If(tree.mask[w * self.slots + s]):
                    m.d.comb += [warp.eq(w), slot.eq(s)]
        m.d.comb += [
            self.valid.eq(tree.out_valid),
            self.grant.eq(tree.mask),
            self.warp.eq(warp),
            self.slot.eq(slot),
        ]
        return m
