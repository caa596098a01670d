"""MUMmerGPU's query matching (seed 002 Sec 5, MUM; seed 001 Sec 5.3: query sequences aligned
against a suffix tree of one reference, "branch intensive ... a large number of comparisons").
Each thread takes one query and, from every query offset, walks down the tree from the root:
a ``switch`` on the query character picks the child (as MUMmerGPU's kernel does on its packed
children; an ambiguous base ``N`` has none), then the edge is compared character by character,
until a mismatch or the end of the query. It keeps the longest match (MUMmer's maximal matches
along the query) and stops once no later offset can beat it. Walk lengths and exits are
data-dependent, and the switch adds the parallel paths of seed 002 Sec 6.2.

The tree is built on the host as arrays (an implicit compact suffix tree, no terminator):
``child[4 * node + c]`` (-1: none, the root is node 0), ``depth[node]`` (string depth) and
``pos[node]``, the leftmost start in ``ref`` of the node's string, so the edge into a node
spells ``ref[pos + depth(parent) : pos + depth]``. The reply per query is the match length,
its query offset, its leftmost reference position (-1: nothing matched) and the number of
offsets walked (the early exit)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

QLEN = 8
A, C, G, T, N = range(5)


@kernel
def mummer(match: Array, queries: Array, ref: Array, child: Array, depth: Array, pos: Array,
           qlen: int):  # fmt: skip
    t = ctaid() * ntid() + tid()
    query = t * qlen
    best = 0
    best_q = 0
    best_r = -1
    q = 0
    while q + best < qlen:
        node = 0
        m = 0
        r = -1
        while q + m < qlen:
            c = queries[query + q + m]
            if c == A:
                nxt = child[4 * node]
            elif c == C:
                nxt = child[4 * node + 1]
            elif c == G:
                nxt = child[4 * node + 2]
            elif c == T:
                nxt = child[4 * node + 3]
            else:
                nxt = -1
            if nxt == -1:
                break
            r = pos[nxt]
            end = min(depth[nxt], qlen - q)
            m += 1  # the edge's first character is the one just looked up
            while m < end and ref[r + m] == queries[query + q + m]:
                m += 1
            if m < depth[nxt]:
                break
            node = nxt
        if m > best:
            best = m
            best_q = q
            best_r = r
        q += 1
    match[4 * t] = best
    match[4 * t + 1] = best_q
    match[4 * t + 2] = best_r
    match[4 * t + 3] = q  # live after the loop: q stays out of per-warp shared spill slots


def suffix_tree(ref: list[int]) -> tuple[list[int], list[int], list[int]]:
    """``child``, ``depth`` and ``pos`` of the compact suffix tree of ``ref``, built by
    inserting the suffixes left to right (so ``pos`` is the leftmost occurrence)."""
    n = len(ref)
    child, depth, pos = [[-1] * 4], [0], [0]

    def new_node(d: int, p: int) -> int:
        child.append([-1] * 4)
        depth.append(d)
        pos.append(p)
        return len(depth) - 1

    for s in range(n):
        node = 0
        while depth[node] < n - s:
            c = ref[s + depth[node]]
            nxt = child[node][c]
            if nxt == -1:
                child[node][c] = new_node(n - s, s)
                break
            k = depth[node] + 1
            while k < min(depth[nxt], n - s) and ref[pos[nxt] + k] == ref[s + k]:
                k += 1
            if k == depth[nxt]:
                node = nxt
                continue
            if s + k < n:  # the suffix leaves the edge: split it
                mid = child[node][c] = new_node(k, pos[nxt])
                child[mid][ref[pos[nxt] + k]] = nxt
                child[mid][ref[s + k]] = new_node(n - s, s)
            break
    return [c for row in child for c in row], depth, pos


def make(size: int, seed: int) -> Case:
    """A random reference of ``3 * size`` bases; ``2 * size`` queries (rounded up to full
    blocks of at most 128) of ``QLEN`` characters: substrings of the reference with a few
    substitutions (``N`` included), and random strings."""
    if 3 * size < QLEN:
        raise ValueError(
            f"mummer: size {size} below {-(-QLEN // 3)}: the reference of 3 x size bases must "
            f"hold a query of {QLEN}"
        )
    rng = np.random.default_rng(seed)
    ref = rng.integers(0, 4, 3 * size)
    block = min(size, 128)
    n = block * max(2, -(-2 * size // block))
    starts = rng.integers(0, len(ref) - QLEN + 1, n)
    queries = ref[starts[:, None] + np.arange(QLEN)]
    noise = rng.random((n, QLEN)) < np.where(rng.random(n) < 0.2, 1.0, 0.1)[:, None]
    queries = np.where(noise, rng.integers(0, N + 1, (n, QLEN)), queries)
    child, depth, pos = suffix_tree(ref.tolist())
    return Case(
        {"match": np.zeros(4 * n, np.int32), "queries": int32_array(queries.ravel()),
         "ref": int32_array(ref), "child": int32_array(child), "depth": int32_array(depth),
         "pos": int32_array(pos), "qlen": QLEN},
        grid=n // block, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "mummer",
    mummer,
    make,
    8,
    "MUMmer: query walks down a suffix tree",
    eval_size=768,
    provenance=(
        "Seed 002 Table 1 MUM and seed 001 Table 5.2 MUM (MUMmerGPU): each thread walks its "
        "query down a compact suffix tree from every offset, a switch on the base picking the "
        "child, keeping the longest match; differs in 8-character queries on a random reference "
        "of 3 x size bases (the paper: 25-character queries on 140,000 bases of B. anthracis)."
    ),
)
