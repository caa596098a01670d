"""Rodinia's pathfinder (seed 003 Sec IV: a structured control-flow benchmark of its Fig 7 and
Fig 8): dynamic programming down a grid of weights, the cost of a cell being its weight plus
the least cost of the three cells above it. As in Rodinia's ``dynproc_kernel``, one launch
computes a pyramid of ``iteration`` rows: each block loads ``ntid`` columns of the previous
row into shared memory, with a halo of ``iteration`` columns on each side, and every row the
threads ``IN_RANGE`` of the shrinking pyramid (and of the grid: the edge threads past its first
and last column stay idle) compute their cell, with barriers between the rows; the block's
middle ``ntid - 2 iteration`` columns are its result. Rodinia's host launches the kernel again
every ``iteration`` rows; the suite's case is one such launch.

Changes to Rodinia: the ``break`` after the last row's barrier is left out (the last copy into
``prev`` is never read), so the control flow is if/else only; ``result[tx]``, which only thread
``tx`` touches, is a register; the block size is at most ``BLOCK`` = 128 (Rodinia: 256), so
that the shared row fits the co-simulation SM's 1 KB with room for spill slots."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, barrier, ctaid, kernel, ntid, shared, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

BLOCK = 128  # threads per block at most: the shared row's words
EVAL_THREADS = 1536


@kernel
def pathfinder(wall: Array, src: Array, result: Array, cols: int, iteration: int):
    prev = shared(BLOCK)
    tx = tid()
    small = ntid() - 2 * iteration  # the columns this block computes (HALO = 1)
    blk_x = small * ctaid() - iteration  # the block's first column (border = iteration)
    blk_xmax = blk_x + ntid() - 1
    xidx = blk_x + tx
    valid_min = -blk_x if blk_x < 0 else 0  # the threads whose column is in the grid
    valid_max = ntid() - 1 - (blk_xmax - cols + 1) if blk_xmax > cols - 1 else ntid() - 1
    w = max(tx - 1, valid_min)
    e = min(tx + 1, valid_max)
    is_valid = valid_min <= tx <= valid_max
    if 0 <= xidx <= cols - 1:
        prev[tx] = src[xidx]
    barrier()
    computed = 0
    res = 0
    for i in range(iteration):
        computed = 0
        if i + 1 <= tx <= ntid() - i - 2 and is_valid:
            computed = 1
            shortest = min(min(prev[w], prev[tx]), prev[e])
            res = shortest + wall[cols * i + xidx]
        barrier()
        if computed:
            prev[tx] = res
        barrier()
    if computed:
        result[xidx] = res


def make(size: int, seed: int) -> Case:
    """Blocks of ``size`` threads, a pyramid of ``max(4, size // 12)`` rows (Rodinia's default:
    20 rows on 256 threads); two blocks, or 1536 threads at ``BLOCK``; the last block runs
    half its computed columns past the grid's edge."""
    if not 16 <= size <= BLOCK:
        raise ValueError(f"pathfinder: block size {size} not in 16..{BLOCK}")
    rng = np.random.default_rng(seed)
    block, iteration = size, max(4, size // 12)
    grid = 2 if block < BLOCK else EVAL_THREADS // block
    small = block - 2 * iteration
    cols = grid * small - small // 2
    weights = rng.integers(0, 10, (iteration + 1, cols))  # Rodinia: rand() % 10
    return Case(
        {"wall": int32_array(weights[1:].ravel()), "src": int32_array(weights[0]),
         "result": np.zeros(cols, np.int32), "cols": cols, "iteration": iteration},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "pathfinder", pathfinder, make, 16, "seed 003 Sec IV Rodinia pathfinder: IN_RANGE, barriers",
    eval_size=BLOCK,
    provenance=(
        "Seed 003 Sec IV pathfinder (Rodinia's dynproc_kernel): one launch of the shrinking "
        "IN_RANGE pyramid with barriers; differs in leaving out the break after the last row "
        "and in blocks of at most 128 threads (Rodinia 256)."
    ),
)  # fmt: skip
