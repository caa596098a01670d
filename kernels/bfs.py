"""Level-synchronous breadth-first search of a random graph (CSR) by one block: every level,
each thread scans its share of the vertices of the current level and lowers its neighbours'
levels with ``atomic_min``; a shared flag, read after a barrier, says whether the frontier
grew. The flag is loaded from one shared address, so the loop exit is uniform (Sec 3.5, LDUA)
while the scans inside are divergent."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, atomic_min, barrier, kernel, ntid, shared, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

UNSEEN = 0x7FFF_FFFF


@kernel
def bfs(level: Array, row: Array, col: Array, n: int):
    changed = shared(1)
    cur = 0
    while True:
        if tid() == 0:
            changed[0] = 0
        barrier()
        v = tid()
        while v < n:
            if level[v] == cur:
                e = row[v]
                while e < row[v + 1]:
                    w = col[e]
                    if atomic_min(level, w, cur + 1) > cur + 1:
                        changed[0] = 1
                    e += 1
            v += ntid()
        barrier()
        if changed[0] == 0:
            break
        barrier()
        cur += 1


def random_graph(n: int, degree: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random directed graph in CSR form (``row`` of n+1 offsets, ``col``)."""
    rng = np.random.default_rng(seed)
    adjacency = [
        sorted(set(rng.integers(0, n, rng.integers(0, degree + 1)).tolist())) for _ in range(n)
    ]
    row = np.cumsum([0] + [len(a) for a in adjacency])
    col = [w for a in adjacency for w in a] or [0]
    return int32_array(row), int32_array(col)


def make(size: int, seed: int) -> Case:
    n = size
    row, col = random_graph(n, 3, seed)
    level = np.full(n, UNSEEN, np.int32)
    level[0] = 0
    return Case(
        {"level": level, "row": row, "col": col, "n": n}, grid=1, block=min(n, max(16, n // 8))
    )


SPEC = SuiteKernel(
    "bfs",
    bfs,
    make,
    24,
    "BFS on a random graph: atomics, barriers, shared flag",
    eval_size=2048,
    provenance=(
        "Seed 001 Table 5.2 BFS (Rodinia, a random graph of 4096 nodes): level-synchronous "
        "search with divergent neighbour scans; differs in running every level inside one block "
        "(atomic_min, a shared flag after a barrier) where Rodinia launches a kernel per level "
        "over the whole grid, on a graph of tens of vertices."
    ),
)
