"""Hybrid-warp-size squeezer and issue length (seed 001 Sec 4.1-4.3, Fig 4.2/4.3, Appendix A/C).

A warp of W threads runs on L lanes in Q = W/L quarter-warps: thread *t* sits in quarter
``t // L``, lane ``t % L``. The squeeze compacts a diverged warp into fewer quarter-warps
without moving any thread to another lane (objective 1 of Sec 4.1), so fewer issue passes
are needed (Sec 4.2/4.3):

1. count the active threads of each quarter and sort the quarters by that count, descending,
   with the exchange sort of Appendix A (``if count[i] < count[j]: swap`` for i < j); the
   sorted quarters are labelled #0 (most threads) ... #Q-1 — logically, nothing moves;
2. take the threads of #Q-1, then #Q-2, ..., #1 into the holes of the same lane of #0;
3. repeat with #1 as the recipient (sources #Q-1 ... #2), then #2, ..., #Q-2.

Every hole is filled from the highest-numbered quarter that still holds a thread in that
lane. Afterwards each lane's threads occupy the first sorted quarters, so the number of
non-empty quarters — the issue passes — is the largest number of active threads in any lane,
the least any lane-preserving arrangement can reach.

The Appendix A listing reads ``tid_original`` where the narrative implies the current state
(a thread already moved to #0 is offered again to #1) and tests ``thd_count_quar[l]`` with a
quarter id ``l`` where the sorted position ``i`` is meant; this model follows the narrative
and Fig 4.3 (docs/hdl.md, "Squeezer").

Outputs (all in physical quarter numbering): the squeezed active mask, for every slot the
quarter its thread came from (``src``; an empty slot names its own quarter), the quarter mask
(bit *q* = physical quarter *q* non-empty, Sec 4.2 step 1), the sorted order, and ``passes``
(Appendix C's warp size / L).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconverge.golden.blocks.base import (
    BlockParams,
    Group,
    Pipelined,
    Port,
    PortTree,
    PortValue,
    Values,
    check_range,
    param,
)
from reconverge.golden.geometry import Geometry, bits_for


@dataclass(frozen=True)
class Squeezed:
    """The result of :func:`squeeze` (physical numbering: slot ``q * L + j``)."""

    mask: int
    src: tuple[int, ...]
    quarter_mask: int
    order: tuple[int, ...]
    passes: int
    simd_width: int

    def thread(self, slot: int) -> int | None:
        """The thread (index in the warp) in a slot after the squeeze, or None if empty."""
        if not self.mask >> slot & 1:
            return None
        return self.src[slot] * self.simd_width + slot % self.simd_width

    def issue(self) -> list[tuple[int, int]]:
        """The issue passes in order: (physical quarter, L-bit lane mask), #0 first."""
        lanes = (1 << self.simd_width) - 1
        return [
            (q, self.mask >> (q * self.simd_width) & lanes)
            for q in self.order
            if self.quarter_mask >> q & 1
        ]


def quarter_counts(mask: int, warp_size: int, simd_width: int) -> list[int]:
    """Active threads per quarter-warp."""
    lanes = (1 << simd_width) - 1
    return [(mask >> q & lanes).bit_count() for q in range(0, warp_size, simd_width)]


def quarter_mask(mask: int, warp_size: int, simd_width: int) -> int:
    """Bit *q* set when quarter-warp *q* has an active thread (Sec 4.2 step 1)."""
    return sum(1 << q for q, c in enumerate(quarter_counts(mask, warp_size, simd_width)) if c)


def sort_quarters(counts: list[int]) -> tuple[int, ...]:
    """Quarter ids by descending count, with Appendix A's exchange sort (its tie order)."""
    counts = list(counts)
    order = list(range(len(counts)))
    for i in range(len(counts) - 1):
        for j in range(i + 1, len(counts)):
            if counts[i] < counts[j]:
                counts[i], counts[j] = counts[j], counts[i]
                order[i], order[j] = order[j], order[i]
    return tuple(order)


def _lane_fill(occupied: list[int | None]) -> None:
    """Fill the holes of one lane in sorted-position order (in place): recipient #i takes the
    thread of the highest-numbered #k > i that has one."""
    q = len(occupied)
    for i in range(q - 1):
        if occupied[i] is None:
            for k in range(q - 1, i, -1):
                if occupied[k] is not None:
                    occupied[i], occupied[k] = occupied[k], None
                    break


