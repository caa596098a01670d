"""The warp scheduler: which ready split issues (docs/architecture.md, "Timing"; seed 002
Sec 5; golden: ``golden.sm.scheduler``).

Across warps, greedy-then-oldest (the warp that issued last keeps issuing while it is resident,
else the oldest warp by dispatch order) or loose round robin (the warp slots in order, starting
after the slot that issued last); within the chosen warp, its splits in round robin: the first
ready split whose sid is above the sid that issued last, else the first ready split.

Every candidate (warp slot w, split slot s) gets a key, and the minimum over the ready
candidates issues::

    GTO:  warp_class = not (greedy and w == last)    order = age[w]
    LRR:  warp_class = issued and w <= last          order = w
    slot_class = last_sid_valid[w] and sid[w][s] <= last_sid[w]
    key        = {warp_class, order, slot_class, s}  (most significant first)

The orders are unique, so the minimum names one warp: the first in the scheduler's warp order
that has a ready split, and in it the first ready split in round-robin order (split slots are
in sid order). Compare before select: the keys come from registers, so every two warps'
keys (warp class and order) and every two splits' of a warp (slot class and slot) are compared
beside the scoreboard's lookups; the ready bits only select: a split issues when it is ready,
no ready split of its warp comes before it, and no warp with a ready split comes before its
warp (an arbiter tree would put a comparator per level behind the ready bits).
Combinational.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.config import Scheduler as SchedulerKind
from reconverge.golden.geometry import bits_for
from reconverge.golden.params import AGE_BITS, SMParams
from reconverge.hdl.blocks.common import encode


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
        p, n, slots = self.params, self.warps, self.slots
        gto = p.config.scheduler is SchedulerKind.GTO
        ready = [[self.ready[w * slots + s] for s in range(slots)] for w in range(n)]
        warp_ready = [Cat(*r).any() for r in ready]
        # the warps' keys (class, order), every two compared; ties (never between resident
        # warps) go to the lower warp slot, so that ``before`` is a strict order
        keys = []
        for w in range(n):
            warp_class = Signal(name=f"w{w}_class")
            if gto:
                m.d.comb += warp_class.eq(~(self.greedy & (self.last_warp == w)))
                keys.append(Cat(self.age[w], warp_class))
            else:
                m.d.comb += warp_class.eq(self.issued & (w <= self.last_warp))
                keys.append(Cat(Const(w, p.warp_bits), warp_class))
        before: dict[tuple[int, int], Value] = {}  # (v, w): warp v comes before warp w
        for v in range(n):
            for w in range(v + 1, n):
                first = Signal(name=f"w{v}_before_w{w}")
                m.d.comb += first.eq(keys[v] <= keys[w])
                before[v, w], before[w, v] = first, ~first
        first_warp = []
        for w in range(n):
            beaten = [warp_ready[v] & before[v, w] for v in range(n) if v != w]
            first = Signal(name=f"w{w}_first")
            m.d.comb += first.eq(~Cat(*beaten).any() if beaten else 1)
            first_warp.append(first)
        # within a warp: the splits after the last sid first (slot class 0), in slot order
        grant = []
        for w in range(n):
            late = []
            for s in range(slots):
                slot_class = Signal(name=f"w{w}_s{s}_class")
                i = w * slots + s
                m.d.comb += slot_class.eq(
                    self.last_sid_valid[w] & (self.sid[i] <= self.last_sid[w])
                )
                late.append(slot_class)
            for s in range(slots):
                # split r comes before split s: a lower slot class, or the same and a lower slot
                beaten = [
                    ready[w][r] & (~late[r] & late[s] if r > s else ~late[r] | late[s])
                    for r in range(slots)
                    if r != s
                ]
                g = Signal(name=f"w{w}_s{s}_grant")
                m.d.comb += g.eq(ready[w][s] & first_warp[w] & ~Cat(*beaten).any())
                grant.append(g)
        m.d.comb += [
            self.valid.eq(self.ready.any()),
            self.grant.eq(Cat(*grant)),
            self.warp.eq(encode([first_warp[w] & warp_ready[w] for w in range(n)])),
            self.slot.eq(encode([Cat(*grant[s::slots]).any() for s in range(slots)])),
        ]
        return m
