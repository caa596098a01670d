"""Seed 001's NQU (Sec 5.3, Table 5.2: the N-Queen solver of GPGPU-Sim's benchmarks, high branch
divergence, Fig 6.1 its warp occupancy) in the shape of that solver: the host places the queens
of the first ``k`` rows in every consistent way, one partial board per thread, and each thread
completes its board by backtracking over bitmasks (the columns and the two diagonals a queen
attacks, shifted one place per row), with its stack of masks in shared memory (interleaved
across the block's threads, as CUDA code lays out per-thread arrays). Partial boards differ
widely in how many completions they have and how much of the tree they visit, so the threads of
a warp leave the search at very different times and the warps run ever emptier.

``masks[3 t]`` holds thread ``t``'s columns, left and right diagonals after its ``k`` rows
(a padding thread: every column taken, nothing to do); ``count[t]`` is its solutions,
``nodes[t]`` the queens it placed."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, shared, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

BLOCK = 64  # threads per block, at most
LEVELS = 8  # stack entries per thread: rows below the host's
WORDS = 4  # per entry: columns, left diagonals, right diagonals, the columns still to try


@kernel
def nqu(count: Array, nodes: Array, masks: Array, n: int, k: int):
    stack = shared(WORDS * LEVELS * BLOCK)
    t = ctaid() * ntid() + tid()
    m = ntid()  # word w of entry e of thread i is at (WORDS e + w) m + i: no bank conflicts
    full = (1 << n) - 1
    cols = masks[3 * t]
    left = masks[3 * t + 1]
    right = masks[3 * t + 2]
    stack[tid()] = cols
    stack[tid() + m] = left
    stack[tid() + 2 * m] = right
    stack[tid() + 3 * m] = full & ~(cols | left | right)
    last = n - k - 1
    level = 0
    solutions = 0
    placed = 0
    while level >= 0:
        b = WORDS * level * m + tid()
        free = stack[b + 3 * m]
        if free == 0:  # every column of this row tried: back to the row above
            level -= 1
            continue
        bit = free & -free
        stack[b + 3 * m] = free ^ bit
        placed += 1
        if level == last:
            solutions += 1
        else:
            cols = stack[b] | bit
            left = (stack[b + m] | bit) << 1
            right = (stack[b + 2 * m] | bit) >> 1
            b += WORDS * m
            stack[b] = cols
            stack[b + m] = left
            stack[b + 2 * m] = right
            stack[b + 3 * m] = full & ~(cols | left | right)
            level += 1
    count[t] = solutions
    nodes[t] = placed


def split_rows(n: int) -> int:
    """The rows the host places, half the board's (rounded up): 1,614 boards of 5 rows at n = 9
    (the evaluation's), 344 of 4 at n = 8."""
    return (n + 1) // 2


def partial_boards(n: int, k: int) -> list[tuple[int, ...]]:
    """Every placement of queens on the first ``k`` rows that no two attack, in order."""
    boards = [()]
    for row in range(k):
        boards = [(*b, c) for b in boards for c in range(n)
                  if all(c != q and abs(c - q) != row - r for r, q in enumerate(b))]  # fmt: skip
    return boards


def board_masks(board: tuple[int, ...]) -> tuple[int, int, int]:
    """Columns, left and right diagonals attacked on the row below ``board``."""
    cols = left = right = 0
    for c in board:
        cols, left, right = cols | 1 << c, (left | 1 << c) << 1, (right | 1 << c) >> 1
    return cols, left, right


def make(size: int, seed: int) -> Case:
    """An ``size`` x ``size`` board (6 to 12), split after ``split_rows`` rows; the boards in an
    order shuffled by ``seed``, padded to full blocks of at most ``BLOCK``."""
    n = size
    if not 6 <= n <= 12:
        raise ValueError(f"nqu: size {n}: the board must be 6 to 12 squares wide")
    k = split_rows(n)
    boards = partial_boards(n, k)
    order = np.random.default_rng(seed).permutation(len(boards))
    block = min(BLOCK, len(boards))
    grid = -(-len(boards) // block)
    masks = np.zeros((grid * block, 3), np.int64)
    masks[:, 0] = (1 << n) - 1  # padding threads: no column free
    masks[: len(boards)] = [board_masks(boards[i]) for i in order]
    return Case(
        {"count": np.zeros(grid * block, np.int32), "nodes": np.zeros(grid * block, np.int32),
         "masks": int32_array(masks.ravel()), "n": n, "k": k},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "nqu", nqu, make, 7, "seed 001 NQU: partial boards, bitmask backtracking", eval_size=9,
    provenance=(
        "Seed 001 Table 5.2 NQU (GPGPU-Sim's N-Queen solver): one partial board per thread, "
        "completed by bitmask backtracking with the stack in shared memory; differs in the "
        "board (7 x 7 by default, 9 x 9 at eval size) and where the host splits the search. "
        "The suite's nqueens gives each of only N threads one first-queen column instead."
    ),
)  # fmt: skip