def squeeze(mask: int, warp_size: int, simd_width: int) -> Squeezed:
    """Lane-preserving squeeze of a W-bit active mask (module docstring)."""
    lsize = simd_width
    order = sort_quarters(quarter_counts(mask, warp_size, lsize))
    out = 0
    src = [slot // lsize for slot in range(warp_size)]
    for j in range(lsize):
        lane: list[int | None] = [q if mask >> (q * lsize + j) & 1 else None for q in order]
        _lane_fill(lane)
        for i, source in enumerate(lane):
            if source is not None:
                slot = order[i] * lsize + j
                out |= 1 << slot
                src[slot] = source
    qmask = quarter_mask(out, warp_size, lsize)
    return Squeezed(out, tuple(src), qmask, order, qmask.bit_count(), lsize)


@dataclass(frozen=True)
class SqueezeStep:
    """One step of the Fig 4.3 narrative: ``layout[slot]`` is the thread there or -1 (the
    ``tid_squeez`` array of Appendix A)."""

    recipient: int | None  # sorted label (#i) receiving threads; None for the sort step
    source: int | None  # sorted label giving threads
    layout: tuple[int, ...]


def squeeze_steps(mask: int, warp_size: int, simd_width: int) -> list[SqueezeStep]:
    """The squeeze move by move, as Sec 4.1 narrates Fig 4.3: first the (logical) sort, then
    for each recipient #0, #1, ... the sources #Q-1 down to the one after the recipient."""
    lsize = simd_width
    nq = warp_size // lsize
    order = sort_quarters(quarter_counts(mask, warp_size, lsize))
    layout = [t if mask >> t & 1 else -1 for t in range(warp_size)]
    steps = [SqueezeStep(None, None, tuple(layout))]
    for i in range(nq - 1):
        for k in range(nq - 1, i, -1):
            dst, src = order[i] * lsize, order[k] * lsize
            for j in range(lsize):
                if layout[dst + j] < 0 <= layout[src + j]:
                    layout[dst + j], layout[src + j] = layout[src + j], -1
            steps.append(SqueezeStep(i, k, tuple(layout)))
    return steps


@dataclass(frozen=True)
class SqueezerParams(BlockParams):
    """Parameters of the squeezer: warp size W, SIMD width L (as ``golden.geometry.Geometry``
    validates them), ``latency`` register stages. Q = W/L quarter-warps.

    Ports: group ``warp`` in: ``valid``, ``mask`` (W); group ``squeezed`` out: ``valid``,
    ``mask`` (W), ``src`` (W x log2 Q), ``quarter_mask`` (Q), ``order`` (Q x log2 Q),
    ``passes``. The result appears ``latency`` cycles after its input."""

    name = "squeezer"

    warp_size: int = param(32, "threads per warp W")
    simd_width: int = param(8, "lanes L (W/L quarter-warps)")
    latency: int = param(0, "register stages (0 = combinational)")  # type: ignore[assignment]

    @classmethod
    def of(cls, geometry: Geometry, latency: int = 0) -> SqueezerParams:
        """The squeezer of an SM of ``geometry``."""
        return cls(geometry.warp_size, geometry.simd_width, latency)

    def validate(self) -> None:
        Geometry(warp_size=self.warp_size, simd_width=self.simd_width)  # W and L: one definition
        check_range("latency", self.latency, 0, 16, " register stages")

    @property
    def quarters(self) -> int:
        """Q = W / L."""
        return self.warp_size // self.simd_width

    @property
    def qbits(self) -> int:
        """Bits of a quarter id."""
        return bits_for(self.quarters)

    @property
    def ports(self) -> PortTree:
        w, q, qbits = self.warp_size, self.quarters, self.qbits
        return (
            Group("warp", (Port("valid", "in", 1), Port("mask", "in", w))),
            Group(
                "squeezed",
                (
                    Port("valid", "out", 1),
                    Port("mask", "out", w),
                    Port("src", "out", qbits, w),
                    Port("quarter_mask", "out", q),
                    Port("order", "out", qbits, q),
                    Port("passes", "out", q.bit_length()),
                ),
            ),
        )

    def outputs_of(self, valid: int, mask: int) -> Values:
        """The outputs for a warp (``valid``, ``mask``) when it has gone through."""
        r = squeeze(mask, self.warp_size, self.simd_width)
        return {
            "squeezed__valid": valid,
            "squeezed__mask": r.mask,
            "squeezed__src": r.src,
            "squeezed__quarter_mask": r.quarter_mask,
            "squeezed__order": r.order,
            "squeezed__passes": r.passes,
        }

    def twin(self) -> Squeezer:
        return Squeezer(self)


class Squeezer(Pipelined):
    """Cycle twin of ``reconverge.hdl.blocks.squeezer.Squeezer`` (ports:
    :class:`SqueezerParams`)."""

    params: SqueezerParams

    def compute(self, inputs: Mapping[str, PortValue]) -> Values:
        return self.params.outputs_of(inputs["warp__valid"], inputs["warp__mask"])  # type: ignore[arg-type]
