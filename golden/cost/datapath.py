"""The model's inventory of the datapath blocks the divergence units and the SM share: the
arbiter tree (seed 000 Fig 4b) and the squeezer (seed 001), and the adders of a population
count."""

from __future__ import annotations

from reconverge.golden.blocks import ArbiterParams, SqueezerParams
from reconverge.golden.cost.inventory import Inventory, decode, pick, reduce


def arbiter(p: ArbiterParams) -> Inventory:
    """Seed 000 Fig 4b: N - 1 merge nodes, each a key comparison (< and ==), the select of
    the smaller valid key, six gates of select logic and the children's masks gated; a
    register stage holds every node of its level (valid, key, mask)."""
    inv, kw = Inventory(), p.key_width
    sizes = [1] * p.n  # leaves under each node of the current level
    if p.depth == 0:
        inv.add("select", mux=kw)
    if 0 in p.levels:
        inv.add("pipeline", ff=p.n * (2 + kw))
    for level in range(1, p.depth + 1):
        merged = [a + b for a, b in zip(sizes[::2], sizes[1::2], strict=False)]
        pairs = len(merged)
        inv.add("compare", add=pairs * kw, eq=pairs * kw)
        inv.add("select", mux=2 * pairs * kw, gate=pairs * (kw + 6))
        inv.add("mask", gate=sum(merged))
        sizes = merged + sizes[2 * pairs :]
        if level in p.levels:
            inv.add("pipeline", ff=len(sizes) * (1 + kw) + p.n)
    return inv


def two_lowest(n: int, key_width: int) -> Inventory:
    """The divergence unit's two-lowest grouping tree (``hdl.sm.divergence.two_lowest``): an
    arbiter tree whose N - 1 nodes carry two groups; a node makes four lower-of-two merges,
    each with a comparison (< and ==), the key select and its leaves' masks gated, and picks
    the second group among three (valid, key, mask); on the first level the leaves have no
    second group, so only the lowest's merge is logic."""
    inv, kw = Inventory(), key_width
    sizes = [1] * n
    for level in range(1, (n - 1).bit_length() + 1):
        merged = [a + b for a, b in zip(sizes[::2], sizes[1::2], strict=False)]
        merges = 1 if level == 1 else 4
        for leaves in merged:
            inv.add("compare", add=merges * kw, eq=merges * kw)
            inv.add("select", mux=merges * 2 * kw, gate=merges * (kw + 6))
            inv.add("mask", gate=merges * leaves)
            inv.add("second", mux=2 * (1 + kw + leaves))
        sizes = merged + sizes[2 * len(merged) :]
    return inv


def pairwise_groups(n: int, key_width: int) -> Inventory:
    """The divergence unit's grouping stage up to ``PAIRWISE_GROUPING`` threads
    (``hdl.sm.divergence._ranked``): every two threads' PCs compared once (< and ==), and for
    each of the three groups (lowest, second lowest, highest) a thread's membership, its
    N - 1 gated comparisons reduced, and the group's PC, an OR of its threads' PCs (each
    selected or 0)."""
    inv, kw = Inventory(), key_width
    pairs = n * (n - 1) // 2
    inv.add("compare", add=pairs * kw, eq=pairs * kw, gate=pairs)
    inv.add("mask", gate=3 * n * (2 * (n - 1) + 1) + n)
    inv.add("select", mux=3 * n * kw, gate=3 * (n - 1) * kw)
    return inv


def squeezer(p: SqueezerParams) -> Inventory:
    """Seed 001 Sec 4.1-4.3 / Appendix A: per quarter a popcount, the exchange sort's
    Q(Q-1)/2 compare-and-swap cells, per lane the gather in sorted order and the hole filling,
    the scatter back through the inverse permutation, quarter mask and passes."""
    inv = Inventory()
    w, lanes, q, qb = p.warp_size, p.simd_width, p.quarters, p.qbits
    cb = lanes.bit_length()  # a quarter's thread count
    cells = q * (q - 1) // 2
    inv.add("sort", add=q * popcount(lanes) + cells * cb, mux=cells * 2 * (cb + qb))
    # per lane and recipient i: the gather (a Q:1 pick per sorted position), then #i takes
    # the highest holder k > i (the take terms, the holders above, a one-hot pick of the
    # taken source, the occupancies after the move)
    inv.add(
        "fill",
        mux=lanes * (q * pick(q, 1) + sum((q - i) * qb for i in range(q - 1))),
        gate=lanes * sum(3 * (q - 1 - i) + (q - 2 - i) * (1 + qb) for i in range(q - 1)),
    )
    # per physical quarter: its sorted position (compares of the order, a one-hot pick of
    # the index), the position's mask and sources (Q-way selections by a decoded position),
    # the kept source or the quarter's own id, the quarter's OR
    # the kept source or the quarter's own id: a multiplexer per bit; a 1-bit choice against
    # a constant id into a registered output Yosys folds into the register's reset (an OR)
    stages = min(p.latency, 1) + max(p.latency - 2, 0)
    kept = q * lanes * qb
    folded = qb == 1 and stages > 0
    inv.add(
        "scatter",
        mux=q * (q * qb + pick(q, lanes) + lanes * pick(q, qb)) + (0 if folded else kept),
        # the orders against the positions: two decoders per quarter
        gate=q * (max(0, q - 2) * qb + reduce(lanes) + 2 * decode(qb, q)) + (kept if folded else 0),
        add=popcount(q),
    )
    out_bits = 1 + w + w * qb + q + q * qb + q.bit_length()
    if p.latency >= 2:
        inv.add("pipeline", ff=1 + w + q * qb)
    if stages:
        inv.add("pipeline", ff=stages * out_bits)
    return inv


def popcount(n: int) -> int:
    """Adder bits of a population count of ``n`` bits summed one by one (widths 3 .. n+1)."""
    return max(0, (n + 1) * (n + 2) // 2 - 3)
