"""Bitonic sort, after the AMD APP SDK's BitonicSort (a structured control-flow benchmark of the
AMD SDK that seed 003 Sec IV evaluates): every block sorts its ``2 ntid`` elements in shared
memory, each thread comparing and exchanging one pair per pass, with a barrier between passes.
The SDK's kernel is launched once per pass of every stage over an array in global memory; here
the stage and pass loops run inside the kernel, the same thread-to-pair mapping and the same
branches: the sorting direction flips for the threads in odd ``2^stage`` blocks, and the
compare-and-swap writes the lesser element left or right by an if/else on it."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, barrier, ctaid, kernel, ntid, shared, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

NMAX = 128  # elements per block at most: the shared array's words
EVAL_THREADS = 1536


@kernel
def bitonic(a: Array, stages: int, direction: int):
    m = shared(NMAX)
    t = tid()
    base = 2 * ntid() * ctaid()
    m[t] = a[base + t]
    m[t + ntid()] = a[base + t + ntid()]
    barrier()
    for stage in range(stages):
        for pass_of_stage in range(stage + 1):
            pair = 1 << (stage - pass_of_stage)
            left = t % pair + t // pair * 2 * pair
            right = left + pair
            left_element = m[left]
            right_element = m[right]
            increasing = direction
            if (t >> stage) & 1 == 1:
                increasing = 1 - direction
            if left_element > right_element:
                greater = left_element
                lesser = right_element
            else:
                greater = right_element
                lesser = left_element
            if increasing:
                m[left] = lesser
                m[right] = greater
            else:
                m[left] = greater
                m[right] = lesser
            barrier()
    a[base + t] = m[t]
    a[base + t + ntid()] = m[t + ntid()]


def make(size: int, seed: int) -> Case:
    """Blocks of the largest power of two of threads not above ``size`` (at most ``NMAX / 2``),
    each sorting twice as many elements; two blocks, or 1536 threads at ``NMAX / 2``; up or
    down (the SDK's ``direction`` argument: 1 sorts up) at random."""
    block = 1 << (min(size, NMAX // 2).bit_length() - 1)
    grid = 2 if block < NMAX // 2 else EVAL_THREADS // block
    n = 2 * block
    rng = np.random.default_rng(seed)
    return Case(
        {"a": int32_array(rng.integers(0, 1 << 31, n * grid)),
         "stages": n.bit_length() - 1, "direction": int(rng.integers(0, 2))},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "bitonicSort", bitonic, make, 8, "AMD APP SDK BitonicSort: direction if/else, barriers",
    eval_size=NMAX // 2,
    provenance=(
        "Seed 003 Sec IV BitonicSort (AMD APP SDK): the same thread-to-pair mapping and "
        "direction if/else; differs in running every stage and pass inside one kernel in shared "
        "memory, where the SDK launches a kernel per pass over global memory."
    ),
)  # fmt: skip
