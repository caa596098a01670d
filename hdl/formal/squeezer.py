"""The squeezer's properties (seed 001 Sec 4.1-4.3, Appendix A/C; ``hdl/blocks/squeezer.py``),
over a free warp mask. Thread *t* of the warp is quarter ``t // L``, lane ``t % L``; slot
``q * L + j`` of the squeezed mask holds thread ``src[q * L + j] * L + j``, so a thread can
only land in a slot of its own lane. With ``latency > 0`` the outputs answer the input of
``latency`` cycles before (:func:`reconverge.hdl.formal.check.delayed`).

* ``threads_kept_once``: every active thread is in exactly one slot, in its own lane (Sec 4.1,
  objective 1: no thread moves to another lane; none is dropped or duplicated);
* ``slots_hold_active_threads``: an occupied slot holds an active thread, so with the rule
  above the squeezed warp is a permutation of the active threads;
* ``passes_are_the_minimum``: the quarter mask is the non-empty squeezed quarters, the passes
  its count (Appendix C), and that count is the largest number of active threads in one lane:
  no lane-preserving arrangement needs fewer (Sec 4.1);
* ``order_sorts_the_quarters``: ``order`` is a permutation of the quarters by descending
  thread count (Appendix A's sort), and ``valid`` follows the input.

Covers: a squeeze that saves a pass (more non-empty quarters in the input than passes), a
thread moved to another quarter, a full warp.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from amaranth.hdl import Assert, Cat, Cover, Module, Value

from reconverge.golden.blocks.squeezer import SqueezerParams
from reconverge.hdl.blocks.squeezer import Squeezer
from reconverge.hdl.formal.check import Harness, delayed
from reconverge.hdl.formal.check import harnesses as block_harnesses


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the squeezer, the input its outputs answer, and the geometry."""

    dut: Squeezer
    valid: Value
    mask: Value
    params: SqueezerParams

    def src(self, slot: int) -> Value:
        return self.dut.squeezed.src[slot]

    def holds(self, slot: int, quarter: int) -> Value:
        """Slot ``slot`` holds the thread of quarter ``quarter`` in the slot's lane."""
        return self.dut.squeezed.mask[slot] & (self.src(slot) == quarter)

    def lane_counts(self) -> list[Value]:
        """The active threads of each lane."""
        lsize, nq = self.params.simd_width, self.params.quarters
        return [sum(self.mask[q * lsize + j] for q in range(nq)) for j in range(lsize)]

    def quarter_counts(self) -> list[Value]:
        """The active threads of each quarter-warp."""
        lsize, nq = self.params.simd_width, self.params.quarters
        return [sum(self.mask[q * lsize + j] for j in range(lsize)) for q in range(nq)]


def threads_kept_once(m: Module, s: Seen) -> None:
    lsize, nq = s.params.simd_width, s.params.quarters
    for q in range(nq):
        for j in range(lsize):
            copies = sum(s.holds(p * lsize + j, q) for p in range(nq))
            m.d.comb += Assert(copies == s.mask[q * lsize + j])


def slots_hold_active_threads(m: Module, s: Seen) -> None:
    lsize, nq = s.params.simd_width, s.params.quarters
    for slot in range(s.params.warp_size):
        j = slot % lsize
        active = Cat(s.mask[q * lsize + j] for q in range(nq)).bit_select(s.src(slot), 1)
        with m.If(s.dut.squeezed.mask[slot]):
            m.d.comb += Assert(s.src(slot) < nq)
            m.d.comb += Assert(active)


def passes_are_the_minimum(m: Module, s: Seen) -> None:
    lsize, nq = s.params.simd_width, s.params.quarters
    out = s.dut.squeezed
    for q in range(nq):
        m.d.comb += Assert(out.quarter_mask[q] == out.mask[q * lsize : (q + 1) * lsize].any())
    m.d.comb += Assert(out.passes == sum(out.quarter_mask[q] for q in range(nq)))
    counts = s.lane_counts()
    for count in counts:
        m.d.comb += Assert(out.passes >= count)
    m.d.comb += Assert(Cat(out.passes == count for count in counts).any())


def order_sorts_the_quarters(m: Module, s: Seen) -> None:
    nq, width = s.params.quarters, s.params.simd_width.bit_length()
    out = s.dut.squeezed
    m.d.comb += Assert(out.valid == s.valid)
    counts = Cat(*(Value.cast(c)[:width] for c in s.quarter_counts()))
    placed = [counts.word_select(out.order[i], width) for i in range(nq)]
    for q in range(nq):
        m.d.comb += Assert(sum(out.order[i] == q for i in range(nq)) == 1)
    for i in range(nq - 1):
        m.d.comb += Assert(placed[i] >= placed[i + 1])


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "threads_kept_once": (threads_kept_once, "seed 001 Sec 4.1"),
    "slots_hold_active_threads": (slots_hold_active_threads, "seed 001 Sec 4.1"),
    "passes_are_the_minimum": (passes_are_the_minimum, "seed 001 Sec 4.1, App. C"),
    "order_sorts_the_quarters": (order_sorts_the_quarters, "seed 001 App. A"),
}


def covers(m: Module, s: Seen) -> None:
    lsize, nq = s.params.simd_width, s.params.quarters
    out = s.dut.squeezed
    busy = sum(Cat(s.mask[q * lsize : (q + 1) * lsize]).any() for q in range(nq))
    m.d.comb += Cover(out.passes < busy)
    moved = [s.holds(p * lsize + j, q) for p in range(nq) for q in range(nq) if p != q
             for j in range(lsize)]  # fmt: skip
    m.d.comb += Cover(Cat(*moved).any())
    m.d.comb += Cover(s.mask.all() & (out.passes == nq))


def harnesses(
    params: SqueezerParams, make: Callable[[SqueezerParams], Squeezer] = Squeezer
) -> dict[str, Callable[[], Harness]]:
    """Per property, and for the covers, what builds its formal top; ``make`` builds the block
    (a broken variant, in the tests)."""

    def setup(m: Module) -> tuple[Seen, Sequence[Value]]:
        m.submodules.dut = dut = make(params)
        valid, mask = delayed(m, [dut.warp.valid, dut.warp.mask], params.latency)
        out = dut.squeezed
        ports = (dut.warp.valid, dut.warp.mask, out.valid, out.mask, out.src, out.quarter_mask,
                 out.order, out.passes)  # fmt: skip
        return Seen(dut, valid, mask, params), ports

    rules = {name: rule for name, (rule, _) in PROPERTIES.items()}
    return block_harnesses(setup, rules, covers)
