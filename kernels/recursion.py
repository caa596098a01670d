"""Recursion: tree-recursive Fibonacci and mutually recursive parity, with a depth that
differs per thread (the per-thread stack in local memory; threads at the same depth share an
SP, which the stack-less policy orders by)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, device, kernel, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array


@device
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@device
def is_even(n):
    if n == 0:
        return 1
    return is_odd(n - 1)


@device
def is_odd(n):
    if n == 0:
        return 0
    return is_even(n - 1)


@kernel
def recursion(out: Array, ns: Array):
    t = tid()
    n = ns[t]
    out[t] = fib(n) * 2 + is_even(n)


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    ns = int32_array(rng.integers(0, 9, size))
    return Case({"out": np.zeros(size, np.int32), "ns": ns}, grid=1, block=size)


SPEC = SuiteKernel(
    "recursion",
    recursion,
    make,
    8,
    "recursion: divergent call depth",
    eval_size=512,
    provenance=(
        "No paper benchmark: a control-flow shape (tree-recursive Fibonacci, mutually recursive "
        "parity) for seed 000's per-thread SP ordering, with a call depth that differs per "
        "thread."
    ),
)
