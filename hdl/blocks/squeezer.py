"""Hybrid-warp-size squeezer and issue-length logic (seed 001 Sec 4.1-4.3, Appendix A/C).

Datapath, in the order of the seed's algorithm (golden: ``golden.blocks.squeezer``):

1. per quarter-warp, a popcount of its L mask bits;
2. Appendix A's exchange sort as a chain of Q(Q-1)/2 compare-and-swap cells over
   (count, quarter id), in the listing's order, so ties resolve exactly as in the seed;
3. per lane, the lane's bits gathered in sorted order (a Q:1 mux per sorted position), then
   the hole filling: recipient #i takes the thread of the highest #k > i that holds one
   (a priority pick per recipient, recipients in order #0, #1, ...);
4. scatter back to physical slots through the inverse of the sort permutation, quarter mask
   (OR over each quarter's lanes) and passes (its popcount, Appendix C).

``latency`` register stages: with 2 or more the first follows the sort (step 2), the others
are at the output; with 1 only the output is registered. Registers initialise to what the idle
input produces (the identity order and source map), as the golden twin assumes.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Mux, Signal, Value

from reconverge.golden.blocks.squeezer import SqueezerParams
from reconverge.hdl.blocks.common import one_hot
from reconverge.hdl.blocks.ports import BlockComponent, drive_outputs


class Squeezer(BlockComponent):
    """Ports and parameters: :class:`reconverge.golden.blocks.squeezer.SqueezerParams`."""

    params: SqueezerParams

    def elaborate(self, platform: object) -> Module:
        m = Module()
        params = self.params
        lsize, nq, qbits = params.simd_width, params.quarters, params.qbits

        # 1-2. counts and the exchange sort
        counts: list[Value] = [
            sum(self.warp.mask[q * lsize + j] for j in range(lsize)) for q in range(nq)
        ]
        cells = [
            (Signal(range(lsize + 1), name=f"count{q}"), Signal(qbits, name=f"id{q}"))
            for q in range(nq)
        ]
        for q, (count, ident) in enumerate(cells):
            m.d.comb += [count.eq(counts[q]), ident.eq(q)]
        for i in range(nq - 1):
            for j in range(i + 1, nq):
                cells[i], cells[j] = self._compare_swap(m, i, j, cells[i], cells[j])
        order = [ident for _, ident in cells]
        valid, mask = self.warp.valid, self.warp.mask
        if params.latency >= 2:
            valid, mask, order = self._register_sort(m, qbits, valid, mask, order)

        # 3. per lane: gather in sorted order, fill the holes
        slot_occ: list[list[Value]] = [[] for _ in range(nq)]  # [sorted position][lane]
        slot_src: list[list[Value]] = [[] for _ in range(nq)]
        for j in range(lsize):
            lane_bits = Array(mask[q * lsize + j] for q in range(nq))
            occ = [lane_bits[order[i]] for i in range(nq)]
            src: list[Value] = list(order)
            for i in range(nq - 1):
                occ, src = self._fill(m, j, i, occ, src)
            for i in range(nq):
                slot_occ[i].append(occ[i])
                slot_src[i].append(src[i])

        # 4. scatter to physical quarters through the inverse permutation
        position = [Signal(qbits, name=f"pos{q}") for q in range(nq)]
        for q in range(nq):
            m.d.comb += position[q].eq(one_hot([order[i] == q for i in range(nq)], list(range(nq))))
        out_mask, out_src, quarter_mask = [], [], []
        for q in range(nq):
            occ_q = Array(Cat(*slot_occ[i]) for i in range(nq))[position[q]]
            src_q = [Array(slot_src[i][j] for i in range(nq))[position[q]] for j in range(lsize)]
            out_mask.append(occ_q)
            out_src += [Mux(occ_q[j], src_q[j], q) for j in range(lsize)]
            quarter_mask.append(occ_q.any())
        qmask = Signal(nq, name="qmask")
        m.d.comb += qmask.eq(Cat(*quarter_mask))
        values = {
            "squeezed__valid": valid,
            "squeezed__mask": Cat(*out_mask),
            "squeezed__src": Cat(*(s[:qbits] for s in out_src)),
            "squeezed__quarter_mask": qmask,
            "squeezed__order": Cat(*order),
            "squeezed__passes": sum(qmask[q] for q in range(nq)),
        }
        stages = min(params.latency, 1) + max(params.latency - 2, 0)
        drive_outputs(m, self, values, stages, params.outputs_of(0, 0))
        return m

    @staticmethod
    def _compare_swap(
        m: Module, i: int, j: int, a: tuple[Value, Value], b: tuple[Value, Value]
    ) -> tuple[tuple[Signal, Signal], tuple[Signal, Signal]]:
        """Appendix A: ``if (count[i] < count[j]) swap(i, j)``."""
        swap = Signal(name=f"swap_{i}_{j}")
        out_a = (
            Signal.like(a[0], name=f"s{i}_{j}_count{i}"),
            Signal.like(a[1], name=f"s{i}_{j}_id{i}"),
        )
        out_b = (
            Signal.like(b[0], name=f"s{i}_{j}_count{j}"),
            Signal.like(b[1], name=f"s{i}_{j}_id{j}"),
        )
        m.d.comb += swap.eq(a[0] < b[0])
        for k in range(2):
            m.d.comb += [out_a[k].eq(Mux(swap, b[k], a[k])), out_b[k].eq(Mux(swap, a[k], b[k]))]
        return out_a, out_b

    @staticmethod
    def _register_sort(
        m: Module, qbits: int, valid: Value, mask: Value, order: list[Value]
    ) -> tuple[Signal, Signal, list[Signal]]:
        valid_q = Signal(name="valid_sorted")
        mask_q = Signal(len(mask), name="mask_sorted")
        order_q = [Signal(qbits, name=f"order_sorted{i}", init=i) for i in range(len(order))]
        m.d.sync += [valid_q.eq(valid), mask_q.eq(mask)]
        m.d.sync += [r.eq(v) for r, v in zip(order_q, order, strict=True)]
        return valid_q, mask_q, order_q

    @staticmethod
    def _fill(
        m: Module, lane: int, i: int, occ: list[Value], src: list[Value]
    ) -> tuple[list[Value], list[Value]]:
        """Recipient #i of one lane takes the thread of the highest #k > i that has one."""
        nq = len(occ)
        occ, src = list(occ), list(src)
        take = {k: Signal(name=f"lane{lane}_r{i}_take{k}") for k in range(i + 1, nq)}
        higher = Value.cast(0)  # some #k' > k holds a thread
        for k in range(nq - 1, i, -1):
            m.d.comb += take[k].eq(~occ[i] & occ[k] & ~higher)
            higher = higher | occ[k]
        moved = [take[k] for k in range(i + 1, nq)]
        new_src_i = Mux(occ[i], src[i], one_hot(moved, [src[k] for k in range(i + 1, nq)]))
        occ_i = Signal(name=f"lane{lane}_r{i}_occ{i}")
        src_i = Signal.like(src[0], name=f"lane{lane}_r{i}_src{i}")
        m.d.comb += [occ_i.eq(occ[i] | higher), src_i.eq(new_src_i)]
        occ[i], src[i] = occ_i, src_i
        for k in range(i + 1, nq):
            occ_k = Signal(name=f"lane{lane}_r{i}_occ{k}")
            m.d.comb += occ_k.eq(occ[k] & ~take[k])
            occ[k] = occ_k
        return occ, src
