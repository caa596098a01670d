"""Unified PC/memory arbiter reduction tree (seed 000 Sec 4.1-4.3, Fig 4b).

A binary tree of ceil(log2 N) levels. Every node carries (valid, key, mask of the leaves of its
subtree that hold the key); a node merging children *a* (lower inputs) and *b* keeps the
smaller valid key and the masks of the children that hold it (both on a tie)::

    sel_a = va & (~vb | ka <= kb)        key   = (sel_a ? ka : 0) | (sel_b ? kb : 0)
    sel_b = vb & (~va | kb <= ka)        mask  = {mb & sel_b, ma & sel_a}
                                         valid = va | vb

So the root gives the minimum (0 when nothing is valid), the OR of the valid bits and the mask
of the inputs holding the minimum, without broadcasting the minimum back to the leaves. An odd
node at a level is passed up unchanged. With ``pipeline_every = k > 0`` a register stage
follows every k-th level and the root (``golden.blocks.arbiter.register_levels``); registers
reset to zero, which is what idle (all-invalid) inputs produce.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, Value

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.hdl.blocks.ports import BlockComponent

Node = tuple[Value, Value, Value]  # valid, key, mask


class Arbiter(BlockComponent):
    """Ports and parameters: :class:`reconverge.golden.blocks.arbiter.ArbiterParams`."""

    params: ArbiterParams

    def elaborate(self, platform: object) -> Module:
        m = Module()
        params = self.params
        nodes: list[Node] = [(self.valid[i], self.key[i], self.valid[i]) for i in range(params.n)]
        if params.depth == 0:
            valid, key, mask = nodes[0]
            nodes = [(valid, Mux(valid, key, 0), mask)]
        if 0 in params.levels:
            nodes = self._register(m, 0, nodes)
        for level in range(1, params.depth + 1):
            merged = [
                self._merge(m, level, i, nodes[2 * i], nodes[2 * i + 1])
                for i in range(len(nodes) // 2)
            ]
            if len(nodes) % 2:
                merged.append(nodes[-1])
            nodes = merged
            if level in params.levels:
                nodes = self._register(m, level, nodes)
        (valid, key, mask) = nodes[0]
        m.d.comb += [self.out_valid.eq(valid), self.min_key.eq(key), self.mask.eq(mask)]
        return m

    def _merge(self, m: Module, level: int, i: int, a: Node, b: Node) -> Node:
        (va, ka, ma), (vb, kb, mb) = a, b
        lt = Signal(name=f"l{level}_{i}_lt")
        eq = Signal(name=f"l{level}_{i}_eq")
        sel_a = Signal(name=f"l{level}_{i}_sel_a")
        sel_b = Signal(name=f"l{level}_{i}_sel_b")
        valid, key, mask = self._node_signals(level, i, len(ma) + len(mb), "")
        m.d.comb += [
            lt.eq(ka < kb),
            eq.eq(ka == kb),
            sel_a.eq(va & (~vb | lt | eq)),
            sel_b.eq(vb & (~va | ~lt)),
            valid.eq(va | vb),
            key.eq(Mux(sel_a, ka, 0) | Mux(sel_b, kb, 0)),
            mask.eq(Cat(ma & sel_a.replicate(len(ma)), mb & sel_b.replicate(len(mb)))),
        ]
        return valid, key, mask

    def _register(self, m: Module, level: int, nodes: list[Node]) -> list[Node]:
        registered = []
        for i, (valid, key, mask) in enumerate(nodes):
            regs = self._node_signals(level, i, len(mask), "_q")
            m.d.sync += [r.eq(v) for r, v in zip(regs, (valid, key, mask), strict=True)]
            registered.append(regs)
        return registered

    def _node_signals(self, level: int, i: int, mask_width: int, suffix: str) -> Node:
        return (
            Signal(name=f"l{level}_{i}_valid{suffix}"),
            Signal(self.params.key_width, name=f"l{level}_{i}_key{suffix}"),
            Signal(mask_width, name=f"l{level}_{i}_mask{suffix}"),
        )
