"""Seed 002's MUM and seed 001's MUM (MUMmerGPU, Schatz et al.) in the shape of its matching:
each thread aligns one query, of its own length, against a tree of all substrings of one
reference and reports, for every query position, the length of the longest match starting
there and (for matches of at least ``MINMATCH``) where it starts in the reference. As in
MUMmerGPU, the walk does not restart from the root at every position: after the longest match
at ``i`` it follows the suffix link of its node (the same string less its first base) and goes
on extending from there for ``i + 1``, so a thread's steps depend on how its matches overlap,
the query's length and its mismatches (an ambiguous base ``N`` matches nothing). Seed 001 Sec
5.3 calls MUM "branch intensive ... a large number of comparisons"; seed 002 Sec 6.2 counts it
among the benchmarks whose warps split most.

The tree is a suffix trie of ``ref`` cut at depth ``DMAX`` (``trie``), built on the host:
``NODE`` words per node, its four children (-1: none), its suffix link and the leftmost start
in ``ref`` of its string. ``match[2 (QMAX t + i)]`` is query ``t``'s match length at ``i``
(capped at ``DMAX``), the next word its reference start (-1: shorter than ``MINMATCH``);
``walk[t]`` counts the thread's steps (extensions and links)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.mummer import N
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

NODE = 6
LINK, START = 4, 5
DMAX = 16
QMIN, QMAX = 10, 24
MINMATCH = 6


@kernel
def mum(match: Array, walk: Array, queries: Array, qlens: Array, trie: Array):
    t = ctaid() * ntid() + tid()
    q = QMAX * t
    n = qlens[t]
    node = 0
    depth = 0
    steps = 0
    for i in range(n):
        while i + depth < n and depth < DMAX:
            c = queries[q + i + depth]
            if c == N:
                break
            nxt = trie[NODE * node + c]
            if nxt == -1:
                break
            node = nxt
            depth += 1
            steps += 1
        match[2 * (q + i)] = depth
        match[2 * (q + i) + 1] = trie[NODE * node + START] if depth >= MINMATCH else -1
        if depth > 0:  # the next position's match starts with this one less its first base
            node = trie[NODE * node + LINK]
            depth -= 1
            steps += 1
    walk[t] = steps


def suffix_trie(ref: list[int]) -> list[list[int]]:
    """The nodes of the trie of every substring of ``ref`` up to ``DMAX`` bases, the root
    first, with suffix links."""
    nodes = [[-1, -1, -1, -1, 0, 0]]
    spans = [(0, 0)]  # each node's string: (start, length) in ref
    for s in range(len(ref)):  # leftmost starts first, so START is the leftmost occurrence
        node = 0
        for d in range(min(DMAX, len(ref) - s)):
            c = ref[s + d]
            if nodes[node][c] == -1:
                nodes[node][c] = len(nodes)
                nodes.append([-1, -1, -1, -1, 0, s])
                spans.append((s, d + 1))
            node = nodes[node][c]
    for u, (s, length) in enumerate(spans[1:], start=1):
        v = 0
        for c in ref[s + 1 : s + length]:
            v = nodes[v][c]
        nodes[u][LINK] = v
    return nodes


def reference(size: int, seed: int) -> np.ndarray:
    """The case's reference: ``4 size`` random bases (48 to 1024)."""
    return np.random.default_rng([seed, 0]).integers(0, N, min(1024, max(48, 4 * size)))


def make(size: int, seed: int) -> Case:
    """The ``reference``; ``2 size`` queries (rounded up to full blocks of at most 128) of
    ``QMIN`` to ``QMAX`` bases: substrings of the reference with a few substitutions (``N``
    included), and one in five random."""
    ref = reference(size, seed)
    rng = np.random.default_rng([seed, 1])
    block = min(size, 128)
    n = block * max(2, -(-2 * size // block))
    qlens = rng.integers(QMIN, QMAX + 1, n)
    starts = rng.integers(0, len(ref) - QMAX + 1, n)
    queries = ref[starts[:, None] + np.arange(QMAX)]
    noise = rng.random((n, QMAX)) < np.where(rng.random(n) < 0.2, 1.0, 0.06)[:, None]
    queries = np.where(noise, rng.integers(0, N + 1, (n, QMAX)), queries)
    queries[np.arange(QMAX) >= qlens[:, None]] = N  # past the query's end
    return Case(
        {"match": np.zeros(2 * QMAX * n, np.int32), "walk": np.zeros(n, np.int32),
         "queries": int32_array(queries.ravel()), "qlens": int32_array(qlens),
         "trie": int32_array(np.ravel(suffix_trie(ref.tolist())))},
        grid=n // block, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "mum", mum, make, 8, "seed 002/001 MUM: suffix-link walk, every position", eval_size=768,
    provenance=(
        "Seed 002 Table 1 MUM and seed 001 Table 5.2 MUM (MUMmerGPU): one query per thread, "
        "of varying length, matched at every position by extending down a suffix tree and "
        "following suffix links; differs in an uncompacted trie cut at depth 16 over a random "
        "reference of at most 1024 bases, and queries of 10-24 bases (the paper: 25)."
    ),
)  # fmt: skip
